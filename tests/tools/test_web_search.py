"""web_search against fake search services on 127.0.0.1 (SearXNG, Brave, Tavily): the
requests each API expects, numbered results, domain filters, bad input, slow and failing
services, and what the executor makes of a failure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.fakes.search_services import Result, searxng, serve
from tests.fakes.web_server import FakeWebServer, WebPage
from tests.tools.conftest import MakeHarness
from tools.base import ErrorCategory, ToolContext, ToolError
from tools.settings import ToolSettings
from tools.web import HttpSearch, WebSearch, WebSearchSettings
from tools.web.search import WebSearchInput

KEY = "test-key"


def _tool(
    web_server: FakeWebServer, backend: str, key: str | None = KEY, **extra: object
) -> WebSearch:
    url = serve(web_server, backend, KEY)
    settings = WebSearchSettings.model_validate({"backend": backend, "url": url, **extra})
    http = HttpSearch(settings, key)
    return WebSearch(http, service=http.name, max_results=settings.max_results)


async def _search(
    tool: WebSearch, tmp_path: Path, query: str = "httpx proxies", **domains: list[str]
) -> str:
    context = ToolContext(
        workspace=tmp_path, settings=ToolSettings(), record_checkpoint=lambda p: None
    )
    output = await tool.run(WebSearchInput(query=query, **domains), context)
    return output.content


async def _refused(
    tool: WebSearch, tmp_path: Path, query: str = "httpx", **domains: list[str]
) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await _search(tool, tmp_path, query, **domains)
    return caught.value


async def test_searxng_results_are_numbered_with_title_url_and_snippet(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    text = await _search(_tool(web_server, "searxng"), tmp_path)

    assert text.startswith("Web search for 'httpx proxies' through SearXNG: 4 results")
    first = [
        "1. httpx 0.28 changelog",
        "   https://github.com/encode/httpx/blob/master/CHANGELOG.md",
        "   Removed the deprecated proxies argument.",
    ]
    assert "\n".join(first) in text
    assert "4. Stack Overflow: httpx proxies" in text
    [request] = web_server.requests
    assert (request.method, request.path) == ("GET", "/search")
    assert request.arg("q") == "httpx proxies"
    assert request.arg("format") == "json"


async def test_brave_gets_its_key_in_its_header_and_html_is_taken_out_of_snippets(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    text = await _search(_tool(web_server, "brave", max_results=2), tmp_path)

    assert "through Brave Search: 2 results" in text
    assert "   Removed the deprecated proxies argument." in text
    assert "<strong>" not in text
    [request] = web_server.requests
    assert request.path == "/res/v1/web/search"
    assert request.headers["x-subscription-token"] == KEY
    assert request.headers["accept"] == "application/json"
    assert request.arg("count") == "4"


async def test_tavily_gets_a_json_post_with_the_domain_lists_and_a_bearer_key(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    tool = _tool(web_server, "tavily")

    text = await _search(
        tool,
        tmp_path,
        allowed_domains=["python.org", "github.com"],
        blocked_domains=["docs.python.org"],
    )

    [request] = web_server.requests
    assert request.method == "POST"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.json()
    assert body["query"] == "httpx proxies"
    assert body["include_domains"] == ["python.org", "github.com"]
    assert body["exclude_domains"] == ["docs.python.org"]
    assert "1. httpx 0.28 changelog" in text
    assert "docs.python.org" not in text.split("\n", 2)[2]


async def test_allowed_domains_keep_subdomains_and_say_how_many_were_left_out(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    text = await _search(_tool(web_server, "searxng"), tmp_path, allowed_domains=["python.org"])

    assert "(only python.org): 1 result\n" in text
    assert "(3 results outside the domain filter left out)" in text
    assert "1. Python docs: http.client" in text
    assert "github.com" not in text
    # One allowed domain narrows the search itself too.
    assert web_server.requests[0].arg("q") == "httpx proxies site:python.org"


async def test_blocked_domains_drop_the_domain_and_its_subdomains_only(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    text = await _search(
        _tool(web_server, "searxng"), tmp_path, blocked_domains=["*.python-httpx.org", "github.com"]
    )

    assert "(not python-httpx.org, github.com): 2 results" in text
    assert "www.python-httpx.org" not in text
    assert "1. Python docs: http.client" in text
    assert "2. Stack Overflow" in text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("allowed_domains", "https://docs.python.org/3/"),
        ("blocked_domains", "exa mple.com"),
        ("allowed_domains", ""),
    ],
)
async def test_a_bad_domain_is_refused_with_what_to_give(
    web_server: FakeWebServer, tmp_path: Path, field: str, value: str
) -> None:
    error = await _refused(_tool(web_server, "searxng"), tmp_path, **{field: [value]})

    assert error.category is ErrorCategory.PERMANENT
    assert f"{field}: {value!r} is not a domain" in error.message
    assert "such as docs.python.org" in error.message
    assert web_server.requests == []


async def test_a_query_too_short_or_too_long_is_refused(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    tool = _tool(web_server, "searxng")

    short = await _refused(tool, tmp_path, query=" x ")
    long = await _refused(tool, tmp_path, query="word " * 100)

    assert "give 2 to 400" in short.message
    assert "the query has 499 characters" in long.message
    assert web_server.requests == []


async def test_a_refused_key_names_the_variable_to_check(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    for backend, env in (("brave", "BRAVE_API_KEY"), ("tavily", "TAVILY_API_KEY")):
        error = await _refused(_tool(web_server, backend, key="wrong"), tmp_path)

        assert error.category is ErrorCategory.PERMANENT
        assert "answered 401" in error.message
        assert f"Check the key in {env}" in error.message
        assert "wrong" not in error.message


async def test_searxng_without_its_json_format_says_how_to_turn_it_on(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    web_server.routes["/search"] = lambda request: WebPage(b"<h1>403</h1>", "text/html", 403)
    settings = WebSearchSettings(backend="searxng", url=web_server.url(""))
    tool = WebSearch(HttpSearch(settings, None), service="SearXNG")

    error = await _refused(tool, tmp_path)

    assert "answered 403" in error.message
    assert "lists json under search.formats" in error.message


async def test_a_slow_service_times_out_as_a_transient_failure(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    web_server.routes["/search"] = lambda request: WebPage(b"{}", "application/json", delay=30)
    settings = WebSearchSettings(backend="searxng", url=web_server.url(""), timeout=0.3)
    tool = WebSearch(HttpSearch(settings, None), service="SearXNG")

    error = await _refused(tool, tmp_path)

    assert error.category is ErrorCategory.TRANSIENT
    assert "did not answer within 0.3s" in error.message


@pytest.mark.parametrize(
    ("page", "said", "category"),
    [
        (
            WebPage(b"upstream down", "text/plain", 502),
            "answered 502 Bad Gateway: upstream down",
            ErrorCategory.TRANSIENT,
        ),
        (WebPage(b"{}", "application/json", 429), "answered 429", ErrorCategory.TRANSIENT),
        (
            WebPage(b"<html>login</html>", "text/html", 200),
            "something other than JSON (text/html)",
            ErrorCategory.PERMANENT,
        ),
        (
            WebPage(b"[1, 2]", "application/json", 200),
            "JSON of another shape",
            ErrorCategory.PERMANENT,
        ),
    ],
)
async def test_a_failing_service_is_a_clear_error(
    web_server: FakeWebServer, tmp_path: Path, page: WebPage, said: str, category: ErrorCategory
) -> None:
    web_server.routes["/search"] = lambda request: page
    tool = WebSearch(
        HttpSearch(WebSearchSettings(backend="searxng", url=web_server.url("")), None),
        service="SearXNG",
    )

    error = await _refused(tool, tmp_path)

    assert said in error.message
    assert error.category is category


async def test_nothing_listening_is_named_with_the_url_to_check(tmp_path: Path) -> None:
    settings = WebSearchSettings(backend="searxng", url="http://127.0.0.1:9")
    tool = WebSearch(HttpSearch(settings, None), service="SearXNG")

    error = await _refused(tool, tmp_path)

    assert "cannot reach SearXNG at http://127.0.0.1:9" in error.message
    assert "check web_search.url" in error.message


async def test_hostile_results_are_cleaned_and_non_web_urls_dropped(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    hostile = (
        Result(
            "\x1b[2J\x1b]0;pwned\x07Clean title\u202e",
            "https://ok.example/a",
            "line\none\ttwo &amp; three",
        ),
        Result("script", "javascript:alert(1)", "x"),
        Result("spaced", "https://bad.example/a b", "x"),
        Result("again", "https://ok.example/a", "duplicate"),
    )
    web_server.routes["/search"] = searxng(hostile)
    tool = WebSearch(
        HttpSearch(WebSearchSettings(backend="searxng", url=web_server.url("")), None),
        service="SearXNG",
    )

    text = await _search(tool, tmp_path)

    assert ": 1 result\n" in text
    for control in ("\x1b", "\x07", "\u202e"):
        assert control not in text
    assert "Clean title" in text
    assert "line one two & three" in text
    for dropped in ("javascript", "bad.example"):
        assert dropped not in text


async def test_no_results_is_said_plainly(web_server: FakeWebServer, tmp_path: Path) -> None:
    web_server.routes["/search"] = searxng(())
    tool = WebSearch(
        HttpSearch(WebSearchSettings(backend="searxng", url=web_server.url("")), None),
        service="SearXNG",
    )

    text = await _search(tool, tmp_path, query="nothing at all")

    assert text == "Web search for 'nothing at all' through SearXNG: no results"


async def test_the_executor_retries_a_failing_service_then_gives_the_model_an_error(
    web_server: FakeWebServer, make_harness: MakeHarness
) -> None:
    web_server.routes["/search"] = lambda request: WebPage(b"busy", "text/plain", 503)
    tool = WebSearch(
        HttpSearch(WebSearchSettings(backend="searxng", url=web_server.url("")), None),
        service="SearXNG",
    )
    harness = make_harness(more_tools=lambda: [tool])

    result = await harness.run("web_search", query="httpx proxies")

    assert result.is_error
    assert "web search failed: SearXNG answered 503 Service Unavailable: busy" in result.content
    assert "tried 3 times" in result.content
    assert len(web_server.requests) == 3


async def test_a_call_with_domains_of_the_wrong_type_is_a_schema_error(
    web_server: FakeWebServer, make_harness: MakeHarness
) -> None:
    tool = _tool(web_server, "searxng")
    harness = make_harness(more_tools=lambda: [tool])

    result = await harness.run("web_search", query="httpx", allowed_domains="python.org")

    assert result.is_error
    assert "allowed_domains" in result.content
    assert web_server.requests == []


def test_settings_say_what_is_wrong() -> None:
    cases = {
        json.dumps({"backend": "searxng"}): "backend searxng needs url",
        json.dumps({"backend": "brave", "api_key_env": "BSA-123-abc"}): "not the key itself",
        json.dumps({"backend": "tavily", "url": "api.tavily.com"}): "must be an http(s) URL",
        json.dumps({"backend": "bing"}): "'searxng', 'brave', 'tavily' or 'anthropic'",
    }
    for raw, said in cases.items():
        with pytest.raises(ValidationError, match=re.escape(said)):
            WebSearchSettings.model_validate_json(raw)
    assert WebSearchSettings(backend="brave").base_url() == "https://api.search.brave.com"
    assert WebSearchSettings(backend="tavily").key_env() == "TAVILY_API_KEY"

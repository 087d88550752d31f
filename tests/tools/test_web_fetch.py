"""web_fetch against a real HTTP server on 127.0.0.1: pages, redirects, caps, timeouts,
encodings, refused addresses and the cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.fakes.clock import VirtualClock
from tests.fakes.web_server import FakeWebServer, WebPage, endless
from tools.base import ErrorCategory, ToolContext, ToolError, ToolOutput
from tools.settings import ToolSettings
from tools.web import FetchLimits, PageCache, WebFetch
from tools.web.tool import WebFetchInput

PAGE = b"""<!doctype html><html><head><title>Widgets</title>
<style>body { color: red }</style><script>document.write("tracking")</script></head>
<body><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<main><h1>Installing widgets</h1>
<p>Run <code>pip install widgets</code>, then read
<a href="https://example.com/guide">the guide</a>.</p>
<ul><li>fast</li><li>small</li></ul>
<h2>Usage</h2>
<pre><code class="language-python">import widgets
widgets.run()
</code></pre></main>
<footer>Copyright 2026</footer></body></html>"""


def _context(tmp_path: Path) -> ToolContext:
    return ToolContext(
        workspace=tmp_path, settings=ToolSettings(), record_checkpoint=lambda path: None
    )


def _fetch(tool: WebFetch, url: str, tmp_path: Path, prompt: str = "") -> ToolOutput:
    return asyncio.run(tool.run(WebFetchInput(url=url, prompt=prompt), _context(tmp_path)))


def _refused(tool: WebFetch, url: str, tmp_path: Path) -> str:
    with pytest.raises(ToolError) as caught:
        _fetch(tool, url, tmp_path)
    return caught.value.message


def test_an_html_page_becomes_markdown_without_scripts_styles_or_navigation(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    web_server.pages["/widgets"] = WebPage(PAGE)

    text = _fetch(WebFetch(), web_server.url("/widgets"), tmp_path).content

    assert "# Installing widgets" in text
    assert "## Usage" in text
    assert "- fast\n- small" in text
    assert "[the guide](https://example.com/guide)" in text
    assert "`pip install widgets`" in text
    assert "```python\nimport widgets\nwidgets.run()\n```" in text
    for dropped in ("tracking", "color: red", "Blog", "Copyright"):
        assert dropped not in text


def test_a_redirect_on_the_same_host_is_followed(web_server: FakeWebServer, tmp_path: Path) -> None:
    web_server.pages["/old"] = WebPage(status=301, headers={"Location": "/widgets"})
    web_server.pages["/widgets"] = WebPage(PAGE)

    text = _fetch(WebFetch(), web_server.url("/old"), tmp_path).content

    assert "# Installing widgets" in text


def test_a_redirect_to_another_host_is_named_not_followed(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    elsewhere = web_server.url("/widgets", host="localhost")
    web_server.pages["/moved"] = WebPage(status=302, headers={"Location": elsewhere})
    web_server.pages["/widgets"] = WebPage(PAGE)

    output = _fetch(WebFetch(), web_server.url("/moved"), tmp_path)

    assert not output.is_error
    assert f"call web_fetch with url {elsewhere}" in output.content
    assert "another host" in output.content
    assert web_server.hits["/widgets"] == 0


def test_a_body_past_the_cap_is_cut_and_the_read_stops(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    web_server.pages["/flood"] = WebPage(endless(), content_type="text/plain")
    tool = WebFetch(limits=FetchLimits(max_bytes=2 * 1024 * 1024, total_timeout=30))

    text = _fetch(tool, web_server.url("/flood"), tmp_path).content

    assert "larger than 2 MB: only its start was read" in text
    assert text.count("x") == 2 * 1024 * 1024


def test_a_slow_server_times_out_as_a_transient_failure(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    web_server.pages["/slow"] = WebPage(PAGE, delay=30)
    tool = WebFetch(limits=FetchLimits(read_timeout=0.2, connect_timeout=5))

    with pytest.raises(ToolError) as caught:
        _fetch(tool, web_server.url("/slow"), tmp_path)

    assert "did not answer in time" in caught.value.message
    assert caught.value.category is ErrorCategory.TRANSIENT


@pytest.mark.parametrize(
    ("content_type", "body", "expected", "note"),
    [
        ("text/plain; charset=utf-8", b"caf\xe9 ok", "caf\ufffd ok", "not valid utf-8"),
        ("text/plain; charset=x-klingon", b"plain", "plain", "unknown encoding 'x-klingon'"),
        ("text/plain", b"na\xefve", "na\u00efve", "names no encoding and is not UTF-8"),
        ("text/plain; charset=iso-8859-1", b"na\xefve", "na\u00efve", None),
        ("text/html", b'<meta charset="koi8-r"><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>', "Привет", None),
    ],
)
def test_encodings_are_read_as_declared_and_bad_bytes_are_said(
    web_server: FakeWebServer,
    tmp_path: Path,
    content_type: str,
    body: bytes,
    expected: str,
    note: str | None,
) -> None:
    web_server.pages["/text"] = WebPage(body, content_type=content_type)

    text = _fetch(WebFetch(), web_server.url("/text"), tmp_path).content

    assert expected in text
    if note is not None:
        assert note in text
    else:
        assert "encoding" not in text
        assert "\ufffd" not in text


def test_a_body_that_is_not_text_is_refused_with_its_type(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    web_server.pages["/logo.png"] = WebPage(b"\x89PNG\r\n", content_type="image/png")

    message = _refused(WebFetch(), web_server.url("/logo.png"), tmp_path)

    assert "image/png" in message
    assert "reads HTML and text" in message


def test_an_error_status_is_reported(web_server: FakeWebServer, tmp_path: Path) -> None:
    assert "answered 404" in _refused(WebFetch(), web_server.url("/nothing"), tmp_path)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/iam/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[fd00:ec2::254]/latest/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]/",
        "http://docs.example.com@169.254.169.254/",  # the host is after the @
        "http://2852039166/",  # 169.254.169.254 as one number
        "http://0xa9fea9fe/",
    ],
)
def test_metadata_and_link_local_addresses_are_refused(url: str, tmp_path: Path) -> None:
    message = _refused(WebFetch(), url, tmp_path)

    assert message.startswith("refused:")
    assert "never reaches" in message


def test_a_name_is_checked_by_the_addresses_it_resolves_to(
    web_server: FakeWebServer, tmp_path: Path
) -> None:
    """DNS rebinding: the name is resolved once, every address checked, and the connection
    goes to a checked address, not to what a second lookup might say."""
    web_server.pages["/widgets"] = WebPage(PAGE)
    lookups: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1", "169.254.169.254"]

    rebound = web_server.url("/widgets", "rebind.test")
    message = _refused(WebFetch(resolve=rebinding), rebound, tmp_path)
    assert "rebind.test resolves to 169.254.169.254" in message
    assert web_server.hits["/widgets"] == 0

    async def honest(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    text = _fetch(WebFetch(resolve=honest), web_server.url("/widgets", "docs.test"), tmp_path)
    assert "# Installing widgets" in text.content
    assert lookups == ["rebind.test", "docs.test"]


def test_only_http_and_https(tmp_path: Path) -> None:
    assert "only http and https" in _refused(WebFetch(), "file:///etc/passwd", tmp_path)
    assert "only http and https" in _refused(WebFetch(), "ftp://example.com/x", tmp_path)


def test_pages_are_cached_for_fifteen_minutes(
    web_server: FakeWebServer, tmp_path: Path, clock: VirtualClock
) -> None:
    web_server.pages["/widgets"] = WebPage(PAGE)
    tool = WebFetch(cache=PageCache(clock=clock.now))
    url = web_server.url("/widgets")

    _fetch(tool, url, tmp_path)
    clock.advance(14 * 60)
    _fetch(tool, url, tmp_path)
    assert web_server.hits["/widgets"] == 1

    clock.advance(61)
    _fetch(tool, url, tmp_path)
    assert web_server.hits["/widgets"] == 2


def test_the_domain_is_the_urls_host() -> None:
    tool = WebFetch()
    assert tool.domain(WebFetchInput(url="https://Docs.Example.com./a")) == "docs.example.com"
    assert tool.domain(WebFetchInput(url="not a url")) is None

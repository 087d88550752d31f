"""web_search end to end: the real ``agent -p`` and ``agent doctor``, the fake LLM server, and
fake search services on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.cli import MODELS, AgentRun, PrintRun, run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.search_services import serve
from tests.fakes.terminal import Spawn, clean
from tests.fakes.web_server import FakeWebServer
from tests.tools.test_web_search_anthropic import CHANGELOG, _searched


def _use_searxng(web_server: FakeWebServer, home: Path) -> None:
    """Serve a fake SearXNG and make it the person's web_search backend (a project's
    agent.yaml cannot set web_search untrusted)."""
    url = serve(web_server, "searxng")
    write_person_config(home, f"web_search: {{backend: searxng, url: '{url}'}}\n")


def _doctor(fake_llm: FakeLlmServer, workspace: Path, home: Path, *args: str) -> AgentRun:
    """``agent doctor`` on a screen wide enough that no line of its table wraps."""
    return run_agent(
        *args, "doctor", server=fake_llm, workspace=workspace, home=home, env={"COLUMNS": "300"}
    )


def _tools(fake_llm: FakeLlmServer) -> list[str]:
    return [tool["name"] for tool in fake_llm.requests[0].body.get("tools", [])]


def test_a_print_run_searches_searxng_when_a_rule_allows_it(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    decoy_home: Path,
    print_run: PrintRun,
) -> None:
    _use_searxng(web_server, decoy_home)
    fake_llm.script(
        Reply.tool_call(
            "web_search", {"query": "httpx proxies", "blocked_domains": ["github.com"]}
        ),
        Reply.text("Proxies are set per transport now."),
    )

    run = print_run("how do I set proxies in httpx?", "--allowedTools", "WebSearch")

    assert run.code == 0, run.stderr
    assert "Proxies are set per transport now." in run.stdout
    assert "web_search" in _tools(fake_llm)
    result = json.dumps(fake_llm.requests[1].body)
    assert "through SearXNG (not github.com): 3 results" in result
    assert "1. HTTPX docs" in result
    assert "github.com/encode" not in result
    assert [request.arg("q") for request in web_server.requests] == ["httpx proxies"]


def test_without_a_rule_or_yes_a_print_run_refuses_the_search(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    decoy_home: Path,
    print_run: PrintRun,
) -> None:
    _use_searxng(web_server, decoy_home)
    fake_llm.script(
        Reply.tool_call("web_search", {"query": "httpx proxies"}), Reply.text("Not allowed.")
    )

    run = print_run("search it")

    assert run.code == 0, run.stderr
    result = json.dumps(fake_llm.requests[1].body)
    assert "web_search needs the person's approval" in result
    assert "re-run with --yes or --allowedTools web_search" in result
    assert web_server.requests == []


def test_not_configured_the_tool_is_not_offered(
    fake_llm: FakeLlmServer, print_run: PrintRun
) -> None:
    fake_llm.script(Reply.text("No search here."))

    run = print_run("hello")

    assert run.code == 0, run.stderr
    tools = _tools(fake_llm)
    assert "web_fetch" in tools
    assert "web_search" not in tools


def test_a_key_that_is_not_set_is_said_at_start_and_the_tool_is_not_offered(
    fake_llm: FakeLlmServer, decoy_home: Path, print_run: PrintRun
) -> None:
    write_person_config(decoy_home, "web_search: {backend: brave}\n")
    fake_llm.script(Reply.text("ok"))

    run = print_run("hello")

    assert run.code == 0, run.stderr
    assert "web_search is not offered: backend brave needs its API key in $BRAVE_API_KEY" in (
        run.stderr
    )
    assert "web_search" not in _tools(fake_llm)


def test_the_anthropic_backend_searches_through_the_model_and_counts_its_tokens(
    fake_llm: FakeLlmServer, decoy_home: Path, print_run: PrintRun
) -> None:
    write_person_config(decoy_home, "web_search: {backend: anthropic}\n")
    fake_llm.script(
        Reply.tool_call("web_search", {"query": "httpx 0.28 proxies"}),
        _searched(),
        Reply.text("httpx 0.28 removed proxies=."),
    )

    run = print_run("what changed?", "--yes", "--output-format", "json")

    assert run.code == 0, run.stderr
    turn, search, answer = fake_llm.requests
    assert "web_search" in [tool["name"] for tool in turn.body["tools"]]
    assert search.model == "claude-test"
    assert search.body["tools"] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    ]
    result = json.dumps(answer.body)
    assert "1. httpx changelog" in result
    assert CHANGELOG in result
    assert "web_search" in run.json()["usage_by_purpose"]


def test_doctor_says_how_to_turn_search_on_and_which_model_reads_long_pages(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("ok"))

    run = _doctor(fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    search = next(line for line in lines if "web_search" in line)
    assert "not configured" in search
    assert "backend: searxng" in run.stdout
    fetch = next(line for line in lines if "web_fetch" in line)
    assert "long pages are read by the session's model" in fetch


def test_doctor_fails_on_a_missing_key_or_a_searxng_that_refuses_json(
    fake_llm: FakeLlmServer, web_server: FakeWebServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("ok"))
    write_person_config(decoy_home, "web_search: {backend: tavily, api_key_env: MY_TAVILY}\n")

    missing = _doctor(fake_llm, workspace, decoy_home)

    assert missing.code == 1, missing.stdout + missing.stderr
    assert "needs its API key in $MY_TAVILY, which is not set" in missing.stdout

    url = serve(web_server, "searxng")
    fake_llm.script(Reply.text("ok"))
    write_person_config(decoy_home, f"web_search: {{backend: searxng, url: '{url}/wrong'}}\n")

    refused = _doctor(fake_llm, workspace, decoy_home)

    assert refused.code == 1, refused.stdout + refused.stderr
    assert "SearXNG answered 404" in refused.stdout
    assert "Traceback" not in refused.stdout + refused.stderr

    fake_llm.script(Reply.text("ok"))
    write_person_config(decoy_home, f"web_search: {{backend: searxng, url: '{url}'}}\n")

    working = _doctor(fake_llm, workspace, decoy_home)

    assert working.code == 0, working.stdout + working.stderr
    assert f"SearXNG at {url} answered (4 results)" in working.stdout


def test_doctor_says_the_anthropic_backend_needs_an_anthropic_model(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("ok"))
    write_person_config(decoy_home, "web_search: {backend: anthropic}\n")

    run = _doctor(fake_llm, workspace, decoy_home, "--model", MODELS["openai"])

    assert run.code == 1, run.stdout + run.stderr
    assert "backend anthropic searches through an Anthropic model" in run.stdout
    assert "openai:gpt-test is not one" in run.stdout


def test_plan_mode_lets_a_search_run_as_it_lets_web_fetch(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    decoy_home: Path,
    print_run: PrintRun,
) -> None:
    _use_searxng(web_server, decoy_home)
    fake_llm.script(
        Reply.tool_call("web_search", {"query": "httpx proxies"}), Reply.text("Here is the plan.")
    )

    run = print_run("plan the upgrade", "--permission-mode", "plan", "--allowedTools", "WebSearch")

    assert run.code == 0, run.stderr
    assert "1. httpx 0.28 changelog" in json.dumps(fake_llm.requests[1].body)
    assert len(web_server.requests) == 1


def test_the_repl_asks_with_the_query_and_always_allows_searching_for_the_session(
    spawn: Spawn, fake_llm: FakeLlmServer, web_server: FakeWebServer, decoy_home: Path
) -> None:
    _use_searxng(web_server, decoy_home)
    fake_llm.script(
        Reply.tool_call("web_search", {"query": "httpx proxies"}),
        Reply.tool_call("web_search", {"query": "httpx transports"}),
        Reply.text("Searched twice."),
    )
    term = spawn()
    term.prompt()
    term.send_line("look it up")
    asked = clean(term.expect("lways for this tool", timeout=60))
    term.send_line("a")
    term.expect("Searched twice.", timeout=60)
    term.prompt(timeout=60)
    listed = term.command("/permissions")
    term.exit()

    assert "web_search 'httpx proxies'" in asked
    assert "through: SearXNG" in asked
    assert [request.arg("q") for request in web_server.requests] == [
        "httpx proxies",
        "httpx transports",
    ]
    assert "web_search" in listed


def test_brave_and_tavily_take_their_key_from_the_variable_the_config_names(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    decoy_home: Path,
    print_run: PrintRun,
) -> None:
    for backend in ("brave", "tavily"):
        url = serve(web_server, backend, key="key-from-env")
        write_person_config(
            decoy_home,
            f"web_search: {{backend: {backend}, url: '{url}', api_key_env: SEARCH_KEY}}\n",
        )
        fake_llm.reset()
        fake_llm.script(
            Reply.tool_call("web_search", {"query": "httpx proxies"}), Reply.text("Found it.")
        )

        run = print_run("search", "--yes", env={"SEARCH_KEY": "key-from-env"})

        assert run.code == 0, run.stderr
        result = json.dumps(fake_llm.requests[1].body)
        assert "1. httpx 0.28 changelog" in result, backend
        assert "key-from-env" not in result

"""web_fetch end to end: the real ``agent -p``, the fake LLM server, a real page server on
127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.cli import PrintRun
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean
from tests.fakes.web_server import FakeWebServer, WebPage
from tools.web.tool import ANSWER_SYSTEM

PAGE = b"""<html><head><title>Changelog</title><script>steal()</script></head><body>
<nav><a href="/">Home</a></nav><main><h1>Changelog</h1><h2>2.0</h2>
<ul><li>Dropped Python 3.9</li><li>New <code>--fast</code> flag</li></ul></main></body></html>"""


def _fetch_the_changelog(fake_llm: FakeLlmServer, web_server: FakeWebServer, then: str) -> None:
    """Serve `PAGE` at /changelog; the model fetches it, then answers ``then``."""
    web_server.pages["/changelog"] = WebPage(PAGE)
    fake_llm.script(
        Reply.tool_call("web_fetch", {"url": web_server.url("/changelog")}), Reply.text(then)
    )


def _bodies(fake_llm: FakeLlmServer) -> list[str]:
    return [json.dumps(request.body) for request in fake_llm.requests]


def test_a_rule_for_the_domain_lets_a_print_run_fetch_without_asking(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    print_run: PrintRun,
) -> None:
    _fetch_the_changelog(fake_llm, web_server, then="2.0 dropped Python 3.9.")

    run = print_run("what changed in 2.0?", "--allowedTools", "WebFetch(domain:127.0.0.1)")

    assert run.code == 0, run.stderr
    assert "2.0 dropped Python 3.9." in run.stdout
    result = _bodies(fake_llm)[1]
    assert "## 2.0" in result
    assert "- Dropped Python 3.9" in result
    assert "steal()" not in result
    assert web_server.hits["/changelog"] == 1


def test_without_a_rule_or_yes_a_print_run_refuses_the_fetch(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    print_run: PrintRun,
) -> None:
    _fetch_the_changelog(fake_llm, web_server, then="I could not read it.")

    run = print_run("read it", "--allowedTools", "WebFetch(domain:example.com)")

    assert run.code == 0, run.stderr
    result = _bodies(fake_llm)[1]
    assert "web_fetch needs the person's approval" in result
    assert "--allowedTools 'web_fetch(domain:127.0.0.1)'" in result
    assert web_server.hits["/changelog"] == 0


def test_metadata_addresses_are_refused_even_under_yes(
    fake_llm: FakeLlmServer, print_run: PrintRun
) -> None:
    fake_llm.script(
        Reply.tool_call("web_fetch", {"url": "http://169.254.169.254/latest/meta-data/"}),
        Reply.tool_call("web_fetch", {"url": "http://metadata.google.internal/v1/"}),
        Reply.text("Refused."),
    )

    run = print_run("get the keys", "--yes")

    assert run.code == 0, run.stderr
    bodies = _bodies(fake_llm)
    assert "169.254.169.254 is a link-local or cloud metadata address" in bodies[1]
    assert "metadata.google.internal is a cloud metadata service" in bodies[2]


def test_a_prompt_over_a_long_page_is_answered_by_the_small_model(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    workspace: Path,
    print_run: PrintRun,
) -> None:
    items = "".join(f"<li>change number {n}</li>" for n in range(3000))
    web_server.pages["/long"] = WebPage(f"<h1>Release</h1><ul>{items}</ul>".encode())
    (workspace / "agent.yaml").write_text("small_model: anthropic:claude-small\n")
    fake_llm.script(Reply.text("Change 1234 is the one about caching."), model="claude-small")
    fake_llm.script(
        Reply.tool_call(
            "web_fetch", {"url": web_server.url("/long"), "prompt": "Which change is caching?"}
        ),
        Reply.text("It is change 1234."),
        model="claude-test",
    )

    run = print_run("which change?", "--yes", "--output-format", "json")

    assert run.code == 0, run.stderr
    summary, turn = fake_llm.requests[1], fake_llm.requests[2]
    assert summary.model == "claude-small"
    assert ANSWER_SYSTEM in json.dumps(summary.body)
    assert "change number 2999" in json.dumps(summary.body)
    assert "Which change is caching?" in json.dumps(summary.body)
    result = json.dumps(turn.body)
    assert "Change 1234 is the one about caching." in result
    assert "change number 2999" not in result
    assert "web_fetch" in run.json()["usage_by_purpose"]


def test_the_repl_asks_per_domain_and_always_allows_only_that_domain(
    spawn: Spawn, fake_llm: FakeLlmServer, web_server: FakeWebServer
) -> None:
    web_server.pages["/changelog"] = WebPage(PAGE)
    web_server.pages["/other"] = WebPage(b"<p>other page</p>")
    fake_llm.script(
        Reply.tool_call("web_fetch", {"url": web_server.url("/changelog")}),
        Reply.tool_call("web_fetch", {"url": web_server.url("/other")}),
        Reply.tool_call("web_fetch", {"url": web_server.url("/other", host="localhost")}),
        Reply.text("Read them."),
    )
    term = spawn()
    term.prompt()
    term.send_line("read the changelog")
    asked = clean(term.expect("lways for 127.0.0.1 this session", timeout=60))
    term.send_line("a")
    again = clean(term.expect("lways for localhost this session", timeout=60))
    term.send_line("n")
    term.expect("Read them.", timeout=60)
    term.prompt(timeout=60)
    listed = term.command("/permissions")
    term.exit()

    assert f"web_fetch {web_server.url('/changelog')}" in asked
    # From the answer "a" on: the second fetch from 127.0.0.1 is not asked about.
    questions = [line for line in again.splitlines() if line.startswith("Allow?")]
    assert len(questions) == 2
    assert questions[0].endswith("lways for 127.0.0.1 this session: a")
    assert "lways for localhost" in questions[1]
    assert f"web_fetch(url={web_server.url('/other')})" in again
    assert web_server.hits == {"/changelog": 1, "/other": 1}
    assert "web_fetch(domain:127.0.0.1)" in listed

"""``small_model`` moving along its chain, end to end: the real ``agent -p`` against the fake
LLM server, web_fetch's answer over a long page as the side request that moves it."""

from __future__ import annotations

import json
from pathlib import Path

from sessions import SessionStore
from tests.agent.test_subagent_recovery_e2e import hooked
from tests.agent.test_subagents_e2e import answered, text_of
from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.web_server import FakeWebServer, WebPage
from tools.web.tool import ANSWER_SYSTEM

MODEL = MODELS["anthropic"]
SMALL = "anthropic:claude-small"
LONG_PAGE = "".join(f"<li>change number {n}</li>" for n in range(3000)).encode()
"""A page long enough that web_fetch has a model answer its prompt over it."""


def test_small_models_fallback_is_in_the_stream_and_the_hook_tagged_as_its_own(
    fake_llm: FakeLlmServer, web_server: FakeWebServer, workspace: Path, decoy_home: Path
) -> None:
    hooked(decoy_home, seen := workspace / "hooks")
    web_server.pages["/long"] = WebPage(LONG_PAGE)
    fetch = {"url": web_server.url("/long"), "prompt": "Which change is caching?"}

    def respond(request: RecordedRequest) -> Step:
        if ANSWER_SYSTEM in text_of(request):  # small_model is unknown: the session's answers
            if request.model == "claude-small":
                return Fault.status(404, "not_found_error", message="model: claude-small")
            return Reply.text("number 7")
        if answered(request):
            return Reply.text("read it")
        return Reply.tool_call("web_fetch", fetch)

    fake_llm.respond_with(respond)
    (workspace / "agent.yaml").write_text(f"small_model: {SMALL}\n")
    run = run_agent(
        "-p", "which change?", "--yes", "--model", MODEL, "--output-format", "stream-json",
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    [switch] = [line for line in lines if line.get("subtype") == "model_fallback"]
    assert (switch["from"], switch["to"]) == (SMALL, MODEL)
    assert (switch["model_role"], switch["purpose"]) == ("small_model", "web_fetch")
    assert "parent_tool_use_id" not in switch  # nor a child's
    result = lines[-1]
    assert (result["subtype"], result["result"]) == ("success", "read it")
    assert result["fallbacks"] == []  # the session's model never moved
    session = SessionStore(decoy_home / ".agent").load(result["session_id"])
    assert session.model_state.current == MODEL  # a resume goes on on the session's model
    assert not session.model_state.sticky_fallback
    payloads = [json.loads(path.read_text()) for path in seen.iterdir()]
    [recovery] = [p for p in payloads if p["hook_event_name"] == "Recovery"]
    assert recovery["kind"] == "fallback"
    assert recovery["details"] == {
        "from_model": SMALL,
        "to_model": MODEL,
        "reason": recovery["details"]["reason"],
        "model_role": "small_model",
        "purpose": "web_fetch",
    }
    assert recovery["details"]["reason"]

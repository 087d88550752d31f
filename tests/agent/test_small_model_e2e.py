"""``small_model`` moving along its chain, end to end: the real ``agent -p`` against the fake
LLM server, web_fetch's answer over a long page as the side request that moves it."""

from __future__ import annotations

import json
from pathlib import Path

from sessions import SessionStore
from tests.fakes.cli import MODELS, run_agent
from tests.fakes.hook_log import hook_payloads, record_recovery_hooks
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.side_requests import fetching, serve_long_page
from tests.fakes.web_server import FakeWebServer

MODEL = MODELS["anthropic"]
SMALL = "anthropic:claude-small"


def test_small_models_fallback_is_in_the_stream_and_the_hook_tagged_as_its_own(
    fake_llm: FakeLlmServer, web_server: FakeWebServer, workspace: Path, decoy_home: Path
) -> None:
    record_recovery_hooks(decoy_home, seen := workspace / "hooks")
    fetch = serve_long_page(web_server, "Which change is caching?")

    def side(request: RecordedRequest) -> Step:  # small_model is unknown: the session's answers
        if request.model == "claude-small":
            return Fault.status(404, "not_found_error", message="model: claude-small")
        return Reply.text("number 7")

    fake_llm.respond_with(fetching(fetch, side, Reply.text("read it")))
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
    payloads = hook_payloads(seen)
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

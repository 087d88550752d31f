"""A definition's ``model`` and ``permissionMode`` end to end: ``agent -p`` against the fake
LLM server, children told apart by their system prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.subagents import AgentCatalog
from sessions import SessionStore
from tests.fakes.cli import MODELS, Protocol, run_agent
from tests.fakes.hook_log import hook_payloads, record_recovery_hooks
from tests.fakes.in_process import agent_in_process
from tests.fakes.llm_script import Fault, Reply, Step, ToolCallPart
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.subagents import (
    always,
    answered,
    calls_then,
    define,
    delegating,
    gone_then_fallback,
    is_child,
    job_of,
    run_parent,
    task_call_id,
    text_of,
)

CHILD_MODEL: dict[Protocol, tuple[str, str]] = {
    "anthropic": ("haiku", "claude-haiku-4-5"),  # Claude Code's alias, none configured
    "openai": ("openai:gpt-mini", "gpt-mini"),
}


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_child_uses_the_model_its_definition_names(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, protocol: Protocol
) -> None:
    named, sent_as = CHILD_MODEL[protocol]
    define(workspace / ".claude" / "agents", "quick", f"model: {named}\n")
    define(workspace / ".claude" / "agents", "same", "model: inherit\n")

    child = always(Reply.text("child answer", input_tokens=50, output_tokens=5))
    fake_llm.respond_with(delegating(child, ("fast", "quick"), ("slow", "same")))
    result = run_parent(fake_llm, workspace, decoy_home, protocol, "--output-format", "json")

    assert result.code == 0, result.stderr
    parent_model = MODELS[protocol].partition(":")[2]
    models = {
        ("fast" if "fast" in text_of(r) else "slow"): r.body["model"]
        for r in fake_llm.requests
        if is_child(r)
    }
    assert models == {"fast": sent_as, "slow": parent_model}
    assert all(r.body["model"] == parent_model for r in fake_llm.requests if not is_child(r))
    data = result.json()
    assert data["usage_by_purpose"]["subagent"]["input_tokens"] == 100  # both children counted


def test_a_childs_model_that_fails_falls_back_to_the_parents_chain(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    define(workspace / ".agent" / "agents", "gone", "model: anthropic:claude-gone\n")

    fake_llm.respond_with(gone_then_fallback)
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    assert "answered on the fallback" in text_of(fake_llm.requests[-1])
    assert "Sub-agent gone:" in result.stderr  # the fallback is told, naming the child
    assert "claude-gone" in result.stderr


def test_a_childs_fallback_is_reported_as_the_childs_and_never_moves_the_session(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    define(workspace / ".agent" / "agents", "gone", "model: anthropic:claude-gone\n")
    seen = workspace / "hooks"
    record_recovery_hooks(decoy_home, seen)

    fake_llm.respond_with(gone_then_fallback)
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    data = result.json()
    [entry] = data["fallbacks"]
    call_id = task_call_id(fake_llm)
    assert {k: v for k, v in entry.items() if k not in ("reason", "agent_id")} == {
        "from": "anthropic:claude-gone",
        "to": MODELS["anthropic"],
        "agent_type": "gone",
        "parent_tool_use_id": call_id,
    }
    assert entry["reason"]
    store = SessionStore(decoy_home / ".agent")
    assert store.load(entry["agent_id"]).header.parent_tool_use_id == call_id  # the child
    session = store.load(data["session_id"])
    assert session.model_state.current == MODELS["anthropic"]
    assert not session.model_state.sticky_fallback  # a resume goes on on the session's model
    assert [e["type"] for e in session.events if "fallback" in e["type"]] == ["subagent_fallback"]
    payloads = hook_payloads(seen)
    [recovery] = [p for p in payloads if p["hook_event_name"] == "Recovery"]
    assert recovery["kind"] == "fallback"
    assert recovery["details"]["from_model"] == "anthropic:claude-gone"
    assert recovery["details"]["agent_type"] == "gone"
    assert recovery["details"]["agent_id"] == entry["agent_id"]
    assert recovery["session_id"] == data["session_id"]
    notified = [p for p in payloads if p["hook_event_name"] == "Notification"]
    assert not any("claude-gone" in p["message"] for p in notified)  # told once, as Recovery


def test_a_fallback_names_the_child_whose_request_caused_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    for name in ("gone", "lost"):  # two kinds, one model: the children share its provider
        define(workspace / ".agent" / "agents", name, "model: anthropic:claude-flaky\n")
    (workspace / "agent.yaml").write_text("recovery: {overload_fallback_after: 1}\n")

    def child(request: RecordedRequest) -> Step:
        if request.body["model"] != "claude-flaky":
            return Reply.text("answered on the fallback")
        if '"two"' in job_of(request):  # not the child that made the provider: "one"
            return Fault.status(529, "overloaded_error")
        return Reply.text("answered on its own model")

    fake_llm.respond_with(delegating(child, ("one", "gone"), ("two", "lost")))
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    calls = {
        block["input"]["prompt"]: block["id"]
        for block in fake_llm.requests[-1].body["messages"][1]["content"]
        if block["type"] == "tool_use"
    }
    [entry] = result.json()["fallbacks"]
    assert (entry["agent_type"], entry["parent_tool_use_id"]) == ("lost", calls["two"])


def _flaky_child(request: RecordedRequest) -> Step:
    """The child's own model is overloaded once; the child steps on the parent's model (slowly
    enough for its model's trial to be due), then its own model answers again."""
    if request.body["model"] == "claude-flaky" and not answered(request):
        return Fault.status(529, "overloaded_error")
    if answered(request):
        return Reply.text(f"child done on {request.body['model']}")
    return Reply(
        parts=(ToolCallPart("list_files", json.dumps({"path": "."})),),
        stop="tool_use",
        delta_pause=0.3,  # the trial of the child's model is due 1s after the switch
    )


def test_stream_json_tags_a_childs_fallback_and_its_return_with_the_task_call(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    define(workspace / ".agent" / "agents", "flaky", "model: anthropic:claude-flaky\n")
    (workspace / "agent.yaml").write_text(
        "recovery: {overload_fallback_after: 1, breaker_cooldown: 1, base_backoff: 0.05}\n"
    )

    fake_llm.respond_with(delegating(_flaky_child, ("job", "flaky")))
    result = run_parent(
        fake_llm, workspace, decoy_home, "anthropic", "--output-format", "stream-json"
    )

    assert result.code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    switches = [
        line
        for line in lines
        if line["type"] == "system" and line["subtype"] in ("model_fallback", "model_restored")
    ]
    call_id = task_call_id(fake_llm)
    assert [(s["subtype"], s["parent_tool_use_id"], s["agent_type"]) for s in switches] == [
        ("model_fallback", call_id, "flaky"),
        ("model_restored", call_id, "flaky"),
    ]
    fell, back = switches
    assert (fell["from"], fell["to"]) == ("anthropic:claude-flaky", MODELS["anthropic"])
    assert fell["returns_in"] is not None
    assert (back["model"], back["from"]) == ("anthropic:claude-flaky", MODELS["anthropic"])
    assert "child done on claude-flaky" in text_of(fake_llm.requests[-1])
    fallbacks = lines[-1]["fallbacks"]
    assert [(f["reason"], f["parent_tool_use_id"]) for f in fallbacks][1:] == [
        ("primary restored", call_id)
    ]


_writes_a_file = delegating(
    calls_then(
        Reply.tool_call("write_file", {"path": "out.txt", "content": "hi\n"}),
        Reply.text("child done"),
    ),
    ("write", "writer"),
)


def _run_asking(fake_llm: FakeLlmServer, workspace: Path, home: Path) -> str:
    """``-p`` without --yes: nobody to ask, so a call that needs approval is refused."""
    fake_llm.respond_with(_writes_a_file)
    result = run_agent(
        "-p",
        "write it",
        "--model",
        MODELS["anthropic"],
        server=fake_llm,
        workspace=workspace,
        home=home,
    )
    assert result.code == 0, result.stderr
    return result.stderr


def test_a_projects_bypass_permissions_waits_until_the_person_allows_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    path = define(workspace / ".claude" / "agents", "writer", "permissionMode: bypassPermissions\n")

    stderr = _run_asking(fake_llm, workspace, decoy_home)

    assert f"Sub-agent writer ({path}) asks for permissionMode: bypassPermissions" in stderr
    assert "/agents allow writer" in stderr
    assert not (workspace / "out.txt").exists()
    child_results = [r for r in fake_llm.requests if is_child(r) and answered(r)]
    assert "approval" in json.dumps(child_results[-1].body["messages"][-1]).lower()

    catalog = AgentCatalog(workspace, decoy_home / ".agent", decoy_home)
    catalog.trust(catalog.kinds["writer"])  # what /agents allow writer does
    fake_llm.reset()
    stderr = _run_asking(fake_llm, workspace, decoy_home)

    assert "asks for permissionMode" not in stderr
    assert (workspace / "out.txt").read_text() == "hi\n"

    define(workspace / ".claude" / "agents", "writer", "permissionMode: bypassPermissions\n#\n")
    (workspace / "out.txt").unlink()
    fake_llm.reset()
    stderr = _run_asking(fake_llm, workspace, decoy_home)  # a changed file is asked about again

    assert "asks for permissionMode" in stderr
    assert not (workspace / "out.txt").exists()


def test_the_persons_own_definition_may_ask_less_and_plan_only_narrows(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    define(decoy_home / ".claude" / "agents", "writer", "permissionMode: acceptEdits\n")

    stderr = _run_asking(fake_llm, workspace, decoy_home)

    assert "asks for permissionMode" not in stderr
    assert (workspace / "out.txt").read_text() == "hi\n"

    (workspace / "out.txt").unlink()
    define(workspace / ".claude" / "agents", "writer", "permissionMode: plan\n")  # wins the name
    fake_llm.respond_with(_writes_a_file)
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--yes")

    assert result.code == 0, result.stderr
    assert not (workspace / "out.txt").exists()  # even with --yes, a plan-mode child only reads


async def test_a_fallback_inside_a_child_on_its_own_model_counts_in_the_stats(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    define(workspace / ".agent" / "agents", "gone", "model: anthropic:claude-gone\n")

    fake_llm.respond_with(gone_then_fallback)
    overrides = {"model": MODELS["anthropic"], "approval": "full-auto"}
    with agent_in_process(fake_llm, workspace, decoy_home, overrides) as (agent, out):
        before = agent.recovery_stats().fallbacks
        result = await agent.run_turn("delegate it")
        assert result.error is None, result.error
        assert agent.recovery_stats().fallbacks == before + 1  # the child's, counted
        assert agent.provider.stats().fallbacks == before  # the session's model never moved
        shown = out.getvalue()
        assert shown.count("Sub-agent gone: Switched from anthropic:claude-gone") == 1

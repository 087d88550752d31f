"""A child's retries, waits and give-ups end to end: ``agent -p`` against the fake LLM server.
They are the child's, named as such, and counted with the run's; they are never the parent's
turn waiting or failing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.fakes.hook_log import hook_payloads, record_recovery_hooks
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.subagents import (
    always,
    answered,
    delegating,
    is_child,
    run_parent,
    task_call_id,
    task_calls,
    text_of,
)
from tests.fakes.terminal import Spawn, clean

FAST = "recovery: {max_attempts: 2, base_backoff: 0.05, max_backoff: 0.1}\n"


# The parent delegates one job; every request of the child is overloaded, so it gives up
# after its attempts; the parent's own requests are answered.
overloaded_child = delegating(
    always(Fault.status(529, "overloaded_error")), ("doomed", "general-purpose")
)


def test_a_childs_give_up_is_the_childs_and_the_parent_finishes(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(FAST)
    seen = workspace / "hooks"
    record_recovery_hooks(decoy_home, seen)

    fake_llm.respond_with(overloaded_child)
    result = run_parent(
        fake_llm, workspace, decoy_home, "anthropic", "--output-format", "stream-json"
    )

    assert result.code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    final = lines[-1]
    assert (final["subtype"], final["is_error"]) == ("success", False)
    assert final["result"] == "parent answer"
    assert "retry_after" not in final
    assert "The sub-agent failed" in text_of(fake_llm.requests[-1])
    call_id = task_call_id(fake_llm)
    recovery = [line for line in lines if line["type"] == "system" and line["subtype"] in _RECOVERY]
    assert {line["subtype"] for line in recovery} == {"api_retry", "gave_up"}
    assert all(line["parent_tool_use_id"] == call_id for line in recovery), recovery
    assert all(line["agent_type"] == "general-purpose" and line["agent_id"] for line in recovery)
    retried = [line for line in recovery if line["subtype"] == "api_retry"]
    assert len(retried) == sum(is_child(r) for r in fake_llm.requests) - 1
    assert final["retries"] == len(retried)  # the run's retries count the child's
    payloads = hook_payloads(seen)
    assert not [p for p in payloads if p.get("kind") == "provider_unavailable"], payloads


_RECOVERY = {"api_retry", "gave_up", "shared_wait", "model_fallback"}


def test_a_childs_wait_is_tagged_and_the_parents_own_retry_is_not(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(FAST)
    failed: set[str] = set()

    def respond(request: RecordedRequest) -> Step:
        who = "child" if is_child(request) else "parent"
        if f"{who}{answered(request)}" not in failed:  # each one's first request fails once
            failed.add(f"{who}{answered(request)}")
            return Fault.status(529, "overloaded_error")
        if who == "child":
            return Reply.text("child answer")
        if answered(request):
            return Reply.text("parent answer")
        return task_calls(("steady", "explore"))

    fake_llm.respond_with(respond)
    result = run_parent(
        fake_llm, workspace, decoy_home, "anthropic", "--output-format", "stream-json"
    )

    assert result.code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    retries = [line for line in lines if line.get("subtype") == "api_retry"]
    tags = [(line.get("parent_tool_use_id"), line.get("agent_type")) for line in retries]
    call_id = task_call_id(fake_llm)
    assert tags == [(None, None), (call_id, "explore"), (None, None)]
    assert lines[-1]["retries"] == 3


def test_the_json_result_keeps_a_childs_give_up_as_the_childs_event(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(FAST)

    fake_llm.respond_with(overloaded_child)
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    data = result.json()
    assert data["status"] == "done"
    assert data["error"] is None
    events: list[dict[str, Any]] = data["events"]
    assert not [e for e in events if e["type"] in ("gave_up", "retry_scheduled")]
    told = [e for e in events if e["type"] == "subagent_recovery"]
    assert [e["recovery"]["type"] for e in told][-1] == "gave_up"
    assert {e["tool_use_id"] for e in told} == {task_call_id(fake_llm)}
    assert data["retries"] == sum(e["recovery"]["type"] == "retry_scheduled" for e in told)


def test_the_chaos_report_counts_the_childrens_retries(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text("recovery: {base_backoff: 0.01, max_backoff: 0.05}\n")

    jobs = [(f"job{n}", "explore") for n in range(4)]
    fake_llm.respond_with(delegating(always(Reply.text("child answer")), *jobs))
    result = run_parent(
        fake_llm, workspace, decoy_home, "anthropic",
        "--output-format", "json", "--chaos", "overload:rate=0.5:seed=3",
    )  # fmt: skip

    assert result.code == 0, result.stderr
    data = result.json()
    children = [e for e in data["events"] if e["type"] == "subagent_recovery"]
    childs_retries = sum(e["recovery"]["type"] == "retry_scheduled" for e in children)
    assert childs_retries > 0, result.stderr
    total = re.search(r"recovery: (\d+) retr(?:y|ies)", result.stderr)
    assert total, result.stderr
    rows = [int(n) for n in re.findall(r"(\d+) retr(?:y|ies) of", result.stderr)]
    assert int(total.group(1)) == sum(rows) == data["retries"]
    assert data["retries"] >= childs_retries


def test_the_repl_counts_a_childs_wait_down_on_the_childs_line(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    told: list[bool] = []

    def child(request: RecordedRequest) -> Step:
        if not told:
            told.append(True)
            return Fault.status(429, "rate_limit_error", headers={"retry-after": "4"})
        return Reply.text("child answer")

    fake_llm.respond_with(delegating(child, ("wait", "explore"), then="All done."))
    term = spawn("--yes")
    term.prompt()
    term.send_line("delegate it")
    waiting = term.expect(r"explore: do wait · Rate limited by anthropic, retrying in \ds", 60)
    shown = clean(waiting + term.expect("All done.", 60))
    term.prompt()
    term.exit()

    assert "Traceback" not in shown
    assert "Sub-agent explore done: do wait" in shown
    # The turn's status line went on saying what the parent does: it was not the one waiting.
    assert "Rate limited by anthropic — retrying" not in shown

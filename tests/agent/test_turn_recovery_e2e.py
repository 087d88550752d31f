"""Turn-level recovery end to end: overflow → compaction, truncation → continuation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.cli import MODELS, Protocol, run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer

FAST_RECOVERY = """
recovery: {base_backoff: 0.01, max_backoff: 0.05}
compaction: {keep_last_tool_results: 1}
"""


def _agent(fake_llm: FakeLlmServer, workspace: Path, home: Path, protocol: Protocol, *args: str):
    return run_agent(
        "-p",
        "do the task",
        "--yes",
        "--output-format",
        "json",
        "--model",
        MODELS[protocol],
        *args,
        server=fake_llm,
        workspace=workspace,
        home=home,
    )


def _event_types(data: dict[str, object]) -> list[str]:
    events = data["events"]
    assert isinstance(events, list)
    return [event["type"] for event in events]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_overflow_is_compacted_and_the_turn_succeeds(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(FAST_RECOVERY)
    for name in "abc":
        (workspace / f"{name}.txt").write_text(f"contents of {name} " * 50)
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "a.txt"}),
        Reply.tool_call("read_file", {"path": "b.txt"}),
        Reply.tool_call("read_file", {"path": "c.txt"}),
        Fault.overflow(),
        Reply.text("Read all three."),
    )

    run = _agent(fake_llm, workspace, decoy_home, protocol)

    assert run.code == 0, run.stderr
    data = run.json()
    assert data["result"] == "Read all three."
    assert "compaction_applied" in _event_types(data)
    retried = json.dumps(fake_llm.requests[-1].body)
    assert "contents of a" not in retried  # the old tool result was snipped
    assert "contents of c" in retried  # the latest one was kept


def test_overflow_that_persists_fails_cleanly_after_bounded_requests(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(FAST_RECOVERY)
    for name in "abc":
        (workspace / f"{name}.txt").write_text(f"contents of {name} " * 50)
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "a.txt"}),
        Reply.tool_call("read_file", {"path": "b.txt"}),
        Reply.tool_call("read_file", {"path": "c.txt"}),
        *[Fault.overflow()] * 20,  # the summary request overflows too
    )

    run = _agent(fake_llm, workspace, decoy_home, "anthropic")

    assert run.code == 1
    data = run.json()
    assert data["status"] == "failed"
    assert "context" in data["error"].lower()
    assert "agent --resume" in run.stderr
    # 3 tool steps and the first overflow, then at most one retry per compaction stage
    # plus the summary request.
    assert len(fake_llm.requests) <= 3 + 1 + 3 + 1
    assert fake_llm.remaining > 0


def test_truncated_answer_is_escalated_then_continued_into_one_answer(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(
        FAST_RECOVERY
        + 'max_tokens: 1000\nmodels: {"anthropic:claude-test": {max_output_tokens: 4000}}\n'
    )
    fake_llm.script(
        Reply.text("Part one", stop="max_tokens"),
        Reply.text("Part one, longer;", stop="max_tokens"),  # the escalated retry
        Reply.text(" part two;", stop="max_tokens"),
        Reply.text(" part two, longer;", stop="max_tokens"),
        Reply.text(" the end."),
    )

    run = _agent(fake_llm, workspace, decoy_home, "anthropic")

    assert run.code == 0, run.stderr
    data = run.json()
    assert data["result"] == "Part one, longer; part two, longer; the end."
    types = _event_types(data)
    assert types.count("tokens_escalated") == 2
    assert types.count("continuation_requested") == 2
    bodies = [request.body for request in fake_llm.requests]
    assert [body["max_tokens"] for body in bodies] == [1000, 2000, 1000, 2000, 1000]


def test_truncated_tool_call_is_dropped_and_the_task_still_completes(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(
        FAST_RECOVERY + "recovery: {escalate_max_tokens: false}\n"
    )
    cut = '{"path": "big.txt", "content": "line\\nline\\nli'
    fake_llm.script(
        Reply.tool_call("write_file", raw_arguments=cut, stop="max_tokens"),
        Reply.tool_call("write_file", {"path": "big.txt", "content": "line\n"}),
        Reply.text("Wrote big.txt."),
    )

    run = _agent(fake_llm, workspace, decoy_home, "anthropic")

    assert run.code == 0, run.stderr
    assert (workspace / "big.txt").read_text() == "line\n"
    assert run.json()["result"] == "Wrote big.txt."
    continuation = json.dumps(fake_llm.requests[1].body)
    assert "smaller steps" in continuation


def test_continuations_are_bounded_per_turn(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(
        "recovery: {escalate_max_tokens: false}\ncompaction: {max_output_recovery_limit: 2}\n"
    )
    fake_llm.script(*[Reply.text(f"chunk{i} ", stop="max_tokens") for i in range(3)])

    run = _agent(fake_llm, workspace, decoy_home, "anthropic")

    assert run.code == 0, run.stderr
    data = run.json()
    assert data["result"] == "chunk0 chunk1 chunk2 "
    assert "continuation_exhausted" in _event_types(data)
    assert len(fake_llm.requests) == 3

"""The chaos benchmark's pieces: pass^k, the table, and the naive agent on the fake server."""

from __future__ import annotations

from pathlib import Path

from benchmarks.chaos.naive import run_naive
from benchmarks.chaos.run import NOTES, NOTES_TEXT, Tally, answer, render
from providers.chaos import ChaosPlan, ChaosSpec, FaultKind
from tests.fakes.llm_server import FakeLlmServer


def test_pass_k_counts_a_task_only_when_every_run_succeeded() -> None:
    tally = Tally()
    for task, outcomes in {0: [True, True, True], 1: [True, False, True]}.items():
        for ok in outcomes:
            tally.add(task, ok, requests=3, seconds=1.0)
    assert (tally.successes, tally.runs, tally.pass_k()) == (5, 6, 0.5)
    table = render("overload", {"agent": tally}, baseline=0.5, k=3)
    assert "agent     5/6       0.50          3.6   2.0x" in table


def test_the_naive_agent_does_the_task_and_gives_up_under_an_outage(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.respond_with(answer)
    (tmp_path / NOTES).write_text(NOTES_TEXT)
    assert run_naive(None, fake_llm.anthropic_url, "m", "task-4: write", tmp_path)
    assert (tmp_path / "t4.txt").read_text() == "token-4"
    assert len(fake_llm.requests) == 3  # read, write, answer

    plan = ChaosPlan(ChaosSpec.parse("outage:seconds=600"))
    assert not run_naive(plan, fake_llm.anthropic_url, "m", "task-5: write", tmp_path)
    assert plan.requests == 3  # the SDK's own two retries, then it fails


def test_the_naive_agent_calls_a_failed_tool_again_and_stops_at_an_overflow(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.respond_with(answer)
    (tmp_path / NOTES).write_text(NOTES_TEXT)
    plan = ChaosPlan(ChaosSpec.parse("tools:rate=0.5:seed=8"))
    assert run_naive(plan, fake_llm.anthropic_url, "m", "task-6: write", tmp_path, 0.01)
    assert {f.kind for f in plan.injected} == {FaultKind.TOOL_FAIL, FaultKind.TOOL_HANG}
    assert (tmp_path / "t6.txt").read_text() == "token-6"

    # The notes it read make the second request long enough to overflow; it has no
    # compaction, so the run fails.
    plan = ChaosPlan(ChaosSpec.parse("overflow:turn=2"))
    assert not run_naive(plan, fake_llm.anthropic_url, "m", "task-7: write", tmp_path)
    assert [fault.request for fault in plan.injected] == [2]

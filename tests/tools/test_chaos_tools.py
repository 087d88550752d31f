"""``--chaos tools``: faults injected at the executor boundary meet the real machinery — the
retries, the tool's own timeout, the output limit — and never touch a file."""

from __future__ import annotations

from pathlib import Path

from providers.chaos import ChaosPlan, ChaosSpec, FaultKind
from tests.tools.conftest import MakeHarness
from tools import ToolSettings
from tools.chaos import ToolChaos


def chaos(spec: str) -> tuple[ChaosPlan, ToolChaos]:
    plan = ChaosPlan(ChaosSpec.parse(spec))
    return plan, ToolChaos(plan)


async def test_a_hung_call_is_stopped_by_the_tools_own_timeout(
    make_harness: MakeHarness, workspace: Path
) -> None:
    plan, runner = chaos("tools:rate=1:seed=3")
    harness = make_harness(settings=ToolSettings(file_tool_timeout=0.05), runner=runner)
    result = await harness.run("write_file", path="a.txt", content="hello")
    assert [fault.kind for fault in plan.injected] == [FaultKind.TOOL_HANG]
    assert result.is_error
    assert "write_file timed out after 0.05s" in result.content
    assert [e.type for e in harness.of_type("tool_timed_out")] == ["tool_timed_out"]
    assert not (workspace / "a.txt").exists()  # a hung call never ran its tool


async def test_a_flood_of_output_is_cut_to_the_output_limit(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the real first line\n")
    plan, runner = chaos("tools:rate=1:seed=0")
    harness = make_harness(settings=ToolSettings(max_output_chars=5_000), runner=runner)
    result = await harness.run("read_file", path="notes.txt")
    assert [fault.kind for fault in plan.injected] == [FaultKind.TOOL_FLOOD]
    assert not result.is_error
    assert "the real first line" in result.content
    assert "chaos: this tool printed far too much output" in result.content
    assert len(result.content) < 6_000


async def test_a_failed_call_is_retried_when_it_may_be_and_reported_when_not(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("notes\n")
    plan, runner = chaos("tools:rate=0.5:seed=20")  # fail, then nothing
    harness = make_harness(runner=runner)
    result = await harness.run("read_file", path="notes.txt")
    assert [fault.kind for fault in plan.injected] == [FaultKind.TOOL_FAIL]
    assert not result.is_error
    assert "notes" in result.content
    assert [e.type for e in harness.events] == ["tool_started", "tool_retried"]

    plan, runner = chaos("tools:rate=1:seed=8")
    harness = make_harness(runner=runner)
    result = await harness.run("write_file", path="b.txt", content="x")  # never retried
    assert result.is_error
    assert "chaos: the tool failed before doing anything" in result.content
    assert not (workspace / "b.txt").exists()


async def test_the_same_seed_meets_the_same_tool_faults(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("notes\n")
    runs = []
    for _ in range(2):
        plan, runner = chaos("tools:rate=0.5:seed=5")
        harness = make_harness(settings=ToolSettings(file_tool_timeout=0.05), runner=runner)
        for _ in range(6):
            await harness.run("read_file", path="notes.txt")
        runs.append(plan.injected)
    assert runs[0] == runs[1]
    assert len(runs[0]) >= 2

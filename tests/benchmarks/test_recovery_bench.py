"""The recovery benchmark at a tiny scale: it renders every row and computes every target."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.recovery.policies import baselines
from benchmarks.recovery.run import main
from benchmarks.recovery.scenarios import scenarios
from benchmarks.recovery.simtime import VirtualTime
from benchmarks.recovery.table import measure, render
from recovery import RecoverySettings


def test_virtual_time_wakes_concurrent_sleepers_in_time_order() -> None:
    time = VirtualTime()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, delays: list[float]) -> str:
        for delay in delays:
            await time.sleep(delay)
            woke.append((name, time.now()))
        return name

    names = asyncio.run(
        time.run(
            [lambda: sleeper("a", [3, 3]), lambda: sleeper("b", [1, 4]), lambda: sleeper("c", [])]
        )
    )
    assert names == ["a", "b", "c"]
    assert woke == [("b", 1), ("a", 3), ("b", 5), ("a", 6)]


def test_tiny_run_renders_every_scenario_with_targets() -> None:
    lines = measure(scenarios(0.05), RecoverySettings(), seed=3)
    table = render(lines, ["recovery", *(policy.name for policy in baselines())])
    for key in "abcdefg":
        assert f"({key})" in table
    targeted = [line for line in lines if line.row.target]
    assert {line.row.metric for line in targeted} >= {
        "success rate",
        "recovery lag / oracle",
        "retry-after violations",
        "calls / no-jitter calls",
    }
    assert all(line.passed is not None for line in targeted)
    assert all(len(line.values) == 5 for line in lines)


def test_same_seed_same_table() -> None:
    first = render(measure(scenarios(0.05), RecoverySettings(), seed=7), list("rsnet"))
    second = render(measure(scenarios(0.05), RecoverySettings(), seed=7), list("rsnet"))
    assert first == second


def test_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--scale", "0.05"])
    out = capsys.readouterr().out
    assert out.startswith("| scenario | metric | recovery |")

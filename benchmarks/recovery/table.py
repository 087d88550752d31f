"""Runs every policy through every scenario and renders one Markdown table with the targets."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.recovery.policies import Policy, baselines, oracle, recovery
from benchmarks.recovery.scenarios import Result, Scenario, run
from recovery import RecoverySettings

Check = Callable[[Result, list[Result]], bool]


@dataclass(frozen=True)
class Row:
    """One metric of one scenario: how to read it off a result, and its target (if any)."""

    scenario: Scenario
    metric: str
    value: Callable[[Result], float]
    target: str = ""
    check: Check | None = None


@dataclass(frozen=True)
class Line:
    """A rendered row: the metric's value for each policy and whether recovery met the target."""

    row: Row
    values: list[float]
    passed: bool | None


def _success_check(mine: Result, others: list[Result]) -> bool:
    return all(mine.success >= other.success for other in others)


def rows(scenarios: list[Scenario], settings: RecoverySettings) -> list[Row]:
    """The metrics of the issue, with their targets where it sets one."""
    budget = settings.budget_capacity / settings.retry_cost
    out: list[Row] = []
    for sc in scenarios:
        out.append(
            Row(sc, "success rate", lambda r: r.success, ">= every baseline", _success_check)
        )
        if sc.key == "f":
            continue
        sustained = sc.key in "de"
        out.append(
            Row(
                sc,
                "amplification (requests/logical)",
                lambda r: r.amplification,
                "<= 1.1" if sustained else "",
                (lambda m, o: m.amplification <= 1.1) if sustained else None,
            )
        )
    return out + _special_rows(scenarios, settings, budget)


def _special_rows(
    scenarios: list[Scenario], settings: RecoverySettings, budget: float
) -> list[Row]:
    by_key = {sc.key: sc for sc in scenarios}
    limit = settings.max_total_wait
    return [
        Row(
            by_key["a"],
            "recovery lag / oracle",
            lambda r: r.lag,
            "<= 1.2",
            lambda m, o: m.lag <= 1.2,
        ),
        Row(
            by_key["b"],
            "retry-after violations",
            lambda r: r.violations,
            "0",
            lambda m, o: m.violations == 0,
        ),
        Row(
            by_key["g"],
            "retry-after violations",
            lambda r: r.violations,
            "0",
            lambda m, o: m.violations == 0,
        ),
        Row(by_key["e"], "longest call before giving up (s)", lambda r: max(r.give_up, default=0)),
        # max_total_wait bounds the waiting between requests, not the requests themselves.
        Row(
            by_key["e"],
            "longest waiting in a call given up (s)",
            lambda r: max(r.give_up_waiting, default=0),
            f"<= {limit:.0f} (max_total_wait)",
            lambda m, o: max(m.give_up_waiting, default=0) <= limit,
        ),
        Row(
            by_key["e"],
            "most extra requests in a session",
            lambda r: r.extra_requests,
            f"<= {budget:.0f} (budget)",
            lambda m, o: m.extra_requests <= budget,
        ),
        Row(
            by_key["f"],
            "calls / no-jitter calls",
            lambda r: r.herd_calls,
            "<= 0.5",
            lambda m, o: m.herd_calls <= 0.5,
        ),
    ]


def measure(scenarios: list[Scenario], settings: RecoverySettings, seed: int) -> list[Line]:
    """Run everything; lag and herd calls come out as ratios to the oracle / no-jitter run."""
    policies = [recovery(settings), *baselines()]
    results: dict[str, list[Result]] = {}
    for sc in scenarios:
        results[sc.key] = [run(sc, policy, seed) for policy in policies]
        if sc.recovers_at is not None:
            _divide_lag(results[sc.key], run(sc, oracle(sc.recovers_at), seed))
        if sc.key == "f":
            _divide_calls(results[sc.key], policies)
    lines = []
    for row in rows(scenarios, settings):
        mine, *others = results[row.scenario.key]
        passed = row.check(mine, others) if row.check is not None else None
        lines.append(Line(row, [row.value(r) for r in results[row.scenario.key]], passed))
    return lines


def _divide_lag(results: list[Result], yardstick: Result) -> None:
    for result in results:
        result.lag = result.lag / yardstick.lag if yardstick.lag else math.inf


def _divide_calls(results: list[Result], policies: list[Policy]) -> None:
    names = [policy.name for policy in policies]
    reference = results[names.index("exp no jitter")].requests
    for result in results:
        result.herd_calls = result.requests / reference


def render(lines: list[Line], names: list[str]) -> str:
    """The table as Markdown: one row per metric, one column per policy."""
    head = ["scenario", "metric", *names, "target", "met"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for line in lines:
        cells = [f"({line.row.scenario.key}) {line.row.scenario.title}", line.row.metric]
        cells += [_number(value) for value in line.values]
        met = "" if line.passed is None else ("pass" if line.passed else "FAIL")
        out.append("| " + " | ".join([*cells, line.row.target, met]) + " |")
    return "\n".join(out)


def _number(value: float) -> str:
    if math.isinf(value):
        return "inf"
    if value == int(value) and abs(value) >= 10:
        return f"{value:.0f}"
    return f"{value:.2f}"

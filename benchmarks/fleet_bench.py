"""Fleet benchmark: many real ``agent -p`` processes on one key, shared state vs independent.

Run from the repository root: ``python benchmarks/fleet_bench.py`` (a few minutes;
``--agents 10 --steps 3 --rate 2 --burst 4 --rounds 1``). Each round runs the fleet twice
against the fake LLM server with a capacity limit (a token bucket of ``burst`` requests
refilled at ``rate`` a second; 429 with retry-after beyond it): once sharing recovery state
through the file backend, once with ``recovery.shared.backend: off``. Every agent does a task
of ``steps`` tool calls and an answer. The server holds each agent's first request until all
are up, so start-up time (long on a busy machine) does not blur the comparison.

Exit status 1 if sharing misses a target: at least 50 % fewer 429s, no request sent before a
retry-after any agent had been given, and a makespan no longer than independent agents'.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.fleet import run_fleet, task_responder, write_config
from tests.fakes.llm_server import FakeLlmServer

MODES = {"shared": "file", "independent": "off"}


@dataclass(frozen=True)
class Outcome:
    """One fleet run, as the server and the clock saw it."""

    requests: int
    throttled: int
    early: int
    early_settled: int
    makespan: float
    served: float
    done: int


def run_once(backend: str, args: argparse.Namespace) -> Outcome:
    """Run the fleet once with ``backend`` against a fresh capacity-limited server."""
    with FakeLlmServer() as server, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        server.respond_with(task_responder(args.steps))
        capacity = server.limit_capacity(rate=args.rate, burst=args.burst)
        capacity.start_gate(args.agents)
        config = write_config(root / "agent.yaml", {"backend": backend})
        fleet = run_fleet(server, root, agents=args.agents, config=config, timeout=900)
        done = sum(1 for run in fleet.runs if run.code == 0 and run.json()["status"] == "done")
        admitted = capacity.admitted_at
        served = admitted[-1] - admitted[0] if admitted else 0.0
        return Outcome(
            capacity.received,
            capacity.throttled,
            capacity.early,
            capacity.early_settled,
            fleet.makespan,
            served,
            done,
        )


def render(results: dict[str, list[Outcome]], agents: int) -> str:
    """The side-by-side table, medians over rounds."""

    def median(mode: str, field: str) -> float:
        return float(statistics.median(getattr(outcome, field) for outcome in results[mode]))

    rows = [
        ("tasks finished", "done", "{:.0f}/" + str(agents)),
        ("requests the server received", "requests", "{:.0f}"),
        ("429s received", "throttled", "{:.0f}"),
        ("requests arriving during a retry-after already sent", "early", "{:.0f}"),
        ("... of them 250 ms or more after it was sent", "early_settled", "{:.0f}"),
        ("makespan (s)", "makespan", "{:.1f}"),
        ("first to last answered request (s)", "served", "{:.1f}"),
    ]
    lines = [
        "| metric | shared (file) | independent | shared / independent |",
        "|---|---:|---:|---:|",
    ]
    for name, field, shape in rows:
        shared, alone = median("shared", field), median("independent", field)
        ratio = f"{shared / alone:.2f}" if alone else "-"
        lines.append(f"| {name} | {shape.format(shared)} | {shape.format(alone)} | {ratio} |")
    return "\n".join(lines)


def targets_met(results: dict[str, list[Outcome]]) -> list[str]:
    """The targets sharing missed (empty: all met)."""
    shared, alone = results["shared"], results["independent"]
    throttled = statistics.median(o.throttled for o in shared)
    missed = []
    if alone and throttled > 0.5 * statistics.median(o.throttled for o in alone):
        missed.append("at least 50 % fewer 429s")
    if any(o.early_settled for o in shared):
        missed.append("no request before a known retry-after")
    makespan = statistics.median(o.makespan for o in shared)
    if makespan > statistics.median(o.makespan for o in alone):
        missed.append("makespan no longer than independent")
    return missed


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 if sharing misses a target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10, help="concurrent agent processes")
    parser.add_argument("--steps", type=int, default=3, help="tool calls per task")
    parser.add_argument("--rate", type=float, default=2.0, help="server requests per second")
    parser.add_argument("--burst", type=int, default=4, help="server bucket size")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each mode (median)")
    args = parser.parse_args(argv)
    results: dict[str, list[Outcome]] = {mode: [] for mode in MODES}
    for round_number in range(args.rounds):
        order = list(MODES.items())
        # Alternate which mode goes first: the machine's load drifts between runs.
        for mode, backend in order if round_number % 2 == 0 else order[::-1]:
            outcome = run_once(backend, args)
            results[mode].append(outcome)
            print(f"{mode}: {outcome}", file=sys.stderr, flush=True)
    print(render(results, args.agents))
    missed = targets_met(results)
    print("\nall targets met" if not missed else "\nmissed: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

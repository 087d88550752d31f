"""Recovery efficiency benchmark: `RecoveringProvider` against the retry policies people use.

Run from the repository root: ``python -m benchmarks.recovery`` (or
``python benchmarks/recovery/run.py``). Everything runs on virtual time; it takes seconds.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import structlog

from benchmarks.recovery.policies import baselines
from benchmarks.recovery.scenarios import scenarios
from benchmarks.recovery.table import measure, render
from recovery import RecoverySettings


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 if recovery misses a target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1, help="seed of every random draw")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="shrink clients and horizons (e.g. 0.1)"
    )
    args = parser.parse_args(argv)
    # Recovery logs every retry; thousands of simulated ones would drown the table.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    started = time.perf_counter()
    lines = measure(scenarios(args.scale), RecoverySettings(), args.seed)
    names = ["recovery", *(policy.name for policy in baselines())]
    print(render(lines, names))
    missed = [line for line in lines if line.passed is False]
    elapsed = time.perf_counter() - started
    print(
        f"\n{len(lines) - len(missed)} rows met or untargeted, {len(missed)} missed; {elapsed:.1f}s"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

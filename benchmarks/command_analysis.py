"""Command analysis benchmark: what one reading of a shell command costs.

Run: ``python benchmarks/command_analysis.py`` (about 15 s; reads and writes nothing).

1. Typical commands (goal: under 1 ms each), uncached: the grammar's parse plus the walk.
2. 100 kB commands (goal: under 50 ms of CPU): a here-document writing a file and an inline
   Python script (the usual ways a command gets that long), 4,000 ``sed -e`` expressions,
   and the worst case, 1,500 lines of pipelines and lists (7,500 simple commands), with the
   share of that the grammar's parse takes.
3. A cache hit: the same command string again, as every decision after the first reads it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: this checkout's code
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.shell_reading import analyse
from tools.shell_reading.reading import _parse, read_at

TYPICAL_GOAL = 1e-3
LONG_GOAL = 50e-3

TYPICAL = [
    "ls -la",
    "git status",
    "pytest -q tests/test_app.py -x",
    "git log --oneline -20 | grep -i fix",
    "npm test && npm run lint",
    "rg -n 'TODO' src/ > todo.txt",
    "find . -name '*.py' -exec grep -l foo {} +",
    "cd build && cmake .. && make -j4 2>&1 | tail -20",
    "bash -c 'for f in *.txt; do wc -l \"$f\"; done'",
    "FOO=1 timeout 30 python3 -m pytest -k 'not slow' | tee log.txt",
]


def _big() -> dict[str, str]:
    body = "\n".join(
        f"def f{i}(x):\n    return x * {i}  # \"quoted\" 'text' $HOME `tick`" for i in range(1_600)
    )
    dense = "\n".join(
        f"echo line {i} $(date) | grep -v x >> out{i % 7}.txt && cd dir{i} || true"
        for i in range(1_500)
    )
    return {
        "here-document writing a file": f"cat > module.py <<'EOF'\n{body}\nEOF\npython3 module.py",
        "inline python -c script": "python3 -c " + repr(body),
        "sed with 4,000 -e": "sed -i "
        + " ".join(f"-e 's/old{i}/new{i}/g'" for i in range(4_000))
        + " src/app.py",
        "1,500 lines of pipelines": dense,
    }


def _seconds(
    run: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    times = []
    for _ in range(runs):
        start = clock()
        run()
        times.append(clock() - start)
    return statistics.median(times)


def _against(seconds: float, goal: float) -> str:
    return "within the goal" if seconds < goal else "over the goal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    read_at("true", 0)  # load the grammar once, outside the figures

    print(f"Typical commands, uncached ({args.runs} runs each, median)")
    medians = []
    for command in TYPICAL:
        seconds = _seconds(lambda c=command: read_at(c, 0), args.runs)
        medians.append(seconds)
        print(f"  {seconds * 1e3:7.3f} ms  {command}")
    slowest = max(medians)
    print(f"  {slowest * 1e3:7.3f} ms  the slowest: {_against(slowest, TYPICAL_GOAL)} (< 1 ms)")

    print("\n100 kB commands, uncached (5 runs each, median; wall time, then CPU time)")
    for name, command in _big().items():
        seconds = _seconds(lambda c=command: read_at(c, 0), 5)
        cpu = _seconds(lambda c=command: read_at(c, 0), 5, time.process_time)
        found = read_at(command, 0)
        print(
            f"  {seconds * 1e3:7.1f} ms {cpu * 1e3:7.1f} ms  {name} ({len(command) // 1000} kB, "
            f"{len(found.commands):,} simple commands): {_against(cpu, LONG_GOAL)} (< 50 ms)"
        )
    source = command.encode()
    parse = _seconds(lambda: _parse(source), 5, time.process_time)
    walk = max(cpu - parse, 0.0)
    print(
        f"  of the last: the grammar's parse {parse * 1e3:.1f} ms, the walk {walk * 1e3:.1f} ms "
        f"({walk / max(len(found.commands), 1) * 1e6:.1f} µs a simple command)"
    )

    command = TYPICAL[3]
    analyse(command)
    hits = 100_000
    start = time.perf_counter()
    for _ in range(hits):
        analyse(command)
    print(f"\nCache hit: {(time.perf_counter() - start) / hits * 1e6:.2f} µs per analysis")


if __name__ == "__main__":
    main()

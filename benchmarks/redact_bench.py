"""Redaction benchmark: the cost of `Redactor` on text that holds no secret (nearly all of it).

Run from the repository root: ``python benchmarks/redact_bench.py`` (seconds). Every session
record, tool line and log line goes through the redactor, so what matters is the check of
clean text: a log field, a session record, a 12 KB tool output, a log event's dict, and
building the redactor (once per agent). Three environment secrets, as a typical shell has.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sessions import Redactor

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQeUa" * 2,
    "GITHUB_TOKEN": "ghp_" + "0a1b2c3d4e5f6g7h8i9j" * 2,
    "DEPLOY_TOKEN": "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQeUb",
}
RECORD = json.dumps(
    {
        "ts": 1.0,
        "type": "message",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Fixed. " * 40}]},
    }
)
CASES: dict[str, object] = {
    "log field (9 chars)": "read_file",
    f"session record ({len(RECORD)} chars)": RECORD,
    "tool output (12 KB)": "def foo(x):\n    return x + 1\n" * 400,
    "log event (dict, 6 strings)": {
        "event": "tool_finished",
        "tool": "read_file",
        "path": "src/app/models.py",
        "status": "ok",
        "model": "anthropic:claude-sonnet",
        "session": "01jq3abcdefghijk",
    },
}


def check(redactor: Redactor, value: object) -> object:
    if isinstance(value, str):
        return redactor.text(value)
    assert isinstance(value, dict)
    return redactor(None, "info", dict(value))


def best_us(run: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(run, number=number, repeat=7)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000)
    args = parser.parse_args()
    redactor = Redactor(SECRETS)
    print(f"{'clean text':<34}{'µs per call':>12}")
    for name, value in CASES.items():
        number = args.number if len(str(value)) < 2_000 else args.number // 20
        cost = best_us(functools.partial(check, redactor, value), number)
        print(f"{name:<34}{cost:>12.2f}")
    print(f"{'build a Redactor (3 secrets)':<34}{best_us(lambda: Redactor(SECRETS), 50):>12.2f}")


if __name__ == "__main__":
    main()

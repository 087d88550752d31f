"""Terminal bytes benchmark: what the REPL writes to the terminal for each byte of an answer.

Run: ``python benchmarks/terminal_bytes_bench.py`` (about 55 s; ``--pause S``, ``--runs N``).
The real ``agent`` REPL runs in a 100x40 pseudo-terminal against the local fake LLM server
(tests/fakes), with a throw-away HOME and colours on, as a person's terminal has them. Each
case is a 2.3-2.5 KB answer, streamed in 4-character deltas ``--pause`` seconds apart
(0.01 s: about 100 tokens a second): prose without a blank line, a fenced code block, a list,
and prose in long lines (each wraps over four or five rows, printed as they fill).
For each it prints the bytes the terminal received from Enter to the next prompt, the answer's
bytes, and their ratio; the goal (at most 3) is on the last line.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import pexpect

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.startup import PROMPT_READY, environment
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

GOAL = 3.0
LINES = 30
WIDTH, HEIGHT = 100, 40
_TEXT = (
    "the retry budget refills with time so a new run is never punished for an old one and "
    "every **recovery** step is logged with `ErrorKind` and the model that answered"
)
_WORDS = _TEXT.split(" ")


def _line(n: int, words: int = 15) -> str:
    return " ".join(_WORDS[(n * 5 + k) % len(_WORDS)] for k in range(words))


def prose() -> str:
    """30 lines of one paragraph, no blank line: nothing closes a block until the end."""
    return "\n".join(f"{_line(n)}." for n in range(LINES)) + "\n"


def code() -> str:
    """A sentence, then a 28-line Python block in a fence."""
    body = [
        f"    total += step_{n}(budget, attempt={n}, reason='{_line(n, 8)}')" for n in range(26)
    ]
    lines = ["Here is the loop:", "```python", "def run(budget):", *body, "```"]
    return "\n".join(lines) + "\n"


def bulleted() -> str:
    """A heading and 29 list items."""
    return "\n".join(["## What changed", *(f"- {_line(n, 15)}" for n in range(LINES - 1))]) + "\n"


def long_lines() -> str:
    """Six lines of 70 words: each is written over several rows."""
    return "\n".join(f"{_line(n, 70)}." for n in range(6)) + "\n"


CASES = {"prose": prose, "code block": code, "list": bulleted, "long lines": long_lines}


def measure(server: FakeLlmServer, home: Path, answer: str, pause: float) -> int:
    """Bytes the terminal receives from Enter to the next prompt, for one streamed answer."""
    server.script(Reply.text(answer, delta_chars=4, delta_pause=pause))
    env = environment(home) | {"ANTHROPIC_BASE_URL": server.anthropic_url, "COLUMNS": ""}
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agent", "--model", "anthropic:claude-bench"],
        cwd=str(home),
        env=env,
        dimensions=(HEIGHT, WIDTH),
    )
    try:
        child.expect_exact(PROMPT_READY.encode(), timeout=120)
        child.send(b"answer please\r")
        child.expect_exact(PROMPT_READY.encode(), timeout=120)
        written = len(child.before)
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pause", type=float, default=0.01, help="seconds between deltas")
    parser.add_argument("--runs", type=int, default=1, help="runs per case (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeLlmServer() as server:
        home = Path(tmp)
        print(f"{'case':<12}{'terminal bytes':>16}{'answer bytes':>14}{'ratio':>8}")
        worst = 0.0
        for name, make in CASES.items():
            answer = make()
            size = len(answer.encode())
            written = statistics.median(
                measure(server, home, answer, args.pause) for _ in range(args.runs)
            )
            ratio = written / size
            worst = max(worst, ratio)
            print(f"{name:<12}{written:>16,.0f}{size:>14,}{ratio:>7.1f}x")
        verdict = "met" if worst <= GOAL else "missed"
        print(f"goal: at most {GOAL:g} bytes per answer byte — worst {worst:.1f}x, {verdict}")


if __name__ == "__main__":
    main()

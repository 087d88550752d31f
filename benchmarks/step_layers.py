"""Where a step's CPU goes: main-thread CPU time of each layer's calls during `turn_bench`'s turns.

Run: ``python benchmarks/step_layers.py`` (``--turns N --steps N``). It runs the agent's side
of ``benchmarks/turn_bench.py`` (same fake server in its own process, same turn of
``--steps`` ``read_file`` calls) with the layers below wrapped in a timer, and prints each
one's ``time.thread_time`` per step during the measured turns. Layers nest (a message's
append holds its records' appends), so the figures do not add up; each also holds the cost
of two thread-time readings (a few µs, ~15 µs on a loaded machine). Compare trees or
changes at the same load: these calls run cold after each wait for the network, so their
cost grows with the machine's other work.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.session import Agent
from benchmarks import turn_bench

LAYERS = [
    ("agent.engine.loop", "AgentLoop._append"),
    ("sessions.writer", "SessionWriter.append_message"),
    ("sessions.writer", "SessionWriter.append_record"),
    ("sessions.writer", "SessionWriter.append_event"),
    ("sessions.writer", "SessionWriter.append_usage"),
    ("sessions.files", "TouchedFiles.answered"),
    ("tools.files", "read_window"),
    ("sessions.redact", "Redactor.contains_secret"),
    ("providers.events", "EventBus.__call__"),
    ("providers.adapters.anthropic", "AnthropicProvider._body"),
    ("recovery.usage", "UsageLedger.add"),
    ("recovery.fleet.shared", "Fleet.acquire"),
    ("recovery.fleet.shared", "Fleet.release"),
    ("recovery.fleet.shared", "Fleet.keep_alive"),
    ("recovery.fleet.file_store", "FileStore.update"),
    ("tools.executor", "ToolExecutor._emit"),
    ("tools.repeats", "RepeatedCalls.record"),
    ("agent.engine.instructions", "NearestInstructions.annotate"),
    ("agent.terminal.ui", "ConsoleUI.on_tool_result"),
    ("agent.terminal.ui", "ConsoleUI.on_event"),
    ("agent.app", "_log_event"),
]
"""(module, attribute path) of each layer timed: where a name is imported elsewhere, the
calls through that other name are not counted. A file read whole is kept as read_file read
it, so the file state's own look at the file (``sessions.files.snapshot``) is not among them."""


class LayerClock:
    """Wraps functions so that their main-thread CPU time is summed while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, module: str, path: str) -> None:
        owner: Any = importlib.import_module(module)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, self._timed(path, getattr(owner, name)))

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return function(*args, **kwargs)
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] += time.thread_time() - started
                self.calls[label] += 1

        return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--turns", type=int, default=12)
    args = parser.parse_args()
    clock = LayerClock()
    for module, path in LAYERS:
        clock.wrap(module, path)
    measured = _measuring(clock)
    with tempfile.TemporaryDirectory() as tmp, turn_bench.server_process(args.steps) as server:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        for n in range(args.steps):
            (work / f"code{n}.py").write_text(turn_bench.FILE_TEXT)
        for _ in range(args.turns):
            asyncio.run(turn_bench.agent_turn(server, home, work, args.steps))
    steps = args.turns * (args.steps + 1)
    turns = f"{args.turns} turns of {args.steps} read_file calls + the answer"
    print(f"Main-thread CPU per step ({turns})")
    print(f"{'whole turn':<36}{measured[0] / steps * 1e6:>8.0f} µs")
    for label in sorted(clock.seconds, key=lambda name: -clock.seconds[name]):
        per_step = clock.seconds[label] / steps * 1e6
        print(f"{label:<36}{per_step:>8.1f} µs  ({clock.calls[label] / steps:.2f} calls)")


def _measuring(clock: LayerClock) -> list[float]:
    """Turns the clock on for the measured turns only (not the warm-up); returns the list that
    sums their main-thread CPU time."""
    total = [0.0]
    run_turn = Agent.run_turn

    async def measured_turn(agent: Agent, prompt: str | None, *args: Any, **kwargs: Any) -> Any:
        if prompt != turn_bench.PROMPT:
            return await run_turn(agent, prompt, *args, **kwargs)
        clock.on, started = True, time.thread_time()
        try:
            return await run_turn(agent, prompt, *args, **kwargs)
        finally:
            clock.on = False
            total[0] += time.thread_time() - started

    Agent.run_turn = measured_turn  # type: ignore[method-assign]
    return total


if __name__ == "__main__":
    main()

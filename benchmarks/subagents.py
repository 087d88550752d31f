"""Sub-agent benchmark: one agent fanning out to N children vs N independent agents, on one
rate-limited key.

Run from the repository root: ``python benchmarks/subagents.py`` (a minute or two;
``--children 8 --steps 2 --rate 2 --burst 4``). The fake LLM server admits ``rate`` requests
a second (a bucket of ``burst``; 429 with retry-after beyond it). In the fan-out, one
``agent -p`` asks for ``children`` `task` calls in one answer (``subagents.max_concurrent``
set to all of them); each child makes ``steps`` tool calls and answers. The independent run
is ``children`` ``agent -p`` processes doing the same job each, sharing nothing
(``recovery.shared.backend: off``). It prints wall time, requests and 429s of each.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from tests.fakes.cli import run_agent
from tests.fakes.fleet import run_fleet, task_responder, write_config
from tests.fakes.llm_script import Reply, Step, ToolCallPart
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest

CHILD_MARK = "You are a sub-agent"


def fan_out(args: argparse.Namespace) -> tuple[float, int, int, bool]:
    """One agent, ``children`` task calls: (seconds, requests, 429s, finished)."""
    with FakeLlmServer() as server, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        child = task_responder(args.steps)

        def respond(request: RecordedRequest) -> Step:
            if CHILD_MARK in json.dumps(request.body):
                return child(request)
            if '"tool_result"' in json.dumps(request.body["messages"][-1]):
                return Reply.text("all done")
            calls = tuple(
                ToolCallPart("task", json.dumps({"description": f"job {n}", "prompt": f"job {n}"}))
                for n in range(args.children)
            )
            return Reply(parts=calls, stop="tool_use")

        server.respond_with(respond)
        capacity = server.limit_capacity(rate=args.rate, burst=args.burst)
        workspace, home = root / "workspace", root / "home"
        workspace.mkdir()
        home.mkdir()
        config = {"subagents": {"max_concurrent": args.children}, "stream_idle_timeout": 600}
        (workspace / "agent.yaml").write_text(yaml.safe_dump(config))
        started = time.monotonic()
        run = run_agent(
            "-p", "fan out", "--yes", "--output-format", "json",
            server=server, workspace=workspace, home=home, timeout=900,
        )  # fmt: skip
        seconds = time.monotonic() - started
        finished = run.code == 0 and "failed" not in run.stdout
        return seconds, capacity.received, capacity.throttled, finished


def independent(args: argparse.Namespace) -> tuple[float, int, int, bool]:
    """``children`` agents sharing nothing: (seconds, requests, 429s, all finished)."""
    with FakeLlmServer() as server, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        server.respond_with(task_responder(args.steps))
        capacity = server.limit_capacity(rate=args.rate, burst=args.burst)
        config = write_config(root / "agent.yaml", {"backend": "off"})
        fleet = run_fleet(server, root, agents=args.children, config=config, timeout=900)
        finished = all(run.code == 0 for run in fleet.runs)
        return fleet.makespan, capacity.received, capacity.throttled, finished


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=8, help="children / agents")
    parser.add_argument("--steps", type=int, default=2, help="tool calls per job")
    parser.add_argument("--rate", type=float, default=2.0, help="server requests per second")
    parser.add_argument("--burst", type=int, default=4, help="server bucket size")
    args = parser.parse_args(argv)
    rows = {"fan-out (one agent)": fan_out(args), "independent agents": independent(args)}
    print("| run | wall time (s) | requests | 429s | finished |")
    print("|---|---:|---:|---:|---|")
    for name, (seconds, requests, throttled, finished) in rows.items():
        print(f"| {name} | {seconds:.1f} | {requests} | {throttled} | {finished} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

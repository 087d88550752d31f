"""pass^k under chaos (τ-bench's reliability figure): the same tasks, k times each, per profile.

Three agents do each task (read a notes file, write a file, then answer, each with a tool)
against the fake LLM server, with the faults of ``--chaos PROFILE:seed=S`` injected at the
HTTP transport and in the tool calls:

- ``agent``: this agent, ``agent -p --chaos ... --fallback-model ...``;
- ``naive``: the Anthropic SDK with its default retries (2) and no fallback (`naive`);
- ``off``: this agent with ``--no-recovery``.

The fake model acts as a model would: it calls the next tool the task needs, calls again
one whose result was an error, and answers once both tools have worked.

Run from the repository root: ``python -m benchmarks.chaos`` (``--quick``: the ``all``
profile, 3 tasks, k=5). Per profile it prints success, pass^k, requests per success (every
request sent, faulted or not) and wall time relative to a clean run; the last line is
``pass^k agent=X naive=Y``. The backoffs are shortened (``FAST``) so a run takes seconds.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.chaos.naive import run_naive
from providers.chaos import ChaosPlan, ChaosSpec
from tests.fakes.cli import agent_command, agent_env
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

PROFILES = (
    "rate-limits",
    "overload",
    "flaky-network",
    "truncation",
    "overflow",
    "outage",
    "tools",
    "all",
)
MODES = ("agent", "naive", "off")
MODEL = "claude-chaos"
FAULTS = "rate=0.3:retry_after=0.5:stall=0.5:seconds=3:turn=2"
TOOL_TIMEOUT = 1.0
NOTES = "notes.txt"
NOTES_TEXT = "".join(f"note {n}: the build passed on the second try\n" for n in range(150))
"""About 6 KB: a conversation holding it overflows, and compaction can shorten it."""
FAST = {
    "recovery.base_backoff": "0.2",
    "recovery.probe_backoff": "0.5",
    "recovery.overload_backoff": "0.5",
    "recovery.max_backoff": "1",
    "recovery.rate_limit_floor": "0.2",
    "recovery.breaker_cooldown": "2",
    "tools.file_tool_timeout": f"{TOOL_TIMEOUT:g}",
}
_ENDED = re.compile(r"ended: \d+ faults in (\d+) requests")
_TASK = re.compile(r"task-(\d+)")


@dataclass
class Tally:
    """One (profile, mode): each task's outcomes, the requests sent and the time taken."""

    outcomes: dict[int, list[bool]] = field(default_factory=dict)
    requests: int = 0
    seconds: float = 0.0

    def add(self, task: int, ok: bool, requests: int, seconds: float) -> None:
        self.outcomes.setdefault(task, []).append(ok)
        self.requests += requests
        self.seconds += seconds

    @property
    def runs(self) -> int:
        return sum(len(runs) for runs in self.outcomes.values())

    @property
    def successes(self) -> int:
        return sum(sum(runs) for runs in self.outcomes.values())

    def pass_k(self) -> float:
        """Share of tasks that succeeded in every one of their k runs."""
        return sum(all(runs) for runs in self.outcomes.values()) / max(1, len(self.outcomes))


def answer(request: Any) -> Reply:
    """The fake model: read ``notes.txt``, write ``t<N>.txt``, then say it is done."""
    body = request.body
    if "working memory" in json.dumps(body.get("system", "")):
        return Reply.text("Summary: the task reads notes.txt, then writes its file.")
    messages = body.get("messages", [])
    task = int(found.group(1)) if (found := _TASK.search(json.dumps(messages))) else 0
    worked = _tools_that_worked(messages)
    if "read_file" not in worked:
        return Reply.tool_call("read_file", {"path": NOTES})
    if "write_file" not in worked:
        return Reply.tool_call("write_file", {"path": f"t{task}.txt", "content": f"token-{task}"})
    return Reply.text(f"done task-{task}")


def _tools_that_worked(messages: list[Any]) -> set[str]:
    names: dict[str, str] = {}
    worked: set[str] = set()
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                names[block["id"]] = block["name"]
            elif block.get("type") == "tool_result" and not block.get("is_error"):
                worked.add(names.get(block["tool_use_id"], ""))
    return worked


def run_agent_once(
    server: FakeLlmServer, spec: str | None, task: int, extra: list[str]
) -> tuple[bool, int, float]:
    with tempfile.TemporaryDirectory() as temp:
        home, workspace = Path(temp) / "home", Path(temp) / "ws"
        home.mkdir()
        workspace.mkdir()
        (workspace / NOTES).write_text(NOTES_TEXT)
        flags = [f"--set={key}={value}" for key, value in FAST.items()]
        args = ["-p", f"task-{task}: write t{task}.txt", "--yes", "--model", f"anthropic:{MODEL}"]
        args += ["--fallback-model", "anthropic:claude-fallback", *flags, *extra]
        if spec:
            args += ["--chaos", spec]
        before = len(server.requests)
        started = time.perf_counter()
        proc = subprocess.run(
            agent_command(*args),
            cwd=workspace,
            env=agent_env(server, home),
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - started
        written = workspace / f"t{task}.txt"
        ok = proc.returncode == 0 and written.exists() and written.read_text() == f"token-{task}"
        ended = _ENDED.search(proc.stderr)
        requests = int(ended.group(1)) if ended else len(server.requests) - before
        return ok, requests, seconds


def run_naive_once(server: FakeLlmServer, spec: str | None, task: int) -> tuple[bool, int, float]:
    with tempfile.TemporaryDirectory() as temp:
        plan = ChaosPlan(ChaosSpec.parse(spec)) if spec else None
        before = len(server.requests)
        (Path(temp) / NOTES).write_text(NOTES_TEXT)
        started = time.perf_counter()
        prompt = f"task-{task}: write"
        done = run_naive(plan, server.anthropic_url, MODEL, prompt, Path(temp), TOOL_TIMEOUT)
        seconds = time.perf_counter() - started
        written = Path(temp) / f"t{task}.txt"
        ok = done and written.exists() and written.read_text() == f"token-{task}"
        requests = plan.requests if plan else len(server.requests) - before
        return ok, requests, seconds


def main(argv: list[str] | None = None) -> int:
    """Print one table per profile and the pass^k line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="tasks per profile (N)")
    parser.add_argument("-k", type=int, default=5, help="runs of each task (k)")
    parser.add_argument("--profiles", nargs="*", default=list(PROFILES), choices=PROFILES)
    parser.add_argument("--quick", action="store_true", help="all only, 3 tasks, k=5")
    args = parser.parse_args(argv)
    if args.quick:
        args.tasks, args.k, args.profiles = 3, 5, ["all"]
    totals = {mode: Tally() for mode in MODES}
    with FakeLlmServer() as server:
        server.respond_with(answer)
        clean = [run_agent_once(server, None, task, [])[2] for task in range(args.tasks)]
        baseline = sum(clean) / len(clean)
        for index, profile in enumerate(args.profiles):
            tallies = {mode: Tally() for mode in MODES}
            for task in range(args.tasks):
                for trial in range(args.k):
                    spec = f"{profile}:seed={trial * 100 + task}:{FAULTS}"
                    tallies["agent"].add(task, *run_agent_once(server, spec, task, []))
                    tallies["naive"].add(task, *run_naive_once(server, spec, task))
                    tallies["off"].add(task, *run_agent_once(server, spec, task, ["--no-recovery"]))
            print(render(profile, tallies, baseline, args.k))
            for mode in MODES:
                for task, runs in tallies[mode].outcomes.items():
                    totals[mode].outcomes.setdefault(index * 1000 + task, []).extend(runs)
    print(
        f"pass^{args.k} agent={totals['agent'].pass_k():.2f} naive={totals['naive'].pass_k():.2f}"
    )
    return 0


def render(profile: str, tallies: dict[str, Tally], baseline: float, k: int) -> str:
    """``profile`` and one row per agent."""
    rows = [
        f"\n{profile}",
        f"  {'agent':<6} {'success':>9} {f'pass^{k}':>7} {'req/success':>12} {'time':>6}",
    ]
    for mode, tally in tallies.items():
        per = tally.requests / tally.successes if tally.successes else float("inf")
        time_ratio = tally.seconds / max(1, tally.runs) / baseline
        rows.append(
            f"  {mode:<6} {tally.successes:>4}/{tally.runs:<4} {tally.pass_k():>7.2f} "
            f"{per:>12.1f} {time_ratio:>5.1f}x"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())

"""Sandbox benchmarks: what confining a command costs, and how fast the policy decides.

Run: ``python benchmarks/sandbox_bench.py`` (about 20 s; writes only to a temp dir).

1. Launch: ``bash -c true`` started directly (as run_command did before the sandbox), through
   the launcher unrestricted (``sandbox: off``), and through the launcher under Landlock
   (``workspace-write``). Medians over interleaved runs, and ratios to the direct launch.
2. run_command end to end: the whole tool call (protected-path snapshot, launch, output) for
   ``true``, sandboxed and not.
3. Policy: `check_command` on ordinary commands and on inputs built to make a backtracking
   check take quadratic time, each 120 KB.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from providers import ToolUseBlock
from tools import ToolExecutor, ToolSettings
from tools.guard.landlock import abi_version
from tools.guard.policy import check_command
from tools.guard.sandbox import Sandbox


def _time(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def launch(runs: int, workspace: Path) -> None:
    confined = Sandbox("workspace-write", abi=abi_version())
    variants: dict[str, list[str]] = {
        "bash -c true": ["bash", "-c", "true"],
        "launcher, off": Sandbox("off").argv("true", workspace),
        "launcher, workspace-write": confined.argv("true", workspace),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):  # interleaved, so a busy moment hits every variant alike
        for name, argv in variants.items():
            times[name].append(_time(lambda a=argv: subprocess.run(a, cwd=workspace, check=True)))
    base = statistics.median(times["bash -c true"])
    print(f"Launch of `true` ({runs} runs each, median; Landlock ABI {abi_version()})")
    print(f"{'variant':<28}{'median':>10}{'ratio':>9}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<28}{median * 1000:>8.1f}ms{median / base:>8.2f}x")


def run_command(runs: int, workspace: Path) -> None:
    async def one(executor: ToolExecutor) -> None:
        call = ToolUseBlock(id="b", name="run_command", input={"command": "true"})
        result = await executor.execute(call)
        assert not result.is_error, result.content

    def executor(sandbox: Sandbox) -> ToolExecutor:
        return ToolExecutor(
            workspace=workspace,
            settings=ToolSettings(),
            approval="full-auto",
            approver=None,
            sandbox=sandbox,
        )

    variants = {
        "off": executor(Sandbox("off")),
        "workspace-write": executor(Sandbox("workspace-write", abi=abi_version())),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, tools in variants.items():
            times[name].append(_time(lambda t=tools: asyncio.run(one(t))))
    base = statistics.median(times["off"])
    print(f"\nrun_command `true`, whole tool call ({runs} runs each, median)")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<28}{median * 1000:>8.1f}ms{median / base:>8.2f}x")


def policy() -> None:
    home, workspace = Path("/home/person"), Path("/home/person/project")
    inputs = {
        "ordinary (pytest && ruff)": "pytest -q && ruff check .",
        "1 MB (refused unread)": "echo " + "a" * 1_000_000,
        "120 KB of `f(){ `": "f(){ " * 24_000,
        "120 KB of `curl `": "curl " * 24_000,
        "120 KB of `/.`": "rm -rf " + "/." * 60_000 + "x",
        "120 KB of `sudo -a`": "sudo " + "-a " * 40_000,
        "120 KB of `(`": "(" * 120_000,
    }
    print("\nPolicy check_command")
    for name, command in inputs.items():
        seconds = min(
            _time(lambda c=command: check_command(c, home=home, workspace=workspace))
            for _ in range(3)
        )
        print(f"{name:<28}{seconds * 1000:>8.1f}ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        launch(args.runs, workspace)
        run_command(args.runs // 2, workspace)
    policy()


if __name__ == "__main__":
    main()

"""Sandbox benchmarks: what confining a command costs, and how fast the policy decides.

Run: ``python benchmarks/sandbox_bench.py`` (about 40 s; writes only to a temp dir).

1. Launch: ``bash -c true``, then ``git status`` in a 1,000-file repository, each started
   directly (as run_command did before the sandbox), through the launcher unrestricted
   (``sandbox: off``), under Landlock alone, and under namespaces plus Landlock. Medians over
   interleaved runs, ratios to the direct launch, and the cost of the namespace layer as a
   ratio to Landlock alone (goal: at most 1.5x for ``true``, 1.2x for ``git status``).
2. run_command end to end: the whole tool call (protected-path snapshot, launch, output) for
   ``true``, sandboxed and not.
3. Policy: `check_command` on ordinary commands and on inputs built to make a backtracking
   check take quadratic time, each 120 KB.
4. Protected paths: `protected_scan.scan` (once per command) in the 1,000-file repository
   and in a 30,000-entry tree (where its budget ends the walk), and the launcher's search
   for deny rules' paths (`namespaces.denied_paths`) in the same tree.
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
from tools.guard.namespaces import denied_paths
from tools.guard.policy import check_command
from tools.guard.protected_scan import scan
from tools.guard.sandbox import Sandbox, namespaces_missing
from tools.shell_reading import analyse


def _time(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _repository(root: Path, files: int) -> Path:
    """A committed repository of ``files`` small files in 20 directories."""
    repo = root / "repo"
    for n in range(files):
        path = repo / f"d{n % 20}" / f"f{n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{n}\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "files"], cwd=repo, check=True)
    return repo


def launch(runs: int, workspace: Path) -> None:
    missing = namespaces_missing()
    sandboxes = {
        "launcher, off": Sandbox("off"),
        "Landlock": Sandbox("workspace-write", abi=abi_version()),
    }
    if not missing:
        sandboxes["namespaces + Landlock"] = Sandbox(
            "workspace-write", abi=abi_version(), namespaces=True
        )
    repo = _repository(workspace, 1_000)
    print(f"Landlock ABI {abi_version()}; namespaces: {missing or 'available'}")
    for command, where in (("true", workspace), ("git status --porcelain", repo)):
        variants = {"direct": ["bash", "-c", command]}
        variants |= {name: box.argv(command, where) for name, box in sandboxes.items()}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(runs):  # interleaved, so a busy moment hits every variant alike
            for name, argv in variants.items():
                times[name].append(
                    _time(lambda a=argv, w=where: subprocess.run(a, cwd=w, check=True))
                )
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(f"\nLaunch of `{command}` ({runs} runs each, median)")
        print(f"{'variant':<28}{'median':>10}{'vs direct':>11}{'vs Landlock':>13}")
        for name, median in medians.items():
            direct, landlock = median / medians["direct"], median / medians["Landlock"]
            print(f"{name:<28}{median * 1000:>8.1f}ms{direct:>10.2f}x{landlock:>12.2f}x")


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
        seconds = min(_time(lambda c=command: _uncached(c, home, workspace)) for _ in range(3))
        print(f"{name:<28}{seconds * 1000:>8.1f}ms")


def protected(workspace: Path) -> None:
    big = workspace / "big"
    for n in range(30_000):
        path = big / f"d{n % 300}" / f"f{n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    print("\nProtected paths and deny rules (best of 5)")
    for name, run in {
        "scan, 1,000-file repo": lambda: scan(workspace / "repo"),
        "scan, 30,000 entries": lambda: scan(big),
        "deny paths, 30,000 entries": lambda: denied_paths(str(big), [r"(?:.*/)?\.env"], []),
    }.items():
        seconds = min(_time(run) for _ in range(5))
        print(f"{name:<28}{seconds * 1000:>8.1f}ms")


def _uncached(command: str, home: Path, workspace: Path) -> None:
    analyse.cache_clear()  # the analysis is cached per command string: time a first reading
    check_command(command, home=home, workspace=workspace)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        launch(args.runs, workspace)
        run_command(args.runs // 2, workspace)
        protected(workspace)
    policy()


if __name__ == "__main__":
    main()

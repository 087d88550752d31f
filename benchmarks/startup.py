"""Start-up benchmark: time to ``agent --version`` and to the REPL's first prompt.

Run: ``python benchmarks/startup.py`` (about 30 s; ``--runs N``). Uses a throw-away HOME with a
fake API key; no request is sent. Prints the median of each measure and its ratio to a bare
``python -c pass``, and whether a vendor SDK was imported before the first prompt.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

PROMPT_READY = "\x1b[?2004h"  # prompt-toolkit enables bracketed paste as the prompt starts
SDK_CHECK = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from agent.app import Options, load\n"
    "from agent.repl import Repl\n"
    "from rich.console import Console\n"
    "opts, env = Options(workspace=Path.cwd()), dict(os.environ)\n"
    "Repl(console=Console(), config=load(opts, env), options=opts, environ=env)\n"
    "print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))\n"
)


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(
        HOME=str(home),
        AGENT_HOME=str(home / ".agent"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        ANTHROPIC_API_KEY="sk-ant-benchmark-not-a-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        PROMPT_TOOLKIT_NO_CPR="1",
        TERM="xterm-256color",
    )
    return env


def median_seconds(runs: int, once: Callable[[], None]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        once()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def first_prompt(env: dict[str, str], cwd: Path) -> None:
    child = pexpect.spawn(
        sys.executable, ["-m", "agent"], env=env, cwd=str(cwd), dimensions=(40, 100)
    )
    child.expect_exact(PROMPT_READY, timeout=60)
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=30)
    child.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        env = environment(home)

        def run(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, *argv], env=env, cwd=work, capture_output=True, text=True
            )

        bare = median_seconds(runs, lambda: run("-c", "pass"))
        version = median_seconds(runs, lambda: run("-m", "agent", "--version"))
        prompt = median_seconds(runs, lambda: first_prompt(env, work))
        importtime = run("-X", "importtime", "-m", "agent", "--version").stderr
        sdk_on_version = [m for m in ("anthropic", "openai") if f" {m}\n" in importtime]
        sdk_on_prompt = run("-c", SDK_CHECK).stdout.strip()
    print(f"median of {runs} runs        seconds   vs python -c pass")
    print(f"python -c pass             {bare:8.3f}   1.00x")
    print(f"agent --version            {version:8.3f}   {version / bare:5.2f}x")
    print(f"agent to first prompt      {prompt:8.3f}   {prompt / bare:5.2f}x")
    print(f"vendor SDKs imported by --version: {sdk_on_version or 'none'}")
    print(f"vendor SDKs imported before the first prompt: {sdk_on_prompt}")


if __name__ == "__main__":
    main()

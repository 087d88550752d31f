"""Start-up benchmark: ``agent --version``, the REPL's first prompt, its first turn, ``-p``.

Run: ``python benchmarks/startup.py`` (about 2 minutes; ``--runs N``, ``--typing S``). Uses a
throw-away HOME with a fake API key. Prints the median of each measure and its ratio to a bare
``python -c pass``, and whether a vendor SDK was imported before the first prompt. Then, each
pair measured alternately in one run, against the local fake LLM server (tests/fakes):

- first turn: Enter pressed ``--typing`` seconds after the prompt appeared (the person typing)
  until the answer shows, with the SDK imported in the background once the prompt is drawn
  against the same build with that warm-up turned off;
- ``agent -p``: the whole process, ending with an immediate exit once output and session are
  flushed, against the same build ending with ``sys.exit`` (interpreter finalisation).
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

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

PROMPT_READY = "\x1b[?2004h"  # prompt-toolkit enables bracketed paste as the prompt starts
SDK_CHECK = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from agent.setup.startup import Options, boot\n"
    "from agent.terminal.repl import Repl\n"
    "from rich.console import Console\n"
    "opts, env = Options(workspace=Path.cwd()), dict(os.environ)\n"
    "Repl(console=Console(), started=boot(opts, env))\n"
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
        PYTHONPATH=str(Path(__file__).resolve().parents[1]),  # this checkout's code
    )
    return env


ANSWER = "Hello from the fake model."
NO_WARM_UP = (
    "from providers.lazy import LazyProvider\n"
    "LazyProvider.warm_up = lambda self: None\n"
    "from agent.cli import main\n"
    "main()\n"
)
FINALISED_EXIT = (
    "import sys\n"
    "import agent.oneshot\n"
    "agent.oneshot.exit_now = sys.exit\n"
    "from agent.cli import main\n"
    "main()\n"
)


def first_turn(env: dict[str, str], cwd: Path, argv: list[str], typing: float) -> float:
    """Seconds from Enter to the answer on screen, Enter pressed ``typing`` s after the prompt."""
    child = pexpect.spawn(sys.executable, argv, env=env, cwd=str(cwd), dimensions=(40, 100))
    child.expect_exact(PROMPT_READY, timeout=60)
    time.sleep(typing)
    child.send("hi\r")
    started = time.perf_counter()
    child.expect_exact(ANSWER, timeout=60)
    elapsed = time.perf_counter() - started
    child.expect_exact(PROMPT_READY, timeout=60)  # the next prompt, ready for Ctrl-D
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    return elapsed


def interleaved(
    runs: int, first: Callable[[], float], second: Callable[[], float]
) -> tuple[float, float]:
    """Medians of ``first`` and ``second``, run alternately (order swapped every other run)."""
    a: list[float] = []
    b: list[float] = []
    for n in range(runs):
        if n % 2:
            b.append(second())
            a.append(first())
        else:
            a.append(first())
            b.append(second())
    return statistics.median(a), statistics.median(b)


def timed(once: Callable[[], object]) -> Callable[[], float]:
    def run() -> float:
        started = time.perf_counter()
        once()
        return time.perf_counter() - started

    return run


def with_server(runs: int, typing: float, env: dict[str, str], work: Path) -> None:
    """The paired measures against the fake LLM server."""
    with FakeLlmServer() as server:
        env = {**env, "ANTHROPIC_BASE_URL": server.anthropic_url}
        model = ["--model", "anthropic:claude-test"]

        def answered(run: Callable[[], float]) -> Callable[[], float]:
            def once() -> float:
                server.reset()
                server.script(Reply.text(ANSWER))
                return run()

            return once

        warm, cold = interleaved(
            runs,
            answered(lambda: first_turn(env, work, ["-m", "agent", *model], typing)),
            answered(lambda: first_turn(env, work, ["-c", NO_WARM_UP, *model], typing)),
        )

        def print_run(*argv: str) -> None:
            done = subprocess.run(
                [sys.executable, *argv, "-p", "hi", *model], env=env, cwd=work, capture_output=True
            )
            assert done.returncode == 0, done.stderr

        quick, finalised = interleaved(
            runs,
            answered(timed(lambda: print_run("-m", "agent"))),
            answered(timed(lambda: print_run("-c", FINALISED_EXIT))),
        )
    print()
    print(f"median of {runs} runs, alternating      seconds")
    print(f"first turn ({typing:g} s of typing), SDK warmed up   {warm:8.3f}")
    print(f"first turn, SDK imported on Enter         {cold:8.3f}")
    print(f"  ratio                                   {warm / cold:8.2f}x")
    print(f"agent -p, immediate exit                  {quick:8.3f}")
    print(f"agent -p, interpreter finalisation        {finalised:8.3f}")
    print(f"  ratio                                   {quick / finalised:8.2f}x")


def median_seconds(runs: int, once: Callable[[], object]) -> float:
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
    parser.add_argument("--typing", type=float, default=3.0)
    args = parser.parse_args()
    runs = args.runs
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
        print_startup(runs, bare, version, prompt, sdk_on_version, sdk_on_prompt)
        with_server(runs, args.typing, env, work)


def print_startup(
    runs: int,
    bare: float,
    version: float,
    prompt: float,
    sdk_on_version: list[str],
    sdk_on_prompt: str,
) -> None:
    print(f"median of {runs} runs        seconds   vs python -c pass")
    print(f"python -c pass             {bare:8.3f}   1.00x")
    print(f"agent --version            {version:8.3f}   {version / bare:5.2f}x")
    print(f"agent to first prompt      {prompt:8.3f}   {prompt / bare:5.2f}x")
    print(f"vendor SDKs imported by --version: {sdk_on_version or 'none'}")
    print(f"vendor SDKs imported before the first prompt: {sdk_on_prompt}")


if __name__ == "__main__":
    main()

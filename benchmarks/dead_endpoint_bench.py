"""Dead-endpoint benchmark: how long ``agent -p`` takes to fail when nothing answers.

Run: ``python benchmarks/dead_endpoint_bench.py`` (about 40 s; ``--runs N``). Uses a
throw-away HOME. For a ``base_url`` on a closed port (connection refused) and on a host name
that does not resolve, it prints the median seconds from start to exit, and their ratio to the
policy's 10 s window for an unreachable endpoint (`recovery.policy.UNREACHABLE_WINDOW`) and
to the 70 s the same run took before the guard (40 attempts in silence). Then a server that
starts 3 s into the wait: the seconds to a successful answer, and whether the run succeeded.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.startup import environment
from recovery.policy import UNREACHABLE_WINDOW as WINDOW
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

BEFORE = 70.0
"""Seconds to failure on a closed port before the guard (issue 29: 70 to 85 s)."""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_p(home: Path, base_url: str) -> tuple[float, int, str]:
    env = environment(home) | {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": base_url}
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent",
            "-p",
            "hi",
            "--model",
            "openai:gpt-bench",
            "--output-format",
            "json",
        ],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    took = time.monotonic() - started
    try:
        error = json.loads(proc.stdout).get("error") or ""
    except ValueError:
        error = proc.stdout[-200:]
    return took, proc.returncode, error


def comes_back(home: Path, after: float) -> tuple[float, int]:
    port = closed_port()
    servers: list[FakeLlmServer] = []

    def start() -> None:
        server = FakeLlmServer(port=port)
        server.script(Reply.text("back"))
        servers.append(server.start())

    timer = threading.Timer(after, start)
    timer.start()
    try:
        took, code, _ = run_p(home, f"http://127.0.0.1:{port}/v1")
    finally:
        timer.join()
        for server in servers:
            server.stop()
    return took, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        cases = {
            "connection refused": lambda: f"http://127.0.0.1:{closed_port()}/v1",
            "unknown host": lambda: "http://no-such-host.invalid/v1",
        }
        print(f"{'case':<22}{'median s':>10}{'÷ window':>10}{'÷ before':>10}  exit  message")
        for name, url in cases.items():
            results = [run_p(home, url()) for _ in range(args.runs)]
            median = statistics.median(took for took, _, _ in results)
            _, code, error = results[-1]
            print(
                f"{name:<22}{median:>10.1f}{median / WINDOW:>9.2f}×{median / BEFORE:>9.2f}×"
                f"  {code:>4}  {error[:90]}"
            )
        took, code = comes_back(home, after=3.0)
        print(f"{'back after 3 s':<22}{took:>10.1f}{took / WINDOW:>9.2f}×{'':>10}  {code:>4}")


if __name__ == "__main__":
    main()

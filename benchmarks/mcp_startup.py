"""Start-up cost of MCP servers: time to the REPL's first prompt without and with servers,
and time to ``-p``'s first model request with servers that misbehave.

Run: ``python -m benchmarks.mcp_startup`` (about two minutes; ``--runs N``, ``--servers N``).
Throw-away HOME, a fake key. The servers are the test suite's fake MCP server (a real SDK
server over stdio); they start in the background, so the figure that matters is the first
prompt, not the servers' own start. Also prints whether anything MCP was imported before
the first prompt when no server is configured. Then ``-p hi`` against the fake LLM server,
timed to its first request: no server, one that hangs, one that writes garbage.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect
import yaml

from benchmarks.startup import PROMPT_READY, environment
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fakes" / "mcp_server.py"
MCP_CHECK = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from agent.setup.startup import Options, boot\n"
    "from agent.terminal.repl import Repl\n"
    "from rich.console import Console\n"
    "opts, env = Options(workspace=Path.cwd()), dict(os.environ)\n"
    "Repl(console=Console(), started=boot(opts, env))\n"
    "print(sorted(m for m in ('mcp', 'anyio', 'tools.mcp.runtime') if m in sys.modules))\n"
)


def to_first_prompt(env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting ``agent`` to its first prompt (leaving it is not timed)."""
    started = time.perf_counter()
    child = pexpect.spawn(
        sys.executable, ["-m", "agent"], env=env, cwd=str(cwd), dimensions=(40, 100)
    )
    child.expect_exact(PROMPT_READY, timeout=60)
    took = time.perf_counter() - started
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    return took


def median_to_prompt(runs: int, env: dict[str, str], cwd: Path) -> float:
    return statistics.median(to_first_prompt(env, cwd) for _ in range(runs))


def configure(home: Path, servers: int) -> None:
    entries = {
        f"fake{n}": {"command": sys.executable, "args": [str(SERVER)]} for n in range(servers)
    }
    path = home / ".config" / "agent" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"mcp_servers": entries}))


MISBEHAVING = {
    "none": None,
    "hanging": "exec sleep 1000",
    "garbage": "while true; do echo notjson; sleep 0.2; done",
}


def to_first_request(env: dict[str, str], cwd: Path, server: FakeLlmServer) -> float:
    """Seconds from starting ``agent -p hi`` to the fake LLM server's first request."""
    server.reset()
    server.script(Reply.text("hello"))
    started = time.perf_counter()
    argv = [sys.executable, "-m", "agent", "-p", "hi", "--model", "anthropic:claude-test"]
    child = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while not server.requests and child.poll() is None:
        time.sleep(0.005)
    took = time.perf_counter() - started
    child.wait(120)
    return took


def first_requests(runs: int, env: dict[str, str], home: Path, cwd: Path) -> dict[str, float]:
    """The median seconds to ``-p``'s first request, per kind of server configured."""
    found = {}
    with FakeLlmServer() as server:
        env = {**env, "ANTHROPIC_BASE_URL": server.anthropic_url}
        for kind, script in MISBEHAVING.items():
            entries = {kind: {"command": "bash", "args": ["-c", script]}} if script else {}
            path = home / ".config" / "agent" / "config.yaml"
            path.write_text(yaml.safe_dump({"mcp_servers": entries}))
            found[kind] = statistics.median(to_first_request(env, cwd, server) for _ in range(runs))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--servers", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        env = {**environment(home), "PYTHONPATH": str(ROOT)}  # this checkout's code
        without = median_to_prompt(args.runs, env, work)
        check = [sys.executable, "-c", MCP_CHECK]
        imported = subprocess.run(check, env=env, cwd=work, capture_output=True, text=True)
        configure(home, args.servers)
        with_servers = median_to_prompt(args.runs, env, work)
        requests = first_requests(args.runs, env, home, work)
    print(f"median of {args.runs} runs                 seconds   vs none")
    print(f"first prompt, no MCP servers        {without:8.3f}   1.00x")
    print(
        f"first prompt, {args.servers} stdio MCP servers  {with_servers:8.3f}   "
        f"{with_servers / without:5.2f}x"
    )
    print(f"added by the servers                {with_servers - without:8.3f}")
    print(
        f"MCP modules imported before the first prompt without servers: "
        f"{imported.stdout.strip() or imported.stderr.strip()[-200:]}"
    )
    print("-p hi, to the first model request   seconds   vs none")
    for kind, took in requests.items():
        print(f"  MCP server: {kind:<23} {took:8.3f}   {took / requests['none']:5.2f}x")


if __name__ == "__main__":
    main()

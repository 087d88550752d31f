"""Start-up cost of MCP servers: time to the REPL's first prompt without and with servers.

Run: ``python -m benchmarks.mcp_startup`` (about a minute; ``--runs N``, ``--servers N``).
Throw-away HOME, a fake key, no request sent. The servers are the test suite's fake MCP
server (a real SDK server over stdio); they start in the background, so the figure that
matters is the first prompt, not the servers' own start. Also prints whether anything MCP
was imported before the first prompt when no server is configured.
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


if __name__ == "__main__":
    main()

"""Run the real ``agent`` command in a subprocess, pointed at the fake LLM server."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from typing import Protocol as Interface

from tests.fakes.llm_server import FakeLlmServer

Protocol = Literal["anthropic", "openai"]
REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS: dict[Protocol, str] = {"anthropic": "anthropic:claude-test", "openai": "openai:gpt-test"}
# Pass as ``env`` to run as someone with no key and no server configured (empty means unset).
NO_KEYS = {
    "ANTHROPIC_API_KEY": "",
    "OPENAI_API_KEY": "",
    "ANTHROPIC_BASE_URL": "",
    "OPENAI_BASE_URL": "",
}


@dataclass
class AgentRun:
    """A finished ``agent`` process."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        data = json.loads(self.stdout)
        assert isinstance(data, dict)
        return data


class PrintRun(Interface):
    """Runs ``agent -p PROMPT ARGS --model MODEL`` to completion against the fake LLM server,
    in the test's decoy workspace and HOME (the ``print_run`` fixture); ``env`` is added to
    the decoy environment."""

    def __call__(
        self,
        prompt: str,
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        model: str = MODELS["anthropic"],
    ) -> AgentRun: ...


class Endpoints(Interface):
    """Where a fake LLM server listens (a `FakeLlmServer`, here or in another process)."""

    @property
    def anthropic_url(self) -> str: ...

    @property
    def openai_url(self) -> str: ...


def agent_env(server: Endpoints, home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for a subprocess: decoy HOME, AGENT_HOME, fake keys and base URLs."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_BASE_URL")) and key not in {"AGENT_CONFIG"}
    }
    env.update(
        HOME=str(home),
        AGENT_HOME=str(home / ".agent"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        ANTHROPIC_API_KEY="sk-ant-test-key-0123456789",
        OPENAI_API_KEY="sk-test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_url,
        OPENAI_BASE_URL=server.openai_url,
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
        # Run this checkout's code, whatever copy of the package is installed.
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    )
    env.update(extra or {})
    return env


def write_person_config(home: Path, text: str) -> None:
    """Write ``text`` as the person's own config file in the decoy ``home``, where the agent
    run with `agent_env` reads it (``XDG_CONFIG_HOME/agent/config.yaml``)."""
    path = home / ".config" / "agent" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def agent_command(*args: str) -> list[str]:
    """The argv that runs ``agent`` with this interpreter."""
    return [sys.executable, "-m", "agent", *args]


def run_agent(
    *args: str,
    server: FakeLlmServer,
    workspace: Path,
    home: Path,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    file_size_limit: int | None = None,
) -> AgentRun:
    """Run ``agent ARGS`` to completion in ``workspace``.

    ``file_size_limit`` caps every file the agent writes at that many bytes (``RLIMIT_FSIZE``):
    a write beyond it fails with EFBIG, as a full disk fails with ENOSPC, even for root.
    """
    proc = subprocess.run(
        agent_command(*args),
        cwd=workspace,
        env=agent_env(server, home, env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=None if file_size_limit is None else _limit_file_size(file_size_limit),
    )
    return AgentRun(proc.returncode, proc.stdout, proc.stderr)


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def wait_for_descendant(pid: int, argv: list[str], timeout: float = 30.0) -> int:
    """The pid of a process running exactly ``argv`` below ``pid`` (Linux ``/proc``), once it
    exists: a signal sent "while the command runs" must not race the command's start."""
    wanted = ("\0".join(argv) + "\0").encode()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and _cmdline(entry) == wanted and _below(int(entry.name), pid):
                return int(entry.name)
        time.sleep(0.05)
    raise AssertionError(f"no process {argv} started below {pid} within {timeout:g}s")


def _cmdline(entry: Path) -> bytes:
    try:
        return (entry / "cmdline").read_bytes()
    except OSError:
        return b""


def _below(child: int, ancestor: int) -> bool:
    while child > 1:
        if child == ancestor:
            return True
        try:
            stat = Path(f"/proc/{child}/stat").read_text()
        except OSError:
            return False
        child = int(stat.rpartition(")")[2].split()[1])  # the field after the state: ppid
    return False

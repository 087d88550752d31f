"""Fixtures for session tests: a store in a temporary AGENT_HOME on a virtual clock, and a
writer killed with SIGKILL in the middle of its work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sessions import Redactor, SessionStore
from tests.fakes.cli import REPO_ROOT
from tests.fakes.clock import VirtualClock

SECRET = "sk-ant-api03-test-secret-value-0123456789"


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> SessionStore:
    """A store under ``tmp_path/home`` whose redactor knows `SECRET` as ANTHROPIC_API_KEY."""
    redactor = Redactor({"ANTHROPIC_API_KEY": SECRET})
    return SessionStore(tmp_path / "home", clock=clock.now, redactor=redactor)


@pytest.fixture
def killed_writer(tmp_path: Path) -> Callable[[str], str]:
    """Run a Python ``script`` in a process of its own, with the store's home
    (``tmp_path/home``) as its argument; once it prints a session id, SIGKILL it; that id.

    The script prints the id when what it wrote has been acknowledged, then sleeps: the kill
    lands before anything it would have done next (an fsync, say)."""

    def run(script: str) -> str:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        process = subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "home")],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        session_id = process.stdout.readline().strip()
        process.send_signal(signal.SIGKILL)
        process.wait()
        return session_id

    return run

"""Fixtures for session tests: a store in a temporary AGENT_HOME on a virtual clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions import Redactor, SessionStore
from tests.fakes.clock import VirtualClock

SECRET = "sk-ant-api03-test-secret-value-0123456789"


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> SessionStore:
    """A store under ``tmp_path/home`` whose redactor knows `SECRET` as ANTHROPIC_API_KEY."""
    redactor = Redactor({"ANTHROPIC_API_KEY": SECRET})
    return SessionStore(tmp_path / "home", clock=clock.now, redactor=redactor)

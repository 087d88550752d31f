"""Fixtures shared by the whole suite. Test doubles live in `tests/fakes/`, fake models in
`providers.testing`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from agent.setup.logs import stop_library_logs
from tests.fakes.clock import VirtualClock
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.web_server import FakeWebServer


@pytest.fixture
def web_server() -> Iterator[FakeWebServer]:
    """A real HTTP server on 127.0.0.1; set ``web_server.pages[path] = WebPage(...)``."""
    with FakeWebServer() as server:
        yield server


@pytest.fixture
def clock() -> VirtualClock:
    """A virtual clock whose `sleep` returns at once and advances time."""
    return VirtualClock()


@pytest.fixture
def decoy_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HOME, AGENT_HOME and XDG dirs pointed at a temporary decoy with a canary file.

    Any test that lets the agent run commands must use this (or `workspace`), so a bug can
    never touch the real home directory. The canary is asserted to survive at teardown.
    """
    home = tmp_path / "home"
    home.mkdir()
    canary = home / "CANARY"
    canary.write_text("do not delete")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_HOME", str(home / ".agent"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("AGENT_CONFIG", raising=False)
    yield home
    assert canary.read_text() == "do not delete", "the decoy HOME canary was damaged"


@pytest.fixture
def workspace(tmp_path: Path, decoy_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary workspace directory (the cwd) with a canary, inside a decoy HOME."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    canary = tmp_path / "OUTSIDE_CANARY"
    canary.write_text("outside the workspace")
    monkeypatch.chdir(ws)
    yield ws
    assert canary.read_text() == "outside the workspace", "a file outside the workspace changed"


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as server:
        yield server


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLlmServer) -> Iterator[FakeLlmServer]:
    """The fake LLM server (both wire formats on 127.0.0.1), with an empty script.

    Script it with ``fake_llm.script(Reply.text("hi"), Fault.status(429), model=...)``; point
    SDKs at ``fake_llm.anthropic_url`` / ``fake_llm.openai_url`` (or the matching
    ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL`` for a subprocess).
    """
    _fake_llm_server.reset()
    yield _fake_llm_server
    _fake_llm_server.reset()


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    """Undo any structlog configuration a test (or code it runs in-process) made."""
    yield
    structlog.reset_defaults()
    stop_library_logs()

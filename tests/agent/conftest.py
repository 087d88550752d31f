"""Fixtures for the agent tests: the real REPL in a pseudo-terminal, and ``agent -p`` run to
completion."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.fakes.cli import MODELS, AgentRun, PrintRun, agent_command, agent_env, run_agent
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import TERMINAL_ENV, Spawn, Terminal


@pytest.fixture
def spawn(fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path) -> Iterator[Spawn]:
    """Start ``agent --model anthropic:claude-test ARGS`` in a 100x40 pseudo-terminal.

    Keywords: ``model`` (None: no ``--model``), ``cwd`` (default: the workspace) and ``env``
    (added to the decoy environment; ``NO_KEYS`` runs as someone without an API key).
    """
    children: list[pexpect.spawn] = []

    def start(
        *args: str,
        model: str | None = MODELS["anthropic"],
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Terminal:
        argv = agent_command(*(("--model", model) if model else ()), *args)
        child = pexpect.spawn(
            argv[0],
            argv[1:],
            cwd=str(cwd or workspace),
            env=agent_env(fake_llm, decoy_home, {**TERMINAL_ENV, **(env or {})}),
            dimensions=(40, 100),
            encoding="utf-8",
            codec_errors="replace",
        )
        children.append(child)
        return Terminal(child)

    yield start
    for child in children:
        if child.isalive():
            child.kill(signal.SIGKILL)


@pytest.fixture
def agent_tmp(tmp_path: Path) -> Path:
    """A temp dir for the agent (its TMPDIR) apart from the decoy HOME and the workspace's
    parent, so that neither is writable to its commands, as on a real machine."""
    path = tmp_path / "agent-tmp"
    path.mkdir()
    return path


@pytest.fixture
def print_run(fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path) -> PrintRun:
    """Run ``agent -p PROMPT ARGS --model anthropic:claude-test`` to completion in the decoy
    workspace and HOME. Keywords: ``env`` (added to the decoy environment), ``timeout``
    (seconds) and ``model``."""

    def run(
        prompt: str,
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        model: str = MODELS["anthropic"],
    ) -> AgentRun:
        return run_agent(
            "-p", prompt, *args, "--model", model,
            server=fake_llm, workspace=workspace, home=decoy_home, env=env, timeout=timeout,
        )  # fmt: skip

    return run

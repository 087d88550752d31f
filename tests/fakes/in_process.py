"""The agent built in this process as ``agent`` builds it, against the fake LLM server: for
tests that drive it through its own methods instead of a terminal."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from agent.app import build_agent
from agent.session import Agent
from agent.setup.startup import Options, load, secret_redactor
from agent.terminal.ui import ConsoleUI
from tests.fakes.cli import Endpoints, agent_env


@contextmanager
def agent_in_process(
    server: Endpoints, workspace: Path, home: Path, overrides: dict[str, Any]
) -> Iterator[tuple[Agent, io.StringIO]]:
    """An agent in ``workspace`` with the decoy ``home``'s environment and the config
    ``overrides`` (by dotted path: ``{"model": ...}``), with nobody to answer an approval
    question; and what its console printed, as it grows. It is closed on leaving."""
    environ = agent_env(server, home)
    options = Options(workspace=workspace, overrides=overrides)
    config = load(options, environ)
    shown = io.StringIO()
    out = Console(file=shown)
    agent = build_agent(
        config,
        options,
        face=ConsoleUI(out, out),
        approver=None,
        environ=environ,
        redactor=secret_redactor(config, environ),
    )
    try:
        yield agent, shown
    finally:
        agent.close()

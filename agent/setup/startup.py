"""From the command line to a configuration: options, config loading, logs and redaction.

Everything here runs before a model or a session exists; a problem is a `SetupError` whose
message says what to change (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.setup.config import Config, ConfigError, agent_home, load_config
from agent.setup.home import make_private
from agent.setup.logs import configure_logging
from agent.setup.trust import ProjectTrust
from sessions import Redactor


class SetupError(Exception):
    """The agent cannot start as configured; the message says what to change (exit 2)."""


@dataclass
class Options:
    """What the command line asked for."""

    workspace: Path
    config_file: Path | None = None
    model: str | None = None
    fallback_models: list[str] = field(default_factory=list)
    approval: str | None = None
    sandbox: str | None = None
    max_steps: int | None = None
    resume: str | None = None
    continue_latest: bool = False
    verbose: bool = False

    def overrides(self) -> dict[str, Any]:
        """Flags as config keys (flags win over every file and the environment)."""
        values: dict[str, Any] = {}
        if self.model:
            values["model"] = self.model
        if self.fallback_models:
            values["fallback_models"] = self.fallback_models
        if self.approval:
            values["approval"] = self.approval
        if self.sandbox:
            values["sandbox"] = {"mode": self.sandbox}
        if self.max_steps:
            values["max_steps"] = self.max_steps
        return values


def load(
    options: Options,
    environ: Mapping[str, str] | None = None,
    *,
    trust: ProjectTrust | None = None,
) -> Config:
    """Load the configuration for ``options``, or raise `SetupError`.

    What the workspace's ``agent.yaml`` holds back (`agent.setup.trust.held_back`) applies
    only if ``trust`` (default: the approvals under ``AGENT_HOME``) allows it; ``trust.held``
    then says what was left out, for the caller to ask about or mention.
    """
    if trust is None:
        trust = ProjectTrust(agent_home(environ), options.workspace)
    try:
        config, _ = load_config(
            cwd=options.workspace,
            explicit=options.config_file,
            overrides=options.overrides(),
            environ=environ,
            trust=trust,
        )
    except ConfigError as error:
        raise SetupError(str(error)) from None
    return config


def start_logging(config: Config, options: Options, environ: Mapping[str, str]) -> None:
    """Structured logs under ``$AGENT_HOME/logs``, with every known secret redacted.

    Also makes ``$AGENT_HOME`` private (0700) first: this is the start of every session.
    """
    redactor = secret_redactor(config, environ)
    home = agent_home(environ)
    make_private(home)  # before the first log line, session or history entry is written
    configure_logging(home, verbose=options.verbose, redact=redactor.text)


def secret_redactor(config: Config, environ: Mapping[str, str]) -> Redactor:
    """Hides API keys (from the environment and the config file) in sessions and logs."""
    literal = {
        f"providers.{name}.api_key": entry.api_key
        for name, entry in config.providers.items()
        if entry.api_key
    }
    base = Redactor.from_environ(environ, extra_names=config.sessions.redact_env)
    return base.with_secrets(literal)

"""From the command line to a configuration: options, config loading, logs and redaction.

Everything here runs before a model or a session exists; a problem is a `SetupError` whose
message says what to change (exit 2).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent.setup.config import Config, ConfigError, agent_home, load_config
from agent.setup.home import make_private
from agent.setup.logs import configure_logging
from agent.setup.trust import ProjectTrust
from agent.telemetry.settings import header_values
from sessions import Redactor
from tools.shell_env import looks_secret


class SetupError(Exception):
    """The agent cannot start as configured; the message says what to change (exit 2)."""


@dataclass
class Options:
    """What the command line asked for.

    ``overrides`` are configuration values keyed by their dotted path (``model``,
    ``sandbox.mode``, ``recovery.max_attempts``): every flag that sets configuration lands
    here, as codex's ``-c key=value`` does, and wins over every file and the environment.
    """

    workspace: Path
    config_file: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    resume: str | None = None
    continue_latest: bool = False
    verbose: bool = False

    def config_layer(self) -> dict[str, Any]:
        """``overrides`` as one nested configuration layer."""
        layer: dict[str, Any] = {}
        for dotted, value in self.overrides.items():
            *parents, leaf = dotted.split(".")
            node = layer
            for part in parents:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise SetupError(f"{dotted}: {part!r} is set on its own and as a section")
            node[leaf] = value
        return layer

    def fresh(self, *, resume: str | None = None) -> Options:
        """The same options for another session: a new one, or ``resume``."""
        return replace(self, resume=resume, continue_latest=False)


@dataclass(frozen=True)
class Started:
    """What start-up settled: the configuration to run with, and where it came from."""

    options: Options
    environ: dict[str, str]
    config: Config
    trust: ProjectTrust
    """``trust.held``: what the workspace's agent.yaml holds back and was not allowed."""
    redactor: Redactor
    """Hides every secret this configuration knows of, built once: the logs, the session
    log and every face apply it before they keep or show anything."""

    @property
    def home(self) -> Path:
        return agent_home(self.environ)

    def redact(self, text: str) -> str:
        return self.redactor.text(text)


def boot(
    options: Options,
    environ: Mapping[str, str] | None = None,
    *,
    ask_trust: Callable[[ProjectTrust], bool] | None = None,
) -> Started:
    """The one start-up sequence of every ``agent`` command: configuration, trust, logs.

    ``ask_trust`` is asked (once) when the workspace's ``agent.yaml`` holds settings back; if
    it allows them (it calls ``trust.allow``), the configuration is read again with them.
    ``AGENT_HOME`` is made private before the first log line.

    Raises:
        SetupError: the configuration is invalid; the message says what to change.
    """
    environ = dict(os.environ if environ is None else environ)
    trust = ProjectTrust(agent_home(environ), options.workspace)
    config = load(options, environ, trust=trust)
    if trust.held is not None and ask_trust is not None and ask_trust(trust):
        config = load(options, environ, trust=trust)
    redactor = secret_redactor(config, environ)
    start_logging(options, environ, redactor)
    return Started(options=options, environ=environ, config=config, trust=trust, redactor=redactor)


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
            overrides=options.config_layer(),
            environ=environ,
            trust=trust,
        )
    except ConfigError as error:
        raise SetupError(str(error)) from None
    return config


def start_logging(options: Options, environ: Mapping[str, str], redactor: Redactor) -> None:
    """Structured logs under ``$AGENT_HOME/logs``, with what ``redactor`` knows redacted.

    Also makes ``$AGENT_HOME`` private (0700) first: this is the start of every session.
    """
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
    # A token the person hands commands in shell_env.set is as secret as one in the environment.
    literal |= {
        f"shell_env.set.{name}": value
        for name, value in config.shell_env.set.items()
        if looks_secret(name)
    }
    literal |= header_values(environ)  # the telemetry collector's token, say
    search_key = config.web_search.key_env() if config.web_search else None
    names = [*config.sessions.redact_env, *([search_key] if search_key else [])]
    base = Redactor.from_environ(environ, extra_names=names)
    return base.with_secrets(literal)

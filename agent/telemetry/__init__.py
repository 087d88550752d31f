"""OpenTelemetry metrics and events, for a team to chart: opt-in, off by default.

Telemetry is on when ``AGENT_ENABLE_TELEMETRY=1`` or ``telemetry.enabled: true``. The
OpenTelemetry SDK is imported only then (`agent.telemetry.export`), once per process; each
agent (each session of a REPL) gets its own `agent.telemetry.recorder.Recorder`, a subscriber
of its event bus, face and usage ledger. See docs/telemetry.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from agent.telemetry.export import Exporters
    from agent.telemetry.recorder import Recorder

__all__ = ["start_recorder", "telemetry_wanted"]

log = structlog.get_logger("agent.telemetry")

_TRUE = {"1", "true", "yes", "on"}
_exporters: Exporters | None = None
_failed = False


def telemetry_wanted(enabled_in_config: bool, environ: Mapping[str, str]) -> bool:
    """Whether telemetry is on: the environment's ``AGENT_ENABLE_TELEMETRY`` wins over the
    config's ``telemetry.enabled``."""
    flag = environ.get("AGENT_ENABLE_TELEMETRY", "").strip().lower()
    if flag:
        return flag in _TRUE
    return enabled_in_config


def start_recorder(
    environ: Mapping[str, str],
    *,
    session_id: str,
    model: Callable[[], str],
    redact: Callable[[str], str],
    notify: Callable[[str], None],
) -> Recorder | None:
    """A recorder for one session, starting the process's exporters on first use.

    None when the SDK is missing or a setting is wrong: ``notify`` gets one line saying what
    to change, and the agent goes on without telemetry.
    """
    global _exporters, _failed
    if _failed:
        return None
    if _exporters is None:
        try:
            from agent.telemetry.export import TelemetryError, start_exporters
        except ImportError:
            _failed = True
            notify(
                "Telemetry is on but the OpenTelemetry SDK is not installed: "
                "pip install 'agent[telemetry]', or unset AGENT_ENABLE_TELEMETRY."
            )
            return None
        try:
            _exporters = start_exporters(environ, notify)
        except TelemetryError as error:
            _failed = True
            notify(f"Telemetry is off: {error}")
            return None
    from agent.telemetry.recorder import Recorder

    recorder = Recorder(
        _exporters, session_id=session_id, model=model, environ=environ, redact=redact
    )
    recorder.started()
    return recorder

"""Structured logs: JSON lines under ``$AGENT_HOME/logs/``, with secrets redacted."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, TextIO

import structlog

Redact = Callable[[str], str]


def configure_logging(
    home: Path,
    *,
    verbose: bool = False,
    redact: Redact | None = None,
    stderr: TextIO | None = None,
) -> Path | None:
    """Send structlog records to ``home/logs/agent-YYYYMMDD.jsonl`` (and stderr if verbose).

    Returns the log file's path, or None if the directory cannot be written (logging then
    goes nowhere rather than breaking the agent).
    """
    path: Path | None = home / "logs" / f"agent-{time.strftime('%Y%m%d')}.jsonl"
    stream: TextIO | None
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        stream = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
    except OSError:
        path, stream = None, None
    sinks = [s for s in (stream, (stderr or sys.stderr) if verbose else None) if s is not None]

    def write(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> str:
        return structlog.processors.JSONRenderer()(_, __, event_dict)  # type: ignore[return-value]

    def scrub(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if redact is None:
            return event_dict
        return {key: _scrub(value, redact) for key, value in event_dict.items()}

    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            scrub,
            write,
        ],
        logger_factory=_TeeLoggerFactory(sinks),
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        cache_logger_on_first_use=False,
    )
    return path


def _scrub(value: Any, redact: Redact) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: _scrub(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, redact) for v in value]
    return value


class _TeeLogger:
    def __init__(self, sinks: list[TextIO]) -> None:
        self._sinks = sinks

    def msg(self, message: str) -> None:
        for sink in self._sinks:
            with contextlib.suppress(OSError, ValueError):
                sink.write(message + "\n")

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


class _TeeLoggerFactory:
    def __init__(self, sinks: list[TextIO]) -> None:
        self._logger = _TeeLogger(sinks)

    def __call__(self, *args: Any) -> _TeeLogger:
        return self._logger

    def flush(self) -> None:
        for sink in self._logger._sinks:
            with contextlib.suppress(OSError, ValueError):
                sink.flush()


def flush_logs() -> None:
    """Flush every log sink (before the process ends without interpreter shutdown)."""
    factory = structlog.get_config().get("logger_factory")
    if isinstance(factory, _TeeLoggerFactory):
        factory.flush()

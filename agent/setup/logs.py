"""Structured logs: JSON lines under ``$AGENT_HOME/logs/``, with secrets redacted.

Libraries' own logging (the MCP SDK, httpx, asyncio) and Python warnings go to the same
file: nothing they report is printed over the REPL or into ``-p``'s stderr, where a parse
error's traceback once a second from a misbehaving MCP server would bury the conversation.
"""

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

_least_level = logging.INFO
"""The least severe level `configure_logging` keeps (`keeps` reads it)."""


def keeps(level: int) -> bool:
    """Whether the log keeps a line at ``level``: asked before building a costly one, as
    asking structlog's logger builds a bound logger first."""
    return level >= _least_level


def configure_logging(
    home: Path,
    *,
    verbose: bool = False,
    redact: Redact | None = None,
    stderr: TextIO | None = None,
) -> Path | None:
    """Send structlog records to ``home/logs/agent-YYYYMMDD.jsonl`` (and stderr if verbose).

    INFO and above are kept; with ``verbose`` DEBUG too (an event for every tool call, say).

    Returns the log file's path, or None if the directory cannot be written (logging then
    goes nowhere rather than breaking the agent).
    """
    global _least_level
    _least_level = logging.DEBUG if verbose else logging.INFO
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

    processors: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        scrub,
        write,
    ]
    factory = _TeeLoggerFactory(sinks)
    structlog.configure(
        processors=processors,
        logger_factory=factory,
        wrapper_class=structlog.make_filtering_bound_logger(_least_level),
        cache_logger_on_first_use=False,
    )
    _route_library_logs(structlog.wrap_logger(factory(), processors=processors))
    return path


class _LibraryLogs(logging.Handler):
    """Passes the standard `logging` records of libraries on to our log file, as
    ``library_log`` lines (an exception's traceback included, redacted like the rest)."""

    def __init__(self, logger: Any) -> None:
        super().__init__(LIBRARY_LEVEL)
        self._logger = logger

    def emit(self, record: logging.LogRecord) -> None:
        # A log line must never break the agent, nor print a traceback.
        with contextlib.suppress(Exception):
            method = _METHODS.get(record.levelno, "info")
            getattr(self._logger, method)(
                "library_log",
                logger=record.name,
                message=record.getMessage(),
                exc_info=record.exc_info or False,
            )


LIBRARY_LEVEL = logging.INFO
"""The least severe library record kept (httpx's INFO line per request stays out)."""
_QUIET = {name: logging.WARNING for name in ("httpx", "httpx2", "httpcore")}
_METHODS = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
    logging.CRITICAL: "critical",
}


class _UnraisableToLog:
    """`sys.unraisablehook`: "Exception ignored in ..." (a subprocess transport collected
    after its event loop stopped, say) goes to the log instead of stderr."""

    def __init__(self, logger: Any) -> None:
        self._logger = logger

    def __call__(self, unraisable: Any) -> None:
        with contextlib.suppress(Exception):
            error = unraisable.exc_value
            self._logger.warning(
                "unraisable_exception",
                message=unraisable.err_msg or "Exception ignored",
                object=repr(unraisable.object)[:200],
                exc_info=(type(error), error, unraisable.exc_traceback) if error else False,
            )


def _route_library_logs(logger: Any) -> None:
    """Send `logging`, `warnings` and unraisable exceptions to our log file. With a handler
    on the root logger, `logging.lastResort` (which prints records to stderr) is never used."""
    root = logging.getLogger()
    stop_library_logs()  # the one of an earlier configuration
    root.addHandler(_LibraryLogs(logger))
    root.setLevel(LIBRARY_LEVEL)
    for name, level in _QUIET.items():
        logging.getLogger(name).setLevel(level)
    logging.captureWarnings(True)
    sys.unraisablehook = _UnraisableToLog(logger)


def stop_library_logs() -> None:
    """Undo `configure_logging`'s routing of library output (for tests)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, _LibraryLogs):
            root.removeHandler(handler)
    root.setLevel(logging.WARNING)  # Python's default
    logging.captureWarnings(False)
    if isinstance(sys.unraisablehook, _UnraisableToLog):
        sys.unraisablehook = sys.__unraisablehook__


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

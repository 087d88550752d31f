"""Libraries' `logging` records and Python warnings go to our log file, redacted, never to
the terminal (an SDK's traceback once a second would bury the REPL's prompt)."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import pytest

from agent.setup.logs import configure_logging

SECRET = "sk-ant-api03-" + "s" * 40


def test_library_records_and_warnings_reach_the_log_file_not_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = configure_logging(tmp_path, redact=lambda text: text.replace(SECRET, "[redacted]"))
    assert path is not None

    try:
        json.loads("notjson")
    except ValueError:
        logging.getLogger("mcp.client.stdio").exception("Failed to parse (key %s)", SECRET)
    logging.getLogger("httpx").info("HTTP Request: POST /v1/messages")  # below its level
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a deprecated call", DeprecationWarning, stacklevel=1)

    records = [json.loads(line) for line in path.read_text().splitlines()]
    parse, warned = records
    assert parse["event"] == "library_log"
    assert (parse["logger"], parse["level"]) == ("mcp.client.stdio", "error")
    assert parse["message"] == "Failed to parse (key [redacted])"
    assert "JSONDecodeError" in parse["exception"]
    assert warned["logger"] == "py.warnings"
    assert "a deprecated call" in warned["message"]
    assert SECRET not in path.read_text()
    shown = capsys.readouterr()
    assert shown.out == shown.err == ""


class _BrokenOnCollect:
    def __del__(self) -> None:
        raise RuntimeError("Event loop is closed")


def test_an_exception_ignored_while_collecting_goes_to_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = configure_logging(tmp_path)
    assert path is not None

    broken = _BrokenOnCollect()
    del broken

    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["event"] == "unraisable_exception"
    assert "_BrokenOnCollect.__del__" in record["object"]
    assert "RuntimeError: Event loop is closed" in record["exception"]
    assert capsys.readouterr().err == ""

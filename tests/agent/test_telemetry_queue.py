"""A collector that never answers: events queue up to the bound, the rest are dropped without
holding up whoever emits them, and the agent's log says so once."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import structlog
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    LogRecordExporter,
    LogRecordExportResult,
)

from agent.telemetry.export import _ToStructlog


class StuckCollector(LogRecordExporter):
    """An exporter whose collector takes every batch and never answers, until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.batches = 0

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        self.batches += 1
        self.release.wait(30)
        return LogRecordExportResult.FAILURE

    def shutdown(self) -> None:
        self.release.set()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def test_a_full_queue_drops_events_and_says_so_once() -> None:
    sdk = logging.getLogger("opentelemetry")
    problems = _ToStructlog()  # the process's own handler, fresh: nothing said yet
    sdk.addHandler(problems)
    stuck = StuckCollector()
    loggers = LoggerProvider(shutdown_on_exit=False)
    loggers.add_log_record_processor(
        BatchLogRecordProcessor(
            stuck, max_queue_size=8, max_export_batch_size=2, schedule_delay_millis=1
        )
    )
    logger = loggers.get_logger("test")

    try:
        with structlog.testing.capture_logs() as logged:
            for n in range(200):  # returns at once each time, whatever the collector does
                logger.emit(body=f"event {n}", event_name="agent.test")
        mine = [line for line in logged if line.get("event") == "telemetry_sdk"]
    finally:
        sdk.removeHandler(problems)
        stuck.release.set()
        loggers.shutdown()

    assert problems.count >= 1
    assert len(mine) == 1
    assert "Queue full" in mine[0]["message"]


def test_each_kind_of_complaint_is_logged_once_and_every_one_counted() -> None:
    problems = _ToStructlog()
    full = logging.LogRecord(
        "opentelemetry.sdk", logging.WARNING, "x.py", 1, "Queue full", (), None
    )
    failed = logging.LogRecord(
        "opentelemetry.exporter", logging.WARNING, "y.py", 2, "%s", ("E",), None
    )

    with structlog.testing.capture_logs() as logged:
        for record in (full, full, failed, full, failed):
            problems.emit(record)

    assert problems.count == 5
    assert [line["message"] for line in logged] == ["Queue full", "E"]

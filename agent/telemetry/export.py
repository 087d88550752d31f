"""The process's OpenTelemetry providers, built from the standard ``OTEL_*`` variables.

Imported only when telemetry is on: it imports the SDK. Exports run in the SDK's background
threads (a periodic metric reader, a batch log processor with a bounded queue that drops on
overflow), so a collector that is down or slow never holds up a turn. At exit the last data
is flushed, for at most `SHUTDOWN_SECONDS`.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import structlog
from opentelemetry._logs import Logger
from opentelemetry.metrics import Meter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    ConsoleLogRecordExporter,
    LogRecordExporter,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import OTELResourceDetector, Resource

from agent import __version__
from agent.telemetry.settings import TelemetryError, kinds, millis, protocol

__all__ = ["SHUTDOWN_SECONDS", "Exporters", "TelemetryError", "start_exporters"]

log = structlog.get_logger("agent.telemetry")

SHUTDOWN_SECONDS = 1.0
"""The longest exit waits for the last export: a collector that answers takes far less; one
that is down is given up on then. After a failed export, exit waits only `KNOWN_DOWN_SECONDS`."""
KNOWN_DOWN_SECONDS = 0.2

_DEFAULT_METRIC_INTERVAL_MS = 60_000
_DEFAULT_LOGS_INTERVAL_MS = 5_000
LOG_QUEUE_SIZE = 2048
"""Events waiting for export; past this, new ones are dropped (with one log line)."""


@dataclass
class Exporters:
    """Where this process's metrics and events go."""

    meter: Meter
    logger: Logger
    meters: MeterProvider
    loggers: LoggerProvider

    def shutdown(self, seconds: float | None = None) -> None:
        """Flush what is left and stop, waiting at most ``seconds`` (default: as above)."""
        if seconds is None:
            seconds = KNOWN_DOWN_SECONDS if _problems.count else SHUTDOWN_SECONDS

        def stop() -> None:
            try:
                self.loggers.shutdown()
                self.meters.shutdown(timeout_millis=seconds * 1000)
            except Exception:  # exiting anyway: a failed last export only goes to the log
                log.warning("telemetry_shutdown_failed", exc_info=True)

        worker = threading.Thread(target=stop, name="telemetry-shutdown", daemon=True)
        worker.start()
        worker.join(seconds)
        if _problems.count:  # said once, at the end, where it cannot break into a turn
            print(
                "Telemetry: exports failed or events were dropped; check "
                "OTEL_EXPORTER_OTLP_ENDPOINT and that the collector runs (details in the log).",
                file=sys.stderr,
            )


def start_exporters(environ: Mapping[str, str], notify: Callable[[str], None]) -> Exporters:
    """Build the meter and logger the ``OTEL_*`` variables ask for; flush them at exit.

    Raises:
        TelemetryError: a variable has a value the SDK cannot use.
    """
    _quiet_sdk_logging()
    metric_kinds = kinds(environ, "OTEL_METRICS_EXPORTER")
    log_kinds = kinds(environ, "OTEL_LOGS_EXPORTER")
    metric_interval = millis(environ, "OTEL_METRIC_EXPORT_INTERVAL", _DEFAULT_METRIC_INTERVAL_MS)
    logs_interval = millis(environ, "OTEL_LOGS_EXPORT_INTERVAL", _DEFAULT_LOGS_INTERVAL_MS)
    resource = Resource.create({"service.name": "agent", "service.version": __version__}).merge(
        OTELResourceDetector().detect()
    )
    try:
        readers = [
            PeriodicExportingMetricReader(
                _metric_exporter(kind, environ), export_interval_millis=metric_interval
            )
            for kind in metric_kinds
        ]
        meters = MeterProvider(readers, resource=resource, shutdown_on_exit=False)
        loggers = LoggerProvider(resource=resource, shutdown_on_exit=False)
        for kind in log_kinds:
            loggers.add_log_record_processor(
                BatchLogRecordProcessor(
                    _log_exporter(kind, environ),
                    schedule_delay_millis=logs_interval,
                    max_queue_size=LOG_QUEUE_SIZE,
                )
            )
    except TelemetryError:
        raise
    except Exception as error:  # the SDK's own checks: a bad endpoint, header or certificate
        raise TelemetryError(f"the OpenTelemetry SDK refused a setting: {error}") from None
    exporters = Exporters(
        meter=meters.get_meter("agent", __version__),
        logger=loggers.get_logger("agent", __version__),
        meters=meters,
        loggers=loggers,
    )
    atexit.register(exporters.shutdown)
    log.info("telemetry_started", metrics=metric_kinds, logs=log_kinds)
    return exporters


def _metric_exporter(kind: str, environ: Mapping[str, str]) -> MetricExporter:
    if kind == "console":
        return ConsoleMetricExporter(out=sys.stderr)  # stdout is the answer's, in -p
    if protocol(environ, "METRICS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetrics,
        )

        return GrpcMetrics()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


def _log_exporter(kind: str, environ: Mapping[str, str]) -> LogRecordExporter:
    if kind == "console":
        return ConsoleLogRecordExporter(out=sys.stderr)
    if protocol(environ, "LOGS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
            OTLPLogExporter as GrpcLogs,
        )

        return GrpcLogs()
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    return OTLPLogExporter()


class _ToStructlog(logging.Handler):
    """The SDK's own messages (an export that failed, a full queue) go to the agent's log,
    not the person's terminal; they are counted, for one line at exit.

    Each kind of message is logged once per process: a collector that stays down would
    otherwise add a failed export and a full queue to the log every 20 seconds (the SDK's
    own filter), and a full queue is told on the thread that emits the event, the turn's.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self._said: set[tuple[str, object]] = set()

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        kind = (record.name, record.msg)
        if kind in self._said:
            return
        self._said.add(kind)
        log.warning("telemetry_sdk", logger=record.name, message=record.getMessage())


_problems = _ToStructlog()


def _quiet_sdk_logging() -> None:
    sdk = logging.getLogger("opentelemetry")
    if _problems not in sdk.handlers:
        sdk.addHandler(_problems)
    sdk.propagate = False

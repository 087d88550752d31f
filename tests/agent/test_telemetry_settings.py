"""What telemetry reads of the ``OTEL_*`` variables, checked without exporting anything."""

from __future__ import annotations

import pytest

from agent.setup.config import Config
from agent.setup.startup import secret_redactor
from agent.telemetry.settings import Route, TelemetryError, describe, header_values, protocol


def test_off_says_only_that() -> None:
    status = describe(False, {"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer t"})

    assert (status.on, status.routes, status.headers) == (False, [], [])


def test_each_signal_has_its_protocol_and_endpoint() -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example.com:4317",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://k:v@logs.example.com/in?token=abc",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-team=platform-token-1,bad-entry",
    }

    status = describe(True, environ)

    assert status.problem == ""
    assert status.missing == []
    assert status.routes == [
        Route("metrics", ["otlp"], "grpc", "https://collector.example.com:4317"),
        Route("events", ["otlp"], "http/protobuf", "https://logs.example.com/in"),
    ]
    assert status.headers == ["x-team"]
    assert header_values(environ) == {
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS.x-team": "platform-token-1"
    }


def test_defaults_are_otlp_over_http_to_localhost() -> None:
    status = describe(True, {"OTEL_LOGS_EXPORTER": "none"})

    assert status.routes == [
        Route("metrics", ["otlp"], "http/protobuf", "http://localhost:4318/v1/metrics"),
        Route("events", []),
    ]


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({"OTEL_METRICS_EXPORTER": "prom"}, "OTEL_METRICS_EXPORTER='prom'"),
        ({"OTEL_LOGS_EXPORT_INTERVAL": "soon"}, "whole number of milliseconds"),
        ({"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"}, "use grpc or http/protobuf"),
    ],
)
def test_a_setting_the_sdk_cannot_use_is_the_problem(environ: dict[str, str], said: str) -> None:
    assert said in describe(True, environ).problem


def test_the_signals_own_protocol_wins() -> None:
    environ = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "bad"}

    assert protocol(environ, "METRICS") == "grpc"
    with pytest.raises(TelemetryError, match="OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"):
        protocol(environ, "LOGS")


def test_the_headers_values_are_redacted_from_sessions_and_logs() -> None:
    environ = {"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer otel-token-5523-abcdef"}

    redacted = secret_redactor(Config(), environ).text("sent Bearer otel-token-5523-abcdef")

    assert "otel-token-5523" not in redacted

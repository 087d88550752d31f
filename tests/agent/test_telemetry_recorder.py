"""What each event becomes, through the real SDK into its in-memory reader and exporter."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from agent.telemetry.export import Exporters
from agent.telemetry.recorder import Recorder
from compaction import CompactionApplied
from compaction.events import Reason
from compaction.stages import Stage
from providers import (
    ErrorKind,
    Event,
    Message,
    RequestKind,
    TextBlock,
    ToolResultBlock,
    Usage,
)
from recovery import FallbackActivated, GaveUp, ModelRestored
from recovery.usage import AnsweredRequest

SESSION = "01testsession"


@dataclass
class Exported:
    sdk: Exporters
    recorder: Recorder
    reader: InMemoryMetricReader
    logs: InMemoryLogRecordExporter

    def events(self) -> list[dict[str, Any]]:
        return [dict(data.log_record.attributes or {}) for data in self.logs.get_finished_logs()]

    def metric(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        data = self.reader.get_metrics_data()
        if data is None:  # nothing was recorded
            return []
        return [
            (dict(point.attributes or {}), point.value)
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points  # type: ignore[union-attr]
        ]


@pytest.fixture
def exported() -> Iterator[Exported]:
    reader = InMemoryMetricReader()
    logs = InMemoryLogRecordExporter()
    meters = MeterProvider([reader], shutdown_on_exit=False)
    loggers = LoggerProvider(shutdown_on_exit=False)
    loggers.add_log_record_processor(SimpleLogRecordProcessor(logs))
    sdk = Exporters(
        meter=meters.get_meter("test"), logger=loggers.get_logger("test"), meters=meters,
        loggers=loggers,
    )  # fmt: skip
    recorder = Recorder(
        sdk,
        session_id=SESSION,
        model=lambda: "anthropic:claude-sonnet-4-5",
        environ={},
        redact=lambda text: text.replace("sk-secret", "[redacted]"),
    )
    yield Exported(sdk, recorder, reader, logs)
    meters.shutdown()
    loggers.shutdown()


CASES: list[tuple[Event, dict[str, Any]]] = [
    (
        ModelRestored(model="a:primary", from_model="b:fallback", after=95.0),
        {
            "event.name": "agent.fallback",
            "from": "fallback",
            "from_provider": "b",
            "to": "primary",
            "to_provider": "a",
            "state": "restored",
            "fallback_s": 95.0,
        },
    ),
    (
        FallbackActivated(
            from_model="a:primary", to_model="b:fallback", reason="key sk-secret", returns_in=30
        ),
        {
            "event.name": "agent.fallback",
            "state": "activated",
            "reason": "key [redacted]",
            "sticky": False,
            "returns_in_s": 30.0,
        },
    ),
    (
        GaveUp(kind=ErrorKind.RATE_LIMIT, requests=5, waited=12.5, message="no", retry_after=60),
        {
            "event.name": "agent.api_retries_exhausted",
            "error_kind": "rate_limit",
            "requests": 5,
            "retry_after": 60.0,
        },
    ),
    (
        CompactionApplied(
            stage=Stage.SUMMARISE,
            reason=Reason.PROACTIVE,
            tokens_before=9000,
            tokens_after=2000,
            messages_before=40,
            messages_after=6,
        ),
        {
            "event.name": "agent.compaction",
            "stage": "summarise",
            "success": True,
            "tokens_before": 9000,
            "tokens_after": 2000,
        },
    ),
]


@pytest.mark.parametrize(("event", "expected"), CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_each_event_is_exported_with_the_session(
    exported: Exported, event: Event, expected: dict[str, Any]
) -> None:
    exported.recorder.on_event(event)

    [attributes] = exported.events()
    assert attributes["session.id"] == SESSION
    assert expected.items() <= attributes.items()
    assert "message" not in attributes


def test_a_fallback_is_counted_by_where_it_went(exported: Exported) -> None:
    exported.recorder.on_event(CASES[1][0])
    exported.recorder.on_event(CASES[1][0])

    [(attributes, count)] = exported.metric("agent.fallback.count")
    assert count == 2
    assert attributes == {
        "session.id": SESSION,
        "from": "primary",
        "from_provider": "a",
        "to": "fallback",
        "to_provider": "b",
        "purpose": "turn",
    }


def test_only_the_persons_prompt_is_a_prompt(exported: Exported) -> None:
    exported.recorder.on_message(Message.user("hello"))
    exported.recorder.on_message(Message(role="assistant", content=[TextBlock(text="hi")]))
    results = [ToolResultBlock(tool_use_id="t1", content="file text")]
    exported.recorder.on_message(Message(role="user", content=list(results)))

    [prompt] = exported.events()
    assert prompt["event.name"] == "agent.user_prompt"
    assert prompt["prompt_length"] == 5


def test_a_fault_in_telemetry_never_reaches_the_turn(exported: Exported) -> None:
    def broken() -> str:
        raise RuntimeError("no model")

    recorder = Recorder(
        exported.sdk,
        session_id=SESSION,
        model=broken,
        environ={},
        redact=str,
    )

    recorder.started()  # logged, not raised
    recorder.on_answer(AnsweredRequest(RequestKind.TURN, "m", Usage(input_tokens=1)))

    assert exported.metric("agent.session.count") == []

"""Each recovery event as the stream-json ``system`` line a script reads."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from agent.engine.outcome import ChildId, SideModelSwitch, subagent_switch
from agent.engine.turn import ContinuationRequested
from agent.script.stream_json import StreamJsonFace, recovery_fields
from compaction import CompactionApplied
from compaction.events import Reason
from compaction.stages import Stage
from providers import ErrorKind, Event, Notice, RequestKind, TextDelta
from recovery import FallbackActivated, GaveUp, ModelRestored, RequestHeld, RetryScheduled
from tools.events import ProtectedPathsRestored, ToolRepeatedCall, ToolRetried

CASES: list[tuple[Event, dict[str, Any]]] = [
    (
        RetryScheduled(
            kind=ErrorKind.OVERLOADED,
            attempt=2,
            max_attempts=40,
            delay=1.5,
            retry_at=0,
            model="anthropic:m",
            provider="anthropic",
        ),
        {
            "subtype": "api_retry",
            "attempt": 2,
            "max_retries": 40,
            "retry_delay_ms": 1500,
            "error": "overloaded",
        },
    ),
    (
        FallbackActivated(from_model="a:x", to_model="b:y", reason="auth"),
        {"subtype": "model_fallback", "from": "a:x", "to": "b:y", "reason": "auth"},
    ),
    (
        CompactionApplied(
            stage=Stage.SUMMARISE,
            reason=Reason.REACTIVE,
            tokens_before=900,
            tokens_after=300,
            messages_before=40,
            messages_after=10,
        ),
        {
            "subtype": "compact_boundary",
            "trigger": "overflow",
            "pre_tokens": 900,
            "post_tokens": 300,
        },
    ),
    (ContinuationRequested(attempt=1, limit=3), {"subtype": "continuation", "attempt": 1}),
    (
        ToolRetried(tool="read_file", tool_use_id="t1", attempt=2, delay=0.25, message="EIO"),
        {"subtype": "tool_retry", "tool": "read_file", "attempt": 2, "retry_delay_ms": 250},
    ),
    (
        ToolRepeatedCall(tool="list_files", count=4, limit_reached=True),
        {"subtype": "loop_stopped", "tool": "list_files", "count": 4},
    ),
    (
        RequestHeld(model="a:x", delay=12.0, retry_at=0, server=True),
        {"subtype": "shared_wait", "seconds": 12.0, "reason": "server retry-after"},
    ),
    (
        RequestHeld(model="a:x", delay=4.0, retry_at=0, server=True, other_agent=True),
        {
            "subtype": "shared_wait",
            "reason": "server retry-after told to another agent on this key",
        },
    ),
    (
        ModelRestored(model="a:x", from_model="b:y", after=95.0),
        {"subtype": "model_restored", "model": "a:x", "from": "b:y", "after_seconds": 95.0},
    ),
    (
        ProtectedPathsRestored(paths=[".git/config"]),
        {"subtype": "protected_restored", "paths": [".git/config"]},
    ),
    (
        GaveUp(kind=ErrorKind.RATE_LIMIT, requests=3, waited=9.0, message="m", retry_after=60.0),
        {"subtype": "gave_up", "error": "rate_limit", "retry_after": 60.0, "purpose": "turn"},
    ),
    (
        GaveUp(
            kind=ErrorKind.SERVER,
            requests=4,
            waited=1.0,
            message="m",
            purpose=RequestKind.WEB_FETCH,
        ),
        {"subtype": "gave_up", "error": "server", "purpose": "web_fetch"},
    ),
    (Notice(text="offline", level="info"), {"subtype": "notice", "level": "info"}),
    (
        subagent_switch(
            ChildId("01child", "explore", "toolu_1"),
            FallbackActivated(from_model="a:x", to_model="b:y", reason="auth"),
        ),
        {
            "subtype": "model_fallback",
            "from": "a:x",
            "to": "b:y",
            "parent_tool_use_id": "toolu_1",
            "agent_type": "explore",
            "agent_id": "01child",
        },
    ),
    (
        subagent_switch(
            ChildId("01child", "explore", "toolu_1"),
            ModelRestored(model="a:x", from_model="b:y", after=95.0),
        ),
        {"subtype": "model_restored", "model": "a:x", "parent_tool_use_id": "toolu_1"},
    ),
    (
        SideModelSwitch(
            switch=ModelRestored(
                model="a:small", from_model="a:x", after=60.0, purpose=RequestKind.WEB_SEARCH
            )
        ),
        {
            "subtype": "model_restored",
            "model": "a:small",
            "from": "a:x",
            "model_role": "small_model",
            "purpose": "web_search",
        },
    ),
]


@pytest.mark.parametrize(("event", "expected"), CASES, ids=lambda case: getattr(case, "type", ""))
def test_each_recovery_event_has_its_system_line(event: Event, expected: dict[str, Any]) -> None:
    fields = recovery_fields(event)
    assert fields is not None
    assert expected.items() <= fields.items()


def test_a_repeated_call_below_the_limit_is_not_a_stop() -> None:
    assert recovery_fields(ToolRepeatedCall(tool="x", count=2, limit_reached=False)) is None


def test_lines_before_init_wait_for_it_and_secrets_never_reach_stdout() -> None:
    out = io.StringIO()
    face = StreamJsonFace(
        out,
        session_id="",
        model=lambda: "a:x",
        redact=lambda t: t.replace("sk-123", "[key]"),
        partial=True,
    )
    face.on_event(Notice(text="key sk-123 rejected"))
    face.on_delta(TextDelta(text="hi"))
    assert out.getvalue() == ""
    face.session_id = "S1"
    face.start({"session_id": "S1", "model": "a:x"})
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("subtype", line["type"]) for line in lines] == [
        "init",
        "notice",
        "stream_event",
    ]
    assert all(line["session_id"] == "S1" for line in lines)
    assert "sk-123" not in out.getvalue()

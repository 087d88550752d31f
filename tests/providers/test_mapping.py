"""Our messages ↔ both wire formats, both directions, without loss."""

from __future__ import annotations

from typing import Any

import pytest

from providers import Message, StopReason, TextBlock, ToolResultBlock, ToolUseBlock
from providers.adapters.anthropic_mapping import (
    EventAccumulator,
    from_anthropic_messages,
    to_anthropic_messages,
)
from providers.adapters.openai_mapping import ERROR_PREFIX, from_openai_messages, to_openai_messages
from providers.adapters.openai_stream import ChunkAccumulator, response_from_completion
from providers.conversation import RAW_ARGUMENTS_KEY, merge_consecutive, parse_arguments

CONVERSATION = [
    Message.user("Fix the test in a.py"),
    Message(
        role="assistant",
        content=[
            TextBlock(text="Reading both files."),
            ToolUseBlock(id="t1", name="read_file", input={"path": "a.py"}),
            ToolUseBlock(id="t2", name="read_file", input={"path": "b.py", "lines": [1, 2]}),
        ],
    ),
    Message(
        role="user",
        content=[
            ToolResultBlock(tool_use_id="t1", content="def f(): ..."),
            ToolResultBlock(tool_use_id="t2", content="no such file", is_error=True),
            TextBlock(text="b.py was renamed."),
        ],
    ),
    Message(
        role="assistant",
        content=[ToolUseBlock(id="t3", name="run_command", input={RAW_ARGUMENTS_KEY: '{"cmd'})],
    ),
    Message(role="user", content=[ToolResultBlock(tool_use_id="t3", content="bad JSON")]),
    Message(role="user", content=[TextBlock(text="one"), TextBlock(text="two")]),
    Message.assistant("Done: ünïcode ✓"),
]


def test_anthropic_round_trip() -> None:
    # Two consecutive user messages go out joined (the API's rule): compare the joined form.
    joined = merge_consecutive(CONVERSATION)
    assert from_anthropic_messages(to_anthropic_messages(CONVERSATION)) == joined
    assert from_anthropic_messages(to_anthropic_messages(joined)) == joined


def test_anthropic_wire_shape() -> None:
    wire = to_anthropic_messages(CONVERSATION)
    assert wire[1]["content"][1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "read_file",
        "input": {"path": "a.py"},
    }
    assert wire[2]["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "no such file",
        "is_error": True,
    }


def test_anthropic_drops_empty_text_blocks_on_the_way_out() -> None:
    message = Message(role="assistant", content=[TextBlock(text=""), TextBlock(text="hi")])
    assert to_anthropic_messages([message])[0]["content"] == [{"type": "text", "text": "hi"}]


def test_openai_round_trip() -> None:
    # Two consecutive user messages merge on the way back: compare against the merged form.
    merged = [
        *CONVERSATION[:4],
        Message(role="user", content=[*CONVERSATION[4].content, *CONVERSATION[5].content]),
        CONVERSATION[6],
    ]
    system, messages = from_openai_messages(to_openai_messages("Be brief.", CONVERSATION))
    assert system == "Be brief."
    assert messages == merged


def test_openai_wire_shape() -> None:
    wire = to_openai_messages("Be brief.", CONVERSATION)
    assert wire[0] == {"role": "system", "content": "Be brief."}
    assert wire[2]["tool_calls"][1] == {
        "id": "t2",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "b.py", "lines": [1, 2]}'},
    }
    assert [m["role"] for m in wire[3:6]] == ["tool", "tool", "user"]
    assert wire[4]["content"] == ERROR_PREFIX + "no such file"
    # Raw (invalid) arguments go back out exactly as the model wrote them.
    assert wire[6]["tool_calls"][0]["function"]["arguments"] == '{"cmd'


def test_openai_assistant_without_text_has_null_content() -> None:
    wire = to_openai_messages("", [CONVERSATION[3]])
    assert wire[0]["content"] is None


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("  ", {}),
        ('{"a": ', {RAW_ARGUMENTS_KEY: '{"a": '}),
        ("[1, 2]", {RAW_ARGUMENTS_KEY: "[1, 2]"}),
        # Python reads these, but they are not JSON: kept, the history could not be sent.
        ('{"n": NaN}', {RAW_ARGUMENTS_KEY: '{"n": NaN}'}),
        ('{"n": -Infinity}', {RAW_ARGUMENTS_KEY: '{"n": -Infinity}'}),
    ],
)
def test_parse_arguments(raw: str, parsed: dict[str, Any]) -> None:
    assert parse_arguments(raw) == parsed


def test_openai_chunks_with_arguments_in_one_piece_and_no_usage() -> None:
    accumulator = ChunkAccumulator()
    accumulator.add({"choices": []})
    call = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": '{"p": "."}'}}
    accumulator.add({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    accumulator.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})

    response = accumulator.response()

    assert response.stop_reason == StopReason.TOOL_USE
    assert response.message.tool_uses == [ToolUseBlock(id="c1", name="ls", input={"p": "."})]
    assert response.usage.total_tokens == 0


def test_openai_tool_call_without_id_gets_one_and_stop_means_tool_use() -> None:
    accumulator = ChunkAccumulator()
    call = {"index": 0, "function": {"name": "ls", "arguments": "{}"}}
    accumulator.add({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    accumulator.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})

    response = accumulator.response()

    assert response.message.tool_uses[0].id
    assert response.stop_reason == StopReason.TOOL_USE


def test_openai_completion_with_empty_choices_is_incomplete() -> None:
    response = response_from_completion({"choices": [], "model": "m"})
    assert response.stop_reason == StopReason.INCOMPLETE
    assert response.message.content == []


def test_openai_usage_splits_cached_tokens() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 60},
    }
    response = response_from_completion({"choices": [], "usage": usage})
    assert (response.usage.input_tokens, response.usage.cache_read_tokens) == (40, 60)


def test_anthropic_events_with_context_window_stop_and_cache_usage() -> None:
    accumulator = EventAccumulator()
    usage = {"input_tokens": 3, "cache_read_input_tokens": 50, "cache_creation_input_tokens": 7}
    accumulator.add({"type": "message_start", "message": {"model": "m", "usage": usage}})
    accumulator.add(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    accumulator.add(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "long"}}
    )
    accumulator.add(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "model_context_window_exceeded"},
            "usage": {"output_tokens": 9},
        }
    )

    response = accumulator.response()

    assert response.stop_reason == StopReason.CONTEXT_WINDOW
    assert response.message.text == "long"
    assert response.usage.cache_read_tokens == 50
    assert response.usage.cache_write_tokens == 7
    assert response.usage.output_tokens == 9

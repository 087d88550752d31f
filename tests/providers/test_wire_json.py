"""`JsonBody`: request bodies as JSON bytes, each message encoded once across requests."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from providers.adapters.anthropic_mapping import (
    anthropic_message,
    to_anthropic_messages,
    with_cache_breakpoints,
)
from providers.adapters.openai_mapping import openai_wire, to_openai_messages
from providers.wire_cache import WireCache
from providers.wire_json import JsonBody


def conversation(steps: int) -> list[Message]:
    messages = [Message.user("read the files — all of them ✓")]
    for n in range(steps):
        call = ToolUseBlock(id=f"call_{n}", name="read_file", input={"path": f"f{n}.py"})
        messages.append(Message(role="assistant", content=[TextBlock(text="sure"), call]))
        result = ToolResultBlock(tool_use_id=call.id, content=f'"quoted" \\ {n}\n', is_error=False)
        messages.append(Message(role="user", content=[result]))
    return messages


FIELDS = {"model": "m", "max_tokens": 100, "stream": True, "tools": [{"name": "t"}]}


def test_anthropic_bodies_match_the_dicts_while_the_conversation_grows() -> None:
    wire, body = WireCache(anthropic_message), JsonBody()
    messages = conversation(4)
    for end in range(1, len(messages) + 1):
        sent = with_cache_breakpoints(to_anthropic_messages(messages[:end], wire))
        expected = with_cache_breakpoints(to_anthropic_messages(messages[:end]))
        assert json.loads(body(FIELDS, sent)) == FIELDS | {"messages": expected}


def test_openai_bodies_match_the_dicts_including_null_content() -> None:
    wire, body = WireCache(openai_wire), JsonBody()
    messages = conversation(3)
    messages.append(Message(role="assistant", content=[ToolUseBlock(id="x", name="n", input={})]))
    sent = to_openai_messages("be brief", messages, wire)
    assert any(m.get("content") is None for m in sent)
    for _ in range(2):  # the second time from what was kept
        decoded = json.loads(body(FIELDS, sent))
        assert decoded == FIELDS | {"messages": to_openai_messages("be brief", messages)}


def test_only_what_the_latest_request_sent_is_kept() -> None:
    wire, body = WireCache(openai_wire), JsonBody()
    messages = conversation(3)
    body({}, to_openai_messages("", messages, wire))
    compacted = [Message.user("summary of earlier work"), *messages[-2:]]

    sent = to_openai_messages("", compacted, wire)
    decoded = json.loads(body({}, sent))

    assert decoded == {"messages": to_openai_messages("", compacted)}
    assert body._messages == sent


def test_a_new_message_with_the_same_content_gets_its_own_text() -> None:
    body = JsonBody()
    content = [{"type": "text", "text": "hi"}]
    body({}, [{"role": "user", "content": content}])

    decoded = json.loads(body({}, [{"role": "assistant", "content": content}]))

    assert decoded["messages"] == [{"role": "assistant", "content": content}]


def test_a_value_that_is_not_json_is_refused_as_the_sdk_refuses_it() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        JsonBody()({}, [{"role": "user", "content": [{"type": "x", "n": math.nan}]}])


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(
    st.dictionaries(st.text(), json_values, max_size=3),
    st.lists(st.dictionaries(st.text(), json_values, max_size=3), max_size=4),
)
def test_any_body_decodes_to_what_was_given(
    fields: dict[str, object], messages: list[dict[str, object]]
) -> None:
    fields.pop("messages", None)
    body = JsonBody()
    for _ in range(2):
        assert json.loads(body(fields, messages)) == fields | {"messages": messages}


def test_the_text_of_messages_after_a_rebuilt_equal_one_is_reused() -> None:
    # OpenAI's system message is a small dict rebuilt per request: equal, not the same. The
    # messages after it still reuse their text, and a changed one ends the reuse.
    body = JsonBody()
    history = [{"role": "user", "content": f"m{n}"} for n in range(4)]
    body({}, [{"role": "system", "content": "s"}, *history])
    kept = list(body._texts)

    decoded = json.loads(body({}, [{"role": "system", "content": "s"}, *history[:2], {"x": 1}]))

    assert decoded["messages"][-1] == {"x": 1}
    assert all(new is old for new, old in zip(body._texts[:3], kept[:3], strict=True))
    assert body._texts[3] == '{"x":1}'

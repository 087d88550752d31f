"""`WireCache`: the wire form of a growing conversation is mapped once per message."""

from __future__ import annotations

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from providers.adapters.anthropic_mapping import anthropic_message, to_anthropic_messages
from providers.adapters.openai_mapping import openai_wire, to_openai_messages
from providers.wire_cache import WireCache, shared_prefix


def conversation(steps: int) -> list[Message]:
    messages = [Message.user("read the files")]
    for n in range(steps):
        call = ToolUseBlock(id=f"call_{n}", name="read_file", input={"path": f"f{n}.py"})
        messages.append(Message(role="assistant", content=[TextBlock(text=" "), call]))
        result = ToolResultBlock(tool_use_id=call.id, content=f"text {n}", is_error=n % 2 == 1)
        messages.append(Message(role="user", content=[result]))
    return messages


def test_each_message_is_mapped_once_while_the_conversation_grows() -> None:
    mapped: list[Message] = []

    def convert(message: Message) -> dict[str, object]:
        mapped.append(message)
        return anthropic_message(message)

    wire = WireCache(convert)
    messages = conversation(5)
    for end in range(1, len(messages) + 1):
        sent = to_anthropic_messages(messages[:end], wire)
        assert sent == to_anthropic_messages(messages[:end])

    assert len(mapped) == len(messages)
    assert all(a is b for a, b in zip(mapped, messages, strict=True))


def test_a_replaced_message_is_mapped_again_and_dropped_ones_are_forgotten() -> None:
    calls: list[Message] = []
    wire = WireCache(lambda message: calls.append(message) or openai_wire(message))
    messages = conversation(3)
    to_openai_messages("system", messages, wire)

    compacted = [Message.user("summary of earlier work"), *messages[-2:]]
    sent = to_openai_messages("system", compacted, wire)

    assert sent == to_openai_messages("system", compacted)
    assert calls[len(messages) :] == [compacted[0]]
    assert [message for message, _ in wire._sent] == compacted


def test_joined_user_messages_keep_results_first_without_changing_the_cache() -> None:
    messages = conversation(1)
    messages.append(Message.user("and now this"))  # a prompt right after tool results
    wire = WireCache(anthropic_message)

    first = to_anthropic_messages(messages, wire)
    second = to_anthropic_messages(messages, wire)

    assert first == second
    assert [block["type"] for block in second[-1]["content"]] == ["tool_result", "text"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]


def test_a_changed_copy_of_a_message_counts_its_own_characters() -> None:
    message = Message.user("x" * 1000)
    assert message.chars == 1000

    emptied = message.model_copy(update={"content": [TextBlock(text="short")]})

    assert emptied.chars == 5  # not the original's cached figure
    assert message.model_copy().chars == 1000


def test_the_shared_prefix_is_counted_by_identity() -> None:
    a, b, c = {"n": 1}, {"n": 2}, {"n": 3}
    assert shared_prefix([a, b, c], [a, b, c]) == 3
    assert shared_prefix([a, b], [a, b, c]) == 2
    assert shared_prefix([a, b, c], [a]) == 1
    assert shared_prefix([a, {"n": 2}, c], [a, b, c]) == 1  # equal is not the same
    assert shared_prefix([], [a]) == 0


def test_with_equal_the_shared_prefix_goes_on_past_equal_objects() -> None:
    a, b, c = {"n": 1}, {"n": 2}, {"n": 3}
    assert shared_prefix([{"n": 1}, b, c], [a, b, c], equal=True) == 3
    assert shared_prefix([a, {"n": 2}, {"n": 9}], [a, b, c], equal=True) == 2
    assert shared_prefix([{"n": 0}, b], [a, b], equal=True) == 0

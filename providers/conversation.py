"""The rules of a valid conversation, and the few values every layer must agree on.

Both vendors reject a request that breaks one of these rules with a 400, and since the whole
history is sent again on every request, one bad message breaks every later turn too:

1. The first message is the person's (a user message).
2. Roles alternate: never two user or two assistant messages in a row.
3. No message is empty: each holds at least one block that is not blank text.
4. Every tool call of an assistant message is answered, exactly once, in the very next
   message — a user message — whose results come before any text.
5. No result without its call: a user message answers only the calls of the message before.
   Assistant messages hold no results; user messages hold no calls.

Only while a turn runs may the last message be an assistant message whose calls are not
answered yet (``open_end=True``). Sessions repair a stored history with these rules, compaction
cuts only where they hold, the loop closes an interrupted turn with `answer_dangling_calls`, and
the adapters map a conversation that keeps them to each wire format.

This module imports nothing of ours but `providers.messages`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from providers.messages import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

RAW_ARGUMENTS_KEY = "__raw_arguments__"
"""Tool-call arguments that are not a JSON object are kept as ``{RAW_ARGUMENTS_KEY: text}``."""

EMPTY_REPLY = "(no answer)"
"""Stands in for a reply with nothing in it, which neither vendor accepts back."""

_INTERRUPTED_TAIL = "its effect is unknown — check before repeating it."


def interrupted_text(name: str, reason: str) -> str:
    """What the model reads for a call that was interrupted (the one wording, everywhere)."""
    return f"{name} was interrupted ({reason}) before its result was recorded; {_INTERRUPTED_TAIL}"


def interrupted_result(call: ToolUseBlock, reason: str) -> ToolResultBlock:
    """An error result answering ``call``, which never finished (``reason`` says why)."""
    return ToolResultBlock(
        tool_use_id=call.id, content=interrupted_text(call.name, reason), is_error=True
    )


def is_interrupted_result(block: Block) -> bool:
    """Whether ``block`` is a result made up for an interrupted call."""
    return (
        isinstance(block, ToolResultBlock)
        and block.is_error
        and block.content.endswith(_INTERRUPTED_TAIL)
    )


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Tool-call arguments as a dict; text that is not a JSON object is kept raw."""
    if not raw or not raw.strip():
        return {}
    try:
        value = _ARGUMENTS.decode(raw)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        return {RAW_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {RAW_ARGUMENTS_KEY: raw}


def _not_json(constant: str) -> Any:
    """``NaN`` and ``Infinity`` are read by Python but are not JSON: a request holding them
    could never be encoded again, and the session would be stuck."""
    raise ValueError(f"{constant} is not JSON")


_ARGUMENTS = json.JSONDecoder(parse_constant=_not_json)
"""One decoder for every call: ``json.loads`` with an option builds a new one each time."""


def encode_arguments(arguments: dict[str, Any]) -> str:
    """The inverse of `parse_arguments`: raw text goes out as it came in."""
    if set(arguments) == {RAW_ARGUMENTS_KEY} and isinstance(arguments[RAW_ARGUMENTS_KEY], str):
        return str(arguments[RAW_ARGUMENTS_KEY])
    return json.dumps(arguments, ensure_ascii=False)


def is_blank(block: Block) -> bool:
    """Whether ``block`` is text with nothing but whitespace (adapters leave it out)."""
    return isinstance(block, TextBlock) and not block.text.strip()


def is_empty(message: Message) -> bool:
    """Whether ``message`` would have nothing left to send (rule 3)."""
    return all(is_blank(block) for block in message.content)


def non_empty_reply(message: Message) -> Message:
    """``message``, or the `EMPTY_REPLY` placeholder when it holds nothing to send.

    Keeping the placeholder (rather than dropping the reply) keeps the history valid and
    tells a resume that the turn was answered.
    """
    return Message.assistant(EMPTY_REPLY) if is_empty(message) else message


def is_prompt(message: Message) -> bool:
    """Whether ``message`` is a user message that answers no tool call (a prompt)."""
    return message.role == "user" and not message.tool_results


def conversation_problems(messages: Sequence[Message], *, open_end: bool = False) -> list[str]:
    """Every rule ``messages`` breaks, one line each; empty when it can be sent.

    One pass over each message's blocks (`_Shape`): a resumed session checks its whole
    history, a hundred thousand messages or more.

    Args:
        messages: The conversation.
        open_end: Allow the last message to be an assistant message with unanswered calls
            (a turn in progress).
    """
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("the conversation does not start with a user message")
    before: _Shape | None = None
    for i, message in enumerate(messages):
        shape = _Shape.of(message)
        if shape.empty:
            problems.append(f"message {i} is empty")
        if before is not None and before.role == message.role:
            problems.append(f"messages {i - 1} and {i} are both {message.role} messages")
        if message.role == "assistant":
            if shape.results:
                problems.append(f"assistant message {i} holds tool results")
            if shape.calls and i + 1 == len(messages) and not open_end:
                problems.append(f"assistant message {i} makes tool calls that are never answered")
            if len(shape.calls) != len(set(shape.calls)):
                problems.append(f"assistant message {i} makes two calls with one id")
        else:
            if shape.calls:
                problems.append(f"user message {i} holds tool calls")
            problems += _pairing_problems(i, before, shape)
        before = shape
    return problems


class _Shape:
    """What the rules look at in one message, found in one pass over its blocks."""

    __slots__ = ("calls", "empty", "results", "results_first", "role")

    def __init__(self, role: str) -> None:
        self.role = role
        self.calls: list[str] = []
        self.results: list[str] = []
        self.empty = True
        self.results_first = True

    @classmethod
    def of(cls, message: Message) -> _Shape:
        shape = cls(message.role)
        other_seen = False
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                shape.results.append(block.tool_use_id)
                shape.empty = False
                shape.results_first = shape.results_first and not other_seen
                continue
            other_seen = True
            if isinstance(block, ToolUseBlock):
                shape.calls.append(block.id)
                shape.empty = False
            elif not is_blank(block):
                shape.empty = False
        return shape


def _pairing_problems(i: int, before: _Shape | None, shape: _Shape) -> list[str]:
    calls = before.calls if before is not None and before.role == "assistant" else []
    results = shape.results
    problems: list[str] = []
    if len(results) != len(set(results)):
        problems.append(f"message {i} answers a tool call twice")
    if set(results) != set(calls):
        problems.append(
            f"message {i} answers calls {sorted(set(results))} "
            f"but the message before made calls {sorted(set(calls))}"
        )
    if not shape.results_first:
        problems.append(f"message {i} has text before its tool results")
    return problems


def results_first(blocks: Sequence[Block]) -> list[Block]:
    """``blocks`` with every tool result moved before the other blocks, orders kept."""
    results = [block for block in blocks if isinstance(block, ToolResultBlock)]
    others = [block for block in blocks if not isinstance(block, ToolResultBlock)]
    return [*results, *others]


def merge_consecutive(messages: Sequence[Message]) -> list[Message]:
    """Join each run of messages of one role into one message (tool results first).

    A prompt that follows tool results (a new instruction after an interrupted turn) thus
    goes out in the same user message, after the results, as both vendors require.
    """
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1].role == message.role:
            blocks = [*merged[-1].content, *message.content]
            merged[-1] = Message(role=message.role, content=results_first(blocks))
        else:
            merged.append(message)
    return merged


def answer_dangling_calls(messages: Sequence[Message], reason: str) -> list[Message]:
    """``messages`` with every unanswered tool call answered as interrupted.

    A call whose next message is not a user message gets a new user message after it; a user
    message that answers only some calls gets the rest, all in call order and before its other
    blocks. Nothing else changes, so when only the last message has unanswered calls the result
    is ``messages`` plus one new message (the loop relies on this to persist it).

    Args:
        messages: The conversation.
        reason: Why the calls never finished, in a few words ("the agent was stopped").
    """
    answered: list[Message] = []
    for index, message in enumerate(messages):
        previous = answered[-1] if answered else None
        if previous is not None and previous.tool_uses and message.role == "user":
            message = _with_results(previous.tool_uses, message, reason)
        answered.append(message)
        following = messages[index + 1] if index + 1 < len(messages) else None
        if message.tool_uses and (following is None or following.role != "user"):
            answered.append(_with_results(message.tool_uses, None, reason))
    return answered


def _with_results(calls: list[ToolUseBlock], reply: Message | None, reason: str) -> Message:
    """``reply`` holding one result per call, in call order, before any other block."""
    existing = {block.tool_use_id: block for block in reply.tool_results} if reply else {}
    results: list[Block] = [existing.get(c.id) or interrupted_result(c, reason) for c in calls]
    called = {call.id for call in calls}
    others = [
        block
        for block in (reply.content if reply else [])
        if not (isinstance(block, ToolResultBlock) and block.tool_use_id in called)
    ]
    content = results_first([*results, *others])
    return (
        reply
        if reply is not None and reply.content == content
        else Message(role="user", content=content)
    )


__all__ = [
    "EMPTY_REPLY",
    "RAW_ARGUMENTS_KEY",
    "answer_dangling_calls",
    "conversation_problems",
    "encode_arguments",
    "interrupted_result",
    "interrupted_text",
    "is_blank",
    "is_empty",
    "is_interrupted_result",
    "is_prompt",
    "merge_consecutive",
    "non_empty_reply",
    "parse_arguments",
    "results_first",
]

"""Make a stored conversation valid to send again, to Anthropic and OpenAI alike.

The rules live in `providers.conversation`. A crash can break them (a tool call whose result
was never written, a reply cut to nothing); `repair_history` restores them without inventing
what happened: a call that never finished is answered as interrupted, its effect unknown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from providers.conversation import (
    answer_dangling_calls,
    conversation_problems,
    is_empty,
    is_interrupted_result,
    merge_consecutive,
    non_empty_reply,
)
from providers.messages import Block, Message, ToolResultBlock, ToolUseBlock

CRASH_REASON = "the agent stopped before the call finished"
RESUMED_PLACEHOLDER = "(conversation resumed)"


def repair_history(
    messages: list[Message], settled: Mapping[str, ToolResultBlock] | None = None
) -> tuple[list[Message], list[str]]:
    """Return a valid history and one note per repair made (empty when nothing was wrong).

    Empty replies become a placeholder and empty prompts are dropped; consecutive messages of
    one role are merged; results whose call is missing are dropped; calls without a result get
    the result ``settled`` holds for them (recorded before the crash: a sub-agent that
    finished while its siblings ran), else an interrupted ``is_error`` result.
    """
    if plainly_valid(messages) or not conversation_problems(messages):
        return list(messages), []
    notes: list[str] = []
    history = [_own_blocks(message) for message in messages]
    history = [
        non_empty_reply(message) if message.role == "assistant" else message
        for message in history
        if message.role == "assistant" or not is_empty(message)
    ]
    history = _drop_repeated_calls(merge_consecutive(history), notes)
    history = merge_consecutive(_drop_orphan_results(history, notes))
    answered = _settle(answer_dangling_calls(history, CRASH_REASON), settled or {})
    had = {result.tool_use_id for message in history for result in message.tool_results}
    notes += [
        f"tool call {call.name} ({call.id}) had no result; marked interrupted"
        for message in history
        for call in message.tool_uses
        if call.id not in had
    ]
    if answered and answered[0].role != "user":
        answered.insert(0, Message.user(RESUMED_PLACEHOLDER))
        notes.append("the history began with an assistant message; a placeholder was added")
    return answered, notes


def _settle(messages: list[Message], settled: Mapping[str, ToolResultBlock]) -> list[Message]:
    """``messages`` with each made-up interrupted result that ``settled`` knows replaced."""
    if not settled:
        return messages
    return [
        Message(
            role=m.role,
            content=[
                settled.get(b.tool_use_id, b)
                if isinstance(b, ToolResultBlock) and is_interrupted_result(b)
                else b
                for b in m.content
            ],
        )
        if m.tool_results
        else m
        for m in messages
    ]


def plainly_valid(messages: Sequence[Message]) -> bool:
    """A quick proof that ``messages`` break none of the rules of `conversation_problems`.

    True only for the shape the loop writes: roles alternate from a user message, no message
    is empty, and each user message answers every call of the one before it, in call order,
    before anything else. False means "not proven" (results in another order are valid too):
    ask `conversation_problems`. One pass that builds nothing per message: a resumed session
    checks a hundred thousand messages, and this takes under half the time of the full check.
    """
    expected = "user"
    calls: list[str] = []
    for message in messages:
        if message.role != expected:
            return False
        answering, calls = calls, []
        answered = 0
        substance = False
        for block in message.content:
            if block.type == "tool_result":
                if answered == len(answering) or block.tool_use_id != answering[answered]:
                    return False
                answered += 1
            elif answered < len(answering):
                return False  # a block before the last result, or a result missing
            elif block.type == "tool_use" and expected == "assistant":
                calls.append(block.id)
                substance = True
            elif block.type == "text":
                substance = substance or not (block.text == "" or block.text.isspace())
            else:
                return False
        if answered < len(answering) or not (substance or answered):
            return False
        if len(calls) > 1 and len(set(calls)) != len(calls):
            return False
        expected = "assistant" if expected == "user" else "user"
    return not calls


def history_problems(messages: list[Message]) -> list[str]:
    """Every rule of either provider that ``messages`` breaks; empty when it can be sent."""
    return conversation_problems(messages)


def _drop_repeated_calls(messages: list[Message], notes: list[str]) -> list[Message]:
    """Keep only the first tool call with each id (a duplicated record, or an older session
    whose model reused an id); the repeats' results are then orphans and go too."""
    seen: set[str] = set()
    result: list[Message] = []
    for message in messages:
        if message.role == "assistant" and message.tool_uses:
            kept: list[Block] = []
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    if block.id in seen:
                        notes.append(f"dropped a repeated tool call {block.name} ({block.id})")
                        continue
                    seen.add(block.id)
                kept.append(block)
            if len(kept) != len(message.content):
                message = non_empty_reply(message.model_copy(update={"content": kept}))
        result.append(message)
    return result


def _drop_orphan_results(messages: list[Message], notes: list[str]) -> list[Message]:
    result: list[Message] = []
    for message in messages:
        calls = {use.id for use in result[-1].tool_uses} if result else set()
        if message.role == "user" and message.tool_results:
            seen: set[str] = set()
            kept: list[Block] = []
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    if block.tool_use_id not in calls or block.tool_use_id in seen:
                        notes.append(f"dropped a result for unknown tool call {block.tool_use_id}")
                        continue
                    seen.add(block.tool_use_id)
                kept.append(block)
            message = Message(role="user", content=kept)
        if not is_empty(message):
            result.append(message)
    return result


def _own_blocks(message: Message) -> Message:
    """``message`` without blocks its role cannot hold (calls from the user, results from
    the assistant): no loop writes them, so they can only come from a damaged file."""
    foreign = ToolResultBlock if message.role == "assistant" else ToolUseBlock
    kept = [block for block in message.content if not isinstance(block, foreign)]
    return (
        message
        if len(kept) == len(message.content)
        else message.model_copy(update={"content": kept})
    )


def is_synthetic_result(block: Block) -> bool:
    """Whether ``block`` is a result made up for an interrupted call."""
    return is_interrupted_result(block)

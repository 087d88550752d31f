"""Make a stored conversation valid to send again, to Anthropic and OpenAI alike.

Both providers require: the first message is the person's; roles alternate; every tool call
is answered by a result in the message right after it (results first in that message); no
result without its call; no empty message. A crash can break these rules (a tool call whose
result was never written); `repair_history` restores them without inventing what happened.
"""

from __future__ import annotations

from agent.llm.messages import Block, Message, ToolResultBlock, ToolUseBlock

INTERRUPTED_RESULT = "interrupted; its effect is unknown — verify before repeating it"
RESUMED_PLACEHOLDER = "(conversation resumed)"


def repair_history(messages: list[Message]) -> tuple[list[Message], list[str]]:
    """Return a valid history and one note per repair made (empty when nothing was wrong).

    Tool calls without a result get a synthetic ``is_error`` result; results whose call is
    missing are dropped; consecutive messages of one role are merged; empty messages dropped.
    """
    if _is_valid(messages):
        return list(messages), []
    notes: list[str] = []
    history = _merge_same_role([message for message in messages if message.content])
    history = _merge_same_role(_drop_orphan_results(history, notes))
    history = _answer_dangling_calls(history, notes)
    if history and history[0].role != "user":
        history.insert(0, Message.user(RESUMED_PLACEHOLDER))
        notes.append("the history began with an assistant message; a placeholder was added")
    return history, notes


def history_problems(messages: list[Message]) -> list[str]:
    """Every rule of either provider that ``messages`` breaks; empty when it can be sent."""
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("the first message is not from the user")
    for index, message in enumerate(messages):
        where = f"message {index} ({message.role})"
        if not message.content:
            problems.append(f"{where} is empty")
        if index and messages[index - 1].role == message.role:
            problems.append(f"{where} follows another {message.role} message")
        if message.role == "assistant" and message.tool_results:
            problems.append(f"{where} holds tool results")
        if message.role == "user" and message.tool_uses:
            problems.append(f"{where} holds tool calls")
        calls = [use.id for use in messages[index - 1].tool_uses] if index else []
        results = [result.tool_use_id for result in message.tool_results]
        if message.role == "user" and sorted(results) != sorted(calls):
            problems.append(f"{where} answers calls {results}, expected {calls}")
        leading = message.content[: len(results)]
        if not all(isinstance(block, ToolResultBlock) for block in leading):
            problems.append(f"{where} has text before its tool results")
        if message.role == "assistant" and message.tool_uses:
            following = messages[index + 1] if index + 1 < len(messages) else None
            if following is None or following.role != "user":
                problems.append(f"{where} makes tool calls that are never answered")
    return problems


def _is_valid(messages: list[Message]) -> bool:
    """A quick check of the rules `history_problems` spells out (true for most histories)."""
    if messages and messages[0].role != "user":
        return False
    previous_role = ""
    open_calls: list[str] = []
    for message in messages:
        if not message.content or message.role == previous_role:
            return False
        previous_role = message.role
        tags = [block.type for block in message.content]
        if message.role == "assistant":
            if "tool_result" in tags:
                return False
            open_calls = [b.id for b in message.content if isinstance(b, ToolUseBlock)]
            continue
        results = tags.count("tool_result")
        if "tool_use" in tags or tags[:results] != ["tool_result"] * results:
            return False
        if results or open_calls:
            answered = [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]
            if sorted(answered) != sorted(open_calls):
                return False
        open_calls = []
    return not open_calls


def _drop_orphan_results(messages: list[Message], notes: list[str]) -> list[Message]:
    result: list[Message] = []
    for message in messages:
        previous_calls = {use.id for use in result[-1].tool_uses} if result else set()
        if message.role == "user" and message.tool_results:
            seen: set[str] = set()
            kept: list[Block] = []
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    if block.tool_use_id not in previous_calls or block.tool_use_id in seen:
                        notes.append(f"dropped a result for unknown tool call {block.tool_use_id}")
                        continue
                    seen.add(block.tool_use_id)
                kept.append(block)
            message = Message(role="user", content=kept)
        if message.content:
            result.append(message)
    return result


def _merge_same_role(messages: list[Message]) -> list[Message]:
    result: list[Message] = []
    for message in messages:
        if result and result[-1].role == message.role:
            merged = [*result[-1].content, *message.content]
            result[-1] = Message(role=message.role, content=_results_first(merged))
        else:
            result.append(message)
    return result


def _answer_dangling_calls(messages: list[Message], notes: list[str]) -> list[Message]:
    result: list[Message] = []
    for index, message in enumerate(messages):
        if message.role == "user" and result and result[-1].tool_uses:
            message = _complete_results(result[-1].tool_uses, message, notes)
        result.append(message)
        following = messages[index + 1] if index + 1 < len(messages) else None
        if message.tool_uses and (following is None or following.role != "user"):
            result.append(_complete_results(message.tool_uses, None, notes))
    return result


def _complete_results(
    calls: list[ToolUseBlock], reply: Message | None, notes: list[str]
) -> Message:
    """``reply`` with one result per call, in call order, before any other block."""
    existing = {block.tool_use_id: block for block in reply.tool_results} if reply else {}
    results: list[Block] = []
    for call in calls:
        block = existing.get(call.id)
        if block is None:
            notes.append(f"tool call {call.name} ({call.id}) had no result; marked interrupted")
            block = ToolResultBlock(
                tool_use_id=call.id, content=f"{call.name} was {INTERRUPTED_RESULT}", is_error=True
            )
        results.append(block)
    others = _results_first(list(reply.content))[len(existing) :] if reply else []
    return Message(role="user", content=[*results, *others])


def _results_first(blocks: list[Block]) -> list[Block]:
    results = [block for block in blocks if isinstance(block, ToolResultBlock)]
    others = [block for block in blocks if not isinstance(block, ToolResultBlock)]
    return [*results, *others]


def is_synthetic_result(block: Block) -> bool:
    """Whether ``block`` is a result that `repair_history` made up for an interrupted call."""
    return isinstance(block, ToolResultBlock) and block.content.endswith(INTERRUPTED_RESULT)

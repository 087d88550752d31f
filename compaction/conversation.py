"""The shape of a valid conversation, and where it may be cut without breaking it.

A conversation is valid for both providers when it starts with a user message, roles
alternate, and every assistant ``tool_use`` is answered by a ``tool_result`` with its id in the
very next (user) message, which holds no other results. Only the last message may be an
assistant message whose calls are still unanswered.

Compaction replaces a *head* of the conversation (``messages[:k]``) by one user message and
keeps the *tail* (``messages[k:]``). A cut point ``k`` is safe when it never separates a call
from its result and the latest prompt survives; see `cut_points`.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.llm import Block, Message, TextBlock

COMPACTION_MARK = "[Context compacted"
"""Every note compaction writes into the conversation starts with this."""


def conversation_problems(messages: Sequence[Message]) -> list[str]:
    """What makes ``messages`` an invalid conversation (an empty list when it is valid)."""
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("the conversation does not start with a user message")
    for i, message in enumerate(messages):
        if not message.content:
            problems.append(f"message {i} is empty")
        if i > 0 and messages[i - 1].role == message.role:
            problems.append(f"messages {i - 1} and {i} are both {message.role} messages")
        if message.role == "assistant" and message.tool_results:
            problems.append(f"assistant message {i} holds tool results")
        if message.role == "user" and message.tool_uses:
            problems.append(f"user message {i} holds tool calls")
        if message.role != "user":
            continue
        calls = {c.id for c in messages[i - 1].tool_uses} if i > 0 else set()
        results = [r.tool_use_id for r in message.tool_results]
        if len(results) != len(set(results)):
            problems.append(f"message {i} answers a tool call twice")
        if set(results) != calls:
            problems.append(
                f"message {i} answers calls {sorted(set(results))} "
                f"but the message before made calls {sorted(calls)}"
            )
    return problems


def is_prompt(message: Message) -> bool:
    """Whether ``message`` is a user message that answers no tool call (a prompt)."""
    return message.role == "user" and not message.tool_results


def latest_prompt_index(messages: Sequence[Message]) -> int | None:
    """Index of the latest prompt: what the person (or the loop) last asked."""
    for i in range(len(messages) - 1, -1, -1):
        if is_prompt(messages[i]):
            return i
    return None


def cut_points(messages: Sequence[Message]) -> list[int]:
    """Every safe ``k`` for `cut`, in ascending order (a larger ``k`` replaces more).

    ``k`` is safe when ``messages[k]`` is a prompt at or before the latest prompt, or an
    assistant message: then ``messages[k - 1]`` is a user message whose results (if any) answer
    calls in the head, so no call is separated from its result. The tail is never empty.
    """
    latest = latest_prompt_index(messages)
    if latest is None:
        return []
    return [
        k
        for k in range(1, len(messages))
        if messages[k].role == "assistant" or (is_prompt(messages[k]) and k <= latest)
    ]


def cut(messages: Sequence[Message], k: int, note: str) -> list[Message]:
    """Replace ``messages[:k]`` by ``note`` in one user message; keep the rest as it is.

    The note is merged into the first kept prompt; when the cut falls inside the latest turn,
    the latest prompt moves up to sit after the note, so it is never lost.

    Raises:
        ValueError: ``k`` is not one of `cut_points`.
    """
    if k not in cut_points(messages):
        raise ValueError(f"{k} is not a safe cut point")
    latest = latest_prompt_index(messages)
    assert latest is not None
    head_note: list[Block] = [TextBlock(text=note)]
    if messages[k].role == "user":
        first = Message(role="user", content=head_note + _without_notes(messages[k].content))
        return [first, *messages[k + 1 :]]
    carried = _without_notes(messages[latest].content) if latest < k else []
    return [Message(role="user", content=head_note + carried), *messages[k:]]


def is_note(block: Block) -> bool:
    """Whether ``block`` is a note compaction wrote (a summary or a "dropped" marker)."""
    return isinstance(block, TextBlock) and block.text.startswith(COMPACTION_MARK)


def _without_notes(blocks: Sequence[Block]) -> list[Block]:
    # An earlier note is either summarised into the new one or dropped with the head.
    return [block for block in blocks if not is_note(block)]

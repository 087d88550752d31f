"""Where a valid conversation may be cut without breaking it.

What makes a conversation valid is `providers.conversation`'s to say (the same rules for
sessions, the loop and the adapters); this module adds where compaction may cut one.

Compaction replaces a *head* of the conversation (``messages[:k]``) by one user message and
keeps the *tail* (``messages[k:]``). A cut point ``k`` is safe when it never separates a call
from its result and the latest prompt survives; see `cut_points`.
"""

from __future__ import annotations

from collections.abc import Sequence

from providers import Block, Message, TextBlock
from providers import conversation as rules
from providers.conversation import is_prompt

COMPACTION_MARK = "[Context compacted"
"""Every note compaction writes into the conversation starts with this."""


def conversation_problems(messages: Sequence[Message]) -> list[str]:
    """What makes ``messages`` an invalid conversation (an empty list when it is valid).

    The rules are `providers.conversation`'s; compaction may also run in the middle of a
    turn, so the last message may be an assistant message whose calls are not answered yet.
    """
    return rules.conversation_problems(messages, open_end=True)


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

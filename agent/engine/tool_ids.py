"""Tool-call ids made unique in a session before anything records or runs a call.

Models (local ones especially) repeat ids, within one answer or across turns. Both APIs
reject a conversation whose tool calls share an id, and checkpoints, results and rollbacks
pair by id, so a repeated id is renamed deterministically: ``call_1``, ``call_1_2``, ...
Ids that are empty, too long or hold characters an API refuses are replaced the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from providers import Message, ToolUseBlock

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_ID_LENGTH = 40
"""The OpenAI API refuses longer tool-call ids; Anthropic allows ``[A-Za-z0-9_-]+``."""


class ToolCallIds:
    """The tool-call ids used so far in a session."""

    def __init__(self, used: Iterable[str] = ()) -> None:
        self._used = set(used)

    @classmethod
    def of(cls, messages: Iterable[Message]) -> ToolCallIds:
        """The ids used by ``messages`` (a session's history)."""
        return cls(use.id for message in messages for use in message.tool_uses)

    def assign(self, message: Message) -> Message:
        """``message`` with every tool call's id unique in the session (itself if it was)."""
        changed = False
        content = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                unique = self._claim(block.id)
                if unique != block.id:
                    block = block.model_copy(update={"id": unique})
                    changed = True
            content.append(block)
        if not changed:
            return message
        return message.model_copy(update={"content": content})

    def _claim(self, raw: str) -> str:
        base = _UNSAFE.sub("_", raw)[:MAX_ID_LENGTH] or "call"
        candidate, n = base, 1
        while candidate in self._used:
            n += 1
            suffix = f"_{n}"
            candidate = base[: MAX_ID_LENGTH - len(suffix)] + suffix
        self._used.add(candidate)
        return candidate

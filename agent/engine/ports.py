"""What the loop needs from the layers it drives, as protocols: tools, a transcript, and
turn-level recovery. The wiring (`agent.app`) plugs in the real ones; tests plug in fakes."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from providers import (
    ChatResponse,
    LlmError,
    Message,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)


class ToolRunner(Protocol):
    """What the loop needs from the tool layer (`tools.ToolExecutor` implements it)."""

    def specs(self) -> list[ToolSpec]: ...

    async def execute(self, call: ToolUseBlock) -> ToolResultBlock: ...

    def begin_turn(self) -> None: ...

    @property
    def repeated_call_stop(self) -> str | None:
        """Why the turn must stop because the model repeats a call, if it must."""
        ...


class Transcript(Protocol):
    """Where the loop persists the conversation before moving on (a session, or nothing)."""

    def append_message(self, message: Message) -> None: ...

    def group_commit(self) -> AbstractContextManager[None]:
        """Records appended inside are made durable together (one fsync per step)."""
        ...


class TurnRecovery(Protocol):
    """Turn-level recovery: what to do when a response is truncated or the context overflows."""

    async def before_request(
        self, messages: list[Message], *, system: str, tools: Sequence[ToolSpec]
    ) -> list[Message]:
        """Return the messages to send (compacted if they are over the threshold).

        Raises:
            PromptTooLong: The latest prompt alone does not fit the model's window.
        """
        ...

    async def on_overflow(
        self,
        messages: list[Message],
        error: LlmError,
        *,
        system: str,
        tools: Sequence[ToolSpec],
    ) -> list[Message] | None:
        """Return a smaller conversation to retry with, or None when nothing more can be done.

        Raises:
            PromptTooLong: Nothing is left to compact and the prompt is most of what remains.
        """
        ...

    def on_truncated(self, response: ChatResponse, dropped_tool_call: bool) -> Message | None:
        """Return a continuation prompt for a truncated answer, or None when out of tries."""
        ...

    def observe(self, response: ChatResponse, messages: list[Message]) -> None:
        """Learn from a successful response (e.g. calibrate token accounting)."""
        ...

    def start_turn(self) -> None: ...


class _NoTranscript:
    def append_message(self, message: Message) -> None:
        pass

    def group_commit(self) -> AbstractContextManager[None]:
        return nullcontext()

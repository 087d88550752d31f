"""The one seam between the engine and whatever shows its work: a `Face`.

The engine reports everything through it — streamed text, each message added to the
conversation, each tool call with its result, and every event (retries, fallbacks,
compaction, continuations, loop stops, shared waits, protected put-backs, how a turn ended).
The REPL, ``-p`` text and JSON, and the scripting faces are renderers of that one stream;
none of them reaches into the engine's objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from providers import Event, Message, StreamDelta, ToolResultBlock, ToolUseBlock


class Face(Protocol):
    """What shows (or forwards) the engine's work. Every method must return quickly and
    never raise: the engine calls them in the middle of a turn."""

    def on_event(self, event: Event) -> None:
        """Something happened: recovery, compaction, a tool's fate, a turn's end."""

    def on_delta(self, delta: StreamDelta) -> None:
        """A piece of the answer being streamed (or a restarted stream)."""

    def on_message(self, message: Message) -> None:
        """A message joined the conversation: the person's prompt, the model's answer, or
        the results of its tool calls."""

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """A tool call finished with ``result``."""


@runtime_checkable
class ChildMessages(Protocol):
    """A face that shows sub-agents' messages, each tagged with the `task` call that started
    its child (stream-json's ``parent_tool_use_id``)."""

    def on_child_message(self, message: Message, parent_tool_use_id: str) -> None: ...


class Faces:
    """Several faces as one: each hears everything, in the order given."""

    def __init__(self, faces: Sequence[Face]) -> None:
        self.faces = list(faces)

    def on_event(self, event: Event) -> None:
        for face in self.faces:
            face.on_event(event)

    def on_delta(self, delta: StreamDelta) -> None:
        for face in self.faces:
            face.on_delta(delta)

    def on_message(self, message: Message) -> None:
        for face in self.faces:
            face.on_message(message)

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        for face in self.faces:
            face.on_tool_result(call, result)

    def on_child_message(self, message: Message, parent_tool_use_id: str) -> None:
        for face in self.faces:
            if isinstance(face, ChildMessages):
                face.on_child_message(message, parent_tool_use_id)

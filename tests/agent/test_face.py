"""The seam between the engine and its faces: one stream, everything in it."""

from __future__ import annotations

from pathlib import Path

from agent.engine.face import Face, Faces
from agent.engine.loop import AgentLoop
from providers import Event, Message, StreamDelta, ToolResultBlock, ToolUseBlock
from providers.testing import ScriptedProvider, text, tool_call
from tools import ToolExecutor, ToolSettings


class RecordingFace:
    """A face that writes down what it hears, in order."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, object]] = []

    def on_event(self, event: Event) -> None:
        self.heard.append(("event", event.type))

    def on_delta(self, delta: StreamDelta) -> None:
        self.heard.append(("delta", type(delta).__name__))

    def on_message(self, message: Message) -> None:
        self.heard.append(("message", message.role))

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        self.heard.append(("tool_result", (call.name, result.is_error)))


def _loop(provider: ScriptedProvider, workspace: Path, face: Face) -> AgentLoop:
    tools = ToolExecutor(
        workspace=workspace, settings=ToolSettings(), approval="full-auto", approver=None
    )
    return AgentLoop(provider=provider, tools=tools, system="sys", events=face.on_event, face=face)


async def test_a_face_hears_every_message_tool_result_and_the_turn_end(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    face = RecordingFace()
    loop = _loop(
        ScriptedProvider([tool_call("read_file", path="a.txt"), text("It says alpha.")]),
        workspace,
        face,
    )

    await loop.run_turn("what is in a.txt?")

    messages = [what for kind, what in face.heard if kind == "message"]
    assert messages == ["user", "assistant", "user", "assistant"]
    assert ("tool_result", ("read_file", False)) in face.heard
    tool_line = face.heard.index(("tool_result", ("read_file", False)))
    results_message = face.heard.index(("message", "user"), 1)
    assert tool_line < results_message  # the line is shown before the results are sent on
    assert face.heard[-1] == ("event", "turn_ended")


async def test_faces_fan_out_to_each_face_in_order(workspace: Path) -> None:
    first, second = RecordingFace(), RecordingFace()
    loop = _loop(ScriptedProvider([text("hi")]), workspace, Faces([first, second]))

    await loop.run_turn("hello")

    assert first.heard == second.heard
    assert ("message", "assistant") in first.heard

"""One builder: an engine is a plain function of its parts, and a variant is the same call with
a few parts replaced (as a sub-agent's is built from its parent's)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from agent.engine.build import EngineParts, build_engine, seen_by
from providers import ChatResponse, Event, RequestKind, ToolResultBlock, ToolUseBlock
from providers.testing import ScriptedProvider, text, tool_call
from sessions import FileChange, SessionStore
from tools import ToolSettings
from tools.builtin import builtin_tools
from tools.executor import ToolExecutor
from tools.guard.sandbox import Sandbox, SandboxSettings


def _parts(workspace: Path, provider: ScriptedProvider, events: list[Event]) -> EngineParts:
    return EngineParts(
        workspace=workspace,
        home=workspace / "home",
        provider=provider,
        system="You are the parent.",
        tools=builtin_tools(),
        more_tools=lambda: [],
        settings=ToolSettings,
        approval=lambda: "full-auto",
        approver=None,
        hooks=(),
        sandbox=Sandbox.create(SandboxSettings()),
        redact=lambda words: words.replace("hunter2", "[redacted]"),
        read_denied=lambda path: False,
        checkpoints=workspace / "checkpoints",
        outputs=workspace / "outputs",
        events=events.append,
        face=None,
        max_steps=5,
        max_tokens=None,
    )


async def test_a_variant_is_the_same_parts_with_a_few_replaced(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("the password is hunter2\n")
    provider = ScriptedProvider(
        [tool_call("read_file", path="notes.md"), text("parent done"), text("child done")]
    )
    events: list[Event] = []
    parts = _parts(tmp_path, provider, events)

    parent = build_engine(parts)
    child = build_engine(
        replace(
            parts,
            system="You are a child.",
            tools=[tool for tool in builtin_tools() if tool.name == "read_file"],
            max_steps=1,
            kind=RequestKind.SUBAGENT,
        )
    )
    parent_result = await parent.loop.run_turn("read the notes")
    child_result = await child.loop.run_turn("say done")

    assert (parent_result.answer, child_result.answer) == ("parent done", "child done")
    first, _, third = provider.requests
    assert first.system == "You are the parent."
    assert first.kind is RequestKind.TURN
    assert third.system == "You are a child."
    assert third.kind is RequestKind.SUBAGENT
    assert [spec.name for spec in third.tools] == ["read_file"]
    assert len(first.tools) > 1
    assert child.loop.max_steps == 1
    assert parent.loop.max_steps == 5
    # The shared parts are shared: the redactor hid the secret, both turns reached one sink.
    result = parent.loop.messages[2].tool_results[0]
    assert "hunter2" not in str(result.content)
    assert "[redacted]" in str(result.content)
    assert sum(type(event).__name__ == "TurnEnded" for event in events) == 2


class Refusing:
    """Runs calls through the executor, except one tool's (as a sub-agent's refuses `task`)."""

    def __init__(self, executor: ToolExecutor) -> None:
        self.executor = executor

    def specs(self) -> list[object]:
        return [s for s in self.executor.specs() if s.name != "list_files"]

    async def execute(self, call: ToolUseBlock) -> ToolResultBlock:
        if call.name == "list_files":
            return ToolResultBlock(tool_use_id=call.id, content="refused", is_error=True)
        return await self.executor.execute(call)

    def begin_turn(self) -> None:
        self.executor.begin_turn()

    @property
    def repeated_call_stop(self) -> str | None:
        return self.executor.repeated_call_stop


async def test_calls_go_through_what_the_builder_is_given_around_the_executor(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider([tool_call("list_files", pattern="*"), text("ok")])
    engine = build_engine(_parts(tmp_path, provider, []), calls_through=Refusing)

    await engine.loop.run_turn("list")

    assert "list_files" not in [spec.name for spec in provider.requests[0].tools]
    result = engine.loop.messages[2].tool_results[0]
    assert result.is_error
    assert result.content == "refused"
    assert isinstance(engine.executor, ToolExecutor)


class ChangesTheFileOnResult:
    """A face that rewrites a file the moment a tool's result is shown: another program
    writing it just after the tool read it, before the session saved the result."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def on_event(self, event: Event) -> None:
        pass

    def on_delta(self, delta: object) -> None:
        pass

    def on_message(self, message: object) -> None:
        pass

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        self.path.write_text("changed after the read\n")


@pytest.mark.parametrize(
    ("call", "seen"),
    [
        (tool_call("read_file", path="notes.md"), b"as the model saw it\n"),
        (tool_call("write_file", path="notes.md", content="written\n"), b"written\n"),
        (
            tool_call("edit_file", path="notes.md", old_string="saw", new_string="made"),
            b"as the model made it\n",
        ),
    ],
    ids=["read", "write", "edit"],
)
async def test_the_state_saved_of_a_file_is_the_one_its_tool_read_or_wrote(
    tmp_path: Path, call: ChatResponse, seen: bytes
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = workspace / "notes.md"
    notes.write_text("as the model saw it\n")
    store = SessionStore(tmp_path / "home")
    writer = store.create(cwd=workspace, model_chain=["anthropic:x"])
    provider = ScriptedProvider([call, text("done")])
    parts = replace(_parts(workspace, provider, []), face=ChangesTheFileOnResult(notes))

    engine = build_engine(parts, transcript=writer, files_seen=seen_by(writer))
    await engine.loop.run_turn("work on the notes")
    writer.close()

    # Saved as the tool left it, so a resume tells the model the file changed since; a look
    # at the file when the result was saved would have taken the change for what it saw.
    [state] = [s for line in writer.path.read_text().splitlines() for s in _files(line)]
    assert state["sha256"] == hashlib.sha256(seen).hexdigest()
    assert state["path"] == str(notes.resolve())
    assert store.load(writer.id).changed_files == [FileChange(str(notes.resolve()), "modified")]


def _files(line: str) -> list[dict[str, object]]:
    return list(json.loads(line).get("files", []))

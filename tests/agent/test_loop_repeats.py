"""The loop stops a model that goes in circles, also when every call succeeds."""

from __future__ import annotations

from pathlib import Path

from agent.engine.loop import AgentLoop
from agent.engine.outcome import TurnStatus
from providers.testing import ScriptedProvider, text, tool_call
from tools import ToolExecutor, ToolSettings


def _loop(provider: ScriptedProvider, workspace: Path, settings: ToolSettings) -> AgentLoop:
    tools = ToolExecutor(
        workspace=workspace, settings=settings, approval="full-auto", approver=None
    )
    return AgentLoop(provider=provider, tools=tools, system="sys", max_steps=50)


async def test_a_repeated_successful_call_is_nudged_then_stops_the_turn(workspace: Path) -> None:
    for name in ("README.md", "main.py", "test_main.py"):
        (workspace / name).write_text("x\n")
    provider = ScriptedProvider([tool_call("list_files") for _ in range(50)])
    loop = _loop(provider, workspace, ToolSettings(repeated_call_warn=2, repeated_call_limit=4))

    result = await loop.run_turn("list the files here")

    assert result.status is TurnStatus.REPEATED_CALL
    assert result.steps == 4
    assert len(provider.requests) == 4
    assert result.error is not None
    assert "called list_files 4 times" in result.error
    first = provider.requests[1].messages[-1].tool_results[0].content
    assert "already have it" not in first
    nudged = provider.requests[2].messages[-1].tool_results[0].content
    assert "README.md" in nudged  # the result itself is still there...
    assert "you already have it" in nudged  # ...with the note that it is the same again


async def test_the_model_can_follow_the_nudge_and_finish(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    provider = ScriptedProvider(
        [tool_call("list_files"), tool_call("list_files"), text("There is one file: a.txt.")]
    )
    loop = _loop(provider, workspace, ToolSettings())

    result = await loop.run_turn("list the files here")

    assert result.status is TurnStatus.DONE
    assert result.answer == "There is one file: a.txt."


async def test_a_person_can_raise_the_limit(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    steps = [tool_call("list_files") for _ in range(6)] + [text("done")]
    provider = ScriptedProvider(steps)
    loop = _loop(provider, workspace, ToolSettings(repeated_call_limit=10))

    result = await loop.run_turn("go")

    assert result.status is TurnStatus.DONE


async def test_repeated_failures_end_with_the_same_status(workspace: Path) -> None:
    provider = ScriptedProvider([tool_call("read_file", path="missing.txt") for _ in range(5)])
    loop = _loop(provider, workspace, ToolSettings())

    result = await loop.run_turn("read missing.txt")

    assert result.status is TurnStatus.REPEATED_CALL
    assert "failed 5 times" in (result.error or "")

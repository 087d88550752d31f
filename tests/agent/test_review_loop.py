"""The loop's advice when the provider refuses the request outright."""

from __future__ import annotations

from pathlib import Path

from agent.engine.loop import AgentLoop
from agent.engine.outcome import TurnStatus
from providers import ErrorKind, LlmError
from providers.testing import ScriptedProvider
from tools import ToolExecutor, ToolSettings


async def test_a_refusal_error_advises_rephrasing_not_waiting(workspace: Path) -> None:
    error = LlmError(
        ErrorKind.REFUSAL,
        "The response was filtered due to the prompt triggering content management policy.",
        status=400,
        provider="openai",
        server_type="content_filter",
    )
    tools = ToolExecutor(
        workspace=workspace, settings=ToolSettings(), approval="full-auto", approver=None
    )
    loop = AgentLoop(provider=ScriptedProvider([error]), tools=tools, system="sys")

    result = await loop.run_turn("hi")

    assert result.status is TurnStatus.FAILED
    assert result.error_kind is ErrorKind.REFUSAL
    assert result.error is not None
    assert "try again later" not in result.error
    assert "rephrase" in result.error

"""AGENTS.md in the subdirectories the model works in: nearest wins, once per file."""

from __future__ import annotations

import os
from pathlib import Path

from agent.engine.instructions import NearestInstructions
from agent.engine.loop import AgentLoop
from providers.testing import ScriptedProvider, text, tool_call
from tools import ToolExecutor, ToolSettings


def _loop(provider: ScriptedProvider, workspace: Path) -> AgentLoop:
    tools = ToolExecutor(
        workspace=workspace, settings=ToolSettings(), approval="full-auto", approver=None
    )
    return AgentLoop(
        provider=provider,
        tools=tools,
        system="sys",
        instructions=NearestInstructions(workspace),
    )


async def test_the_nearest_subdirectory_instructions_come_with_the_first_result_there(
    workspace: Path,
) -> None:
    (workspace / "api" / "v1").mkdir(parents=True)
    (workspace / "api" / "AGENTS.md").write_text("Handlers return JSON; run make api-test.")
    (workspace / "api" / "v1" / "users.py").write_text("USERS = []\n")
    (workspace / "api" / "v1" / "teams.py").write_text("TEAMS = []\n")
    (workspace / "top.py").write_text("x = 1\n")
    provider = ScriptedProvider(
        [
            tool_call("read_file", path="top.py"),
            tool_call("read_file", path="api/v1/users.py"),
            tool_call("read_file", path="api/v1/teams.py"),
            text("done"),
        ]
    )

    await _loop(provider, workspace).run_turn("look at the API")

    results = [request.messages[-1].tool_results[0].content for request in provider.requests[1:]]
    assert "make api-test" not in results[0]  # top.py is not under api/
    assert "[Instructions for api/ from api/AGENTS.md" in results[1]
    assert "Handlers return JSON; run make api-test." in results[1]
    assert "make api-test" not in results[2]  # once per file


async def test_instructions_linked_from_outside_the_workspace_are_never_sent(
    workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("TOP SECRET")
    (workspace / "lib").mkdir()
    os.symlink(secret, workspace / "lib" / "AGENTS.md")
    (workspace / "lib" / "a.py").write_text("a = 1\n")
    provider = ScriptedProvider([tool_call("read_file", path="lib/a.py"), text("done")])

    await _loop(provider, workspace).run_turn("read lib/a.py")

    assert "TOP SECRET" not in provider.requests[1].messages[-1].tool_results[0].content

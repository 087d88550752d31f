"""The plan outside the REPL: stream-json carries the todo_write call as Claude Code does, ACP
sends the spec's ``plan`` update (again on ``session/load``), and ``-p`` needs no --yes for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.acp.editor import editor_session
from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

PLAN = {
    "todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    ]
}
ENTRIES = [
    {"content": "Read the code", "priority": "medium", "status": "completed"},
    {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
]


def test_stream_json_carries_the_call_and_its_result_without_asking(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.tool_call("todo_write", PLAN), Reply.text("Planned."))
    run = run_agent(
        "-p",
        "plan the fix",  # no --yes: the plan changes nothing, so nothing is asked
        "--model",
        "anthropic:claude-test",
        "--output-format",
        "stream-json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    lines: list[dict[str, Any]] = [json.loads(line) for line in run.stdout.splitlines()]
    assert "todo_write" in lines[0]["tools"]
    tool_use = lines[1]["message"]["content"][-1]
    assert (tool_use["type"], tool_use["name"], tool_use["input"]) == (
        "tool_use",
        "todo_write",
        PLAN,
    )
    [result] = lines[2]["message"]["content"]
    assert result["tool_use_id"] == tool_use["id"]
    assert "Todos have been modified successfully" in json.dumps(result["content"])
    assert lines[-1]["result"] == "Planned."
    assert lines[-1]["is_error"] is False


async def test_acp_sends_the_plan_update_and_again_on_load(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.tool_call("todo_write", PLAN), Reply.text("Planned."))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "plan the fix")
        assert answer.stop_reason == "end_turn"
        [plan] = agent.editor.of_kind("plan")
        assert plan["entries"] == ENTRIES
        [call] = agent.editor.of_kind("tool_call")
        assert call["kind"] == "think"
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        await agent.conn.initialize(protocol_version=1)
        await agent.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        [plan] = agent.editor.of_kind("plan")
        assert plan["entries"] == ENTRIES
        kinds = agent.editor.kinds()
        assert kinds.index("plan") > kinds.index("tool_call")  # after the history it sums up

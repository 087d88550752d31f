"""``agent acp`` with sub-agents: the editor sees each child's tool calls as tool calls of
their own (under the `task` call's id), with their status, and answers a child's question."""

from __future__ import annotations

from pathlib import Path

from tests.agent.acp.editor import Editor, editor_session
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.subagents import calls_then, delegating


async def test_the_editor_sees_a_childs_tool_calls_and_answers_its_question(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")

    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    child = calls_then(Reply.tool_call("edit_file", edit), Reply.text("changed it"))
    job = ("fix x", "general-purpose")
    fake_llm.respond_with(delegating(child, job, then="The child changed it."))
    editor = Editor(answers=["allow_once"])
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "delegate the fix")

    assert answer.stop_reason == "end_turn"
    assert (workspace / "app.py").read_text() == "x = 2\n"
    task, child = editor.of_kind("tool_call")
    assert child["toolCallId"].startswith(f"{task['toolCallId']}/")
    assert child["_meta"] == {"agent": {"parentToolUseId": task["toolCallId"]}}
    assert (child["kind"], child["status"]) == ("edit", "pending")
    assert child["content"][0]["type"] == "diff"
    (question,) = editor.questions
    assert question["toolCall"]["toolCallId"] == child["toolCallId"]
    assert "sub-agent general-purpose: do fix x" in question["toolCall"]["title"]
    updates = {
        u["toolCallId"]: u["status"] for u in editor.of_kind("tool_call_update")
    }  # the last status of each
    assert updates == {task["toolCallId"]: "completed", child["toolCallId"]: "completed"}
    children_updates = [
        u["status"]
        for u in editor.of_kind("tool_call_update")
        if u["toolCallId"] == child["toolCallId"]
    ]
    assert children_updates == ["in_progress", "completed"]
    assert editor.text().endswith("The child changed it.")

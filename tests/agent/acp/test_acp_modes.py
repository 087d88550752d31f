"""Session modes over ACP: offered at new and load, switched by ``session/set_mode``, and a
plan approved in the editor carried out in the same prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError

from agent.permissions.plan import GO_AHEAD, INSTRUCTION
from tests.agent.acp.editor import Editor, editor_session
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

EDIT = {"path": "app.py", "old_string": "v1", "new_string": "v2"}
MODE_IDS = ["default", "acceptEdits", "plan", "bypassPermissions"]


async def test_new_and_load_offer_claude_codes_modes_with_the_one_in_force(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Hi."))
    async with editor_session(fake_llm, workspace, decoy_home, "--approval", "auto-edit") as agent:
        await agent.conn.initialize(protocol_version=1)
        new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        await agent.ask(new.session_id, "hello")
        loaded = await agent.conn.load_session(
            cwd=str(workspace), session_id=new.session_id, mcp_servers=[]
        )

    for modes in (new.modes, loaded.modes):
        assert modes is not None
        assert modes.current_mode_id == "acceptEdits"
        assert [mode.id for mode in modes.available_modes] == MODE_IDS


async def test_set_mode_switches_what_is_asked_mid_session(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("print('v1')\n")
    fake_llm.script(
        Reply.tool_call("edit_file", EDIT),
        Reply.text("Edited."),
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.text("Ran it."),
    )
    editor = Editor()  # no answers: any question is answered "cancelled"
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        await agent.conn.set_session_mode(session_id=session_id, mode_id="acceptEdits")
        await agent.ask(session_id, "bump it")
        await agent.ask(session_id, "touch it")
        with pytest.raises(RequestError) as unknown:
            await agent.conn.set_session_mode(session_id=session_id, mode_id="yolo")

    assert (workspace / "app.py").read_text() == "print('v2')\n"  # the edit was not asked about
    assert not (workspace / "made").exists()  # the command was, and got no yes
    assert [q["toolCall"]["title"] for q in editor.questions] == ["run: touch made"]
    assert "'yolo' is not one of default, acceptEdits, plan" in str(unknown.value.data)


async def test_an_approved_plan_leaves_plan_mode_and_is_carried_out_in_the_same_prompt(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("print('v1')\n")
    fake_llm.script(
        Reply.tool_call("edit_file", EDIT),  # refused: plan mode
        Reply.text("1. Change v1 to v2."),
        Reply.tool_call("edit_file", EDIT),
        Reply.text("Done."),
    )
    editor = Editor(answers=["acceptEdits"])
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        await agent.conn.set_session_mode(session_id=session_id, mode_id="plan")
        answer = await agent.ask(session_id, "bump the version")

    assert answer.stop_reason == "end_turn"
    assert (workspace / "app.py").read_text() == "print('v2')\n"
    [question] = editor.questions  # the edit after approval was not asked: acceptEdits
    assert question["toolCall"]["title"] == "Ready to code?"
    assert question["options"] == ["allow_always", "allow_once", "reject_once"]
    ready = [c for c in editor.of_kind("tool_call") if c["kind"] == "switch_mode"]
    assert ready[0]["content"][0]["content"]["text"] == "1. Change v1 to v2."
    assert [u["currentModeId"] for u in editor.of_kind("current_mode_update")] == ["acceptEdits"]
    bodies = [str(request.body) for request in fake_llm.requests]
    assert INSTRUCTION[:40] in bodies[0]
    assert "plan mode: edit_file changes files" in bodies[1]
    assert GO_AHEAD in bodies[2]


async def test_keep_planning_changes_nothing_and_stays_in_plan_mode(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("print('v1')\n")
    fake_llm.script(Reply.text("1. Change v1 to v2."), Reply.text("2. Also the tests."))
    editor = Editor(answers=["plan", "plan"])
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        await agent.conn.set_session_mode(session_id=session_id, mode_id="plan")
        first = await agent.ask(session_id, "bump it")
        second = await agent.ask(session_id, "and the tests?")

    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert len(editor.questions) == 2  # still planning: the second answer is asked about too
    assert editor.of_kind("current_mode_update") == []
    assert INSTRUCTION[:40] in str(fake_llm.requests[1].body)
    assert (workspace / "app.py").read_text() == "print('v1')\n"

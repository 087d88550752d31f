"""The REPL resumes a session that stopped mid-turn: it says so, Enter continues the turn,
and a new instruction goes out with the rest of that turn in one request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from providers import Message, ToolResultBlock, ToolUseBlock
from sessions import SessionStore
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean
from tests.fakes.vendor_rules import request_problems

ANSWER = "Checked the interrupted step and finished."


def _stopped_session(home: Path, workspace: Path) -> str:
    """A session whose process died while a tool ran (as after ``kill -9``)."""
    store = SessionStore(home / ".agent")
    call = ToolUseBlock(id="toolu_stopped", name="run_command", input={"command": "sleep 30"})
    with store.create(cwd=workspace, model_chain=["anthropic:claude-test"]) as writer:
        writer.append_message(Message.user("run the slow step"))
        writer.append_message(Message(role="assistant", content=[call]))
    return writer.id


@pytest.mark.parametrize("typed", ["Continue the task.", ""])
def test_a_session_stopped_mid_turn_resumes_as_one_turn(
    typed: str, spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    session_id = _stopped_session(decoy_home, workspace)
    fake_llm.script(Reply.text(ANSWER))
    term = spawn("--resume", session_id)

    shown = clean(term.prompt())
    term.send_line(typed)
    term.expect(re.escape(ANSWER))
    term.prompt()
    term.exit()

    assert "stopped mid-turn" in shown
    assert "Press Enter to continue it, or type a new instruction" in shown
    [request] = fake_llm.requests
    assert request_problems("anthropic", request.body) == []
    last = request.body["messages"][-1]
    assert last["content"][0]["type"] == "tool_result"
    assert "was interrupted" in json.dumps(last["content"][0])
    texts = [block["text"] for block in last["content"] if block["type"] == "text"]
    assert texts == ([typed] if typed else [])


def test_resume_after_compaction_shows_what_the_person_typed_not_the_summary(
    spawn: Spawn, workspace: Path, decoy_home: Path
) -> None:
    store = SessionStore(decoy_home / ".agent")
    summary = Message.user("[Context compacted: the earlier conversation was replaced]\n\n## Goals")
    with store.create(cwd=workspace, model_chain=["anthropic:claude-test"]) as writer:
        writer.append_message(Message.user("list the files here"))
        for number in range(30):
            call = ToolUseBlock(id=f"t{number}", name="list_files", input={})
            writer.append_message(Message(role="assistant", content=[call]))
            writer.append_message(
                Message(role="user", content=[ToolResultBlock(tool_use_id=call.id, content="a")])
            )
            if number == 20:
                writer.append_compaction([summary], {"reason": "proactive"})
        writer.append_message(Message.assistant("There is one file, a."))
    term = spawn("--resume", writer.id)

    shown = clean(term.prompt())
    term.exit()

    exchange = shown[shown.index("Last exchange:") :]
    assert "› list the files here" in exchange
    assert "Context compacted" not in exchange
    assert "25 earlier tool calls" in exchange
    assert "There is one file, a." in exchange

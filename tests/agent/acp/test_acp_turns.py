"""``agent acp`` driven by the SDK's client over real stdio: new, prompt, tools, permission."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import EnvVariable, ImageContentBlock, McpServerStdio

from tests.agent.acp.editor import Editor, editor_session, text_block
from tests.fakes.images import image_bytes
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.mcp_harness import answer_once_ready, stdio_entry


async def test_a_prompt_streams_the_answer_and_ends_the_turn(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Hello from the engine."))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        init = await agent.conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        capabilities = init.agent_capabilities
        assert capabilities is not None
        assert capabilities.load_session
        prompts = capabilities.prompt_capabilities
        assert prompts is not None
        assert prompts.embedded_context
        assert prompts.image
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await agent.ask(session.session_id, "say hello")
        assert answer.stop_reason == "end_turn"
        assert agent.editor.text() == "Hello from the engine."
        usage = agent.editor.of_kind("usage_update")
        assert usage
        assert usage[-1]["used"] == 18
        assert usage[-1]["size"] > 0
        assert {sid for sid, _ in agent.editor.updates} == {session.session_id}
    sent = fake_llm.requests_for("claude-test")
    assert "say hello" in str(sent[0].body["messages"][-1])


async def test_an_edit_asks_the_editor_and_reports_kind_diff_and_status(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    fake_llm.script(
        Reply.tool_call(
            "edit_file", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
        ),
        Reply.text("Changed it."),
    )
    editor = Editor(answers=["allow_once"])
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "set x to 2")
    assert answer.stop_reason == "end_turn"
    assert (workspace / "app.py").read_text() == "x = 2\n"
    (call,) = editor.of_kind("tool_call")
    assert call["kind"] == "edit"
    assert call["status"] == "pending"
    assert call["locations"] == [{"path": str(workspace / "app.py")}]
    diff = call["content"][0]
    assert (diff["type"], diff["oldText"], diff["newText"]) == ("diff", "x = 1", "x = 2")
    (question,) = editor.questions
    assert question["toolCall"]["toolCallId"] == call["toolCallId"]
    assert question["options"] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    statuses = [u["status"] for u in editor.of_kind("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert editor.kinds().index("tool_call") < editor.kinds().index("tool_call_update")
    assert editor.text().endswith("Changed it.")


async def test_reject_always_refuses_that_tool_without_asking_again(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "echo one > one.txt"}),
        Reply.tool_call("run_command", {"command": "echo two > two.txt"}),
        Reply.text("I could not run them."),
    )
    editor = Editor(answers=["reject_always"])
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "run two commands")
    assert answer.stop_reason == "end_turn"
    assert len(editor.questions) == 1
    assert editor.questions[0]["toolCall"]["kind"] == "execute"
    assert not (workspace / "one.txt").exists()
    assert not (workspace / "two.txt").exists()
    statuses = [u["status"] for u in editor.of_kind("tool_call_update")]
    assert statuses == ["failed", "failed"]  # refused: never shown running


async def test_a_call_that_needs_no_question_is_shown_running_before_it_completes(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(Reply.tool_call("read_file", {"path": "notes.txt"}), Reply.text("Read it."))
    editor = Editor()
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        await agent.ask(session_id, "read the notes")
    (call,) = editor.of_kind("tool_call")
    assert (call["kind"], call["status"]) == ("read", "pending")
    statuses = [u["status"] for u in editor.of_kind("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert not editor.questions


async def test_the_step_limit_is_max_turn_requests(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.tool_call("list_files", {}), Reply.tool_call("list_files", {}))
    async with editor_session(fake_llm, workspace, decoy_home, "--max-steps", "1") as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "look around")
        assert answer.stop_reason == "max_turn_requests"
        assert "max_steps" in agent.editor.text()
        assert agent.editor.of_kind("tool_call")[0]["kind"] == "search"


async def test_a_retry_is_a_notice_the_editor_sees_with_its_fields(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(503), Reply.text("Made it."))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "hello")
    assert answer.stop_reason == "end_turn"
    notices = [chunk for chunk in agent.editor.of_kind("agent_message_chunk") if "_meta" in chunk]
    assert notices[0]["_meta"]["agent"]["subtype"] == "api_retry"
    assert notices[0]["content"]["text"].startswith("\n\n> ")
    assert agent.editor.text().endswith("Made it.")


async def test_the_editors_mcp_server_joins_ours_and_its_tool_is_called(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    entry = stdio_entry(tmp_path)
    server = McpServerStdio(
        name="fake",
        command=entry["command"],
        args=entry["args"],
        env=[EnvVariable(name=key, value=value) for key, value in entry["env"].items()],
    )
    answer_once_ready(
        fake_llm,
        decoy_home,
        Reply.tool_call("mcp__fake__echo", {"text": "hi"}),
        Reply.text("Echoed."),
    )
    async with editor_session(fake_llm, workspace, decoy_home, "--yes") as agent:
        await agent.conn.initialize(protocol_version=1)
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[server])
        answer = await agent.ask(session.session_id, "echo hi")
    assert answer.stop_reason == "end_turn"
    tools = {tool["name"] for tool in fake_llm.requests_for("claude-test")[1].body["tools"]}
    assert "mcp__fake__echo" in tools
    (update,) = [u for u in agent.editor.of_kind("tool_call_update") if u["status"] == "completed"]
    assert "hi" in update["content"][0]["content"]["text"]


async def test_a_refusal_and_a_cut_off_answer_are_their_own_stop_reasons(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.text("I can't help with that.", stop="refusal"),
        Reply.text("The first half of a long", stop="max_tokens"),
    )
    flags = ("--set", "compaction.max_output_recovery_limit=0")
    async with editor_session(fake_llm, workspace, decoy_home, *flags) as agent:
        session_id = await agent.start()
        refused = await agent.ask(session_id, "something it will not do")
        assert refused.stop_reason == "refusal"
        cut = await agent.ask(session_id, "write a long essay")
        assert cut.stop_reason == "max_tokens"
        assert "The first half of a long" in agent.editor.text()


async def test_allow_always_on_a_command_saves_a_rule_for_its_prefix(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "touch one.txt"}),
        Reply.tool_call("run_command", {"command": "touch two.txt"}),
        Reply.text("Both made."),
        Reply.tool_call("run_command", {"command": "touch three.txt"}),
        Reply.text("Made a third."),
    )
    editor = Editor(answers=["allow_always"])
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        await agent.ask(session_id, "make two files")
    assert (workspace / "one.txt").exists()
    assert (workspace / "two.txt").exists()
    assert len(editor.questions) == 1
    # A new session in the same project: the saved rule answers without a question.
    again = Editor(answers=[])
    async with editor_session(fake_llm, workspace, decoy_home, editor=again) as agent:
        session_id = await agent.start()
        await agent.ask(session_id, "make a third")
    assert (workspace / "three.txt").exists()
    assert again.questions == []


async def test_an_image_in_the_prompt_reaches_the_model_as_an_image(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("It is red."))
    picture = image_bytes((40, 30))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        await agent.conn.initialize(protocol_version=1)
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        prompt = [
            text_block("what colour is this?"),
            ImageContentBlock(
                type="image", data=base64.b64encode(picture).decode(), mime_type="image/png"
            ),
        ]
        answer = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=prompt), 60
        )
        assert answer.stop_reason == "end_turn"
        bad = ImageContentBlock(type="image", data="AAAA", mime_type="image/png")
        with pytest.raises(RequestError) as refused:  # damaged: said, and nothing sent
            await agent.conn.prompt(session_id=session.session_id, prompt=[bad])
        assert "image 1" in str(refused.value.data)
    [sent] = fake_llm.requests_for("claude-test")
    content = sent.body["messages"][-1]["content"]
    [image] = [block for block in content if block["type"] == "image"]
    assert base64.b64decode(image["source"]["data"]) == picture
    assert "what colour is this?" in str(content)

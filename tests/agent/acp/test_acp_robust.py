"""``agent acp`` when things go wrong: cancel, a busy session, kill -9, an outage, bad input."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.agent.acp.editor import Editor, editor_session, raw_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer


async def test_cancel_mid_stream_ends_the_turn_as_cancelled_and_the_session_goes_on(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Fault.stall(30, after_events=4, reply=Reply.text("a long answer that never ends")),
        Reply.text("Second answer."),
    )
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        first = asyncio.create_task(agent.ask(session_id, "write a lot"))
        await agent.editor.first("agent_message_chunk")  # the answer is streaming, then stalls
        with pytest.raises(RequestError) as busy:
            await agent.ask(session_id, "and this too")
        assert busy.value.code == -32012
        assert "still answering" in str(busy.value)
        await agent.conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(first, 20)).stop_reason == "cancelled"
        second = await agent.ask(session_id, "go on")
        assert second.stop_reason == "end_turn"
        assert agent.editor.text().endswith("Second answer.")


async def test_cancel_while_the_editor_asks_permission_runs_nothing_and_pairs_the_call(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "new.txt", "content": "x"}),
        Reply.text("Fine, I will not."),
    )
    editor = Editor(hold=asyncio.Event())
    async with editor_session(fake_llm, workspace, decoy_home, editor=editor) as agent:
        session_id = await agent.start()
        turn = asyncio.create_task(agent.ask(session_id, "write new.txt"))
        async with asyncio.timeout(30):
            while not editor.questions:
                await asyncio.sleep(0.05)
        await agent.conn.cancel(session_id=session_id)
        assert editor.hold is not None
        editor.hold.set()
        assert (await asyncio.wait_for(turn, 20)).stop_reason == "cancelled"
        (update,) = editor.of_kind("tool_call_update")
        assert update["status"] == "failed"
        assert not (workspace / "new.txt").exists()
        after = await agent.ask(session_id, "ok?")
        assert after.stop_reason == "end_turn"
    results = fake_llm.requests_for("claude-test")[-1].body["messages"]
    assert "interrupted" in json.dumps(results).lower()


async def test_a_provider_outage_is_an_error_with_when_to_retry_and_the_session_survives(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(503), Reply.text("Back again."))
    flags = ("--set", "recovery.max_attempts=1")
    async with editor_session(fake_llm, workspace, decoy_home, *flags) as agent:
        session_id = await agent.start()
        with pytest.raises(RequestError) as failed:
            await agent.ask(session_id, "hello?")
        assert failed.value.code == -32010
        assert "try again in a few minutes" in str(failed.value)
        data = failed.value.data
        assert data is not None
        assert data["errorKind"] == "overloaded"
        assert data["transient"] is True
        assert data["sessionId"] == session_id
        again = await agent.ask(session_id, "hello?")
        assert again.stop_reason == "end_turn"
        assert agent.editor.text().endswith("Back again.")


async def test_a_long_server_wait_says_how_long_and_holds_the_next_prompt_too(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(429, "rate_limit_error", headers={"retry-after": "7200"}))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        for _ in range(2):  # the server's wait holds for the whole session: no second request
            with pytest.raises(RequestError) as failed:
                await agent.ask(session_id, "hello?")
            assert failed.value.code == -32010
            assert (failed.value.data or {})["retryAfter"] == 7200
        assert "Retry after 7200 s." in str(failed.value)
    assert len(fake_llm.requests_for("claude-test")) == 1


async def test_load_after_kill_9_replays_the_history_and_continues_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Noted: 42."), Reply.text("It was 42."))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        await agent.ask(session_id, "remember 42")
        agent.process.send_signal(signal.SIGKILL)
        await agent.process.wait()
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        await agent.conn.initialize(protocol_version=1)
        await agent.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        editor = agent.editor
        assert editor.kinds()[:2] == ["user_message_chunk", "agent_message_chunk"]
        assert editor.text("user_message_chunk") == "remember 42"
        assert editor.text() == "Noted: 42."
        answer = await agent.ask(session_id, "what was it?")
        assert answer.stop_reason == "end_turn"
    sent = fake_llm.requests_for("claude-test")[-1].body["messages"]
    assert "remember 42" in json.dumps(sent)


async def test_the_client_going_away_mid_turn_saves_the_session(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Fault.stall(30, after_events=4, reply=Reply.text("never finished")),
        Reply.text("Resumed."),
    )
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        turn = asyncio.create_task(
            agent.conn.prompt(session_id=session_id, prompt=[text_block("go")])
        )
        await agent.editor.first("agent_message_chunk")
        assert agent.process.stdin is not None
        agent.process.stdin.close()
        assert await asyncio.wait_for(agent.process.wait(), 20) == 0
        turn.cancel()
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        await agent.conn.initialize(protocol_version=1)
        await agent.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        assert agent.editor.text("user_message_chunk") == "go"


async def test_sigterm_mid_turn_saves_the_session_and_exits_143(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.stall(30, after_events=4, reply=Reply.text("never finished")))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        turn = asyncio.create_task(agent.ask(session_id, "keep going"))
        await agent.editor.first("agent_message_chunk")
        agent.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(agent.process.wait(), 20) == 143
        turn.cancel()
    record = (decoy_home / ".agent" / "sessions" / f"{session_id}.jsonl").read_text()
    assert '"interrupted"' in record


def test_malformed_messages_get_json_rpc_errors_and_the_server_lives_on(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    process = raw_agent(fake_llm, workspace, decoy_home, "--verbose")  # logs: stderr only
    lines = [
        "this is not json",
        "[1, 2]",
        '{"jsonrpc": "2.0", "id": 1, "method": 7}',
        '{"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}',
        '{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {}}',
        '{"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "relative"}}',
        '{"jsonrpc": "2.0", "id": 5, "method": "no/such/method", "params": {}}',
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "session/new",
                "params": {"cwd": str(workspace), "mcpServers": []},
            }
        ),
    ]
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("\n".join(lines) + "\n")
    process.stdin.flush()
    answers = [json.loads(process.stdout.readline()) for _ in lines]
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert process.stdout.read() == ""
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)
    errors = sorted(
        (str(answer["id"]), answer["error"]["code"]) for answer in answers if "error" in answer
    )
    assert errors == [
        ("1", -32600),
        ("3", -32602),
        ("4", -32602),
        ("5", -32601),
        ("None", -32700),
        ("None", -32600),
    ]
    assert [answer["id"] for answer in answers if "result" in answer] == [2, 6]

"""``session/list``: saved sessions for the editor, by directory, newest first, in pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError

from agent.acp import listing
from agent.acp.listing import list_saved
from providers.messages import Message
from sessions import SessionStore
from tests.agent.acp.editor import editor_session
from tests.fakes.clock import VirtualClock
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer


def _saved(store: SessionStore, clock: VirtualClock, cwd: Path, prompt: str) -> str:
    clock.advance(60)
    with store.create(cwd=cwd, model_chain=["anthropic:claude-test"]) as writer:
        writer.append_message(Message.user(prompt))
        return writer.id


def test_pages_follow_one_another_whatever_is_saved_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    store = SessionStore(tmp_path / "home", clock=clock.now)
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    ids = [_saved(store, clock, here, f"task {n}") for n in range(5)]
    _saved(store, clock, elsewhere, "not here")
    monkeypatch.setattr(listing, "PAGE", 2)

    first = list_saved(tmp_path / "home", str(here), None)
    _saved(store, clock, here, "saved while paging")  # newest: it shifts no later page
    second = list_saved(tmp_path / "home", str(here), first.next_cursor)
    third = list_saved(tmp_path / "home", str(here), second.next_cursor)

    pages = [[info.session_id for info in page.sessions] for page in (first, second, third)]
    assert pages == [ids[4:2:-1], ids[2:0:-1], ids[:1]]
    assert third.next_cursor is None
    assert first.sessions[0].title == "task 4"
    assert first.sessions[0].cwd == str(here)
    assert first.sessions[0].updated_at is not None
    assert first.sessions[0].updated_at.endswith("Z")


def test_a_cursor_not_given_out_is_an_invalid_params_error(tmp_path: Path) -> None:
    with pytest.raises(RequestError) as refused:
        list_saved(tmp_path / "home", None, "page-two")
    assert "is not a cursor from session/list" in str(refused.value.data)


def test_no_sessions_directory_is_an_empty_list(tmp_path: Path) -> None:
    listed = list_saved(tmp_path / "nothing-here", None, None)
    assert (listed.sessions, listed.next_cursor) == ([], None)


async def test_the_editor_lists_the_session_it_just_had_and_loads_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Noted."))
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        init = await agent.conn.initialize(protocol_version=1)
        session_id = await agent.start()
        await agent.ask(session_id, "remember   the word\nzebra")
        listed = await agent.conn.list_sessions(cwd=str(workspace))
        elsewhere = await agent.conn.list_sessions(cwd=str(decoy_home))
        loaded = await agent.conn.load_session(
            cwd=str(workspace), session_id=listed.sessions[0].session_id, mcp_servers=[]
        )

    capabilities = init.agent_capabilities
    assert capabilities is not None
    assert capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.list is not None
    [info] = listed.sessions
    assert (info.session_id, info.title) == (session_id, "remember the word zebra")
    assert elsewhere.sessions == []
    assert loaded is not None


async def test_loading_a_session_in_another_directory_tells_the_editor_where_it_works(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Noted."))
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    async with editor_session(fake_llm, workspace, decoy_home) as agent:
        session_id = await agent.start()
        await agent.ask(session_id, "hello")
        await agent.conn.load_session(cwd=str(elsewhere), session_id=session_id, mcp_servers=[])

    said = f"This session was started in {workspace}; it works in {elsewhere} now"
    texts = [chunk["content"]["text"] for chunk in agent.editor.of_kind("agent_message_chunk")]
    assert sum(said in text for text in texts) == 1

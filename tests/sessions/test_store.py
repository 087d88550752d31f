"""The store: records round-trip, files are private and durable, ids resolve by prefix."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from providers import Event, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from sessions import AmbiguousSession, SessionNotFound, SessionStore, TurnStatus, shell_run
from sessions.ids import id_time, new_session_id
from tests.fakes.clock import VirtualClock


class RetryScheduled(Event):
    type: str = "retry_scheduled"
    attempt: int
    wait: float


def test_every_record_type_round_trips(store: SessionStore, tmp_path: Path) -> None:
    calls = Message(
        role="assistant",
        content=[TextBlock(text="reading"), ToolUseBlock(id="t1", name="run", input={"cmd": "ls"})],
    )
    results = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="a\nb")])
    summary = [Message.user("summary of earlier work"), Message.assistant("ok"), Message.user("go")]
    with store.create(cwd=tmp_path, model_chain=["anthropic:big", "openai:small"]) as writer:
        writer.append_message(Message.user("list files"))
        writer.append_message(calls)
        writer.append_event(RetryScheduled(attempt=2, wait=1.5))
        writer.append_message(results)
        writer.append_usage(Usage(input_tokens=10, output_tokens=5), model="anthropic:big")
        writer.append_model_switch("openai:small", sticky=True, reason="overloaded")
        writer.append_usage(Usage(input_tokens=1, cache_read_tokens=4), model="openai:small")
        writer.append_compaction(summary, {"tokens_before": 900, "tokens_after": 100})
        writer.append_message(Message.assistant("done"))
        writer.append_checkpoint(Path("a.py"), existed_before=True, content_hash="ab", turn=1)
        writer.append_turn_end("done")

    loaded = store.load(writer.id)

    assert loaded.header.model_chain == ["anthropic:big", "openai:small"]
    assert loaded.header.cwd == str(tmp_path)
    assert loaded.messages == [
        Message.user("list files"),
        calls,
        results,
        Message.assistant("done"),
    ]
    assert loaded.view == [*summary, Message.assistant("done")]
    assert loaded.events == [{"type": "retry_scheduled", "attempt": 2, "wait": 1.5}]
    assert loaded.model_state.current == "openai:small"
    assert loaded.model_state.sticky_fallback
    assert loaded.model_state.chain == ["anthropic:big", "openai:small"]
    assert loaded.usage_total == Usage(input_tokens=11, output_tokens=5, cache_read_tokens=4)
    assert loaded.usage_by_model["openai:small"] == Usage(input_tokens=1, cache_read_tokens=4)
    assert [(c.path, c.existed_before, c.turn) for c in loaded.checkpoints] == [
        (str(tmp_path / "a.py"), True, 1)
    ]
    assert [t.status for t in loaded.turn_ends] == ["done"]
    assert loaded.warnings == []
    assert loaded.repairs == []
    assert not loaded.ends_with_user_message


def test_turn_end_rejects_an_unknown_status(store: SessionStore, tmp_path: Path) -> None:
    with (
        store.create(cwd=tmp_path, model_chain=[]) as writer,
        pytest.raises(ValueError, match="must be one of"),
    ):
        writer.append_turn_end("exploded")


def test_turn_end_error_lists_every_status(store: SessionStore, tmp_path: Path) -> None:
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        with pytest.raises(ValueError, match="must be one of") as caught:
            writer.append_turn_end("exploded")
        writer.append_turn_end(TurnStatus.REPEATED_CALL)

    assert all(status.value in str(caught.value) for status in TurnStatus)


def test_session_files_are_private_even_with_a_permissive_umask(
    store: SessionStore, tmp_path: Path
) -> None:
    import os

    previous = os.umask(0)
    try:
        writer = store.create(cwd=tmp_path, model_chain=["anthropic:x"])
    finally:
        os.umask(previous)
    writer.close()
    assert stat.S_IMODE(writer.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(writer.path.parent.stat().st_mode) == 0o700


def test_a_second_reader_sees_every_acknowledged_record(
    store: SessionStore, tmp_path: Path
) -> None:
    writer = store.create(cwd=tmp_path, model_chain=["anthropic:x"])
    for number in range(20):
        writer.append_message(Message.user(f"prompt {number}"))
        writer.append_message(Message.assistant(f"answer {number}"))
        reader = SessionStore(store.directory.parent)
        assert len(reader.load(writer.id).messages) == 2 * number + 2
    writer.close()


def test_appending_after_close_is_refused(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(cwd=tmp_path, model_chain=[])
    writer.close()
    writer.close()
    with pytest.raises(Exception, match="closed"):
        writer.append_message(Message.user("late"))


def test_line_separators_inside_text_survive(store: SessionStore, tmp_path: Path) -> None:
    text = "a\u2028b\u2029c\x85d\re\nf"
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user(text))
    assert store.load(writer.id).messages == [Message.user(text)]


def test_ids_sort_by_creation_time() -> None:
    times = [1.0, 2.5, 1_000_000.0, 1_800_000_000.123]
    ids = [new_session_id(t) for t in times]
    assert sorted(ids) == ids
    assert all(len(i) == 26 for i in ids)
    assert [id_time(i) for i in ids] == [1.0, 2.5, 1_000_000.0, 1_800_000_000.123]


def _three_sessions(store: SessionStore, clock: VirtualClock, tmp_path: Path) -> list[str]:
    ids = []
    for _ in range(3):
        with store.create(cwd=tmp_path, model_chain=[]) as writer:
            ids.append(writer.id)
        clock.advance(3600)
    return ids


def test_any_unique_prefix_resolves(
    store: SessionStore, clock: VirtualClock, tmp_path: Path
) -> None:
    ids = _three_sessions(store, clock, tmp_path)
    for session_id in ids:
        assert store.resolve(session_id) == session_id
        assert store.resolve(session_id[-26:].upper()) == session_id
    # Ids created an hour apart differ within the first ten (time) characters.
    last = ids[2]
    unique = next(n for n in range(1, 27) if sum(i.startswith(last[:n]) for i in ids) == 1)
    assert store.resolve(last[:unique]) == last


def test_an_ambiguous_prefix_lists_the_candidates(
    store: SessionStore, clock: VirtualClock, tmp_path: Path
) -> None:
    ids = _three_sessions(store, clock, tmp_path)
    with pytest.raises(AmbiguousSession) as raised:
        store.resolve(ids[0][:2])
    assert raised.value.candidates == sorted(ids)
    assert ids[1] in str(raised.value)


@pytest.mark.parametrize("prefix", ["zzzz", "not-an-id", "", "u" * 27])
def test_an_unknown_prefix_says_how_to_find_sessions(
    store: SessionStore, clock: VirtualClock, tmp_path: Path, prefix: str
) -> None:
    _three_sessions(store, clock, tmp_path)
    with pytest.raises(SessionNotFound, match="agent sessions"):
        store.resolve(prefix)


def test_listing_shows_how_each_session_ended(
    store: SessionStore, clock: VirtualClock, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    with store.create(cwd=tmp_path, model_chain=[]) as finished:
        finished.append_message(Message.user("  fix   the\ntests  "))
        finished.append_message(Message.assistant("fixed"))
        finished.append_turn_end("failed", "quota exhausted")
    clock.advance(10)
    with store.create(cwd=other, model_chain=[]) as crashed:
        crashed.append_message(Message.user("x" * 200))
    clock.advance(10)
    with store.create(cwd=tmp_path, model_chain=[]) as empty:
        pass

    table = store.list()

    assert [s.id for s in table] == [empty.id, crashed.id, finished.id]
    first = table[2]
    assert (first.first_prompt, first.message_count, first.ended) == ("fix the tests", 2, "failed")
    assert first.error == "quota exhausted"
    assert first.cwd == str(tmp_path)
    assert table[1].ended == "incomplete"
    assert len(table[1].first_prompt) == 80
    assert (table[0].ended, table[0].message_count) == ("new", 0)
    assert store.latest_for(tmp_path) == empty.id
    assert store.latest_for(other) == crashed.id
    assert store.latest_for(tmp_path / "nowhere") is None


def test_listing_an_empty_home_is_empty(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "fresh")
    assert store.list() == []
    with pytest.raises(SessionNotFound):
        store.resolve("01")


def test_a_discarded_session_leaves_no_file_and_no_lock(
    store: SessionStore, tmp_path: Path
) -> None:
    writer = store.create(cwd=tmp_path, model_chain=["anthropic:big"])

    writer.discard()

    assert writer.closed
    assert store.list() == []
    assert list(store.directory.iterdir()) == []


def test_a_listed_prompt_is_what_was_typed_not_the_files_attached_or_a_runs_tags(
    store: SessionStore, clock: VirtualClock, tmp_path: Path
) -> None:
    with store.create(cwd=tmp_path, model_chain=[]) as mentioned:
        mentioned.append_message(
            Message.user('summarize @README.md\n\n<file path="README.md">\n# Readme\n</file>')
        )
    clock.advance(10)
    with store.create(cwd=tmp_path, model_chain=[]) as shell:
        shell.append_message(shell_run("ls -a", ".\n..\nREADME.md\n"))

    table = store.list()

    assert [s.first_prompt for s in table] == ["! ls -a", "summarize @README.md"]

"""Group commit: a step's records share one fsync, and every acknowledged one survives kill -9."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from providers import Message, Usage
from sessions import SessionStore


def test_outside_a_group_every_record_is_synced_before_its_append_returns(
    store: SessionStore, tmp_path: Path
) -> None:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        before = writer.syncs
        writer.append_message(Message.user("one"))
        writer.append_message(Message.user("two"))
        assert writer.syncs == before + 2


def test_a_group_is_synced_once_at_its_end_and_its_records_are_on_disk_before(
    store: SessionStore, tmp_path: Path
) -> None:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        before = writer.syncs
        with writer.group_commit():
            writer.append_message(Message.user("one"))
            with writer.group_commit():  # nested: only the outermost syncs
                writer.append_message(Message.assistant("two"))
            writer.append_usage(Usage(input_tokens=3, output_tokens=1), "anthropic:x")
            # Written (a reader, or the next process after a kill, sees them), not yet synced.
            assert [m.text for m in store.load(writer.id).messages] == ["one", "two"]
            assert writer.syncs == before
        assert writer.syncs == before + 1
        with writer.group_commit():
            pass  # nothing written, nothing to sync
        assert writer.syncs == before + 1


def test_a_group_that_raises_still_syncs_what_it_wrote(store: SessionStore, tmp_path: Path) -> None:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        before = writer.syncs

        def interrupted_step() -> None:
            with writer.group_commit():
                writer.append_message(Message.user("one"))
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            interrupted_step()
        assert writer.syncs == before + 1


def test_closing_inside_a_group_syncs_and_releases_the_lock(
    store: SessionStore, tmp_path: Path
) -> None:
    writer = store.create(cwd=tmp_path, model_chain=["anthropic:x"])
    before = writer.syncs
    with writer.group_commit():
        writer.append_message(Message.user("one"))
        writer.close()
        assert writer.syncs == before + 1
    loaded, reopened = store.open(writer.id)  # the lock was released
    reopened.close()
    assert [m.text for m in loaded.messages] == ["one"]


def test_steps_in_a_row_share_fsyncs_and_a_close_right_after_loses_nothing(
    store: SessionStore, tmp_path: Path
) -> None:
    writer = store.create(cwd=tmp_path, model_chain=["anthropic:x"])
    before = writer.syncs
    for step in range(20):  # far faster than one a sync interval: they share fsyncs
        with writer.group_commit():
            writer.append_message(Message.user(f"step {step}"))
            writer.append_message(Message.assistant(f"done {step}"))
    writer.close()  # syncs what the paced fsyncs have not covered yet

    assert before < writer.syncs < before + 20
    loaded, reopened = store.open(writer.id)
    reopened.close()
    assert len(loaded.messages) == 40
    assert loaded.warnings == []


def test_without_fsync_a_group_syncs_nothing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home", fsync=False)
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        with writer.group_commit():
            writer.append_message(Message.user("one"))
        assert writer.syncs == 0


WRITE_THEN_HANG = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from providers import Message
    from sessions import SessionStore

    writer = SessionStore(Path(sys.argv[1])).create(cwd=Path.cwd(), model_chain=["anthropic:x"])
    with writer.group_commit():
        for n in range(50):
            writer.append_message(Message.user(f"record {n}"))
        print(writer.id, flush=True)  # acknowledged: all 50 appends returned
        time.sleep(60)  # killed here, before the group's fsync
    """
)


@pytest.mark.timeout(60)
def test_records_acknowledged_inside_a_group_survive_kill_9(
    tmp_path: Path, killed_writer: Callable[[str], str]
) -> None:
    session_id = killed_writer(WRITE_THEN_HANG)

    loaded = SessionStore(tmp_path / "home").load(session_id)

    assert [m.text for m in loaded.messages] == [f"record {n}" for n in range(50)]
    assert loaded.warnings == []

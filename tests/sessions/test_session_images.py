"""Images in a session: kept as content-addressed files under AGENT_HOME, named by the
session's lines, read back on resume; a missing or damaged copy is a note, not a crash."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from sessions import SessionStore
from tests.fakes.images import image_bytes
from tools.images import image_from_bytes

IMAGES = [image_from_bytes(image_bytes((200, 150), noise=True), f"shot{n}.png") for n in range(20)]


def _session_with_images(store: SessionStore, tmp_path: Path) -> str:
    writer = store.create(cwd=tmp_path, model_chain=["anthropic:claude-test"])
    for n, image in enumerate(IMAGES[:19]):
        writer.append_message(Message(role="user", content=[image, TextBlock(text=f"look {n}")]))
        writer.append_message(Message.assistant(f"seen {n}"))
    call = ToolUseBlock(id="call_1", name="read_file", input={"path": "shot19.png"})
    writer.append_message(Message(role="assistant", content=[call]))
    result = ToolResultBlock(tool_use_id="call_1", content="an image", images=(IMAGES[19],))
    writer.append_message(Message(role="user", content=[result]))
    writer.close()
    return writer.id


def test_twenty_images_keep_the_session_file_small_and_resume_whole(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = _session_with_images(store, tmp_path)

    path = store.directory / f"{session_id}.jsonl"
    pictures = sum(len(image.data) for image in IMAGES)
    assert pictures > 1_000_000  # noise: the images themselves are large
    assert path.stat().st_size < 20_000  # about 200 bytes a reference
    files = sorted((tmp_path / "home" / "images").iterdir())
    assert [file.name for file in files] == sorted(image.sha256 for image in IMAGES)
    assert all(stat.S_IMODE(file.stat().st_mode) == 0o600 for file in files)

    loaded, writer = store.open(session_id)
    writer.close()

    restored = [image for message in loaded.view for image in message.images]
    assert [image.data for image in restored] == [image.data for image in IMAGES]
    assert loaded.warnings == []


def test_a_missing_or_damaged_copy_becomes_a_note_and_a_warning(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = _session_with_images(store, tmp_path)
    images = tmp_path / "home" / "images"
    (images / IMAGES[0].sha256).unlink()
    (images / IMAGES[19].sha256).write_bytes(b"not the image any more")

    loaded, writer = store.open(session_id)
    writer.close()

    first, result = loaded.view[0], loaded.view[-1].tool_results[0]
    assert first.images == []
    assert "[image shot0.png could not be restored: its copy" in first.text
    assert "is missing" in first.text
    assert result.images == ()
    assert "[image shot19.png could not be restored" in result.content
    assert "is damaged" in result.content
    assert len(loaded.warnings) == 2
    assert all("the session goes on without it" in warning for warning in loaded.warnings)
    assert len([i for m in loaded.view for i in m.images]) == 18


def test_a_fifo_in_place_of_a_copy_is_a_note_not_a_hang(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = _session_with_images(store, tmp_path)
    copy = tmp_path / "home" / "images" / IMAGES[0].sha256
    copy.unlink()
    os.mkfifo(copy)  # nobody ever writes to it: a blocking open would wait for good

    loaded, writer = store.open(session_id)
    writer.close()

    assert "not a regular file" in loaded.view[0].text
    assert len([i for m in loaded.view for i in m.images]) == 19

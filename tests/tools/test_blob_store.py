"""The blob store's running total of saved bytes, which bounds workspace snapshots."""

from __future__ import annotations

from pathlib import Path

from tools.undo.checkpoint_files import BlobStore


def test_the_saved_bytes_follow_puts_prunes_and_a_reopen(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    kept = store.put(b"a" * 10)
    dropped = store.put(b"b" * 5)
    store.put(b"a" * 10)  # the same content is kept once

    assert store.stored_bytes == 15
    store.keep_only({kept})
    assert store.stored_bytes == 10
    assert dropped not in store
    assert BlobStore(tmp_path / "blobs").stored_bytes == 10
    assert BlobStore(None).stored_bytes == 0

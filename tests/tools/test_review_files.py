"""File tools on files as they come from other platforms: CRLF line endings."""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import Harness


async def test_edit_matches_lines_as_read_file_shows_them_in_a_crlf_file(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "win.py").write_bytes(b"def f():\r\n    return 1\r\n\r\nx = f()\r\n")
    shown = await harness.run("read_file", path="win.py")
    assert "\r" not in shown.content  # so the model copies old_string with plain newlines

    result = await harness.run(
        "edit_file",
        path="win.py",
        old_string="def f():\n    return 1\n",
        new_string="def f():\n    return 2\n",
    )

    assert not result.is_error, result.content
    assert (workspace / "win.py").read_bytes() == b"def f():\r\n    return 2\r\n\r\nx = f()\r\n"


async def test_edit_of_one_line_in_a_crlf_file_keeps_its_line_endings(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "win.txt").write_bytes(b"a\r\nb\r\n")
    result = await harness.run("edit_file", path="win.txt", old_string="b", new_string="c\nd")
    assert not result.is_error, result.content
    assert (workspace / "win.txt").read_bytes() == b"a\r\nc\r\nd\r\n"

"""read_file, write_file, edit_file, list_files and search through the executor."""

from __future__ import annotations

import os
from pathlib import Path

from tests.tools.conftest import Harness, MakeHarness
from tools import ToolSettings


async def test_read_numbers_lines_and_pages(harness: Harness, workspace: Path) -> None:
    (workspace / "a.txt").write_text("".join(f"l{n}\n" for n in range(1, 11)))
    result = await harness.run("read_file", path="a.txt", offset=3, limit=2)
    assert not result.is_error
    assert result.content.splitlines()[:2] == ["     3\tl3", "     4\tl4"]
    assert "use offset=5 for more" in result.content


async def test_read_missing_file_names_it_and_suggests_list_files(harness: Harness) -> None:
    result = await harness.run("read_file", path="src/nope.py")
    assert result.is_error
    assert "file not found: src/nope.py" in result.content
    assert "list_files" in result.content
    assert "will not help" in result.content
    assert not harness.of_type("tool_retried")  # a missing file is not transient


async def test_read_binary_is_described(harness: Harness, workspace: Path) -> None:
    (workspace / "img.dat").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    result = await harness.run("read_file", path="img.dat")
    assert not result.is_error
    assert "binary file (PNG image, 208 bytes)" in result.content


async def test_read_of_a_damaged_image_is_an_error_naming_it(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    result = await harness.run("read_file", path="img.png")
    assert result.is_error
    assert "img.png: " in result.content
    assert result.images == ()


async def test_read_non_utf8_uses_replacement(harness: Harness, workspace: Path) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    result = await harness.run("read_file", path="latin.txt")
    assert "caf\ufffd" in result.content


async def test_huge_output_is_trimmed_with_marker(
    make_harness: MakeHarness, workspace: Path
) -> None:
    harness = make_harness(settings=ToolSettings(max_output_chars=2_000))
    (workspace / "big.txt").write_text("x" * 50 + "\n" * 1 + ("y" * 80 + "\n") * 500)
    result = await harness.run("read_file", path="big.txt")
    assert "lines (" in result.content
    assert "bytes) cut" in result.content
    assert "cut from the middle" in result.content
    assert len(result.content) < 2_500
    assert result.content.rstrip().endswith("y" * 80)


async def test_write_creates_parents_and_edit_replaces(harness: Harness, workspace: Path) -> None:
    result = await harness.run("write_file", path="pkg/mod.py", content="x = 1\ny = 2\n")
    assert result.content == "Created pkg/mod.py (2 lines)."
    one = await harness.run("write_file", path="one.py", content="x = 1\n")
    assert one.content == "Created one.py (1 line)."
    result = await harness.run(
        "edit_file", path="pkg/mod.py", old_string="y = 2", new_string="y = 3"
    )
    assert not result.is_error
    assert (workspace / "pkg" / "mod.py").read_text() == "x = 1\ny = 3\n"


async def test_edit_without_match_says_zero_matches(harness: Harness, workspace: Path) -> None:
    (workspace / "f.py").write_text("a = 1\n")
    result = await harness.run("edit_file", path="f.py", old_string="b = 1", new_string="c")
    assert result.is_error
    assert "0 matches" in result.content
    assert "read_file" in result.content


async def test_edit_with_several_matches_says_how_many(harness: Harness, workspace: Path) -> None:
    (workspace / "f.py").write_text("x\nx\nx\n")
    result = await harness.run("edit_file", path="f.py", old_string="x", new_string="y")
    assert result.is_error
    assert "occurs 3 times" in result.content
    assert "replace_all" in result.content
    assert (workspace / "f.py").read_text() == "x\nx\nx\n"
    result = await harness.run(
        "edit_file", path="f.py", old_string="x", new_string="y", replace_all=True
    )
    assert "3 replacements" in result.content


async def test_edit_refuses_non_utf8(harness: Harness, workspace: Path) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    result = await harness.run("edit_file", path="latin.txt", old_string="caf", new_string="x")
    assert result.is_error
    assert "not valid UTF-8" in result.content
    assert (workspace / "latin.txt").read_bytes() == b"caf\xe9\n"


async def test_list_files_glob_skips_git_and_ignored(harness: Harness, workspace: Path) -> None:
    for name in ["src/a.py", "src/b.txt", "src/sub/c.py", ".git/x.py", "dist/d.py", "e.py"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("")
    (workspace / ".gitignore").write_text("dist/\n")
    result = await harness.run("list_files", pattern="**/*.py")
    assert result.content.splitlines() == ["e.py", "src/a.py", "src/sub/c.py"]
    result = await harness.run("list_files", pattern="*.py", path="src")
    assert result.content.splitlines() == ["src/a.py"]


async def test_search_regex_reports_path_and_line(harness: Harness, workspace: Path) -> None:
    (workspace / "a.py").write_text("def foo():\n    return 1\n")
    (workspace / "b.py").write_text("foo()\n")
    (workspace / "ignored.py").write_text("def foo(): pass\n")
    (workspace / "bin.dat").write_bytes(b"def foo\x00")
    (workspace / ".gitignore").write_text("ignored.py\n")
    result = await harness.run("search", pattern=r"def \w+\(")
    assert result.content.splitlines() == ["a.py:1: def foo():"]
    result = await harness.run("search", pattern="FOO", ignore_case=True, glob="b.*")
    assert result.content.splitlines() == ["b.py:1: foo()"]


async def test_search_bad_regex_explains(harness: Harness) -> None:
    result = await harness.run("search", pattern="foo(")
    assert result.is_error
    assert "invalid regular expression" in result.content


async def test_search_skips_symlink_out_of_workspace(
    harness: Harness, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    os.symlink(secret, workspace / "link.txt")
    result = await harness.run("search", pattern="password")
    assert "hunter2" not in result.content


async def test_search_reads_a_link_to_a_file_inside_the_workspace(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "real.txt").write_text("needle\n")
    os.symlink(workspace / "real.txt", workspace / "alias.txt")
    result = await harness.run("search", pattern="needle")
    assert "alias.txt:1: needle" in result.content
    assert "real.txt:1: needle" in result.content


async def test_search_with_unreadable_file_is_partial(harness: Harness, workspace: Path) -> None:
    (workspace / "ok.txt").write_text("needle\n")
    os.symlink(workspace / "gone.txt", workspace / "broken.txt")  # listed, but unreadable
    result = await harness.run("search", pattern="needle")
    assert not result.is_error
    assert result.content.startswith("Partial result")
    assert "ok.txt:1: needle" in result.content
    assert "could not be read: broken.txt" in result.content


async def test_search_and_list_files_withhold_what_a_rule_denies(
    make_harness: MakeHarness, workspace: Path
) -> None:
    denied = workspace / ".env"
    denied.write_text("TOKEN=hunter2\n")
    os.symlink(denied, workspace / "alias")  # the same file by another name
    (workspace / "app.py").write_text("TOKEN = None\n")
    harness = make_harness(read_denied=lambda path: path == denied)

    found = await harness.run("search", pattern="TOKEN")
    listed = await harness.run("list_files")

    assert "hunter2" not in found.content
    assert found.content.splitlines() == [
        "app.py:1: TOKEN = None",
        "[2 files were withheld by a permission rule (Read deny) and not shown; do not try "
        "to read them another way]",
    ]
    assert listed.content.splitlines()[0] == "app.py"
    assert "2 files were withheld" in listed.content
    assert ".env" not in listed.content

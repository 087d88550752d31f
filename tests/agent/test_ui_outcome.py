"""Tool lines summarise what a result holds, from the real tools' output."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.terminal.tool_words import outcome_text
from providers import ToolResultBlock, ToolUseBlock
from tools import ToolExecutor, ToolSettings


def outcome(name: str, content: str, *, is_error: bool = False, **arguments: object) -> str:
    call = ToolUseBlock(id="t1", name=name, input=dict(arguments))
    return outcome_text(call, ToolResultBlock(tool_use_id="t1", content=content, is_error=is_error))


class Tools:
    """The real tools in a decoy workspace; `summary` runs one and summarises its result."""

    def __init__(self, workspace: Path, home: Path, settings: ToolSettings) -> None:
        self.executor = ToolExecutor(
            workspace=workspace, settings=settings, approval="full-auto", approver=None, home=home
        )

    async def summary(self, name: str, **arguments: object) -> str:
        call = ToolUseBlock(id="t1", name=name, input=dict(arguments))
        return outcome_text(call, await self.executor.execute(call))


@pytest.fixture
def tools(workspace: Path, decoy_home: Path) -> Tools:
    (workspace / "README.md").write_text("# demo\nTODO: write\n")
    (workspace / "main.py").write_text("print('hi')  # TODO\n")
    (workspace / "test_main.py").write_text("def test(): pass\n")
    return Tools(workspace, decoy_home, ToolSettings(max_list_entries=2, max_search_matches=2))


async def test_a_listing_counts_its_entries(workspace: Path, decoy_home: Path) -> None:
    for name in ("README.md", "main.py", "test_main.py"):
        (workspace / name).write_text("x\n")
    assert await Tools(workspace, decoy_home, ToolSettings()).summary("list_files") == "3 entries"


async def test_a_cut_listing_says_how_many_there_are(tools: Tools) -> None:
    assert await tools.summary("list_files") == "3 entries (2 shown)"
    assert (await tools.summary("list_files", pattern="*.rs")).startswith("No files match")


async def test_search_counts_matches_and_files(tools: Tools) -> None:
    assert await tools.summary("search", pattern="TODO") == "2 matches in 2 files"
    assert await tools.summary("search", pattern="[a-z]") == "4 matches (2 shown)"
    assert (await tools.summary("search", pattern="nothing")).startswith("No matches")


async def test_read_file_counts_lines_or_names_the_window(tools: Tools) -> None:
    assert await tools.summary("read_file", path="README.md") == "2 lines"
    window = await tools.summary("read_file", path="README.md", limit=1)
    assert window == "lines 1-1 of 2"


async def test_read_file_counts_from_an_offset_and_not_the_notes_after(
    tools: Tools, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)))
    assert await tools.summary("read_file", path="notes.txt", offset=2990) == "11 lines"
    assert await tools.summary("read_file", path="notes.txt") == "lines 1-2000 of 3000"
    call = ToolUseBlock(id="t1", name="read_file", input={"path": "notes.txt", "offset": 2999})
    result = await tools.executor.execute(call)
    # A subdirectory's instructions follow the lines; their own numbered list is not the file's.
    noted = result.content + "\n\n[Instructions for sub/ from sub/AGENTS.md:]\n1\tBe brief."
    assert outcome("read_file", noted) == "2 lines"


async def test_a_command_shows_how_it_ended_and_how_much_it_printed(tools: Tools) -> None:
    assert await tools.summary("run_command", command="echo hi") == "exit 0 · hi"
    many = await tools.summary("run_command", command="printf 'a\\nb\\nc\\n'; exit 3")
    assert many == "exit 3 · 3 lines"
    assert await tools.summary("run_command", command="true") == "exit 0 · no output"


def test_errors_show_their_first_line() -> None:
    assert outcome("read_file", "Error: file not found: x\nTry: ...", is_error=True) == (
        "Error: file not found: x"
    )
    refused = outcome("run_command", "Refused: no\nInstead: ask.", is_error=True)
    assert refused == "Refused: no"


def test_notes_are_not_counted_as_content() -> None:
    repeated = "a.py\nb.py\n[You have now made this exact list_files call 2 times ...]"
    assert outcome("list_files", repeated) == "2 entries"
    assert outcome("write_file", "Wrote a.py (3 lines).\n[snapshot for /undo is partial]") == (
        "Wrote a.py (3 lines)."
    )


def test_other_results_show_the_first_line_and_how_many_more() -> None:
    assert outcome("custom", "one\ntwo\nthree") == "one (+2 more lines)"
    assert outcome("custom", "only") == "only"


def test_a_single_entry_is_named() -> None:
    assert outcome("list_files", "README.md") == "1 entry: README.md"

"""What a tool result says, in a few honest words: ``3 entries``, ``exit 0 · 12 lines``.

A tool line that shows only the first line of a result misleads: a listing of three files
read as if it held only the first. Each built-in tool's output has a known shape (see
`tools.finding`, `tools.files`, `tools.shell`), so its summary counts what is there. Notes the
tools and the executor append (``[exit code 0]``, ``[12 more not shown ...]``, repeat notes)
are bracketed lines; they are read for their numbers, never counted as content.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from providers import ToolResultBlock, ToolUseBlock

_NUMBERED = re.compile(r"^\s*(\d+)\t")
_READ_WINDOW = re.compile(r"^\[lines (\d+)-(\d+)( of \d+)?; use offset=")
_MORE_ENTRIES = re.compile(r"^\[([\d,]+) more not shown")
_MORE_MATCHES = re.compile(r"^\[([\d,]+) more matches not shown")
_MATCH = re.compile(r"^(.+?):\d+: ")
_EXIT = re.compile(r"^\[exit code (-?\d+)\]$")
_SIGNAL = re.compile(r"^\[killed by signal (\d+)\]$")
_PARTIAL = "Partial result (some parts failed, see the end):"


def outcome_text(call: ToolUseBlock, result: ToolResultBlock) -> str:
    """A few words on what ``result`` holds; the first line of an error."""
    summarise = _SUMMARIES.get(call.name)
    lines = result.content.splitlines()
    if result.is_error and not (call.name == "run_command" and _command_status(lines)):
        return first_line(result.content)
    if summarise is not None:
        return summarise(lines) or first_line(result.content)
    return _generic(lines)


def first_line(content: str, limit: int = 160) -> str:
    """The first non-empty line of a tool result."""
    for line in content.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def _is_note(line: str) -> bool:
    """A bracketed note appended to a result (``[exit code 0]``), not part of the content."""
    stripped = line.strip()
    return stripped.startswith("[") and stripped.endswith("]") and " " in stripped


def _content(lines: list[str]) -> list[str]:
    return [line for line in lines if line.strip() and not _is_note(line)]


def _count(number: int, one: str, many: str) -> str:
    return f"{number:,} {one if number == 1 else many}"


def _read_file(lines: list[str]) -> str | None:
    # read_file numbers its lines one after another, and its notes (the window's, a
    # subdirectory's instructions) follow them: the first numbered line and what comes after
    # the last tell it all, however long the file. The last is the numbered line where the
    # numbering puts it (an instructions line "1<tab>..." is not).
    first = _NUMBERED.match(lines[0]) if lines else None
    if first is None:
        return None
    start = int(first.group(1))
    for index in range(len(lines) - 1, 0, -1):
        if window := _READ_WINDOW.match(lines[index]):
            begin, end, total = window.groups()
            return f"lines {begin}-{end}{total or ''}"
        last = _NUMBERED.match(lines[index])
        if last is not None and int(last.group(1)) - start == index:
            return _count(index + 1, "line", "lines")
    return _count(1, "line", "lines")  # only the first line is numbered


def _list_files(lines: list[str]) -> str | None:
    if lines and lines[0].startswith("No files match"):
        return None
    entries = _content(lines)
    shown = len(entries)
    if shown == 1 and not any(map(_MORE_ENTRIES.match, lines)):
        return f"1 entry: {entries[0].strip()[:160]}"
    more = sum(int(m.group(1).replace(",", "")) for m in map(_MORE_ENTRIES.match, lines) if m)
    summary = _count(shown + more, "entry", "entries")
    return f"{summary} ({shown:,} shown)" if more else summary


def _search(lines: list[str]) -> str | None:
    matches = [m.group(1) for m in map(_MATCH.match, lines) if m]
    if not matches:
        return None
    more = sum(int(m.group(1).replace(",", "")) for m in map(_MORE_MATCHES.match, lines) if m)
    if more:
        summary = f"{_count(len(matches) + more, 'match', 'matches')} ({len(matches):,} shown)"
    else:
        files = _count(len(set(matches)), "file", "files")
        summary = f"{_count(len(matches), 'match', 'matches')} in {files}"
    return summary + (", some files unreadable" if lines[0] == _PARTIAL else "")


def _run_command(lines: list[str]) -> str | None:
    if lines and (started := _BACKGROUND.match(lines[0])):
        return f"in the background as {started.group(1)}"
    status = _command_status(lines)
    output = [line for line in _content(lines) if line != "(no output)"]
    if not output:
        body = "no output"
    elif len(output) == 1:
        body = output[0].strip()[:160]
    else:
        body = _count(len(output), "line", "lines")
    return f"{status} · {body}" if status else body


_BACKGROUND = re.compile(r"Started in the background as (bash_\d+)")


def _command_status(lines: list[str]) -> str:
    """How the command ended, from the note `tools.shell` appends; empty if there is none."""
    for line in reversed(lines):
        stripped = line.strip()
        if code := _EXIT.match(stripped):
            return f"exit {code.group(1)}"
        if signal := _SIGNAL.match(stripped):
            return f"killed by signal {signal.group(1)}"
        if stripped.startswith("[timed out after"):
            return stripped.strip("[]").split(";")[0]
    return ""


def _generic(lines: list[str]) -> str:
    """The first line, and how many more there are, for results of no known shape."""
    content = _content(lines)
    if not content:
        return first_line("\n".join(lines))
    more = len(content) - 1
    head = content[0].strip()[:160]
    return f"{head} (+{_count(more, 'more line', 'more lines')})" if more else head


_SUMMARIES: dict[str, Callable[[list[str]], str | None]] = {
    "read_file": _read_file,
    "list_files": _list_files,
    "search": _search,
    "run_command": _run_command,
    "todo_write": lambda lines: "plan updated",  # the list itself is drawn above the prompt
}

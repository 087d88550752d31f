"""``@path`` mentions in a prompt: the file's content (or the directory's listing) is sent
with the prompt, as in Claude Code, Codex and Gemini CLI.

Files are read as ``read_file`` reads them: confined to the workspace, regular files only,
bounded, binary files described; ``Read`` deny rules hold. A mention that names nothing is
reported before anything is sent: one with a ``/`` stops the prompt; one without
(``@app.get`` in pasted code may be no path at all) is said and sent as text.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tools.base import ToolError
from tools.blocking import in_worker
from tools.fileio import read_window
from tools.ignore import GitIgnore
from tools.text import describe_binary
from tools.workspace import PathOutsideWorkspace, relative_name, resolve_in_workspace

MENTION = re.compile(r"(?<![\w@])@((?:\\ |[^\s@])+)")
"""``@`` at the start of a word, then the path (``\\ `` for a space in it)."""
MAX_LINES = 2_000
MAX_CHARS = 100_000
MAX_ENTRIES = 200
READ_TIMEOUT = 10.0
_TRAILING = ".,;:!?)]}'\""
_PATH = re.compile(r"[\w./~+%@ -]+")
"""What a path is written with; ``app.get("/x")`` is code."""

Refused = Callable[[Path], str | None]
"""Why reading ``path`` is refused (a deny rule), or None."""


@dataclass
class Mentions:
    """A prompt with its mentions attached, and the mentions that could not be."""

    prompt: str
    attached: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    """Mentions that name nothing and may not be paths (``@app.get``): sent as text."""

    def notes(self) -> list[tuple[str, str]]:
        """What to tell the person, with a style: the problems, else what was attached."""
        if self.problems:
            stop = "Nothing was sent: fix the mention (Up brings the prompt back)."
            return [(problem, "yellow") for problem in self.problems] + [(stop, "yellow")]
        notes = [(f"@{name}: no such file; sent as text", "yellow") for name in self.unknown]
        if self.attached:
            notes.append((f"Attached {', '.join(self.attached)}", "dim"))
        return notes


async def expand_mentions(text: str, workspace: Path, refused: Refused | None = None) -> Mentions:
    """``text`` followed by each mentioned file or directory, once, in the order mentioned.

    Read on a worker thread a timeout may abandon (a file on a hung mount).
    """
    if not mentioned(text):
        return Mentions(text)
    try:
        return await asyncio.wait_for(in_worker(expand_now, text, workspace, refused), READ_TIMEOUT)
    except TimeoutError:
        return Mentions(text, problems=[f"reading the mentioned files took over {READ_TIMEOUT}s"])


def expand_now(text: str, workspace: Path, refused: Refused | None = None) -> Mentions:
    """`expand_mentions`, on the calling thread."""
    root = workspace.resolve()
    result = Mentions(text)
    blocks: list[str] = []
    seen: set[Path] = set()
    for raw in mentioned(text):
        path, problem = _locate(root, raw)
        name = raw.rstrip(_TRAILING)
        if path is None and not problem and "." in name and _PATH.fullmatch(name):
            result.unknown.append(name)
        if path is None or path in seen:
            result.problems += [problem] if problem else []
            continue
        seen.add(path)
        why = refused(path) if refused is not None else None
        if why is not None:
            result.problems.append(f"@{raw}: {why}")
            continue
        try:
            blocks.append(_block(root, path))
        except ToolError as error:
            result.problems.append(f"@{raw}: {error.message}")
            continue
        except OSError as error:
            result.problems.append(f"@{raw}: cannot be read ({error.strerror or error})")
            continue
        result.attached.append(relative_name(root, path))
    if blocks:
        result.prompt = text + "\n\n" + "\n\n".join(blocks)
    return result


def mentioned(text: str) -> list[str]:
    """The raw paths of the ``@`` mentions in ``text``."""
    return [found.group(1).replace("\\ ", " ") for found in MENTION.finditer(text)]


def _locate(root: Path, raw: str) -> tuple[Path | None, str]:
    """The mention's path, or None and the problem ("" when it is not meant as a path).

    Only a mention with a ``/`` is surely a path: ``@pytest.fixture`` or ``@app.get`` in
    pasted code would otherwise stop the prompt. Those without are said, and sent as text.
    """
    candidates = [raw]
    stripped = raw.rstrip(_TRAILING) or raw
    if stripped != raw:
        candidates.append(stripped)
    for candidate in candidates:
        try:
            path = resolve_in_workspace(root, candidate)
        except PathOutsideWorkspace:
            return None, f"@{stripped}: outside the workspace; mention files inside {root}"
        if path.exists():
            return path, ""
    if "/" in stripped and _PATH.fullmatch(stripped):
        return None, f"@{stripped}: no such file or directory in the workspace"
    return None, ""


def _block(root: Path, path: Path) -> str:
    shown = relative_name(root, path)
    if path.is_dir():
        return f'<directory path="{shown}/">\n{_listing(root, path)}\n</directory>'
    window = read_window(path, shown, 1, MAX_LINES)
    if window.binary_head is not None:
        body = describe_binary(window.binary_head, shown, window.size)
    else:
        body = "\n".join(window.lines)
        if len(body) > MAX_CHARS:
            body = body[:MAX_CHARS] + f"\n[cut at {MAX_CHARS} characters]"
        elif window.more:
            body += f"\n[first {len(window.lines)} lines; read_file shows the rest]"
    return f'<file path="{shown}">\n{body}\n</file>'


def _listing(root: Path, directory: Path) -> str:
    ignore = GitIgnore(root)
    entries: list[str] = []
    for child in sorted(directory.iterdir()):
        is_dir = child.is_dir() and not child.is_symlink()
        if ignore.is_ignored(child, is_dir=is_dir):
            continue
        entries.append(child.name + ("/" if is_dir else ""))
        if len(entries) == MAX_ENTRIES:
            entries.append("[more entries; list_files shows them all]")
            break
    return "\n".join(entries) or "(empty)"

"""``@path`` mentions in a prompt: the file's content (or the directory's listing) is sent
with the prompt, as in Claude Code, Codex and Gemini CLI.

Files are read as ``read_file`` reads them: confined to the workspace, regular files only,
bounded, binary files described, images (PNG, JPEG, GIF, WebP) sent as images
(`tools.images`: checked and scaled down; a damaged one stops the prompt); ``Read`` deny
rules hold, also over a mentioned directory's listing (a withheld entry is counted, not named).

What is a mention: an ``@`` at the start of a word (not ``a@b.com``) followed by what names
an existing file or directory in the workspace (``@README.md``, ``@.env``, ``@src/``). One
that names nothing stops the prompt, said before anything is sent, when it looks like a file:
it has a ``/``, starts with a dot, or ends in a file extension (`FILE_EXTENSIONS`:
``@setup.py``). Anything else is text: ``@user`` in prose, ``@pytest.fixture`` or
``@app.get`` in pasted code (a dotted one is said, in case it was meant as a path).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from providers.messages import ImageBlock
from tools.base import ToolError
from tools.blocking import in_worker
from tools.fileio import read_window
from tools.finding import withheld_note
from tools.ignore import GitIgnore
from tools.images import ImageError, is_image_name, read_image
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
_ATTACHED = re.compile(r'\n\n<(?:file|directory) path="')
"""Where the first attached file or directory starts in an expanded prompt (`_block`)."""
_EXTENSIONS = (
    "py pyi ipynb md mdx rst txt toml yaml yml json jsonl ini cfg conf env lock log csv "
    "tsv xml html htm css scss js jsx mjs cjs ts tsx vue svelte go rs c h cc cpp hpp cs "
    "java kt swift rb php pl lua sh bash zsh fish ps1 sql proto graphql tf nix dockerfile "
    "gradle mk cmake r jl scala ex exs erl hs ml dart zig png jpg jpeg gif webp svg pdf"
)
FILE_EXTENSIONS = frozenset(_EXTENSIONS.split())
"""Endings that make a missing ``@name`` a file the person meant (``@setup.py``), not code
(``@pytest.fixture``)."""

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
    images: list[ImageBlock] = field(default_factory=list)
    """The mentioned images, to send with the prompt (the mention stays in its text)."""

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
        if why is None and refused is not None and path.is_symlink():
            why = refused(path.resolve())
        if why is not None:
            result.problems.append(f"@{raw}: {why}")
            continue
        try:
            if path.is_file() and is_image_name(path):
                result.images.append(read_image(path, relative_name(root, path)))
            else:
                blocks.append(_block(root, path, refused))
        except ImageError as error:  # its message names the file
            result.problems.append(f"@{error.message}")
            continue
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


def without_attachments(prompt: str) -> str:
    """``prompt`` as the person typed it, without the files its mentions attached (for
    showing it again; the model got them)."""
    found = _ATTACHED.search(prompt)
    return prompt if found is None else prompt[: found.start()]


def mentioned(text: str) -> list[str]:
    """The raw paths of the ``@`` mentions in ``text``."""
    return [found.group(1).replace("\\ ", " ") for found in MENTION.finditer(text)]


def _locate(root: Path, raw: str) -> tuple[Path | None, str]:
    """The mention's path, or None and the problem ("" when it is not meant as a path:
    ``@pytest.fixture`` or ``@app.get`` in pasted code must not stop the prompt)."""
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
    if looks_like_a_file(stripped):
        return None, f"@{stripped}: no such file or directory in the workspace"
    return None, ""


def looks_like_a_file(name: str) -> bool:
    """Whether a missing ``@name`` was surely meant as a path: it has a ``/``, starts with a
    dot (``.env``), or ends in a known file extension (``setup.py``)."""
    if not _PATH.fullmatch(name):
        return False
    if "/" in name or (name.startswith(".") and len(name) > 1 and name[1] != "."):
        return True
    stem, dot, extension = name.rpartition(".")
    return bool(dot and stem) and extension.lower() in FILE_EXTENSIONS


def _block(root: Path, path: Path, refused: Refused | None) -> str:
    shown = relative_name(root, path)
    if path.is_dir():
        return f'<directory path="{shown}/">\n{_listing(root, path, refused)}\n</directory>'
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


def _listing(root: Path, directory: Path, refused: Refused | None) -> str:
    ignore = GitIgnore(root)
    entries: list[str] = []
    withheld = 0
    for child in sorted(directory.iterdir()):
        is_dir = child.is_dir() and not child.is_symlink()
        if ignore.is_ignored(child, is_dir=is_dir):
            continue
        if refused is not None and _refuses(refused, child):
            withheld += 1
            continue
        entries.append(child.name + ("/" if is_dir else ""))
        if len(entries) == MAX_ENTRIES:
            entries.append("[more entries; list_files shows them all]")
            break
    if withheld:
        entries.append(withheld_note(withheld))
    return "\n".join(entries) or "(empty)"


def _refuses(refused: Refused, path: Path) -> bool:
    """Whether a rule withholds ``path`` or, for a link, the file it points at."""
    if refused(path) is not None:
        return True
    return path.is_symlink() and refused(path.resolve()) is not None

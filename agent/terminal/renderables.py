"""Renderables for tool calls, diffs, code excerpts and banners (pure: no console, no state)."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import PurePath
from typing import Any

from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from rich.cells import cell_len, set_cell_size
from rich.console import Group, RenderableType
from rich.control import strip_control_codes
from rich.syntax import Syntax
from rich.text import Text

from agent.terminal.tool_words import outcome_text
from providers import ToolResultBlock, ToolUseBlock

MAX_DIFF_LINES = 40
EXCERPT_LINES = 6
_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")
_ARG_ORDER = ("path", "command", "pattern", "glob", "old_string", "new_string", "content")


def tool_line(call: ToolUseBlock, result: ToolResultBlock, width: int) -> Text:
    """``✓ name(args) — first line of the outcome``, cut to ``width``."""
    line = Text(no_wrap=True, overflow="ellipsis")
    for part, style in _tool_line_parts(call, result, width):
        line.append(part, style=style)
    line.truncate(width, overflow="ellipsis")
    return line


def plain_tool_line(call: ToolUseBlock, result: ToolResultBlock, width: int) -> str:
    """`tool_line` as its plain text, for output that is not a terminal: the same characters
    without building the styled `Text` (a good part of a fast step's cost)."""
    plain = strip_control_codes("".join(part for part, _ in _tool_line_parts(call, result, width)))
    if cell_len(plain) > width:  # as `Text.truncate` cuts with an ellipsis
        plain = set_cell_size(plain, width - 1) + "…"
    return plain


def _tool_line_parts(
    call: ToolUseBlock, result: ToolResultBlock, width: int
) -> list[tuple[str, str]]:
    mark, style = ("✗", "red") if result.is_error else ("✓", "green")
    budget = max(width - len(call.name) - 6, 10)
    args = short_args(call.input, limit=min(budget, 100))
    parts = [(f"{mark} ", style), (call.name, f"bold {style}"), (f"({args})", "default")]
    outcome = outcome_text(call, result)
    if outcome:
        parts += [(" — ", "dim"), (outcome, "red" if result.is_error else "dim")]
    return parts


def short_args(arguments: dict[str, object], limit: int = 80) -> str:
    """``key=value, ...`` with long values cut; the most telling keys first."""
    keys = sorted(arguments, key=lambda k: _ARG_ORDER.index(k) if k in _ARG_ORDER else 99)
    parts = []
    for key in keys:
        value = arguments[key]
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        if isinstance(value, list) and len(text) > 40:  # a todo list, say: its size says more
            text = f"[{len(value)} items]"
        if len(text) > 40:
            text = text[:39] + "…"
        parts.append(text if key in ("path", "command") else f"{key}={text}")
    joined = ", ".join(parts)
    return joined if len(joined) <= limit else joined[: max(limit - 1, 1)] + "…"


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff of two versions of a file, with two lines of context."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{name}",
        f"b/{name}",
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_view(diff: str, *, max_lines: int = MAX_DIFF_LINES) -> RenderableType | None:
    """A coloured, indented diff; None when there is nothing to show."""
    lines = [line for line in diff.splitlines() if not line.startswith(("---", "+++"))]
    if not lines:
        return None
    text = Text(no_wrap=True, overflow="ellipsis")
    for line in lines[:max_lines]:
        style = "green" if line[:1] == "+" else "red" if line[:1] == "-" else "dim"
        if line.startswith("@@"):
            style = "cyan"
        text.append("  " + line + "\n", style=style)
    if len(lines) > max_lines:
        text.append(f"  … {len(lines) - max_lines} more diff lines\n", style="dim")
    text.rstrip()
    return text


def excerpt(
    code: str, path: str, *, start: int = 1, max_lines: int = EXCERPT_LINES
) -> RenderableType:
    """The first lines of ``code``, highlighted by the file's type, with line numbers."""
    lines = code.splitlines()
    shown = "\n".join(lines[:max_lines])
    syntax = Syntax(
        shown,
        _lexer(path, shown),
        line_numbers=True,
        start_line=start,
        word_wrap=False,
        theme="ansi_dark",
        background_color="default",
        code_width=None,
    )
    if len(lines) <= max_lines:
        return syntax
    return Group(syntax, Text(f"  … {len(lines) - max_lines} more lines", style="dim"))


def _lexer(path: str, code: str) -> Any:  # a pygments Lexer (pygments has no types)
    """The highlighter for ``path``: guessed once per kind of file name (its extension, or
    the whole name for ``Makefile`` and the like), then reused. Pygments' guess tries the
    name against every lexer it has: ~1.5 ms, for every file read or written."""
    kind = PurePath(path).suffix.lower() or PurePath(path).name
    lexer = _LEXERS.get(kind)
    if lexer is None:
        if len(_LEXERS) >= _MAX_LEXERS:  # names come from the model: keep the cache bounded
            _LEXERS.clear()
        guess = Syntax.guess_lexer(path, code)  # "default" when nothing matches: plain text
        lexer = _LEXERS[kind] = get_lexer_by_name("text" if guess == "default" else guess)
    return lexer


_LEXERS: dict[str, Any] = {}
_MAX_LEXERS = 64


def read_excerpt(result: ToolResultBlock, path: str) -> RenderableType | None:
    """An excerpt of a ``read_file`` result (numbered ``N<tab>line`` lines)."""
    if result.is_error:
        return None
    code: list[str] = []
    start: int | None = None
    for line in result.content.splitlines():
        match = _NUMBERED.match(line)
        if match is None:
            break
        start = start if start is not None else int(match.group(1))
        code.append(match.group(2))
    if not code or start is None:
        return None
    return excerpt("\n".join(code), path, start=start)

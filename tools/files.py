"""File tools: read_file, write_file and edit_file."""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path

from pydantic import BaseModel, Field

from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolOutput
from tools.text import decode, describe_binary, is_binary
from tools.workspace import relative_name

_MISSING_HINT = "check the name with list_files (e.g. pattern '**/*.py') or search for it"


def read_bytes(path: Path, shown: str) -> bytes:
    """The file's bytes, with failures turned into `ToolError` the model can act on."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}", hint=_MISSING_HINT) from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory, not a file", hint="use list_files") from None
    except PermissionError:
        raise ToolError(f"permission denied reading {shown}") from None
    except BlockingIOError as exc:  # e.g. a FIFO or a file locked by another process
        raise ToolError(f"{shown} is busy: {exc}", category=ErrorCategory.TRANSIENT) from None


def write_text(path: Path, text: str, ctx: ToolContext) -> None:
    """Record a checkpoint, then write ``text`` (creating parent directories)."""
    shown = relative_name(ctx.workspace, path)
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    ctx.record_checkpoint(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff of a change, for approval prompts and the model."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), name, name
    )
    return "".join(lines) or "(no change)"


class ReadFileInput(BaseModel):
    path: str = Field(description="File path relative to the workspace root.")
    offset: int = Field(default=1, ge=1, description="First line to return (1-based).")
    limit: int | None = Field(default=None, ge=1, description="How many lines to return.")


class ReadFile(Tool[ReadFileInput]):
    name = "read_file"
    description = (
        "Read a text file from the workspace. Lines are numbered ('   12\\tcode'); use offset "
        "and limit to page through long files. Binary files are described, not shown."
    )
    input_model = ReadFileInput
    idempotent = True
    kind = "read"

    def paths(self, args: ReadFileInput) -> list[str]:
        return [args.path]

    async def run(self, args: ReadFileInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args.path)
        shown = relative_name(ctx.workspace, path)
        data = await asyncio.to_thread(read_bytes, path, shown)
        if is_binary(data):
            return ToolOutput(describe_binary(data, shown))
        lines = decode(data).splitlines()
        limit = args.limit or ctx.settings.read_max_lines
        start = args.offset - 1
        if lines and start >= len(lines):
            raise ToolError(
                f"offset {args.offset} is past the end of {shown} ({len(lines)} lines)",
                hint=f"use an offset between 1 and {len(lines)}",
            )
        chosen = lines[start : start + limit]
        body = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chosen, start=args.offset))
        if not lines:
            return ToolOutput(f"{shown} is empty.")
        end = start + len(chosen)
        if end < len(lines):
            body += f"\n[lines {args.offset}-{end} of {len(lines)}; use offset={end + 1} for more]"
        return ToolOutput(body)


class WriteFileInput(BaseModel):
    path: str = Field(description="File path relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteFile(Tool[WriteFileInput]):
    name = "write_file"
    description = (
        "Create a file or replace its whole content. Parent directories are created. "
        "Prefer edit_file for changing part of an existing file."
    )
    input_model = WriteFileInput
    kind = "edit"

    def paths(self, args: WriteFileInput) -> list[str]:
        return [args.path]

    def details(self, args: WriteFileInput, ctx: ToolContext) -> str:
        path = ctx.resolve(args.path)
        before = decode(path.read_bytes()) if path.is_file() else ""
        return unified_diff(before, args.content, relative_name(ctx.workspace, path))

    async def run(self, args: WriteFileInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args.path)
        existed = path.exists()
        write_text(path, args.content, ctx)
        verb = "Replaced" if existed else "Created"
        lines = args.content.count("\n") + (not args.content.endswith("\n") and bool(args.content))
        return ToolOutput(f"{verb} {relative_name(ctx.workspace, path)} ({lines} lines).")


class EditFileInput(BaseModel):
    path: str = Field(description="File path relative to the workspace root.")
    old_string: str = Field(
        min_length=1,
        description="Exact text to replace, including whitespace; must occur exactly once "
        "unless replace_all is true. Include surrounding lines to make it unique.",
    )
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class EditFile(Tool[EditFileInput]):
    name = "edit_file"
    description = (
        "Replace an exact string in a file. old_string must match the file exactly "
        "(whitespace included) and occur once, unless replace_all is true."
    )
    input_model = EditFileInput
    kind = "edit"

    def paths(self, args: EditFileInput) -> list[str]:
        return [args.path]

    def _edited(self, args: EditFileInput, ctx: ToolContext) -> tuple[Path, str, str, int]:
        path = ctx.resolve(args.path)
        shown = relative_name(ctx.workspace, path)
        data = read_bytes(path, shown)
        if is_binary(data):
            raise ToolError(f"{shown} is a binary file and cannot be edited as text")
        try:
            before = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"{shown} is not valid UTF-8, so editing it as text would corrupt it",
                hint="use run_command with a byte-safe tool (e.g. sed or iconv) instead",
            ) from None
        old, new = _in_line_endings_of(before, args.old_string, args.new_string)
        count = before.count(old)
        if count == 0:
            raise ToolError(
                f"old_string was not found in {shown} (0 matches)",
                hint="read_file the file and copy the text exactly, including indentation",
            )
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {count} times in {shown}; it must be unique",
                hint="include more surrounding lines in old_string, or set replace_all=true",
            )
        return path, before, before.replace(old, new), count

    def details(self, args: EditFileInput, ctx: ToolContext) -> str:
        try:
            path, before, after, _ = self._edited(args, ctx)
        except ToolError as exc:
            return exc.message
        return unified_diff(before, after, relative_name(ctx.workspace, path))

    async def run(self, args: EditFileInput, ctx: ToolContext) -> ToolOutput:
        path, _, after, count = self._edited(args, ctx)
        write_text(path, after, ctx)
        s = "" if count == 1 else "s"
        return ToolOutput(f"Edited {relative_name(ctx.workspace, path)}: {count} replacement{s}.")


def _in_line_endings_of(text: str, old: str, new: str) -> tuple[str, str]:
    """``old`` and ``new`` with CRLF line endings when ``text`` uses them.

    read_file shows lines without their ``\r``, so the model writes plain newlines; matched
    as written, no multi-line edit of a CRLF file could ever succeed.
    """
    if "\r\n" not in text or "\r" in old or "\r" in new:
        return old, new
    crlf_old = old.replace("\n", "\r\n")
    if crlf_old != old and crlf_old not in text:  # mixed endings: the lines matched use LF
        return old, new
    return crlf_old, new.replace("\n", "\r\n")

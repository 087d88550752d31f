"""File tools: read_file, write_file and edit_file.

All their file I/O runs in worker threads (`in_worker`), so the executor's timeout can
fire, and goes through `tools.fileio`, which refuses FIFOs, devices and sockets.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field

from tools.base import FileSeen, Tool, ToolContext, ToolError, ToolOutput
from tools.blocking import in_worker
from tools.fileio import (
    MAX_WHOLE_FILE_BYTES,
    existing_mode,
    not_regular,
    read_whole,
    read_window,
    write_regular,
)
from tools.guard.mounts import local_tree
from tools.guard.protected import aliased
from tools.images import is_image_name, read_image
from tools.text import decode, describe_binary, is_binary
from tools.workspace import relative_name, resolved_root


def check_writable(path: Path, shown: str) -> bool:
    """Whether ``path`` exists; a directory, FIFO, device or socket is refused before anything
    reads or writes it."""
    mode = existing_mode(path)
    if mode is None or stat.S_ISREG(mode):
        return mode is not None
    raise not_regular(shown, mode, hint="give a file path")


def check_target(workspace: Path, path: Path, shown: str) -> bool:
    """`check_writable`, and refuse a file that is a protected file (or any other file) under
    another name: the tools write in place, which would change every name of it."""
    existed = check_writable(path, shown)
    if existed and (why := aliased(resolved_root(workspace), path)) is not None:
        raise ToolError(
            f"{shown} cannot be written: {why}",
            hint="write a new file under another name instead, or ask the person",
        )
    return existed


class Written(NamedTuple):
    """What `write_text` did: whether the file existed before, and the file as written."""

    existed: bool
    seen: FileSeen | None


async def write_text(path: Path, text: str, ctx: ToolContext) -> Written:
    """Record a checkpoint, then write ``text`` (creating parent directories).

    The checkpoint is recorded on the event loop (it emits events); the checks and the write
    run in worker threads.
    """
    shown = relative_name(ctx.workspace, path)
    existed = await in_worker(check_target, ctx.workspace, path, shown)
    ctx.record_checkpoint(path)
    seen = await in_worker(write_regular, path, shown, text.encode("utf-8"))
    return Written(existed, seen)


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
        "and limit to page through long files. Images (PNG, JPEG, GIF, WebP) are returned as "
        "images you can see; other binary files are described, not shown."
    )
    input_model = ReadFileInput
    idempotent = True
    kind = "read"

    def paths(self, args: ReadFileInput) -> list[str]:
        return [args.path]

    async def run(self, args: ReadFileInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args.path)
        shown = relative_name(ctx.workspace, path)
        limit = args.limit or ctx.settings.read_max_lines
        if is_image_name(path):
            return await _read_image(path, shown)
        if _reads_in_place(ctx.workspace, path):
            window = read_window(path, shown, args.offset, limit)
        else:
            window = await in_worker(read_window, path, shown, args.offset, limit)
        if window.binary_head is not None:
            return ToolOutput(describe_binary(window.binary_head, shown, window.size))
        if window.total == 0:
            return ToolOutput(f"{shown} is empty.", seen=window.seen)
        if not window.lines and window.total is not None:
            raise ToolError(
                f"offset {args.offset} is past the end of {shown} ({window.total} lines)",
                hint=f"use an offset between 1 and {window.total}",
            )
        body = "\n".join(
            f"{n:>6}\t{line}" for n, line in enumerate(window.lines, start=args.offset)
        )
        if window.more:
            end = args.offset + len(window.lines) - 1
            of = f" of {window.total}" if window.total is not None else ""
            body += f"\n[lines {args.offset}-{end}{of}; use offset={end + 1} for more]"
        return ToolOutput(body, seen=window.seen)


async def _read_image(path: Path, shown: str) -> ToolOutput:
    image = await in_worker(read_image, path, shown)
    size = f"{image.width}×{image.height} {image.media_type.removeprefix('image/').upper()}"
    return ToolOutput(f"{shown}: image ({size}) attached.", images=(image,))


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
        shown = relative_name(ctx.workspace, path)
        if existing_mode(path) is None:
            return unified_diff("", args.content, shown)
        try:
            before = decode(read_whole(path, shown, MAX_WHOLE_FILE_BYTES))
        except ToolError as exc:
            return exc.message
        return unified_diff(before, args.content, shown)

    async def run(self, args: WriteFileInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(args.path)
        written = await write_text(path, args.content, ctx)
        verb = "Replaced" if written.existed else "Created"
        lines = args.content.count("\n") + (not args.content.endswith("\n") and bool(args.content))
        counted = "1 line" if lines == 1 else f"{lines} lines"
        shown = relative_name(ctx.workspace, path)
        return ToolOutput(f"{verb} {shown} ({counted}).", seen=written.seen)


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
        data = read_whole(path, shown)
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
        path, _, after, count = await in_worker(self._edited, args, ctx)
        written = await write_text(path, after, ctx)
        s = "" if count == 1 else "s"
        shown = relative_name(ctx.workspace, path)
        return ToolOutput(f"Edited {shown}: {count} replacement{s}.", seen=written.seen)


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


INLINE_READ_BYTES = 256 * 1024
"""A file at most this large, on a local tree, is read without a worker thread (well under a
millisecond; what the thread hand-off saves is about 0.1 ms)."""


def _reads_in_place(workspace: Path, path: Path) -> bool:
    """Whether reading ``path`` cannot hang or take long (`tools.guard.mounts`)."""
    if not local_tree(str(resolved_root(workspace))):
        return False
    try:
        return os.stat(path).st_size <= INLINE_READ_BYTES
    except OSError:
        return True  # read_window says what is wrong, at once

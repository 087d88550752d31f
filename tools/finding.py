"""Finding tools: list_files (glob) and search (regex), both skipping ignored files."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolError, ToolOutput
from tools.blocking import in_worker
from tools.fileio import read_whole
from tools.ignore import GitIgnore, glob_to_regex
from tools.text import decode, is_binary
from tools.workspace import relative_name


def _start_dir(ctx: ToolContext, raw: str) -> Path:
    start = ctx.resolve(raw)
    if not start.exists():
        raise ToolError(
            f"directory not found: {raw}", hint="use list_files on '.' to see what exists"
        )
    return start


class ListFilesInput(BaseModel):
    pattern: str = Field(
        default="**/*", description="Glob relative to path, e.g. '**/*.py' or 'src/*.ts'."
    )
    path: str = Field(default=".", description="Directory to list, relative to the workspace.")


class ListFiles(Tool[ListFilesInput]):
    name = "list_files"
    description = (
        "List files matching a glob ('**' matches any number of directories). Skips .git and "
        "files ignored by .gitignore. Paths are relative to the workspace root."
    )
    input_model = ListFilesInput
    idempotent = True

    def paths(self, args: ListFilesInput) -> list[str]:
        return [args.path]

    def summary(self, args: ListFilesInput) -> str:
        return f"list_files {args.pattern} in {args.path}"

    async def run(self, args: ListFilesInput, ctx: ToolContext) -> ToolOutput:
        return await in_worker(self._list, args, ctx)

    def _list(self, args: ListFilesInput, ctx: ToolContext) -> ToolOutput:
        start = _start_dir(ctx, args.path)
        matcher = re.compile(f"^{glob_to_regex(args.pattern.lstrip('/'))}$")
        limit = ctx.settings.max_list_entries
        found: list[str] = []
        extra = 0
        for path in GitIgnore(ctx.workspace).walk(start):
            if matcher.match(path.relative_to(start).as_posix()):
                if len(found) < limit:
                    found.append(relative_name(ctx.workspace, path))
                else:
                    extra += 1
        if not found:
            return ToolOutput(f"No files match {args.pattern!r} in {args.path}.")
        if extra:
            found.append(f"[{extra:,} more not shown; use a narrower pattern]")
        return ToolOutput("\n".join(found))


class SearchInput(BaseModel):
    pattern: str = Field(description="Python regular expression to look for in each line.")
    path: str = Field(default=".", description="File or directory to search in.")
    glob: str | None = Field(default=None, description="Only search files matching this glob.")
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")


class Search(Tool[SearchInput]):
    name = "search"
    description = (
        "Search file contents with a regular expression; returns 'path:line: text' for each "
        "matching line. Skips .git, .gitignore'd and binary files."
    )
    input_model = SearchInput
    idempotent = True

    def paths(self, args: SearchInput) -> list[str]:
        return [args.path]

    def summary(self, args: SearchInput) -> str:
        return f"search /{args.pattern}/ in {args.path}"

    async def run(self, args: SearchInput, ctx: ToolContext) -> ToolOutput:
        return await in_worker(self._search, args, ctx)

    def _search(self, args: SearchInput, ctx: ToolContext) -> ToolOutput:
        try:
            regex = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
        except re.error as exc:
            raise ToolError(
                f"invalid regular expression {args.pattern!r}: {exc}",
                hint="escape special characters such as ( [ . * with a backslash",
            ) from None
        start = _start_dir(ctx, args.path)
        files = [start] if not start.is_dir() else GitIgnore(ctx.workspace).walk(start)
        only = re.compile(f"^{glob_to_regex(args.glob)}$") if args.glob else None
        limit = ctx.settings.max_search_matches
        matches: list[str] = []
        unreadable: list[str] = []
        total = 0
        for path in files:
            shown = relative_name(ctx.workspace, path)
            if only and not (only.match(shown) or only.match(path.name)):
                continue
            try:
                # walk() skips links out of the workspace; read what a link inside points at.
                data = read_whole(path.resolve() if path.is_symlink() else path, shown)
            except ToolError:
                unreadable.append(shown)
                continue
            if is_binary(data):
                continue
            lines = decode(data).splitlines()
            if not any(map(regex.search, lines)):  # most files: no line matches (looked at in C)
                continue
            for number, line in enumerate(lines, start=1):
                if regex.search(line):
                    total += 1
                    if len(matches) < limit:
                        matches.append(f"{shown}:{number}: {line[:500]}")
        return _search_output(args, matches, total, unreadable)


def _search_output(
    args: SearchInput, matches: list[str], total: int, unreadable: list[str]
) -> ToolOutput:
    lines = matches or [f"No matches for /{args.pattern}/ in {args.path}."]
    if total > len(matches):
        lines.append(f"[{total - len(matches):,} more matches not shown; narrow the pattern]")
    if unreadable:
        lines.append(
            f"[partial: {len(unreadable)} file(s) could not be read: {', '.join(unreadable[:10])}]"
        )
    return ToolOutput("\n".join(lines), partial=bool(unreadable))

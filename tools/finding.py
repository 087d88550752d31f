"""Finding tools: list_files (glob) and search (regex), both skipping ignored files and the
files a permission rule withholds (``Read(./.env)`` denied: said by count, never by name).

`search` runs the model's pattern with RE2, whose time is linear in the text: Python's `re`
backtracks, and ``(a+)+$`` over a line of 34 ``a``s and a ``!`` kept it busy for hours while
holding the GIL, so neither Ctrl-C nor SIGTERM could reach the agent. A pattern RE2 cannot
run (look-around, back-references) is refused with what to write instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import re2
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
        matcher = _glob(args.pattern.lstrip("/"))
        limit = ctx.settings.max_list_entries
        found: list[str] = []
        extra = withheld = 0
        for path in GitIgnore(ctx.workspace).walk(start):
            if matcher.fullmatch(path.relative_to(start).as_posix()):
                if ctx.withheld(path):
                    withheld += 1
                elif len(found) < limit:
                    found.append(relative_name(ctx.workspace, path))
                else:
                    extra += 1
        if not found:
            found.append(f"No files match {args.pattern!r} in {args.path}.")
        if extra:
            found.append(f"[{extra:,} more not shown; use a narrower pattern]")
        if withheld:
            found.append(withheld_note(withheld))
        return ToolOutput("\n".join(found))


class SearchInput(BaseModel):
    pattern: str = Field(
        description=(
            "Regular expression (RE2 syntax: like Python's, without look-around or "
            "back-references) to look for in each line."
        )
    )
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
        regex, anywhere = _compile(args.pattern, ignore_case=args.ignore_case)
        start = _start_dir(ctx, args.path)
        files = [start] if not start.is_dir() else GitIgnore(ctx.workspace).walk(start)
        only = _glob(args.glob) if args.glob else None
        limit = ctx.settings.max_search_matches
        matches: list[str] = []
        unreadable: list[str] = []
        total = withheld = 0
        for path in files:
            shown = relative_name(ctx.workspace, path)
            if only and not (only.fullmatch(shown) or only.fullmatch(path.name)):
                continue
            if ctx.withheld(path):
                withheld += 1
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
            # Most files hold no match: one pass over the file says so (RE2 costs some
            # microseconds a call, each line on its own cost 40x more). Joined by "\n" alone,
            # so ^ and $ stop where splitlines() cut.
            if anywhere is not None and anywhere.search("\n".join(lines)) is None:
                continue
            for number, line in enumerate(lines, start=1):
                if regex.search(line):
                    total += 1
                    if len(matches) < limit:
                        matches.append(f"{shown}:{number}: {line[:500]}")
        return _search_output(args, matches, total, unreadable, withheld)


def _options(*, ignore_case: bool = False) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would write its own line on the terminal
    options.case_sensitive = not ignore_case
    return options


def _glob(glob: str) -> re2._Regexp:
    """A glob's matcher: RE2 too, as ``*a*a*a...`` backtracks in Python's ``re``."""
    try:
        return re2.compile(glob_to_regex(glob), _options())
    except re2.error:
        raise ToolError(
            f"invalid glob {glob!r}", hint="use * ? ** and [abc]; close every ["
        ) from None


def _compile(pattern: str, *, ignore_case: bool) -> tuple[re2._Regexp, re2._Regexp | None]:
    """The pattern for one line, and the same pattern over a whole file (None when a match
    in the file does not say a line matches: ``\\A`` and ``\\z`` mean "start/end of line" here).

    Raises:
        ToolError: the pattern is invalid, or uses what a linear-time engine cannot run.
    """
    options = _options(ignore_case=ignore_case)
    try:
        line = re2.compile(pattern, options)
    except re2.error as exc:
        raise _unsupported(pattern, exc) from None
    if "\\A" in pattern or "\\z" in pattern:
        return line, None
    return line, re2.compile(f"(?m:{pattern})", options)


def _unsupported(pattern: str, error: re2.error) -> ToolError:
    raw = error.args[0] if error.args else error
    reason = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    try:
        re.compile(pattern)
    except re.error as python_error:
        return ToolError(
            f"invalid regular expression {pattern!r}: {python_error}",
            hint="escape special characters such as ( [ . * with a backslash",
        )
    return ToolError(
        f"search cannot run the pattern {pattern!r} ({reason}): it runs regular expressions "
        "in linear time, without look-ahead/look-behind ((?=...), (?!...), (?<=...)), "
        "back-references (\\1) or counts over 1000",
        hint="rewrite it without them (match the wider text and read the lines), or run "
        "grep -P through run_command",
    )


def withheld_note(count: int) -> str:
    """What a reading tool says in place of the files a rule withholds (never their names)."""
    files = "1 file was" if count == 1 else f"{count:,} files were"
    return (
        f"[{files} withheld by a permission rule (Read deny) and not shown; do not try "
        "to read them another way]"
    )


def _search_output(
    args: SearchInput, matches: list[str], total: int, unreadable: list[str], withheld: int
) -> ToolOutput:
    lines = matches or [f"No matches for /{args.pattern}/ in {args.path}."]
    if total > len(matches):
        lines.append(f"[{total - len(matches):,} more matches not shown; narrow the pattern]")
    if withheld:
        lines.append(withheld_note(withheld))
    if unreadable:
        lines.append(
            f"[partial: {len(unreadable)} file(s) could not be read: {', '.join(unreadable[:10])}]"
        )
    return ToolOutput("\n".join(lines), partial=bool(unreadable))

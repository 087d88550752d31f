"""A streamed answer as terminal rows: rows to print once, and the rows still being written.

Each time it is asked (`AnswerView.take`), the finished lines of the block being written are
rendered as markdown together with the block's earlier lines, so a line of a list looks as it
will in the whole list; the rows beyond those printed already are new. A code fence is
rendered a line at a time, highlighted with the lines before it as context, so a long one
costs no more per line than a short one. The line still being written is rendered up to its
last whole word, live; as soon as its first rows are complete they are handed out to print too
(`AnswerView.take`), so the live part is a row or so, whatever the line's length.

A line break in the answer stays a line break (as GitHub shows a comment): a paragraph reflowed
as its lines arrive would change rows that are printed already.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise
from typing import Any, ClassVar

from markdown_it.token import Token
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.segment import Segment
from rich.syntax import Syntax

from agent.terminal.area_painter import BLANK, Cell, to_cells
from agent.terminal.console import visible
from agent.terminal.open_markup import has_open_markup
from agent.terminal.stream import MarkdownStream, closing_fence, code_info, whole_words

Row = list[Segment]
"""One terminal line of rendered text, without its newline."""

CODE_CONTEXT = 12
"""Lines of a code fence highlighted before the new ones, for the state they leave (inside a
string, a comment); the whole fence each time cost 0.4 s a refresh at 300 lines."""


def code_syntax(code: str, language: str, line_range: tuple[int, int] | None = None) -> Syntax:
    """How an answer's code is shown: in the terminal's own colours, indented two columns."""
    return Syntax(
        code,
        _lexer(language),
        theme="ansi_dark",
        word_wrap=True,
        padding=(0, 0, 0, 2),
        line_range=line_range,
    )


class AnswerCode(CodeBlock):
    """A code block of the answer's markdown, shown as `code_syntax` shows it."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield code_syntax(str(self.text).rstrip("\n"), self.lexer_name)


class AnswerMarkdown(Markdown):
    """rich's Markdown with the answer's line breaks kept and code shown as `code_syntax`."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": AnswerCode,
        "code_block": AnswerCode,
    }

    def __init__(self, markup: str) -> None:
        super().__init__(markup)
        _keep_line_breaks(self.parsed)


class AnswerView:
    """Streamed answer text, handed out as rows: those that can no longer change, once, and
    those of the part still being written.

    Args:
        console: Renders the rows (its width is read at each call).
        redact: Hides secrets; applied to whole lines, and to the live part up to its last
            whole word, so no part of a key is ever shown.
    """

    def __init__(self, console: Console, redact: Callable[[str], str]) -> None:
        self.console = console
        self.redact = redact
        self._stream = MarkdownStream()
        self._printed = ""
        """The start of the block being written whose rows were handed out: whole lines, or
        up to a break (`_breaks`) in the line being written."""
        self._breaks: list[int] = []
        """Where in the block's source the rows of a line handed out before its end stop: the
        rest of the line is rendered from the start of a row there, as it was shown."""
        self._tried = ("", 0)
        """The unfinished source and width last found to have no complete row to hand out."""
        self._printed_rows = (0, 0)
        """(width, rows) of `_printed` rendered at that width (for a code fence: lines)."""
        self._block_shown = False
        self._live: tuple[str, int, list[Row]] = ("", 0, [])
        self.shown = False
        """Whether any row of this answer was handed out to be printed."""

    def feed(self, text: str) -> None:
        """Add streamed text."""
        self._stream.feed(text)

    def take(self) -> tuple[list[Row], list[Row]]:
        """Rows finished since the last call, and the rows of the unfinished part."""
        width = self.console.width
        rows: list[Row] = []
        for block in self._stream.take_finished():
            rows += self._new_rows(block, width)
            self._end_block()
        settled = self._stream.settled
        if len(settled) > len(self._printed):
            rows += self._new_rows(settled, width)
            self._printed = settled
        live = self._live_rows(width)
        if len(live) > 1:
            complete, live = self._complete_rows(live, width)
            rows += complete
        if live and not self._block_shown and self.shown:
            live.insert(0, [])
        return rows, live

    def end(self) -> list[Row]:
        """The answer is over (or cut off by a tool call): the rows left to print."""
        width = self.console.width
        rows: list[Row] = []
        for block in self._stream.flush():
            rows += self._new_rows(block, width)
            self._end_block()
        self.shown = False
        return rows

    def reset(self) -> bool:
        """Forget the answer (its stream restarted); whether some of it was printed."""
        shown = self.shown
        self._stream.reset()
        self._end_block()
        self.shown = False
        return shown

    def render(self, source: str, width: int) -> list[Row]:
        """``source`` (a block or its start) as rows, redacted, without blank rows around it;
        a fence left open is closed for the rendering, and a line whose first rows were handed
        out before its end goes on from a row of its own, as it was shown."""
        if not source.strip():
            return []
        text = visible(self._redacted(source))
        fence = closing_fence(text)
        if fence:
            text = f"{text}\n{fence}"
        return self._rows(AnswerMarkdown(text), width)

    def render_code(self, block: str, language: str, start: int, width: int) -> list[Row]:
        """The rows of a code fence's lines from ``start`` (0: the first code line) on,
        highlighted after the lines before them."""
        lines = block.split("\n")[1:]
        if lines and closing_fence(block) == "":
            lines.pop()  # the closing fence
        if start >= len(lines):
            return []
        first = max(start - CODE_CONTEXT, 0)
        code = "\n".join(visible(self.redact(line)) for line in lines[first:])
        span = (start - first + 1, len(lines) - first)
        return self._rows(code_syntax(code, language, span), width, strip=False)

    def _rows(self, renderable: Any, width: int, strip: bool = True) -> list[Row]:
        options = self.console.options.update(width=width)
        lines = self.console.render_lines(renderable, options, pad=False)
        start, end = 0, len(lines)
        while strip and start < end and _blank(lines[start]):
            start += 1
        while strip and end > start and _blank(lines[end - 1]):
            end -= 1
        return lines[start:end]

    def _live_rows(self, width: int) -> list[Row]:
        block, partial = self._stream.block, whole_words(self._stream.partial)
        unfinished = f"{block}\n{partial}" if block and partial else block or partial
        if (unfinished, width) == self._live[:2]:
            return list(self._live[2])
        language = code_info(unfinished)
        if language is not None and block:
            rows = self.render_code(f"{block}\n{partial}", language, self._done(width), width)
        else:
            rows = self.render(unfinished, width)[self._done(width) :]
        self._live = (unfinished, width, rows)
        return list(rows)

    def _new_rows(self, source: str, width: int) -> list[Row]:
        language = code_info(source)
        done = self._done(width)
        if language is not None:
            rows = self.render_code(source, language, done, width)
            lines = source.count("\n") + (0 if closing_fence(source) else -1)
            self._printed_rows = (width, max(lines, done))
        else:
            rendered = self.render(source, width)
            rows = rendered[done:]
            self._printed_rows = (width, max(done, len(rendered)))
        return self._hand_out(rows)

    def _hand_out(self, rows: list[Row]) -> list[Row]:
        """Rows of the block being written, to print: the first ones after a blank line."""
        if rows and not self._block_shown:
            if self.shown:
                rows.insert(0, [])  # the blank line between two blocks
            self._block_shown = self.shown = True
        return rows

    def _done(self, width: int) -> int:
        """How many rendered rows (code lines) of the block being written were handed out."""
        if not self._printed:
            return 0
        if self._printed_rows[0] != width and code_info(self._printed) is None:
            self._printed_rows = (width, len(self.render(self._printed, width)))
        return self._printed_rows[1]

    def _end_block(self) -> None:
        self._printed = ""
        self._printed_rows = (0, 0)
        self._breaks = []
        self._live = ("", 0, [])
        self._tried = ("", 0)
        self._block_shown = False

    # -- a long line's complete rows -------------------------------------------------------

    def _complete_rows(self, live: list[Row], width: int) -> tuple[list[Row], list[Row]]:
        """The rows of the line being written that are complete, handed out, and the live rows
        left: at most the one still filling, so a resize has little to redraw.

        A row is complete when no text still to come can change it: the markup up to the first
        word of the next row is closed (`has_open_markup`), and the rest of the line renders
        the same from a row of its own (a break there changes nothing). The words on the rows
        before the last find that word in the source, or those on the last row counted from the
        end (a secret redacted before it); markup shown as a word more or less (an image's
        icon) makes the neighbouring counts worth a try.
        """
        stream = self._stream
        block, partial = stream.block, whole_words(stream.partial)
        if stream.in_fence or stream.settled != block or not _may_break(partial):
            return [], live
        unfinished = f"{block}\n{partial}" if block else partial
        if (unfinished, width) == self._tried:
            return [], live
        start = max(len(self._printed), len(unfinished) - len(partial))
        words = [start + found.start() for found in re.finditer(r"\S+", unfinished[start:])]
        counted = sum(len(_plain(row).split()) for row in live[:-1])
        last = len(words) - len(_plain(live[-1]).split())
        for count in dict.fromkeys((counted, last, counted - 1, counted + 1)):
            if 0 < count < len(words):
                complete = self._break_at(unfinished, words[count], live, width)
                if complete:
                    left = live[len(complete) :]
                    self._live = (unfinished, width, left)
                    return self._hand_out(complete), list(left)
        self._tried = (unfinished, width)
        return [], live

    def _break_at(self, unfinished: str, at: int, live: list[Row], width: int) -> list[Row]:
        """The rows before ``at`` (the start of a word), if they are complete ([] if not); the
        line then goes on from ``at`` on a row of its own."""
        word = unfinished[at:].split(None, 1)[0]
        if not _starts_no_block(word) or has_open_markup(unfinished[: at + len(word)]):
            return []
        done = self._done(width)
        before = self.render(unfinished[:at], width)[done:]
        if not 0 < len(before) < len(live) or not _same(before, live[: len(before)], width):
            return []
        self._breaks.append(at)
        if not _same(self.render(unfinished, width)[done:], live, width):
            self._breaks.pop()
            return []
        self._printed = unfinished[:at]
        self._printed_rows = (width, done + len(before))
        return before

    def _redacted(self, source: str) -> str:
        """``source`` redacted, with a line break at each of `_breaks` it reaches; none where
        a secret spans a break (it is redacted as the text it is part of)."""
        whole = self.redact(source)
        cuts = [cut for cut in self._breaks if 0 < cut < len(source)]
        if not cuts:
            return whole
        parts = [self.redact(source[a:b]) for a, b in pairwise([0, *cuts, len(source)])]
        return "\n".join(parts) if "".join(parts) == whole else whole


def _may_break(line: str) -> bool:
    """Whether rows of ``line`` (being written) may be printed before its end: not a heading
    (one styled block), nor a table's row (laid out from all its rows; a line is one when it
    starts with ``|``, as `MarkdownStream.settled` has it)."""
    stripped = line.lstrip()
    return bool(stripped) and not stripped.startswith(("#", "|"))


def _starts_no_block(word: str) -> bool:
    """Whether a line starting with ``word`` goes on the paragraph before it (a ``-`` or a
    ``1.`` would start a list, a ``>`` a quote, a ``=`` underline a heading...)."""
    return (word[0].isalnum() or word[0] in "\"'(") and not re.match(r"\d+[.)]$", word)


def _plain(row: Row) -> str:
    return "".join(segment.text for segment in row)


def _same(rows: list[Row], others: list[Row], width: int) -> bool:
    """Whether two lists of rows show the same cells (trailing blanks aside)."""
    return len(rows) == len(others) and all(
        _cells(row, width) == _cells(other, width) for row, other in zip(rows, others, strict=True)
    )


def _cells(row: Row, width: int) -> list[Cell]:
    cells = to_cells(row, width)
    while cells and cells[-1] == BLANK:
        cells.pop()
    return cells


def _blank(row: Row) -> bool:
    return all(not segment.text.strip() and not _background(segment) for segment in row)


def _background(segment: Segment) -> bool:
    style = segment.style
    return style is not None and style.bgcolor is not None and not style.bgcolor.is_default


def _keep_line_breaks(tokens: list[Token]) -> None:
    for token in tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


def _lexer(language: str) -> Any:  # a pygments Lexer (pygments has no types)
    lexer = _LEXERS.get(language)
    if lexer is None:
        if len(_LEXERS) >= 64:  # names come from the model: keep the cache bounded
            _LEXERS.clear()
        try:
            lexer = get_lexer_by_name(language or "text")
        except ClassNotFound:
            lexer = get_lexer_by_name("text")
        _LEXERS[language] = lexer
    return lexer


_LEXERS: dict[str, Any] = {}

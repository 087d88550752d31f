"""The REPL's input line (prompt-toolkit): history, multi-line editing, slash-command completion.

Enter sends; Alt-Enter or Esc-Enter inserts a new line; a bracketed paste keeps its newlines;
Ctrl-R searches the history; Ctrl-C clears a non-empty line and reports an empty one.
A `LineNotice` shows a sentence above the line (Ctrl-V's "no clipboard tool").
The history file is private (0600) and never holds a secret the person typed.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.completion import (
    CompleteEvent,
    Completer,
    Completion,
    ThreadedCompleter,
    merge_completers,
)
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, to_filter
from prompt_toolkit.formatted_text import AnyFormattedText, FormattedText, to_formatted_text
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout.controls import BufferControl

from agent.terminal.console import visible
from agent.terminal.mention_completion import MentionCompleter

PROMPT = "› "
HISTORY_MODE = 0o600
log = structlog.get_logger("agent.terminal.repl")


@dataclass(frozen=True)
class CommandInfo:
    """A slash command as completion shows it."""

    name: str
    usage: str
    description: str
    arguments: Callable[[], Sequence[tuple[str, str]]] | None = None
    """Completions for the argument: (value, description) pairs."""


class EmptyInterrupt(Exception):
    """Ctrl-C at an empty prompt."""


@dataclass
class LineNotice:
    """A sentence shown above the input line until the line changes or the next prompt.

    The prompt draws it, in raw mode. Printing it instead (prompt-toolkit's
    ``run_in_terminal``) hands the terminal back to the tty for a moment, and a Ctrl-C or
    Ctrl-D typed in that moment is the tty's (a SIGINT, an end of input), never the prompt's.
    """

    text: str = ""

    def above(self, message: AnyFormattedText) -> AnyFormattedText:
        """``message`` (the prompt) with the notice above it, wrapped to the terminal."""
        if not self.text:
            return message
        width = max(get_app().output.get_size().columns - 1, 20)
        lines = textwrap.wrap(visible(self.text), width) or [""]
        return FormattedText(
            [("fg:ansiyellow", "\n".join(lines) + "\n"), *to_formatted_text(message)]
        )

    def clear(self, *_: Any) -> None:
        self.text = ""


class SlashCompleter(Completer):
    """Completes ``/command`` names with their descriptions, then known arguments."""

    def __init__(self, commands: Callable[[], Sequence[CommandInfo]]) -> None:
        self.commands = commands

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, arg = text.partition(" ")
        if not space:
            for info in self.commands():
                if info.name.startswith(name):
                    yield Completion(
                        info.name,
                        start_position=-len(name),
                        display=info.usage,
                        display_meta=info.description,
                    )
            return
        for info in self.commands():
            if info.name == name and info.arguments is not None:
                for value, meta in info.arguments():
                    if value.startswith(arg.strip()):
                        yield Completion(
                            value, start_position=-len(arg.lstrip()), display_meta=meta
                        )


class PrivateFileHistory(FileHistory):
    """prompt-toolkit's history file, written 0600 with secrets redacted.

    A history file written before redaction existed is rewritten redacted when loaded. A file
    that cannot be written (read-only home, a symlink) means no history, never a crash.
    """

    def __init__(self, filename: Path, redact: Callable[[str], str]) -> None:
        super().__init__(str(filename))
        self.path = filename
        self.redact = redact

    def load_history_strings(self) -> Iterable[str]:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        clean = self.redact(text)
        if clean != text:
            with contextlib.suppress(OSError):
                self._replace(clean)
        return list(super().load_history_strings())

    def store_string(self, string: str) -> None:
        lines = [f"\n# {datetime.datetime.now()}\n"]
        lines += [f"+{line}\n" for line in self.redact(string).split("\n")]
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "ab") as handle:
                os.fchmod(fd, HISTORY_MODE)
                handle.write("".join(lines).encode("utf-8", errors="replace"))
        except OSError as error:
            log.warning("history_not_saved", path=str(self.path), reason=str(error))

    def _replace(self, text: str) -> None:
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, self.path)


def key_bindings(
    on_shift_tab: Callable[[], None] | None = None,
    on_paste_image: Callable[[], tuple[str, str | None]] | None = None,
    notice: LineNotice | None = None,
) -> KeyBindings:
    """Alt-Enter / Esc-Enter for a new line; Ctrl-C clears the line or signals an empty one;
    Shift-Tab calls ``on_shift_tab`` (the next mode) and redraws the prompt; Ctrl-V inserts
    what ``on_paste_image`` gives (a clipboard image's mark), or shows why it gave none as
    ``notice``."""
    bindings = KeyBindings()

    if on_paste_image is not None:
        paste, told = on_paste_image, notice or LineNotice()

        @bindings.add("c-v")
        def _paste_image(event: KeyPressEvent) -> None:
            mark, why = paste()
            event.current_buffer.insert_text(mark)
            if why:
                told.text = why
                event.app.invalidate()

    if on_shift_tab is not None:
        switch = on_shift_tab

        @bindings.add("s-tab")
        def _shift_tab(event: KeyPressEvent) -> None:
            switch()
            event.app.invalidate()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=EmptyInterrupt())

    return bindings


def continuation(width: int, line_number: int, wrap_count: int) -> FormattedText:
    """What starts the second and later lines of a multi-line prompt."""
    return FormattedText([("class:continuation", "·".rjust(width - 1) + " ")])


def build_session(
    history_file: Path,
    commands: Callable[[], Sequence[CommandInfo]],
    toolbar: Callable[[], str] | None = None,
    redact: Callable[[str], str] = lambda text: text,
    workspace: Path | None = None,
    on_shift_tab: Callable[[], None] | None = None,
    on_paste_image: Callable[[], tuple[str, str | None]] | None = None,
    notice: LineNotice | None = None,
) -> PromptSession[str]:
    """A prompt session with the REPL's history file, completion and key bindings.

    With ``workspace``, ``@`` completes the paths in it (scanned off the input thread).
    ``notice`` is what the key bindings tell the person; the prompt's message shows it
    (`LineNotice.above`), and it goes when the line changes or a new prompt starts.
    """
    notice = notice or LineNotice()
    completer: Completer = SlashCompleter(commands)
    if workspace is not None:
        mentions = ThreadedCompleter(MentionCompleter(workspace))
        completer = merge_completers([completer, mentions])
    with contextlib.suppress(OSError):  # no history is better than no REPL
        history_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    session: PromptSession[str] = PromptSession(
        history=PrivateFileHistory(history_file, redact),
        completer=completer,
        # prompt-toolkit keeps room for a menu under the prompt whenever completion may
        # start: 7 blank lines under every prompt. Only a command or a mention completes.
        complete_while_typing=Condition(lambda: completes(session.default_buffer.text)),
        key_bindings=key_bindings(on_shift_tab, on_paste_image, notice),
        multiline=False,
        prompt_continuation=continuation,
        enable_history_search=False,
        bottom_toolbar=toolbar,
        mouse_support=False,
        enable_suspend=True,
    )
    session.default_buffer.on_text_changed += notice.clear
    session.app.on_reset += notice.clear
    _keep_the_toolbar_under_the_input(session)
    return session


def completes(text: str) -> bool:
    """Whether completion may start on ``text``: a slash command or an ``@`` mention."""
    return text.startswith("/") or "@" in text


def _keep_the_toolbar_under_the_input(session: PromptSession[str]) -> None:
    """Let the input take the lines it needs, no more.

    Where the terminal reports the cursor's row, prompt-toolkit grows the input to the bottom
    of the screen and pins the toolbar there: blank lines from the prompt down. An input
    that does not grow leaves the toolbar on the line under it.
    """
    for window in session.layout.find_all_windows():
        control = window.content
        if isinstance(control, BufferControl) and control.buffer is session.default_buffer:
            window.dont_extend_height = to_filter(True)

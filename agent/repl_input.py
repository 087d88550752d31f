"""The REPL's input line (prompt-toolkit): history, multi-line editing, slash-command completion.

Enter sends; Alt-Enter or Esc-Enter inserts a new line; a bracketed paste keeps its newlines;
Ctrl-R searches the history; Ctrl-C clears a non-empty line and reports an empty one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

PROMPT = "› "


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


def key_bindings() -> KeyBindings:
    """Alt-Enter / Esc-Enter for a new line; Ctrl-C clears the line or signals an empty one."""
    bindings = KeyBindings()

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
) -> PromptSession[str]:
    """A prompt session with the REPL's history file, completion and key bindings."""
    history_file.parent.mkdir(parents=True, exist_ok=True)
    return PromptSession(
        history=FileHistory(str(history_file)),
        completer=SlashCompleter(commands),
        complete_while_typing=True,
        key_bindings=key_bindings(),
        multiline=False,
        prompt_continuation=continuation,
        enable_history_search=False,
        bottom_toolbar=toolbar,
        mouse_support=False,
        enable_suspend=True,
    )

"""What the person typed at the prompt, before it goes to the model: ``!command`` lines and
shell mode, ``@path`` mentions.

A ``!command`` runs as the model's ``run_command`` runs (safety policy, hooks, deny and ask
rules, sandbox, undo), without a model request and without asking, since the person typed
it; its output is shown and goes to the model with the next prompt, as in Claude Code. A
bare ``!`` switches shell mode on and off: every line is then a command.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rich.console import RenderableType
from rich.text import Text

from agent.session import Agent
from agent.terminal.mentions import expand_mentions, mentioned
from providers.messages import ToolUseBlock

T = TypeVar("T")
SHELL_PROMPT = "! "
MAX_SHOWN_LINES = 40
_ids = itertools.count(1)


class InputHost(Protocol):
    """What typed input needs from the REPL."""

    workspace: Path
    agent: Agent

    def show(self, renderable: RenderableType) -> None: ...

    async def run_command(self, work: Coroutine[Any, Any, T]) -> T | None:
        """Run ``work`` so that Ctrl-C cancels it; None if it was cancelled."""
        ...


class TypedInput:
    """Turns a typed line into the prompt to send, or handles it here.

    Args:
        host: The REPL.
    """

    def __init__(self, host: InputHost) -> None:
        self.host = host
        self.shell_mode = False
        self._context: list[str] = []
        """Shell lines and their output since the last prompt, for the next one."""

    @property
    def prompt(self) -> str | None:
        """The prompt's text in shell mode; None for the usual one."""
        return SHELL_PROMPT if self.shell_mode else None

    def is_shell(self, text: str) -> bool:
        """Whether ``text`` is a shell line (or the ``!`` switch) rather than a prompt."""
        return self.shell_mode or text.lstrip().startswith("!")

    async def run_shell(self, text: str) -> None:
        """Run a shell line, or switch shell mode with a bare ``!``."""
        command = text.strip()
        if not self.shell_mode or command == "!":
            command = command.removeprefix("!").strip()
        if not command:
            self.shell_mode = not self.shell_mode
            state = (
                "on: each line runs as a command; ! alone turns it off"
                if self.shell_mode
                else "off"
            )
            self.host.show(Text(f"Shell mode {state}.", style="dim"))
            return
        output = await self.host.run_command(self._run(command))
        if output is None:
            self.host.show(Text("Interrupted.", style="yellow"))
            return
        self._context.append(
            f"<bash-input>{command}</bash-input>\n<bash-stdout>{output}</bash-stdout>"
        )

    async def _run(self, command: str) -> str:
        agent = self.host.agent
        call = ToolUseBlock(
            id=f"shell_{next(_ids)}", name="run_command", input={"command": command}
        )
        typed = agent.permissions.typed_by_person(command) if agent.permissions else None
        with typed or contextlib.nullcontext():
            result = await agent.tools.execute(call)
        lines = result.content.splitlines()
        shown = "\n".join(lines[:MAX_SHOWN_LINES])
        if len(lines) > MAX_SHOWN_LINES:
            shown += f"\n… {len(lines) - MAX_SHOWN_LINES} more lines (the model gets them all)"
        self.host.show(Text(shown, style="red" if result.is_error else ""))
        return result.content

    async def prompt_text(self, text: str) -> str | None:
        """What to send for ``text``: mentions attached, shell context first; None when a
        mention cannot be attached (the person was told why)."""
        if mentioned(text):
            permissions = self.host.agent.permissions
            refused = permissions.refuses_read if permissions is not None else None
            expanded = await expand_mentions(text, self.host.workspace, refused)
            for line, style in expanded.notes():
                self.host.show(Text(line, style=style))
            if expanded.problems:
                return None
            text = expanded.prompt
        if self._context and text.strip():
            text = "\n\n".join([*self._context, text])
            self._context.clear()
        return text

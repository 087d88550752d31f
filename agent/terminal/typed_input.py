"""What the person typed at the prompt, before it goes to the model: ``!command`` lines and
shell mode, ``@path`` mentions, custom slash commands from files, plan mode (Shift-Tab or
``/plan``: read-only until the person approves the model's plan).

A ``!command`` runs as the model's ``run_command`` runs (safety policy, hooks, deny and ask
rules, sandbox, undo), without a model request and without asking, since the person typed
it; its output is shown, saved in the session at once (a user message, as Claude Code
keeps it) and goes to the model with the next prompt. A bare ``!`` switches shell mode on
and off: every line is then a command.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shlex
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rich.console import RenderableType
from rich.text import Text

from agent.engine.system_prompt import instructions_file
from agent.permissions.masks import command_coverage
from agent.permissions.plan import GO_AHEAD, plan_guard_note, planned
from agent.session import Agent
from agent.terminal.command_runner import (
    CustomCommands,
    allowed_tools,
    init_prompt,
    trust_question,
    with_shell_output,
)
from agent.terminal.custom_commands import CustomCommand
from agent.terminal.input_line import CommandInfo
from agent.terminal.mentions import expand_mentions, mentioned
from agent.terminal.pasted_images import PastedImages, pasted_paths_in
from agent.terminal.permissions_view import permissions_command
from providers.messages import ToolUseBlock
from sessions import SessionError, shell_run

T = TypeVar("T")
OWN_COMMANDS = {
    "/plan": "plan mode on/off (/plan <request>: on, and plan that): read-only until you "
    "approve a plan",
    "/init": "write an AGENTS.md for this repository from a look at it",
    "/memory": "edit the project's AGENTS.md (or CLAUDE.md) in $EDITOR",
    "/permissions": "the permission rules in force and where each comes from (remove N: take "
    "back one given at the approval prompt)",
}
SHELL_PROMPT = "! "
PLAN_PROMPT = "plan › "
MODE_LINES = {
    "acceptEdits": "⏵⏵ accept edits on (shift+tab to cycle)",
    "plan": "⏸ plan mode on (shift+tab to cycle)",
    "bypassPermissions": "⏵⏵ bypass permissions on (shift+tab to cycle)",
}
UNGUARDED_PLAN_LINE = "⏸ plan mode on, no kernel sandbox: guarded by a list (shift+tab to cycle)"
PLAN_QUESTION = "Approve the plan? [y]es, leave plan mode and carry it out / [N]o, keep planning: "
MAX_SHOWN_LINES = 40
_ids = itertools.count(1)


class InputHost(Protocol):
    """What typed input needs from the REPL."""

    workspace: Path
    agent: Agent

    def show(self, renderable: RenderableType) -> None: ...

    async def ask(self, question: str) -> str:
        """One line of input; empty on Ctrl-C or Ctrl-D."""
        ...

    async def run_command(self, work: Coroutine[Any, Any, T]) -> T | None:
        """Run ``work`` so that Ctrl-C cancels it; None if it was cancelled."""
        ...


class TypedInput:
    """Turns a typed line into the prompt to send, or handles it here.

    Args:
        host: The REPL.
        custom: The custom commands of the workspace.
    """

    def __init__(self, host: InputHost, custom: CustomCommands) -> None:
        self.host = host
        self.custom = custom
        self.shell_mode = False
        self.pasted = PastedImages()
        """Images pasted with Ctrl-V into the prompt being typed."""

    @property
    def prompt(self) -> str | None:
        """The prompt's text in shell or plan mode; None for the usual one."""
        if self.shell_mode:
            return SHELL_PROMPT
        return PLAN_PROMPT if self.plan_mode else None

    @property
    def plan_mode(self) -> bool:
        permissions = self.host.agent.permissions
        return permissions is not None and permissions.modes.plan_mode

    def toggle_plan(self) -> None:
        """``/plan``: plan mode on or off (off: back to the approval mode under it)."""
        permissions = self.host.agent.permissions
        if permissions is not None:
            permissions.modes.plan(not permissions.modes.plan_mode)

    def cycle_mode(self) -> None:
        """Shift-Tab, as in Claude Code: default, accept edits, plan (and bypass, if started so)."""
        permissions = self.host.agent.permissions
        if permissions is not None:
            permissions.modes.cycle()

    @property
    def mode_line(self) -> str | None:
        """The mode, for the line under the prompt; None in the default mode."""
        permissions = self.host.agent.permissions
        mode = permissions.modes.mode if permissions is not None else "default"
        if mode == "plan" and plan_guard_note(self.host.agent.sandbox):
            return UNGUARDED_PLAN_LINE
        return MODE_LINES.get(mode)

    async def after_turn(self) -> str | None:
        """In plan mode, ask whether to carry the plan out; the prompt that does, if so."""
        if not self.plan_mode:
            return None
        if (await self.host.ask(PLAN_QUESTION)).strip().lower() not in ("y", "yes"):
            return None
        self.toggle_plan()
        return GO_AHEAD

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
        try:
            # Saved now, as Claude Code does: it survives --resume and goes with the next prompt.
            self.host.agent.add_context(shell_run(command, output))
        except SessionError as error:
            self.host.show(Text(f"Not saved in the session: {error}", style="red"))

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
        """What to send for ``text``: mentions attached, shell context first, images
        (mentioned, pasted, or their paths pasted) attached to the agent's next turn; None
        when something cannot be attached (the person was told why)."""
        images = self.pasted.take(text)
        permissions = self.host.agent.permissions
        refused = permissions.refuses_read if permissions is not None else None
        if mentioned(text):
            expanded = await expand_mentions(text, self.host.workspace, refused)
            for line, style in expanded.notes():
                self.host.show(Text(line, style=style))
            if expanded.problems:
                return None
            text, images = expanded.prompt, [*images, *expanded.images]
        found, problems = await pasted_paths_in(text, refused)
        for problem in problems:
            self.host.show(Text(f"{problem}. Nothing was sent.", style="yellow"))
        if problems:
            return None
        if found:
            self.host.show(Text(f"Attached {', '.join(i.name for i in found)}", style="dim"))
        if why := self.host.agent.attach_images([*images, *found]):
            self.host.show(Text(why, style="red"))
            return None
        return planned(text, self.plan_mode)

    def command_infos(self) -> list[CommandInfo]:
        """`OWN_COMMANDS` and the custom commands, for /help and completion."""
        return [CommandInfo(name, name, about) for name, about in OWN_COMMANDS.items()] + [
            CommandInfo(command.name, command.usage, command.summary)
            for command in self.custom.found.values()
        ]

    def is_custom(self, text: str) -> bool:
        """Whether ``text`` is one of `OWN_COMMANDS` or runs a custom command."""
        if self.shell_mode:
            return False
        return _name(text) in OWN_COMMANDS or self.custom.lookup(text) is not None

    async def custom_prompt(self, text: str) -> tuple[str, CustomCommand | None] | None:
        """The prompt a command makes of ``text`` (a custom one's shell lines run); None
        when there is none to send (``/plan``, ``/memory``, ``/permissions``, a refused or
        failed command)."""
        name = _name(text)
        arguments = text.strip().partition(" ")[2].strip()
        if name == "/plan":
            if not (arguments and self.plan_mode):
                self.toggle_plan()
            state = "on: read-only until you approve a plan" if self.plan_mode else "off"
            self.host.show(Text(f"Plan mode {state} (Shift-Tab cycles modes).", style="dim"))
            if self.plan_mode and (note := plan_guard_note(self.host.agent.sandbox)):
                self.host.show(Text(note, style="yellow"))
            prompt = await self.prompt_text(arguments) if arguments else None
            return None if prompt is None else (prompt, None)
        if name == "/init":
            return init_prompt(arguments), None
        if name == "/memory":
            await self._edit_instructions()
            return None
        if name == "/permissions":
            if (permissions := self.host.agent.permissions) is not None:
                sandbox = self.host.agent.sandbox
                self.host.show(
                    permissions_command(
                        permissions,
                        arguments,
                        plan_note=plan_guard_note(sandbox),
                        commands_note=command_coverage(
                            permissions.rules,
                            "namespaces" in sandbox.layers(),
                            sandbox.namespaces_missing,
                        ),
                        offered={spec.name for spec in self.host.agent.tools.specs()},
                    )
                )
            return None
        found = self.custom.lookup(text)
        assert found is not None
        command, arguments = found
        if not self.custom.trusted(command):
            answer = await self.host.ask(trust_question(command))
            if answer.strip().lower() not in ("y", "yes"):
                self.host.show(Text(f"{command.name} not run.", style="dim"))
                return None
            try:
                self.custom.trust(command)
            except OSError as error:
                self.host.show(Text(f"Allowed once; not saved ({error}).", style="red"))
        rendered = command.render(arguments)
        if command.shell_lines:
            with allowed_tools(self.host.agent, command):
                work = with_shell_output(rendered, self.host.agent)
                output = await self.host.run_command(work)
            if output is None:
                return None
            rendered = output
        prompt = await self.prompt_text(rendered)
        return None if prompt is None else (prompt, command)

    async def _edit_instructions(self) -> None:
        found = instructions_file(self.host.workspace)
        path = self.host.workspace / (found[0] if found else "AGENTS.md")
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            process = await asyncio.create_subprocess_exec(*shlex.split(editor), str(path))
            await process.wait()
        except (OSError, ValueError) as error:
            self.host.show(Text(f"Cannot start the editor {editor!r}: {error}", style="red"))
            return
        self.host.show(
            Text(
                f"{path.name}: read at the start of each session (/clear starts one).", style="dim"
            )
        )


def _name(text: str) -> str:
    return text.strip().partition(" ")[0].lower()

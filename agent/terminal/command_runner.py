"""Running a custom slash command (`agent.terminal.custom_commands`): trust, its shell lines,
its ``allowed-tools``; shared by the REPL and ``agent -p "/name args"``.

A project's command that runs shell lines or allows tools is the repository's code: it runs
only once the person allowed that exact file (asked in the REPL; remembered per workspace,
0600, under AGENT_HOME; a changed file is asked about again).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path

from agent.session import Agent
from agent.terminal.custom_commands import SHELL_LINE, CustomCommand, find_commands
from agent.terminal.mentions import expand_now
from providers.messages import ToolUseBlock
from tools.mcp import ProjectApprovals

APPROVALS_FILE = "project-commands.json"
_ids = itertools.count(1)


class CustomCommands:
    """The custom commands of a workspace, and the person's trust in the project's ones.

    Args:
        workspace: The project.
        environ: For ``HOME`` and ``XDG_CONFIG_HOME``.
        home: ``AGENT_HOME``, where trust is remembered.
        taken: Built-in command names, which a file cannot replace.
    """

    def __init__(
        self, workspace: Path, environ: Mapping[str, str], home: Path, taken: set[str]
    ) -> None:
        self._workspace = workspace
        self._environ = environ
        self.taken = taken
        self._approvals = ProjectApprovals(home, workspace, file_name=APPROVALS_FILE)
        self.found: dict[str, CustomCommand] = {}

    def refresh(self) -> dict[str, CustomCommand]:
        """Read the command directories again (a file added while the REPL runs counts)."""
        self.found = find_commands(self._workspace, self._environ, self.taken)
        return self.found

    def lookup(self, line: str) -> tuple[CustomCommand, str] | None:
        """The command ``/name args`` names, and its arguments; None if it names none."""
        name, _, arguments = line.strip().partition(" ")
        command = self.found.get(name.lower())
        return None if command is None else (command, arguments.strip())

    def trusted(self, command: CustomCommand) -> bool:
        """Whether ``command`` may run its shell lines and allow its tools."""
        return not command.needs_trust or self._approvals.allowed_digest(
            command.name, command.digest
        )

    def trust(self, command: CustomCommand) -> None:
        """Remember that the person allowed ``command`` as it is. Raises `OSError`."""
        self._approvals.allow_digest(command.name, command.digest)


def trust_question(command: CustomCommand) -> str:
    """What the REPL asks before a project's command runs commands or allows tools."""
    parts = [f"{command.name} ({command.path}) is the project's code"]
    if command.shell_lines:
        parts.append("it runs: " + "; ".join(command.shell_lines))
    if command.allowed_tools:
        parts.append("it allows without asking: " + ", ".join(command.allowed_tools))
    return ". ".join(parts) + ". Allow this command in this project? [y/N] "


def untrusted_message(command: CustomCommand) -> str:
    """Why ``-p`` does not run ``command``, and how to allow it."""
    return (
        f"{command.name} ({command.path}) runs commands or allows tools, and this project's "
        "commands need your approval first: run it once in the REPL (agent) and allow it"
    )


@contextlib.contextmanager
def allowed_tools(agent: Agent, command: CustomCommand | None) -> Iterator[None]:
    """While inside, ``command``'s ``allowed-tools`` rules allow too."""
    if agent.permissions is None or command is None or not command.allowed_tools:
        yield
        return
    with agent.permissions.allowing(command.allowed_tools):
        yield


async def with_shell_output(text: str, agent: Agent) -> str:
    """``text`` with each ``!`cmd``` replaced by the command's output (or its failure).

    Each runs as run_command does: safety policy, hooks, rules, sandbox, approval.
    """
    outputs: list[str] = []
    for found in SHELL_LINE.finditer(text):
        call = ToolUseBlock(
            id=f"command_{next(_ids)}", name="run_command", input={"command": found.group(1)}
        )
        result = await agent.tools.execute(call)
        outputs.append(result.content)
    replaced = iter(outputs)
    return SHELL_LINE.sub(lambda _: next(replaced), text)


async def command_prompts(
    command: CustomCommand, arguments: str, agent: Agent
) -> AsyncIterator[str | None]:
    """``agent -p "/name args"``: the command's one prompt, its ``allowed-tools`` holding
    until the turn that answers it ends (the consumer runs it between the yield and the next
    ask)."""
    with allowed_tools(agent, command):
        text = command.render(arguments)
        if command.shell_lines:
            text = await with_shell_output(text, agent)
        refused = agent.permissions.refuses_read if agent.permissions is not None else None
        yield expand_now(text, agent.workspace, refused).prompt

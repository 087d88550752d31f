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

from agent.permissions.listing import unknown_tool_warning
from agent.permissions.plan import INSTRUCTION
from agent.session import Agent
from agent.terminal.custom_commands import SHELL_LINE, CustomCommand, find_commands
from agent.terminal.mentions import expand_now
from providers import Notice
from providers.messages import ToolUseBlock
from tools.mcp import ProjectApprovals

INIT_PROMPT = (
    "Look at this repository and write an AGENTS.md at its root for coding agents that will "
    "work here. Read the build and CI files (pyproject.toml, package.json, Makefile, "
    "Cargo.toml, go.mod, .github/workflows, ...), the README, and any CLAUDE.md, .cursorrules "
    "or .github/copilot-instructions.md. Write down: the commands to build, to run all tests "
    "and a single test, to lint and format; the layout (the main directories and what they "
    "hold); the conventions the code follows that one file does not show. Be short and "
    "specific to this repository, no generic advice. If AGENTS.md exists, improve it rather "
    "than starting over."
)
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


def init_prompt(arguments: str = "") -> str:
    """What ``/init`` sends, in the REPL and ``-p``: `INIT_PROMPT`, then what was typed after it."""
    return f"{INIT_PROMPT}\n\n{arguments}" if arguments.strip() else INIT_PROMPT


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
    for text in command.allowed_tools:
        if warning := unknown_tool_warning("allow", text, f"{command.name} allowed-tools"):
            agent.events(Notice(text=warning))
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


def names_a_path(prompt: str) -> bool:
    """Whether ``prompt``'s first word is a path (``/usr/bin/env explain``, ``/tmp``), sent
    as text, rather than a command name."""
    word = prompt.strip().split(maxsplit=1)[0] if prompt.strip() else ""
    return "/" in word[1:] or Path(word).exists()


def print_mode_prompts(
    prompt: str, commands: CustomCommands, agent: Agent
) -> AsyncIterator[str | None] | str | None:
    """``agent -p "/name args"``: the prompts a command makes (``/init``, ``/plan <request>``,
    a custom command), or why it cannot run, or None for a prompt to send as it is.

    ``/plan`` turns plan mode on for the run: the model looks and answers with a plan, and
    nothing is changed (nobody is there to approve it; the plan is the result).
    """
    if not prompt.startswith("/") or names_a_path(prompt):
        return None
    name, _, arguments = prompt.strip().partition(" ")
    name, arguments = name.lower(), arguments.strip()
    if name == "/init":
        return _once(init_prompt(arguments))
    if name == "/plan":
        if not arguments:
            return '/plan needs a request in -p: agent -p "/plan add a --verbose flag"'
        if agent.permissions is None:
            return "/plan needs the permission check, which this agent runs without"
        refused = agent.permissions.refuses_read
        expanded = expand_now(arguments, agent.workspace, refused)
        if problem := "; ".join(expanded.problems) or agent.attach_images(expanded.images):
            return problem
        agent.permissions.modes.switch("plan")
        return _once(f"{INSTRUCTION}\n\n{expanded.prompt}")
    found = commands.lookup(prompt)
    if found is None:
        names = ", ".join(sorted(commands.found)) or "none in .agent/commands or .claude/commands"
        return (
            f"{name} is not a command -p runs. It runs /init, /plan <request>, /doctor and the "
            f"custom commands ({names}); the REPL's other commands work only in the REPL. To send "
            "text that starts with a slash, start it with a space."
        )
    if not commands.trusted(found[0]):
        return untrusted_message(found[0])
    return command_prompts(*found, agent)


async def _once(prompt: str) -> AsyncIterator[str | None]:
    yield prompt


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

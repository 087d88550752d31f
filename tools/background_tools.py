"""The model's side of background commands: starting one (``run_command`` with
``run_in_background``), ``command_output`` (Claude Code's ``BashOutput``) and
``kill_command`` (``KillShell``)."""

from __future__ import annotations

import re2
from pydantic import BaseModel, Field

from tools.background import BackgroundShell, BackgroundShells
from tools.base import Tool, ToolContext, ToolError, ToolOutput
from tools.blocking import in_worker
from tools.guard.sandbox import Sandbox
from tools.settings import ToolSettings

FIRST_OUTPUT_WAIT = 1.0
"""Seconds a start waits for the command's first output (or its end) before returning."""
_BURST = 0.2
"""Seconds more, once output came, for the rest of its first burst."""


async def start_in_background(
    shells: BackgroundShells, sandbox: Sandbox, command: str, ctx: ToolContext
) -> ToolOutput:
    """Start ``command`` under ``sandbox`` and return its id and first output."""
    try:
        shell = shells.start(
            command,
            sandbox.argv(command, ctx.workspace),
            cwd=ctx.workspace,
            env=sandbox.environment(),  # without the provider keys and other secrets
            emit=ctx.emit,
        )
    except OSError as exc:
        raise ToolError(f"could not start bash: {exc}") from None
    if await in_worker(shell.stirred.wait, FIRST_OUTPUT_WAIT) and not shell.eof.is_set():
        await in_worker(shell.eof.wait, _BURST)  # the rest of the first burst
    if shell.eof.is_set():  # the output ended: so, nearly always, did the command
        await in_worker(shell.wait, _BURST)
    read = await shells.read(shell, None, ctx.redact)
    head = f"Started in the background as {shell.id} (pid {shell.pid})."
    if read.status != "running":
        head = f"{shell.id} ended at once: {read.status}."
    tail = (
        f"Read new output with command_output (shell_id {shell.id!r}); stop it with "
        "kill_command. It stops when the agent exits."
    )
    body = read.text.rstrip("\n")
    text = f"{head}\n{body}\n{tail}" if body else f"{head}\n(no output yet)\n{tail}"
    return ToolOutput(text, is_error=shell.process.returncode not in (None, 0))


def _known(shells: BackgroundShells, shell_id: str) -> BackgroundShell:
    shell = shells.get(shell_id)
    if shell is None:
        ids = ", ".join(shells.ids) or "none"
        raise ToolError(
            f"there is no background command {shell_id[:60]!r} (started ones: {ids})",
            hint="use a shell_id that run_command with run_in_background returned",
        )
    return shell


class CommandOutputInput(BaseModel):
    shell_id: str = Field(description="The id run_command returned, e.g. bash_1.")
    filter: str | None = Field(
        default=None,
        description="Optional regular expression (RE2): only matching lines are returned; "
        "the others are skipped for good.",
    )


class CommandOutput(Tool[CommandOutputInput]):
    name = "command_output"
    description = (
        "Read the output of a background command (run_command with run_in_background) that "
        "is new since the last read, and its status: running, or how it ended."
    )
    input_model = CommandOutputInput
    kind = "read"

    def __init__(self, shells: BackgroundShells) -> None:
        self._shells = shells

    def summary(self, args: CommandOutputInput) -> str:
        return f"output of {args.shell_id[:60]}"

    async def run(self, args: CommandOutputInput, ctx: ToolContext) -> ToolOutput:
        pattern = None
        if args.filter:
            try:
                pattern = re2.compile(args.filter)
            except re2.error as exc:
                raise ToolError(
                    f"filter is not a valid regular expression: {exc}",
                    hint="pass an RE2 pattern (no backreferences or lookaround)",
                ) from None
        shell = _known(self._shells, args.shell_id)
        read = await self._shells.read(shell, pattern, ctx.redact)
        body = read.text.rstrip("\n") or "(no new output)"
        return ToolOutput(f"{body}\n[{shell.id}: {read.status}]")


class KillCommandInput(BaseModel):
    shell_id: str = Field(description="The id run_command returned, e.g. bash_1.")


class KillCommand(Tool[KillCommandInput]):
    name = "kill_command"
    description = (
        "Stop a background command (run_command with run_in_background) and every process "
        "it started: SIGTERM, then SIGKILL after 2 seconds."
    )
    input_model = KillCommandInput
    kind = "read"

    def __init__(self, shells: BackgroundShells) -> None:
        self._shells = shells

    def summary(self, args: KillCommandInput) -> str:
        return f"stop {args.shell_id[:60]}"

    def timeout(self, args: KillCommandInput, settings: ToolSettings) -> float:
        return 15.0

    async def run(self, args: KillCommandInput, ctx: ToolContext) -> ToolOutput:
        shell = _known(self._shells, args.shell_id)
        if not shell.running:
            return ToolOutput(f"{shell.id} was not running: {shell.status()}.")
        status = await self._shells.stop(shell, "kill_command")
        return ToolOutput(f"{shell.id} ({status}).")

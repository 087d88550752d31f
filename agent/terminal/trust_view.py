"""``agent trust``: allow what a repository's ``agent.yaml`` holds back, from the shell."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from agent.exit_codes import ExitCode
from agent.setup.startup import Options, SetupError, boot
from agent.terminal.console import SafeConsole


def trust_project(workspace: Path) -> int:
    """``agent trust``: allow what ``workspace/agent.yaml`` holds back; the exit code."""
    console = SafeConsole(highlight=False)
    try:
        trust = boot(Options(workspace=workspace)).trust
    except SetupError as error:
        console.print(Text(f"agent: {error}", style="red"))
        return ExitCode.USAGE
    held = trust.held
    if held is None:
        console.print("Nothing in ./agent.yaml waits for approval here.")
        return ExitCode.OK
    try:
        trust.allow(held)
    except OSError as error:
        console.print(Text(f"agent: cannot save the approval: {error}", style="red"))
        return ExitCode.USAGE
    console.print(f"Allowed for {workspace}:")
    for line in held.lines():
        console.print(Text(f"  {line}"))
    return ExitCode.OK

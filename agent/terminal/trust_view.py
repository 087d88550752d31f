"""``agent trust``: show what a repository's ``agent.yaml`` and Claude Code settings files hold
back (what would loosen the person's own configuration), ask, then allow it."""

from __future__ import annotations

import sys
from pathlib import Path

from prompt_toolkit import PromptSession
from rich.console import Console
from rich.text import Text

from agent.exit_codes import ExitCode
from agent.setup.startup import Options, SetupError, boot
from agent.setup.trust import ProjectTrust
from agent.terminal.console import SafeConsole


def trust_project(workspace: Path, *, yes: bool = False, console: Console | None = None) -> int:
    """``agent trust``: allow what ``workspace/agent.yaml`` and ``.claude/settings*.json``
    hold back; the exit code.

    What would be granted is shown first; the person is asked unless ``yes`` (``--yes``).
    Without a terminal to ask on and without ``--yes``, nothing is granted.
    """
    console = console or SafeConsole(highlight=False)
    try:
        trust = boot(Options(workspace=workspace)).trust
    except SetupError as error:
        console.print(Text(f"agent: {error}", style="red"))
        return ExitCode.USAGE
    held = trust.held
    if held is None:
        console.print("Nothing in ./agent.yaml or .claude/settings*.json waits for approval here.")
        return ExitCode.OK
    console.print(f"{held.path} asks to be allowed, for {workspace}, to set:")
    for line in held.lines():
        console.print(Text(f"  {line}"))
    if not yes and not _asked_and_allowed():
        console.print(Text("Not allowed; nothing changed.", style="yellow"))
        return ExitCode.FAILED
    try:
        trust.allow(held)
    except OSError as error:
        console.print(Text(f"agent: cannot save the approval: {error}", style="red"))
        return ExitCode.USAGE
    console.print(Text(f"Allowed for {workspace}.", style="green"))
    return ExitCode.OK


def _asked_and_allowed() -> bool:
    if not sys.stdin.isatty():
        sys.stderr.write("agent: stdin is not a terminal to ask on; run `agent trust --yes`.\n")
        return False
    try:
        answer = PromptSession[str]().prompt("Allow this? [y/N] ")
    except (KeyboardInterrupt, EOFError):
        return False
    return answer.strip().lower() in ("y", "yes")


def ask_to_trust(console: Console, trust: ProjectTrust) -> bool:
    """At the REPL's start: ask whether the workspace's agent.yaml may apply what it holds
    back; True if allowed."""
    held = trust.held
    assert held is not None
    console.print(Text(f"{held.path} wants to:", style="yellow"))
    for line in held.lines():
        console.print(Text(f"  {line}", style="yellow"))
    try:
        answer = PromptSession[str]().prompt("Allow this for this directory? [y/N] ")
    except (KeyboardInterrupt, EOFError):
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        console.print(Text("Not applied; `agent trust` allows it later.", style="dim"))
        return False
    try:
        trust.allow(held)
    except OSError as error:
        console.print(Text(f"Cannot save the approval ({error}); applied for now.", style="red"))
    return True

"""``agent doctor`` (and ``agent -p /doctor``): the REPL's ``/doctor`` checks, from a shell.

The agent is built as a run would build it (configuration, model chain, sandbox, MCP
servers), checked, and closed again without a session left behind. The exit code says
whether anything is broken, so a script or CI can run it: 0 when every check passed or only
warned, 1 when one failed, 2 when the configuration itself cannot be used.
"""

from __future__ import annotations

import asyncio
import os

from rich.console import Console
from rich.text import Text

from agent.app import build_agent
from agent.engine.face import Faces
from agent.exit_codes import ExitCode
from agent.setup.doctor import Finding
from agent.setup.startup import Options, SetupError, boot
from agent.terminal.console import SafeConsole
from agent.terminal.repl_view import doctor_table


def run_doctor(options: Options, console: Console | None = None) -> int:
    """Run every check, print one line each (with the fix where one is needed); the exit
    code: `ExitCode.FAILED` if a check failed, `ExitCode.USAGE` if the setup cannot load."""
    console = console or SafeConsole(highlight=False, no_color=bool(os.environ.get("NO_COLOR")))
    try:
        started = boot(options, dict(os.environ))
        agent = build_agent(
            started.config,
            options,
            face=Faces([]),
            approver=None,
            environ=started.environ,
            redactor=started.redactor,
        )
    except SetupError as problem:
        console.print(Text(f"✗ configuration — {problem}", style="red"))
        return ExitCode.USAGE
    try:
        findings = asyncio.run(agent.doctor())
    except KeyboardInterrupt:
        console.print(Text("Interrupted.", style="yellow"))
        return ExitCode.INTERRUPTED
    finally:
        agent.close()
    console.print(doctor_table(findings))
    return verdict(findings, console)


def verdict(findings: list[Finding], console: Console) -> int:
    """Say how many checks failed or warned; the exit code for that."""
    errors = sum(finding.level == "error" for finding in findings)
    warnings = sum(finding.level == "warning" for finding in findings)
    if errors:
        failed = "1 check failed" if errors == 1 else f"{errors} checks failed"
        console.print(Text(f"{failed}; the fix is on its line above.", style="red"))
        return ExitCode.FAILED
    note = "" if not warnings else " (1 warning)" if warnings == 1 else f" ({warnings} warnings)"
    console.print(Text(f"Everything needed works{note}.", style="green"))
    return ExitCode.OK

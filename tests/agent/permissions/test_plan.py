"""Plan mode: which calls may run before the person approves the plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.permissions.plan import PlanAwareSandbox, plan_refusal
from tools.guard.sandbox import Sandbox, SandboxMode


@pytest.mark.parametrize(
    "command",
    ["ls -la", "git status", "git log --oneline | head", "grep -rn foo src && wc -l x", "find ."],
)
def test_read_only_commands_run(command: str) -> None:
    assert plan_refusal("run_command", "command", command) is None


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "ls > listing.txt",
        "git commit -am x",
        "git branch -D main",
        "find . -delete",
        "cat x | sh",
        "echo $(touch y)",
        "sed -i s/a/b/ f",
        "env rm x",
        "sort -o out in",
    ],
)
def test_commands_that_may_change_things_are_refused(command: str) -> None:
    assert plan_refusal("run_command", "command", command) is not None


def test_edits_and_mcp_tools_are_refused_and_reads_run() -> None:
    assert plan_refusal("edit_file", "edit", None) is not None
    assert plan_refusal("mcp__github__create_issue", "command", None) is not None
    assert plan_refusal("read_file", "read", None) is None


def test_an_mcp_tool_runs_only_when_the_person_marked_it_read_only() -> None:
    marked = ["mcp__github__get_*"]
    # "read" is what the server's readOnlyHint made it: its claim, not the person's.
    refused = plan_refusal("mcp__github__list_issues", "read", None, marked)
    assert refused is not None
    assert "permissions.read_only_tools" in refused
    assert "mcp__github__list_*" in refused  # a pattern to copy
    assert plan_refusal("mcp__github__get_issue", "read", None, marked) is None
    assert plan_refusal("mcp__github__get_issue", "command", None, marked) is None
    assert "mcp__x__*" in (plan_refusal("mcp__x__ping", "read", None) or "")


def test_commands_run_read_only_while_planning(tmp_path: Path) -> None:
    planning = [False]
    sandbox = PlanAwareSandbox.around(
        Sandbox(SandboxMode.WORKSPACE_WRITE, abi=1), lambda: planning[0]
    )

    assert str(tmp_path) in sandbox.argv("ls", tmp_path)  # the workspace is writable
    planning[0] = True
    argv = sandbox.argv("ls", tmp_path)
    assert str(tmp_path) not in argv
    assert argv[-3:] == ["bash", "-c", "ls"]
    planning[0] = False
    assert str(tmp_path) in sandbox.argv("ls", tmp_path)

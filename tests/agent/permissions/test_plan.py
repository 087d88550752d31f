"""Plan mode: which calls may run before the person approves the plan."""

from __future__ import annotations

import pytest

from agent.permissions.plan import plan_refusal


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

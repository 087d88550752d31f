"""Plan mode: which calls may run before the person approves the plan."""

from __future__ import annotations

import io
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.permissions.plan import (
    PLAN_DENIED_HINT,
    PlanAwareSandbox,
    plan_guard_note,
    plan_refusal,
)
from agent.terminal.permissions_view import permissions_table
from tools.guard.sandbox import Sandbox, SandboxMode, SandboxSettings


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


def _listener() -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    return listener


def _connected(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except BlockingIOError:
        return False
    return True


CONNECT = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5)"


@pytest.mark.parametrize("mode", [SandboxMode.WORKSPACE_WRITE, SandboxMode.OFF])
def test_a_plan_mode_command_can_neither_write_nor_connect(
    mode: SandboxMode, workspace: Path
) -> None:
    sandbox = Sandbox.create(SandboxSettings(mode=mode))
    planning = [True]
    plan = PlanAwareSandbox.around(sandbox, lambda: planning[0])
    if not plan.planning.blocks_network:
        pytest.skip(f"this kernel cannot block TCP ({plan.planning.describe()})")
    with _listener() as listener:
        port = str(listener.getsockname()[1])
        command = f'touch made; {shlex.quote(sys.executable)} -c "{CONNECT}" {port}'

        denied = subprocess.run(plan.argv(command, workspace), cwd=workspace, check=False)

        assert denied.returncode != 0
        assert not (workspace / "made").exists()
        assert not _connected(listener)
        assert plan.enforced  # so a refused write gets plan mode's hint
        assert plan.denied_hint() == PLAN_DENIED_HINT

        planning[0] = False  # the same command, after the plan is approved
        allowed = subprocess.run(plan.argv(command, workspace), cwd=workspace, check=False)

        assert allowed.returncode == 0
        assert (workspace / "made").exists()
        assert _connected(listener)
        assert plan.denied_hint() != PLAN_DENIED_HINT


def test_without_a_kernel_layer_plan_mode_says_the_list_is_the_only_guard() -> None:
    bare = Sandbox(SandboxMode.WORKSPACE_WRITE, abi=0, namespaces_missing="no user namespaces")
    note = plan_guard_note(bare)
    assert note is not None
    assert "the only guard" in note
    shown = io.StringIO()
    Console(file=shown, width=100).print(permissions_table([], plan_note=plan_guard_note(bare)))
    assert "list of read-only programs is the only guard" in " ".join(shown.getvalue().split())
    assert plan_guard_note(Sandbox(SandboxMode.WORKSPACE_WRITE, abi=4)) is None
    assert plan_guard_note(Sandbox(SandboxMode.READ_ONLY, namespaces=True)) is None


@pytest.mark.parametrize(
    "command",
    [
        "sort -o out in",
        "sort -oout in",
        "sort -uo out in",
        "sort --output=out in",
        "sort --output out in",
        "sort --compress-program=sh in",
        "uniq in out",
        "find . -fprint out",
        "find . -fprint0 out",
        "find . -fprintf out %p",
        "find . -fls out",
        "find . -exec cat {} ;",
        "find . -execdir cat {} +",
        "find . -name x -delete",
        "git diff --output=out",
        "git log --output out",
        "git show --output=out HEAD",
        "git grep -O foo",
        "git grep -Ocurl foo",
        "git grep --open-files-in-pager=curl foo",
        "git -c core.pager=sh log",
        "git diff --ext-diff",
        "git push",
        "git -C sub commit -m x",
        "file -C -m magic",
        "tree -o out",
        "rg --pre ./evil foo",
        "fd -x rm",
        "./ls",
        "bin/grep foo x",
        "./bin/cat x",
        "~/bin/ls",
        "$HOME/bin/ls",
        "LD_PRELOAD=./evil.so ls",
        "GIT_EXTERNAL_DIFF=./evil git diff",
        "env ls",
        "sudo ls",
        "ls > out",
        "ls 2> err",
        "ls >> out",
        "cat x | tee out",
        "echo $(rm x)",
        "bash -c ls",
        "eval ls",
        "$cmd",
        "grep x f | xargs rm",
        "cat <(touch y)",
        "ls; touch x",
    ],
)
def test_options_that_write_or_run_and_programs_by_path_are_refused(command: str) -> None:
    why = plan_refusal("run_command", "command", command)
    assert why is not None
    assert why.startswith("plan mode:")


@pytest.mark.parametrize(
    "command",
    [
        "/usr/bin/grep foo x",
        "LANG=C sort x",
        "time ls",
        "git log --oneline -5",
        "git diff HEAD~1 -- a.py",
        "ls 2>/dev/null",
        "grep -r foo . | sort | uniq -c",
        "find . -name '*.py' -print",
        "git grep -n foo",
        "git -C sub --no-pager log -3",
        "sort -k2 -t, x",
        "uniq -c x",
        "grep foo x | xargs grep bar",
        "cat <<EOF\nhello\nEOF",
    ],
)
def test_read_only_commands_with_harmless_options_run(command: str) -> None:
    assert plan_refusal("run_command", "command", command) is None


def test_the_refusal_names_the_part_that_writes() -> None:
    why = plan_refusal("run_command", "command", "git log --output=notes.txt")
    assert why is not None
    assert "--output" in why
    why = plan_refusal("run_command", "command", "./ls -la")
    assert why is not None
    assert "./ls" in why


def test_the_todo_list_may_be_written_in_plan_mode() -> None:
    from tools.todos import TodoWrite

    assert plan_refusal(TodoWrite.name, TodoWrite.kind, None) is None

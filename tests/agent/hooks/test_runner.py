"""One hook run: exit codes, JSON output, timeouts, crashes and huge output."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from agent.hooks import CommandHook, HookVerdict, parse_output, run_hook
from tests.agent.hooks.conftest import HookScripts

PAYLOAD = {"hook_event_name": "PreToolUse", "tool_name": "Bash"}


async def run(
    command: str, cwd: Path, timeout: float = 60.0, limit: int = 64 * 1024
) -> HookVerdict:
    hook = CommandHook(command=command, timeout=timeout)
    return await run_hook(hook, PAYLOAD, cwd=cwd, env=dict(os.environ), limit=limit)


async def test_exit_2_blocks_with_stderr_as_the_reason(
    scripts: HookScripts, tmp_path: Path
) -> None:
    command = scripts.command("sys.stderr.write('no pushing'); sys.exit(2)")
    verdict = await run(command, tmp_path)
    assert verdict.block == "no pushing"
    assert verdict.error is None


async def test_other_exit_codes_are_non_blocking_errors(
    scripts: HookScripts, tmp_path: Path
) -> None:
    verdict = await run(scripts.command("sys.stderr.write('boom'); sys.exit(1)"), tmp_path)
    assert verdict.block is None
    assert "exit code 1" in str(verdict.error)
    assert "boom" in str(verdict.error)


async def test_a_crashing_hook_is_a_non_blocking_error(
    scripts: HookScripts, tmp_path: Path
) -> None:
    verdict = await run(scripts.command("raise RuntimeError('bug in hook')"), tmp_path)
    assert verdict.block is None
    assert "bug in hook" in str(verdict.error)


async def test_a_missing_command_is_a_non_blocking_error(tmp_path: Path) -> None:
    verdict = await run("/no/such/hook-command", tmp_path)
    assert verdict.block is None
    assert verdict.error is not None


async def test_garbage_json_is_a_non_blocking_error(scripts: HookScripts, tmp_path: Path) -> None:
    verdict = await run(scripts.command("print('{not json')"), tmp_path)
    assert verdict.block is None
    assert "does not parse" in str(verdict.error)


async def test_a_hanging_hook_and_its_children_are_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # A shell, not Python: it starts its child in milliseconds even on a loaded machine.
    command = f"sleep 300 & echo $! > {shlex.quote(str(pid_file))}; wait"
    verdict = await run(command, tmp_path, timeout=1.0)
    assert "timed out" in str(verdict.error)
    assert verdict.block is None
    child = int(pid_file.read_text())
    # The whole process group was killed: the grandchild is gone (or a zombie of init).
    status = Path(f"/proc/{child}/status")
    assert not status.exists() or "zombie" in status.read_text()


async def test_a_hook_that_never_reads_stdin_still_works(tmp_path: Path) -> None:
    verdict = await run("exit 2", tmp_path)
    assert verdict.block is not None


async def test_huge_output_is_read_but_bounded(scripts: HookScripts, tmp_path: Path) -> None:
    command = scripts.command(
        "sys.stderr.write('e' * 5_000_000); sys.stdout.write('x' * 5_000_000); sys.exit(2)"
    )
    verdict = await run(command, tmp_path, limit=1000)
    assert verdict.block == "e" * 1000


def test_json_output_fields() -> None:
    verdict = parse_output(
        '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",'
        ' "permissionDecisionReason": "check", "updatedInput": {"command": "ls"},'
        ' "additionalContext": "ctx"}, "systemMessage": "hi"}'
    )
    assert verdict.permission == "ask"
    assert verdict.permission_reason == "check"
    assert verdict.updated_input == {"command": "ls"}
    assert verdict.context == "ctx"
    assert verdict.message == "hi"
    assert verdict.block is None


def test_deny_block_and_continue_false() -> None:
    deny = parse_output(
        '{"hookSpecificOutput": {"permissionDecision": "deny",'
        ' "permissionDecisionReason": "not here"}}'
    )
    assert deny.block == "not here"
    assert parse_output('{"decision": "block", "reason": "tests fail"}').block == "tests fail"
    stop = parse_output('{"continue": false, "stopReason": "enough"}')
    assert stop.stop == "enough"
    assert parse_output('{"decision": "approve"}').permission == "allow"


def test_plain_stdout_is_context() -> None:
    assert parse_output("remember the tests\n").context == "remember the tests"
    assert parse_output("").context is None

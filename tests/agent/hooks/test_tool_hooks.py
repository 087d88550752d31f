"""PreToolUse through the real `ToolExecutor`: block, deny, allow, ask, rewrite, matchers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.hooks import HookMatcher
from agent.permissions.modes import Modes
from providers import Event, ToolResultBlock
from tests.agent.hooks.conftest import HookScripts, make_hooks, records, settings
from tests.tools.conftest import RecordingApprover, call
from tools import ApprovalMode, Approver, ToolExecutor, ToolRefused, ToolSettings


def executor(
    workspace: Path,
    home: Path,
    config: dict[str, list[HookMatcher]],
    *,
    approval: ApprovalMode = "full-auto",
    approver: Approver | None = None,
) -> tuple[ToolExecutor, list[Event]]:
    events: list[Event] = []
    hooks = make_hooks(config, workspace, events, modes=Modes(approval))
    tools = ToolExecutor(
        workspace=workspace,
        settings=ToolSettings(),
        approval=approval,
        approver=approver,
        events=events.append,
        hooks=[hooks.before_tool],
        home=home,
    )
    tools.begin_turn()
    return tools, events


async def write(tools: ToolExecutor, path: str = "a.txt", content: str = "hi") -> ToolResultBlock:
    return await tools.execute(call("write_file", path=path, content=content))


def decision(permission: str, **extra: Any) -> str:
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": permission,
            **extra,
        }
    }
    return f"print(json.dumps({output!r}))"


async def test_exit_2_refuses_and_the_model_reads_stderr(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    command = scripts.command("sys.stderr.write('writes are frozen today'); sys.exit(2)")
    tools, events = executor(workspace, decoy_home, settings("PreToolUse", command, "Write"))
    result = await write(tools)
    assert result.is_error
    assert "writes are frozen today" in result.content
    assert not (workspace / "a.txt").exists()
    assert [e.by for e in events if isinstance(e, ToolRefused)] == ["hook"]


async def test_json_decision_block_refuses(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    command = scripts.command("print(json.dumps({'decision': 'block', 'reason': 'use the API'}))")
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", command))
    result = await write(tools)
    assert "use the API" in result.content
    assert not (workspace / "a.txt").exists()


async def test_deny_is_honoured_in_full_auto(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    command = scripts.command(decision("deny", permissionDecisionReason="not in CI"))
    tools, _ = executor(
        workspace, decoy_home, settings("PreToolUse", command), approval="full-auto"
    )
    result = await write(tools)
    assert result.is_error
    assert "not in CI" in result.content
    assert not (workspace / "a.txt").exists()


async def test_allow_skips_the_approval_prompt(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    approver = RecordingApprover(answer=False)
    command = scripts.command(decision("allow"))
    tools, _ = executor(
        workspace, decoy_home, settings("PreToolUse", command), approval="ask", approver=approver
    )
    result = await write(tools)
    assert not result.is_error
    assert approver.requests == []
    assert (workspace / "a.txt").read_text() == "hi"


async def test_allow_never_skips_the_safety_policy(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    tools, _ = executor(
        workspace, decoy_home, settings("PreToolUse", scripts.command(decision("allow")))
    )
    result = await write(tools, path="../outside.txt")
    assert result.is_error
    assert not (workspace.parent / "outside.txt").exists()


async def test_ask_forces_the_prompt_even_in_full_auto(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    approver = RecordingApprover(answer=True)
    command = scripts.command(decision("ask", permissionDecisionReason="double-check"))
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", command), approver=approver)
    result = await tools.execute(call("read_file", path="missing.txt"))
    assert [r.tool for r in approver.requests] == ["read_file"]
    assert "[hook: double-check]" in approver.requests[0].summary
    assert "Refused" not in result.content


async def test_ask_with_nobody_to_ask_is_a_refusal(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    tools, _ = executor(
        workspace, decoy_home, settings("PreToolUse", scripts.command(decision("ask")))
    )
    result = await write(tools)
    assert result.is_error
    assert "a hook asked for it" in result.content
    assert not (workspace / "a.txt").exists()


async def test_updated_input_replaces_the_arguments(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    body = decision("allow", updatedInput={"path": "b.txt", "content": "rewritten"})
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", scripts.command(body)))
    result = await write(tools)
    assert not result.is_error
    assert (workspace / "b.txt").read_text() == "rewritten"
    assert not (workspace / "a.txt").exists()


async def test_an_invalid_rewrite_is_rejected_by_validation(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    body = decision("allow", updatedInput={"path": "b.txt", "content": 42, "bogus": True})
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", scripts.command(body)))
    result = await write(tools)
    assert result.is_error
    assert "rewrote the input" in result.content
    assert not (workspace / "a.txt").exists()
    assert not (workspace / "b.txt").exists()


async def test_a_rewrite_is_checked_by_the_safety_policy_again(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    body = decision("allow", updatedInput={"path": "../escape.txt", "content": "x"})
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", scripts.command(body)))
    result = await write(tools)
    assert result.is_error
    assert not (workspace.parent / "escape.txt").exists()


async def test_a_failing_hook_never_fails_the_call(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    command = scripts.command("print('{garbage'); sys.exit(0)")
    tools, events = executor(workspace, decoy_home, settings("PreToolUse", command, timeout=5))
    result = await write(tools)
    assert not result.is_error
    notices = [e.describe() for e in events if e.type == "notice"]
    assert any("does not parse" in text for text in notices)


@pytest.mark.parametrize(
    ("matcher", "matched"),
    [
        ("Write", ["write_file"]),
        ("write_file", ["write_file"]),
        ("Read|Write", ["write_file", "read_file"]),
        ("Bash", []),
        ("*", ["write_file", "read_file"]),
        ("", ["write_file", "read_file"]),
        ("(Read|Glob).*", ["read_file"]),
        ("read_.*", ["read_file"]),
        ("Writ", []),
    ],
)
async def test_matchers_take_claude_names_ours_and_regexes(
    scripts: HookScripts, workspace: Path, decoy_home: Path, matcher: str, matched: list[str]
) -> None:
    command, out = scripts.recorder("pre")
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", command, matcher))
    await write(tools)
    await tools.execute(call("read_file", path="a.txt"))
    names = {"Write": "write_file", "Read": "read_file"}
    assert [names[r["tool_name"]] for r in records(out)] == matched


async def test_pre_tool_use_stdin(scripts: HookScripts, workspace: Path, decoy_home: Path) -> None:
    command, out = scripts.recorder("pre")
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", command))
    block = call("write_file", path="a.txt", content="hi")
    await tools.execute(block)
    [record] = records(out)
    assert record == {
        "session_id": "sess-1",
        "transcript_path": str(workspace / "session.jsonl"),
        "cwd": str(workspace),
        "hook_event_name": "PreToolUse",
        "permission_mode": "bypassPermissions",
        "tool_name": "Write",
        "tool_input": {"path": "a.txt", "content": "hi", "file_path": "a.txt"},
        "tool_use_id": block.id,
    }


async def test_a_claude_code_rewrite_of_file_path_moves_the_write(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    # As a Claude Code hook rewrites: the input it got, with file_path changed.
    body = decision(
        "allow", updatedInput={"path": "a.txt", "file_path": "b.txt", "content": "moved"}
    )
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", scripts.command(body)))
    result = await write(tools)
    assert not result.is_error, result.content
    assert (workspace / "b.txt").read_text() == "moved"
    assert not (workspace / "a.txt").exists()


async def test_the_documented_hook_forbids_git_push(workspace: Path, decoy_home: Path) -> None:
    text = (Path(__file__).parents[3] / "docs" / "hooks.md").read_text()
    example = text.split("<!-- no-push.sh -->\n```sh\n", 1)[1].split("```", 1)[0]
    script = workspace.parent / "no-push.sh"
    script.write_text(example)
    script.chmod(0o755)
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", str(script), "Bash"))
    refused = await tools.execute(call("run_command", command="git push origin main"))
    assert refused.is_error
    assert "Refused: git push is not allowed here" in refused.content
    fine = await tools.execute(call("run_command", command="echo ok"))
    assert not fine.is_error, fine.content
    assert "not allowed" not in fine.content
    assert "ok" in fine.content


async def test_continue_false_refuses_the_call(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    body = "print(json.dumps({'continue': False, 'stopReason': 'budget spent'}))"
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", scripts.command(body)))
    result = await write(tools)
    assert result.is_error
    assert "budget spent" in result.content
    assert not (workspace / "a.txt").exists()


async def test_a_todowrite_matcher_sees_the_plan_under_claude_codes_name(
    scripts: HookScripts, workspace: Path, decoy_home: Path
) -> None:
    command, out = scripts.recorder("pre")
    tools, _ = executor(workspace, decoy_home, settings("PreToolUse", command, "TodoWrite"))
    todos = [{"content": "Test", "status": "in_progress", "activeForm": "Testing"}]
    result = await tools.execute(call("todo_write", todos=todos))
    assert not result.is_error, result.content
    await tools.execute(call("read_file", path="missing.txt"))
    [record] = records(out)
    assert (record["tool_name"], record["tool_input"]) == ("TodoWrite", {"todos": todos})

"""Every event's stdin JSON and what its answer does, through `Hooks` and its face."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.engine.face import Face, Faces
from agent.engine.outcome import TurnEnded, TurnStatus
from agent.hooks import Hooks
from compaction import CompactionStarted
from compaction.events import Reason
from providers import ErrorKind, Event, Notice, ToolResultBlock, ToolUseBlock
from recovery.events import FallbackActivated, GaveUp
from tests.agent.hooks.conftest import HookScripts, make_hooks, records, settings
from tools import ToolRefused

COMMON = {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"}


def recorded(
    scripts: HookScripts, event: str, workspace: Path, matcher: str = ""
) -> tuple[Hooks, Path, list[Event]]:
    command, out = scripts.recorder(event)
    events: list[Event] = []
    return make_hooks(settings(event, command, matcher), workspace, events), out, events


def only(out: Path, event: str) -> dict[str, Any]:
    [record] = records(out)
    assert set(record) >= COMMON
    assert record["hook_event_name"] == event
    return {key: value for key, value in record.items() if key not in COMMON}


async def test_user_prompt_submit(scripts: HookScripts, workspace: Path) -> None:
    hooks, out, _ = recorded(scripts, "UserPromptSubmit", workspace)
    assert await hooks.user_prompt("fix the bug") == (None, None)
    assert only(out, "UserPromptSubmit") == {"prompt": "fix the bug"}


async def test_user_prompt_blocked_or_given_context(scripts: HookScripts, workspace: Path) -> None:
    block = scripts.command("sys.stderr.write('no secrets in prompts'); sys.exit(2)")
    hooks = make_hooks(settings("UserPromptSubmit", block), workspace, [])
    assert await hooks.user_prompt("my key is sk-1") == ("no secrets in prompts", None)
    by_json = scripts.command("print(json.dumps({'decision': 'block', 'reason': 'not now'}))")
    hooks = make_hooks(settings("UserPromptSubmit", by_json), workspace, [])
    assert await hooks.user_prompt("x") == ("not now", None)
    context = scripts.command("print('the branch is release-2')")
    hooks = make_hooks(settings("UserPromptSubmit", context), workspace, [])
    assert await hooks.user_prompt("x") == (None, "the branch is release-2")


async def test_stop_and_its_block(scripts: HookScripts, workspace: Path) -> None:
    hooks, out, _ = recorded(scripts, "Stop", workspace)
    assert await hooks.stop(active=False, last_message="done") is None
    assert only(out, "Stop") == {"stop_hook_active": False, "last_assistant_message": "done"}
    keep_going = scripts.command(
        "print(json.dumps({'decision': 'block', 'reason': 'run the tests first'})"
        " if not data['stop_hook_active'] else '')"
    )
    hooks = make_hooks(settings("Stop", keep_going), workspace, [])
    assert await hooks.stop(active=False) == "run the tests first"
    assert await hooks.stop(active=True) is None


async def test_session_start_end_and_pre_compact(scripts: HookScripts, workspace: Path) -> None:
    hooks, out, _ = recorded(scripts, "SessionStart", workspace, matcher="resume")
    assert await hooks.session_start("startup", model="m") is None  # the matcher says resume
    assert records(out) == []
    await hooks.session_start("resume", model="anthropic:claude")
    assert only(out, "SessionStart") == {"source": "resume", "model": "anthropic:claude"}

    hooks, out, _ = recorded(scripts, "SessionEnd", workspace)
    await hooks.session_end("prompt_input_exit")
    assert only(out, "SessionEnd") == {"reason": "prompt_input_exit"}

    hooks, out, _ = recorded(scripts, "PreCompact", workspace)
    await hooks.pre_compact("manual", "keep the plan")
    assert only(out, "PreCompact") == {"trigger": "manual", "custom_instructions": "keep the plan"}


async def test_session_start_adds_context(scripts: HookScripts, workspace: Path) -> None:
    command = scripts.command(
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'SessionStart',"
        " 'additionalContext': 'open issues: 3'}}))"
    )
    hooks = make_hooks(settings("SessionStart", command), workspace, [])
    assert await hooks.session_start("startup") == "open issues: 3"


async def test_post_tool_use_from_the_face(scripts: HookScripts, workspace: Path) -> None:
    hooks, out, _ = recorded(scripts, "PostToolUse", workspace, matcher="Edit")
    face: Face = Faces([hooks])
    edit = ToolUseBlock(id="t1", name="edit_file", input={"path": "a.py"})
    face.on_tool_result(edit, ToolResultBlock(tool_use_id="t1", content="edited a.py"))
    other = ToolUseBlock(id="t2", name="read_file", input={"path": "a.py"})
    face.on_tool_result(other, ToolResultBlock(tool_use_id="t2", content="..."))
    await hooks.drain()
    assert only(out, "PostToolUse") == {
        "tool_name": "Edit",
        "tool_input": {"path": "a.py", "file_path": "a.py"},  # Claude Code's key too
        "tool_use_id": "t1",
        "tool_response": "edited a.py",
    }


async def test_post_tool_use_feedback_for_the_model(scripts: HookScripts, workspace: Path) -> None:
    command = scripts.command("sys.stderr.write('lint: line too long'); sys.exit(2)")
    hooks = make_hooks(settings("PostToolUse", command), workspace, [])
    call = ToolUseBlock(id="t1", name="write_file", input={"path": "a.py", "content": "x"})
    hooks.on_tool_result(call, ToolResultBlock(tool_use_id="t1", content="wrote a.py"))
    await hooks.drain()
    assert hooks.take_feedback() == ["PostToolUse hook on write_file: lint: line too long"]
    assert hooks.take_feedback() == []


async def test_post_tool_use_failure_but_not_for_a_refused_call(
    scripts: HookScripts, workspace: Path
) -> None:
    hooks, out, _ = recorded(scripts, "PostToolUseFailure", workspace)
    failed = ToolUseBlock(id="t1", name="run_command", input={"command": "false"})
    hooks.on_tool_result(failed, ToolResultBlock(tool_use_id="t1", content="exit 1", is_error=True))
    refused = ToolUseBlock(id="t2", name="run_command", input={"command": "rm -rf /"})
    hooks.on_event(ToolRefused(tool="run_command", tool_use_id="t2", reason="no", by="policy"))
    hooks.on_tool_result(
        refused, ToolResultBlock(tool_use_id="t2", content="Refused", is_error=True)
    )
    await hooks.drain()
    assert only(out, "PostToolUseFailure") == {
        "tool_name": "Bash",
        "tool_input": {"command": "false"},
        "tool_use_id": "t1",
        "error": "exit 1",
        "is_interrupt": False,
    }


async def test_notification_for_notices_but_not_the_hooks_own(
    scripts: HookScripts, workspace: Path
) -> None:
    command, out = scripts.recorder("Notification")
    failing = scripts.command("sys.exit(3)")
    events: list[Event] = []
    config = settings("Notification", command)
    config["Notification"] += settings("Notification", failing)["Notification"]
    hooks = make_hooks(config, workspace, events)
    hooks.on_event(Notice(text="the shared store fell back to this process"))
    await hooks.drain()
    for event in events:  # the failing hook's notice comes back through the bus
        hooks.on_event(event)
    await hooks.drain()
    assert only(out, "Notification") == {
        "message": "the shared store fell back to this process",
        "notification_type": "warning",
    }
    assert any("exit code 3" in e.describe() for e in events)


async def test_recovery_on_fallback_provider_unavailable_and_loop_stops(
    scripts: HookScripts, workspace: Path
) -> None:
    hooks, out, _ = recorded(scripts, "Recovery", workspace)
    hooks.on_event(FallbackActivated(from_model="a:big", to_model="a:small", reason="overloaded"))
    hooks.on_event(GaveUp(kind=ErrorKind.AUTH, requests=1, waited=0.0, message="invalid key"))
    hooks.on_event(GaveUp(kind=ErrorKind.CONTEXT_OVERFLOW, requests=1, waited=0.0, message="x"))
    hooks.on_event(TurnEnded(status=TurnStatus.MAX_STEPS, steps=50))
    hooks.on_event(TurnEnded(status=TurnStatus.DONE, steps=3))
    await hooks.drain()
    got = sorted((r["kind"], r["details"]) for r in records(out))  # they run concurrently
    assert got == sorted(
        [
            ("fallback", {"from_model": "a:big", "to_model": "a:small", "reason": "overloaded"}),
            ("provider_unavailable", {"error_kind": "auth", "message": "invalid key"}),
            ("loop_stopped", {"status": "max_steps", "steps": 50, "error": None}),
        ]
    )


async def test_recovery_matcher_and_direct_call(scripts: HookScripts, workspace: Path) -> None:
    hooks, out, _ = recorded(scripts, "Recovery", workspace, matcher="provider_unavailable")
    await hooks.recovery("loop_stopped", {})
    await hooks.recovery("provider_unavailable", {"exit": 1})
    assert only(out, "Recovery") == {"kind": "provider_unavailable", "details": {"exit": 1}}


async def test_common_fields_follow_the_session(scripts: HookScripts, workspace: Path) -> None:
    hooks, out, _ = recorded(scripts, "SessionEnd", workspace)
    hooks.session_id = "sess-2"
    hooks.modes.switch("acceptEdits")
    await hooks.session_end("clear")
    [record] = records(out)
    assert record["session_id"] == "sess-2"
    assert record["permission_mode"] == "acceptEdits"
    assert record["cwd"] == str(workspace)
    assert record["transcript_path"] == str(workspace / "session.jsonl")


async def test_system_message_and_a_hanging_hook_become_notices(
    scripts: HookScripts, workspace: Path
) -> None:
    events: list[Event] = []
    config = settings("SessionEnd", scripts.command("print(json.dumps({'systemMessage': 'bye'}))"))
    config["SessionEnd"] += settings("SessionEnd", scripts.command("time.sleep(300)"), timeout=0.5)[
        "SessionEnd"
    ]
    hooks = make_hooks(config, workspace, events)
    await hooks.session_end("other")
    texts = [e.describe() for e in events]
    assert "bye" in texts
    assert any("timed out" in text for text in texts)


async def test_continue_false_refuses_a_tool_call_and_is_shown_elsewhere(
    scripts: HookScripts, workspace: Path
) -> None:
    body = "print(json.dumps({'continue': False, 'stopReason': 'budget spent'}))"
    events: list[Event] = []
    config = settings("PostToolUse", scripts.command(body))
    hooks = make_hooks(config, workspace, events)
    call = ToolUseBlock(id="t1", name="read_file", input={"path": "a"})
    hooks.on_tool_result(call, ToolResultBlock(tool_use_id="t1", content="..."))
    await hooks.drain()
    assert [e.describe() for e in events] == ["PostToolUse hook asked to stop: budget spent"]


async def test_the_engines_own_compaction_fires_pre_compact_auto(
    scripts: HookScripts, workspace: Path
) -> None:
    hooks, out, _ = recorded(scripts, "PreCompact", workspace)
    hooks.on_event(
        CompactionStarted(reason=Reason.PROACTIVE, tokens_before=9000, messages_before=40)
    )
    hooks.on_event(CompactionStarted(reason=Reason.MANUAL, tokens_before=9000, messages_before=40))
    await hooks.drain()
    assert only(out, "PreCompact") == {"trigger": "auto", "custom_instructions": ""}

"""The executor: validation, categories, retries, timeouts, approval, hooks, trimming."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import BaseModel

from tests.tools.conftest import Harness, MakeHarness, RecordingApprover, call
from tools import (
    ErrorCategory,
    Refusal,
    Tool,
    ToolContext,
    ToolError,
    ToolInvocation,
    ToolOutput,
    ToolSettings,
    builtin_tools,
)


class NoInput(BaseModel):
    pass


class Flaky(Tool[NoInput]):
    """Fails ``failures`` times with ``error``, then succeeds."""

    name = "flaky"
    description = "test tool"
    input_model = NoInput

    def __init__(self, failures: int, error: Exception, *, idempotent: bool) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0
        self.idempotent = idempotent  # type: ignore[misc]

    async def run(self, args: NoInput, ctx: ToolContext) -> ToolOutput:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return ToolOutput("fine")


class Renamed(Flaky):
    description = "another flaky tool"


class Hanging(Tool[NoInput]):
    name = "hang"
    description = "test tool"
    input_model = NoInput
    idempotent: ClassVar[bool] = True

    def timeout(self, args: NoInput, settings: ToolSettings) -> float:
        return 0.05

    async def run(self, args: NoInput, ctx: ToolContext) -> ToolOutput:
        await asyncio.sleep(60)
        return ToolOutput("never")


def test_specs_carry_json_schema_of_each_input_model(harness: Harness) -> None:
    specs = {spec.name: spec for spec in harness.executor.specs()}
    assert list(specs) == [
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "search",
        "run_command",
        "command_output",
        "kill_command",
        "todo_write",
    ]
    schema = specs["read_file"].input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert set(schema["properties"]) == {"path", "offset", "limit"}
    assert all(spec.description for spec in specs.values())


def test_specs_are_built_once_and_rebuilt_when_the_tool_set_changes(
    make_harness: MakeHarness,
) -> None:
    executor = make_harness(tools=[Flaky(0, OSError(), idempotent=True)]).executor
    first = executor.specs()
    assert [spec.name for spec in first] == ["flaky"]
    assert executor.specs()[0] is first[0]  # cached, not regenerated
    first.clear()  # a caller changing its list does not change the next answer
    assert [spec.name for spec in executor.specs()] == ["flaky"]

    # A tool source (MCP, say) adds a tool and replaces another under the same name.
    executor._tools["hang"] = Hanging()
    assert [spec.name for spec in executor.specs()] == ["flaky", "hang"]
    executor._tools["flaky"] = Renamed(0, OSError(), idempotent=False)
    assert executor.specs()[0].description == "another flaky tool"
    del executor._tools["hang"]
    assert [spec.name for spec in executor.specs()] == ["flaky"]


async def test_settings_given_as_a_function_are_followed_from_the_next_request(
    make_harness: MakeHarness,
) -> None:
    # The agent passes the current model's settings: a fallback to a tiny model narrows them.
    current = [ToolSettings()]
    harness = make_harness(settings=lambda: current[0])
    assert len(harness.executor.specs()) == len(builtin_tools())

    current[0] = ToolSettings(enabled=["read_file"])
    assert [spec.name for spec in harness.executor.specs()] == ["read_file"]
    refused = await harness.run("list_files")
    assert refused.is_error


def test_builtin_tools_declare_idempotence_and_kind() -> None:
    flags = {tool.name: (tool.idempotent, tool.kind) for tool in builtin_tools()}
    assert flags == {
        "read_file": (True, "read"),
        "write_file": (False, "edit"),
        "edit_file": (False, "edit"),
        "list_files": (True, "read"),
        "search": (True, "read"),
        "run_command": (False, "command"),
        "todo_write": (True, "read"),
        "command_output": (False, "read"),
        "kill_command": (False, "read"),
    }


async def test_unknown_tool_lists_the_available_ones(harness: Harness) -> None:
    result = await harness.run("delete_everything", path="x")
    assert result.is_error
    assert "no tool named 'delete_everything'" in result.content
    assert "read_file" in result.content
    assert "run_command" in result.content


async def test_schema_errors_name_the_field_and_expectation(harness: Harness) -> None:
    result = await harness.run("read_file", offset="three")
    assert result.is_error
    assert "- path: Field required" in result.content
    assert "- offset: Input should be a valid integer" in result.content
    assert "'three'" in result.content
    assert "path (string, required)" in result.content


async def test_arguments_that_are_not_json_are_explained(harness: Harness) -> None:
    result = await harness.run("read_file", __raw_arguments__='{"path": "a.txt"')
    assert result.is_error
    assert "arguments for read_file are not valid JSON" in result.content
    assert "path (string, required)" in result.content


async def test_idempotent_tool_is_retried_on_transient_failure(make_harness: MakeHarness) -> None:
    tool = Flaky(2, OSError(errno.EBUSY, "Device or resource busy"), idempotent=True)
    harness = make_harness(tools=[tool])
    result = await harness.run("flaky")
    assert result.content == "fine"
    assert tool.calls == 3
    assert harness.clock.sleeps == [0.5, 1.0]
    assert [e.type for e in harness.of_type("tool_retried")] == ["tool_retried"] * 2


async def test_retries_stop_after_the_limit(make_harness: MakeHarness) -> None:
    tool = Flaky(10, ToolError("busy", category=ErrorCategory.TRANSIENT), idempotent=True)
    harness = make_harness(tools=[tool])
    result = await harness.run("flaky")
    assert result.is_error
    assert tool.calls == 3
    assert "tried 3 times" in result.content
    assert "retrying later may help" in result.content


async def test_non_idempotent_tool_is_never_retried(make_harness: MakeHarness) -> None:
    tool = Flaky(1, ToolError("busy", category=ErrorCategory.TRANSIENT), idempotent=False)
    harness = make_harness(tools=[tool])
    result = await harness.run("flaky")
    assert result.is_error
    assert tool.calls == 1
    assert not harness.of_type("tool_retried")


async def test_permanent_failure_is_not_retried(make_harness: MakeHarness) -> None:
    tool = Flaky(1, ToolError("bad", hint="do something else"), idempotent=True)
    harness = make_harness(tools=[tool])
    result = await harness.run("flaky")
    assert tool.calls == 1
    assert (
        result.content
        == "Error: bad\nRetrying the same call will not help.\nTry: do something else."
    )


async def test_unexpected_exception_becomes_a_result(make_harness: MakeHarness) -> None:
    tool = Flaky(1, ZeroDivisionError("division by zero"), idempotent=False)
    harness = make_harness(tools=[tool])
    result = await harness.run("flaky")
    assert result.is_error
    assert "unexpected ZeroDivisionError: division by zero" in result.content
    [failed] = harness.of_type("tool_failed")
    assert failed.model_dump()["category"] == "permanent"


async def test_timeout_is_reported_and_not_retried(make_harness: MakeHarness) -> None:
    # Retrying would wait the whole timeout again (three times 30 s for a stuck read).
    harness = make_harness(tools=[Hanging()], settings=ToolSettings(max_retries=2))
    result = await harness.run("hang")
    assert result.is_error
    assert "timed out after 0.05s" in result.content
    assert "ask for less at once" in result.content
    assert len(harness.of_type("tool_timed_out")) == 1
    assert not harness.of_type("tool_retried")


async def test_cancellation_propagates(make_harness: MakeHarness) -> None:
    harness = make_harness(tools=[Hanging()])
    task = asyncio.create_task(harness.run("hang"))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_path_outside_workspace_is_refused_by_policy(harness: Harness) -> None:
    for path in ("../OUTSIDE_CANARY", "/etc/passwd"):
        result = await harness.run("write_file", path=path, content="x")
        assert result.is_error
        assert result.content.startswith("Refused:")
        assert "outside the workspace" in result.content
    assert [e.model_dump()["by"] for e in harness.of_type("tool_refused")] == ["policy"] * 2


async def test_symlink_escape_is_refused(harness: Harness, workspace: Path) -> None:
    outside = workspace.parent
    (workspace / "canary_link").symlink_to(outside / "OUTSIDE_CANARY")
    (workspace / "up").symlink_to(outside)
    for tool, arguments in [
        ("write_file", {"path": "canary_link", "content": "pwned"}),
        ("edit_file", {"path": "up/OUTSIDE_CANARY", "old_string": "outside", "new_string": "x"}),
        ("read_file", {"path": "up/OUTSIDE_CANARY"}),
        ("list_files", {"path": "up"}),
    ]:
        result = await harness.run(tool, **arguments)
        assert result.is_error, tool
        assert "outside the workspace" in result.content
    assert (outside / "OUTSIDE_CANARY").read_text() == "outside the workspace"


async def test_ask_mode_asks_with_a_diff_and_respects_no(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "f.py").write_text("a = 1\n")
    approver = RecordingApprover(answer=False)
    harness = make_harness(approval="ask", approver=approver)
    result = await harness.run("edit_file", path="f.py", old_string="a = 1", new_string="a = 2")
    assert result.is_error
    assert "declined" in result.content
    assert (workspace / "f.py").read_text() == "a = 1\n"
    [request] = approver.requests
    assert request.tool == "edit_file"
    assert request.summary == "edit_file f.py"
    assert "-a = 1\n+a = 2" in request.details
    await harness.run("read_file", path="f.py")
    assert len(approver.requests) == 1  # reads never ask


async def test_auto_edit_allows_edits_but_asks_for_commands(make_harness: MakeHarness) -> None:
    approver = RecordingApprover(answer=True)
    harness = make_harness(approval="auto-edit", approver=approver)
    await harness.run("write_file", path="a.txt", content="x")
    assert approver.requests == []
    result = await harness.run("run_command", command="echo hi")
    assert "hi" in result.content
    assert [r.details for r in approver.requests] == ["echo hi"]


async def test_non_interactive_refuses_instead_of_hanging(
    make_harness: MakeHarness, workspace: Path
) -> None:
    harness = make_harness(approval="ask", approver=None)
    result = await harness.run("write_file", path="a.txt", content="x")
    assert result.is_error
    assert "non-interactively" in result.content
    assert "--yes" in result.content
    assert not (workspace / "a.txt").exists()


async def test_custom_hook_can_refuse_and_a_broken_hook_fails_closed(
    make_harness: MakeHarness, workspace: Path
) -> None:
    async def no_txt(invocation: ToolInvocation) -> Refusal | None:
        if invocation.tool.paths(invocation.args) == ["b.txt"]:
            raise RuntimeError("hook bug")
        if invocation.tool.name == "write_file":
            return Refusal("no writes today", "write tomorrow")
        return None

    harness = make_harness(hooks=[no_txt])
    result = await harness.run("write_file", path="a.txt", content="x")
    assert result.content == "Refused: no writes today\nInstead: write tomorrow."
    result = await harness.run("read_file", path="b.txt")
    assert result.is_error
    assert "safety check failed" in result.content
    assert not (workspace / "a.txt").exists()


async def test_repeated_identical_failure_warns_then_asks_loop_to_stop(
    make_harness: MakeHarness,
) -> None:
    harness = make_harness(settings=ToolSettings(repeated_failure_warn=2, repeated_failure_limit=3))
    first = await harness.run("read_file", path="missing.txt")
    assert "change approach" not in first.content
    second = await harness.run("read_file", path="missing.txt")
    assert "failed 2 times" in second.content
    assert "change approach" in second.content
    assert harness.executor.repeated_call_stop is None
    await harness.run("read_file", path="other.txt")  # different arguments: counted apart
    assert harness.executor.repeated_call_stop is None
    await harness.run("read_file", path="missing.txt")
    assert "failed 3 times" in (harness.executor.repeated_call_stop or "")
    harness.executor.begin_turn()
    assert harness.executor.repeated_call_stop is None


async def test_repeated_identical_success_tells_the_model_then_asks_loop_to_stop(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    harness = make_harness(settings=ToolSettings(repeated_call_warn=2, repeated_call_limit=3))
    first = await harness.run("list_files")
    assert first.content == "a.txt"
    second = await harness.run("list_files")
    assert second.content.startswith("a.txt\n")
    assert "same result each time, so you already have it" in second.content
    assert harness.executor.repeated_call_stop is None
    await harness.run("list_files")
    stop = harness.executor.repeated_call_stop or ""
    assert "called list_files 3 times" in stop
    assert "tools.repeated_call_limit" in stop
    noted = harness.of_type("tool_repeated_call")
    assert [(e.count, e.limit_reached) for e in noted] == [(2, False), (3, True)]  # type: ignore[attr-defined]
    harness.executor.begin_turn()
    assert harness.executor.repeated_call_stop is None


async def test_a_repeated_call_with_a_new_result_is_progress_not_a_loop(
    make_harness: MakeHarness, workspace: Path
) -> None:
    harness = make_harness(settings=ToolSettings(repeated_call_warn=2, repeated_call_limit=2))
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text("x\n")
        result = await harness.run("list_files")
        assert "already have it" not in result.content
    assert harness.executor.repeated_call_stop is None
    assert harness.of_type("tool_repeated_call") == []


async def test_executor_level_recovery_from_a_missing_file(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print('hi')\n")
    miss = await harness.executor.execute(call("read_file", path="main.py"))
    assert miss.is_error
    assert "list_files" in miss.content
    listing = await harness.executor.execute(call("list_files", pattern="**/main.py"))
    assert listing.content == "src/main.py"
    hit = await harness.executor.execute(call("read_file", path=listing.content))
    assert not hit.is_error
    assert "print('hi')" in hit.content


async def test_a_call_is_said_to_start_only_once_it_passed_its_checks(
    make_harness: MakeHarness,
) -> None:
    harness = make_harness(approval="ask", approver=RecordingApprover(answer=False))
    await harness.run("no_such_tool")
    await harness.run("write_file", path="refused.txt", content="x")  # the person says no
    await harness.run("read_file", path="missing.txt")  # runs, and fails in the tool
    started = harness.of_type("tool_started")
    assert [(event.type, getattr(event, "tool", None)) for event in started] == [
        ("tool_started", "read_file")
    ]

"""MCP servers as tools, against real servers written with the SDK (stdio and HTTP)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recovery.budget import CircuitBreaker
from tests.fakes.mcp_harness import (
    crashing_entry,
    garbage_entry,
    hanging_entry,
    http_server,
    stdio_settings,
    wait_for_state,
)
from tests.tools.conftest import MakeHarness, RecordingApprover
from tools import ToolSettings
from tools.guard.sandbox import Sandbox, SandboxSettings
from tools.mcp import McpServerSettings
from tools.mcp.runtime import McpServers
from tools.mcp.supervisor import ServerState, ServerStatus
from tools.mcp.tool import McpToolList

READY = {ServerState.READY}
StartServers = Callable[..., McpServers]


@pytest.fixture
def start_servers(workspace: Path) -> Iterator[StartServers]:
    """Start `McpServers` with the given entries; all are closed after the test."""
    started: list[McpServers] = []

    def start(entries: dict[str, McpServerSettings], **kwargs: Any) -> McpServers:
        servers = McpServers(
            workspace=workspace,
            environ=kwargs.pop("environ", {}),
            wrap=kwargs.pop("wrap", None),
            breaker=lambda s: CircuitBreaker(s.max_failures, s.pause, time.monotonic),
            **kwargs,
        )
        started.append(servers)
        for name, settings in entries.items():
            servers.add(name, settings)
        return servers

    yield start
    for servers in started:
        servers.close()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    directory = tmp_path / "mcp-state"
    directory.mkdir()
    return directory


def test_tools_round_trip_with_the_servers_schema_and_converted_results(
    start_servers: StartServers, make_harness: MakeHarness, state: Path
) -> None:
    servers = start_servers({"fake": stdio_settings(state)})
    wait_for_state(servers, "fake", READY)
    approver = RecordingApprover()
    harness = make_harness(
        approval="auto-edit",
        approver=approver,
        more_tools=McpToolList(servers),
        settings=ToolSettings(max_output_chars=1_000),
    )

    specs = {spec.name: spec for spec in harness.executor.specs()}
    assert specs["mcp__fake__echo"].input_schema["required"] == ["text"]
    assert specs["mcp__fake__echo"].description.startswith("[MCP server fake]")
    assert "read_file" in specs

    async def run_all() -> None:
        echoed = await harness.run("mcp__fake__echo", text="hi")
        assert (echoed.content, echoed.is_error) == ("echo: hi", False)
        picture = await harness.run("mcp__fake__picture")
        assert "[image image/png" in picture.content
        long = await harness.run("mcp__fake__long_text", size=50_000)
        assert len(long.content) < 2_000  # trimmed like our own tools' output
        failed = await harness.run("mcp__fake__fail")
        assert failed.is_error
        assert "fail" in failed.content
        wrong = await harness.run("mcp__fake__echo", wrong=1)
        assert wrong.is_error
        assert "text" in wrong.content

    asyncio.run(run_all())
    # Every MCP tool asks like a command: echo's readOnlyHint is the server's claim, not
    # the person's.
    assert {(r.tool, r.kind) for r in approver.requests} == {
        (f"mcp__fake__{name}", "command") for name in ("echo", "picture", "long_text", "fail")
    }


def test_crash_hang_and_malformed_output_end_in_tool_errors_or_retries(
    start_servers: StartServers, make_harness: MakeHarness, state: Path
) -> None:
    settings = stdio_settings(state, call_timeout=3, max_failures=20)
    servers = start_servers({"fake": settings})
    wait_for_state(servers, "fake", READY)
    harness = make_harness(more_tools=McpToolList(servers))

    async def run_all() -> None:
        # Not idempotent: reported, never repeated.
        counted = await harness.run("mcp__fake__count")
        assert counted.is_error
        assert "not retried" in counted.content
        assert (state / "count_calls").read_text() == "called\n"
        # Read-only: retried once the server is back.
        flaky = await harness.run("mcp__fake__flaky_read")
        assert (flaky.content, flaky.is_error) == ("flaky_read ok after restart", False)
        assert harness.of_type("tool_retried")
        # A hung server is killed and restarted; the call ends in an error.
        hung = await harness.run("mcp__fake__hang")
        assert hung.is_error
        assert "stopped answering" in hung.content
        # Malformed output breaks the connection; malformed results are reported.
        garbage = await harness.run("mcp__fake__garbage")
        assert garbage.is_error
        assert "malformed output" in garbage.content
        bad = await harness.run("mcp__fake__bad_result")
        assert bad.is_error
        assert "malformed result" in bad.content
        # After all that, the server works again.
        echoed = await harness.run("mcp__fake__echo", text="still here")
        assert echoed.content == "echo: still here"

    asyncio.run(run_all())


def test_a_hung_servers_whole_process_group_is_killed(
    start_servers: StartServers, make_harness: MakeHarness, state: Path
) -> None:
    servers = start_servers({"fake": stdio_settings(state, call_timeout=2)})
    wait_for_state(servers, "fake", READY)
    harness = make_harness(more_tools=McpToolList(servers))

    hung = asyncio.run(harness.run("mcp__fake__spawn_and_hang"))
    child = int((state / "child_pid").read_text())
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)

    assert hung.is_error
    assert "effect is unknown" in hung.content
    assert not _alive(child)
    wait_for_state(servers, "fake", READY)  # and it was started again


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; it waits only for its parent to reap it.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_call_waits_for_a_slow_server_to_start(
    start_servers: StartServers, make_harness: MakeHarness, state: Path
) -> None:
    servers = start_servers({"slow": stdio_settings(state, env={"FAKE_MCP_START_DELAY": "2"})})
    wait_for_state(servers, "slow", READY)
    harness = make_harness(more_tools=McpToolList(servers))
    assert asyncio.run(harness.run("mcp__slow__add", a=2, b=3)).content == "5"


def test_a_server_that_never_starts_is_paused_with_its_redacted_reason(
    start_servers: StartServers, state: Path
) -> None:
    secret = "sk-ant-api03-" + "x" * 40
    env = {"FAKE_MCP_NEVER_START": "1", "FAKE_MCP_SECRET": secret}
    servers = start_servers(
        {"broken": stdio_settings(state, env=env, max_failures=2, pause=600)},
        redact=lambda text: text.replace(secret, "[redacted]"),
    )

    status = wait_for_state(servers, "broken", {ServerState.PAUSED})

    assert "cannot open the database" in status.reason
    assert "paused after 2 failures" in status.reason
    assert status.tools == ()
    assert "paused, next try in" in status.describe()
    assert secret not in str(servers.statuses())


def test_a_server_writing_garbage_is_restarted_then_paused_without_waiting_its_timeout(
    start_servers: StartServers, state: Path
) -> None:
    entry = garbage_entry(state, start_timeout=600, max_failures=3, pause=600)
    servers = start_servers({"garbage": McpServerSettings.model_validate(entry)})

    status = wait_for_state(servers, "garbage", {ServerState.PAUSED})

    # Three starts, each ended by its first line of garbage, not by the 600s start timeout.
    assert (state / "starts").read_text().split() == ["start"] * 3
    assert "not JSON-RPC: 'notjson'" in status.reason
    assert "paused after 3 failures" in status.reason


def test_a_crash_loop_shows_the_last_failure_while_starting_again(
    start_servers: StartServers, state: Path
) -> None:
    seen: list[ServerStatus] = []
    entry = crashing_entry(state, max_failures=2, pause=600)

    servers = start_servers(
        {"crash": McpServerSettings.model_validate(entry)}, on_change=seen.append
    )
    wait_for_state(servers, "crash", {ServerState.PAUSED})

    again = [s for s in seen if s.state is ServerState.STARTING and s.failures]
    assert again
    assert again[0].describe().startswith("starting again (last try: it exited")
    assert "fatal: no database" in again[0].describe()
    assert (state / "starts").read_text().split() == ["start"] * 2


def test_a_hanging_server_is_listed_as_starting_at_once(start_servers: StartServers) -> None:
    entry = McpServerSettings.model_validate(hanging_entry(start_timeout=600))

    servers = start_servers({"hang": entry})

    [status] = servers.statuses()  # right after add: before its supervisor even runs
    assert (status.name, status.state) == ("hang", ServerState.STARTING)


def test_a_paused_servers_tools_say_until_when(
    start_servers: StartServers, make_harness: MakeHarness, state: Path
) -> None:
    servers = start_servers({"fake": stdio_settings(state, max_failures=1, pause=600)})
    wait_for_state(servers, "fake", READY)
    harness = make_harness(more_tools=McpToolList(servers))

    crashed = asyncio.run(harness.run("mcp__fake__crash"))
    wait_for_state(servers, "fake", {ServerState.PAUSED})
    later = asyncio.run(harness.run("mcp__fake__echo", text="x"))

    assert crashed.is_error
    assert later.is_error
    assert "is paused" in later.content
    assert "mcp__fake__echo" not in later.content or "echo" in later.content
    assert "until about" in later.content


def test_streamable_http_server_with_headers_from_the_environment(
    start_servers: StartServers, make_harness: MakeHarness, state: Path
) -> None:
    with http_server(state) as url:
        entry = McpServerSettings(
            url=url, headers={"Authorization": "Bearer ${TOKEN}"}, call_timeout=5
        )
        servers = start_servers({"remote": entry}, environ={"TOKEN": "t0ken"})
        wait_for_state(servers, "remote", READY)
        harness = make_harness(more_tools=McpToolList(servers))

        echoed = asyncio.run(harness.run("mcp__remote__echo", text="over http"))

    gone = asyncio.run(harness.run("mcp__remote__echo", text="server stopped"))

    assert echoed.content == "echo: over http"
    assert servers.settings("remote").headers == {"Authorization": "Bearer t0ken"}
    assert gone.is_error  # the endpoint went away: an error within the call timeout
    assert "remote" in gone.content


def test_stdio_server_runs_under_the_command_sandbox(
    start_servers: StartServers, make_harness: MakeHarness, state: Path, workspace: Path
) -> None:
    sandbox = Sandbox.create(SandboxSettings())
    servers = start_servers(
        {"fake": stdio_settings(state)}, wrap=lambda argv, _: sandbox.wrap(argv, workspace)
    )
    wait_for_state(servers, "fake", READY)
    harness = make_harness(more_tools=McpToolList(servers))

    assert asyncio.run(harness.run("mcp__fake__echo", text="boxed")).content == "echo: boxed"


def test_a_missing_environment_variable_fails_the_server_not_the_start(
    start_servers: StartServers, state: Path
) -> None:
    entry = McpServerSettings(url="http://127.0.0.1:9/mcp", headers={"X": "${NOPE}"})
    servers = start_servers({"remote": entry})

    (status,) = servers.statuses()

    assert status.state is ServerState.FAILED
    assert "NOPE is not set" in status.reason

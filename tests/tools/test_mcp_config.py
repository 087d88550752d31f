"""MCP configuration, .mcp.json approvals, tool names and restart delays (no server needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.setup.config import ConfigError, load_config
from agent.setup.mcp_setup import down_summary, plan_servers, status_table
from tools import Tool, ToolContext, ToolExecutor, ToolOutput, ToolSettings
from tools.mcp import McpServerSettings, ProjectApprovals, read_project_servers
from tools.mcp.connection import reply_text
from tools.mcp.settings import UnsetVariable, expand
from tools.mcp.supervisor import (
    MAX_RESTART_DELAY,
    ServerState,
    ServerStatus,
    restart_delay,
)
from tools.mcp.tool import MAX_NAME, McpArguments, tool_name


def test_references_expand_from_the_environment_with_defaults() -> None:
    environ = {"TOKEN": "abc"}
    assert expand("Bearer ${TOKEN}", environ) == "Bearer abc"
    assert expand("${MISSING:-fallback}/x", environ) == "fallback/x"
    with pytest.raises(UnsetVariable, match="MISSING"):
        expand("${MISSING}", environ)


def test_an_entry_needs_exactly_one_transport() -> None:
    with pytest.raises(ValidationError, match="either command"):
        McpServerSettings()
    with pytest.raises(ValidationError, match="either command"):
        McpServerSettings(command="x", url="http://h/mcp")
    with pytest.raises(ValidationError, match="http"):
        McpServerSettings(url="ftp://h/mcp")


def test_config_rejects_a_bad_server_name_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("mcp_servers:\n  'bad name': {command: x}\n")
    with pytest.raises(ConfigError, match="bad name"):
        load_config(cwd=tmp_path, environ={"HOME": str(tmp_path)})


def test_project_file_in_the_claude_code_format(tmp_path: Path) -> None:
    servers = {
        "db": {"command": "uvx", "args": ["mcp-db"], "env": {"DSN": "${DSN}"}},
        "tracker": {"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}},
        "old": {"type": "sse", "url": "https://h/sse"},
        "bad name": {"command": "x"},
        "broken": {"args": []},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    found = read_project_servers(tmp_path)

    assert sorted(found.servers) == ["db", "tracker"]
    assert found.servers["tracker"].headers == {"A": "b"}
    problems = " ".join(found.problems)
    assert "SSE" in problems
    assert "bad name" in problems
    assert "broken" in problems


@pytest.mark.parametrize("content", ["{not json", "[]", '{"mcpServers": 3}', "\udcff"])
def test_a_broken_project_file_is_reported_not_raised(tmp_path: Path, content: str) -> None:
    (tmp_path / ".mcp.json").write_bytes(content.encode("utf-8", "surrogateescape"))
    found = read_project_servers(tmp_path)
    assert found.servers == {}
    assert found.problems


def test_a_symlinked_project_file_is_ignored(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"mcpServers": {"x": {"command": "x"}}}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".mcp.json").symlink_to(target)
    assert read_project_servers(workspace).servers == {}


def test_approval_is_per_workspace_and_per_definition(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    entry = McpServerSettings(command="uvx", args=["mcp-db"])
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"db": {"command": "uvx", "args": ["mcp-db"]}}})
    )

    before = plan_servers({}, workspace, home)
    ProjectApprovals(home, workspace).allow("db", entry)
    after = plan_servers({}, workspace, home)
    elsewhere = ProjectApprovals(home, tmp_path)
    changed = McpServerSettings(command="uvx", args=["evil"])

    assert list(before.pending) == ["db"]
    assert list(after.start) == ["db"]
    assert not elsewhere.allowed("db", entry)
    assert not ProjectApprovals(home, workspace).allowed("db", changed)
    assert os.stat(home / "mcp-approvals.json").st_mode & 0o777 == 0o600


def test_configured_servers_win_over_project_servers_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "evil"}}}))
    mine = McpServerSettings(command="good")
    off = McpServerSettings(command="off", enabled=False)

    plan = plan_servers({"db": mine, "off": off}, tmp_path, tmp_path / "home")

    assert plan.start == {"db": mine}
    assert plan.pending == {}


def test_tool_names_are_safe_and_short() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("db", "run query!") == "mcp__db__run_query_"
    long = tool_name("server", "x" * 100)
    assert len(long) == MAX_NAME
    assert long != tool_name("server", "x" * 99)


def test_restart_delays_grow_are_capped_and_never_zero() -> None:
    assert 0.25 <= restart_delay(1, 0.0) <= restart_delay(1, 0.999) <= 0.5
    assert restart_delay(3, 0.5) > restart_delay(2, 0.5)
    assert restart_delay(50, 0.999) <= MAX_RESTART_DELAY
    assert restart_delay(50, 0.0) >= MAX_RESTART_DELAY / 2


def test_status_lines_for_the_person() -> None:
    ready = ServerStatus("db", ServerState.READY, tools=())
    down = ServerStatus("web", ServerState.RESTARTING, reason="it crashed", retry_at=10.0)

    table = status_table([ready, down], {"proj": McpServerSettings(command="x")}).plain

    assert "ready, 0 tools" in table
    assert down.describe(now=5.0) == "restarting in 5s (it crashed)"
    assert down.describe(now=9.8) == "restarting now (it crashed)"  # never "in 0s"
    assert "not allowed yet" in table
    assert down_summary([ready, down]) == "mcp: web down"
    assert down_summary([ready]) == ""


def test_results_are_text_with_images_described() -> None:
    from mcp_types import ImageContent, TextContent

    blocks = [
        TextContent(type="text", text="hi"),
        ImageContent(type="image", data="AAAA", mime_type="image/png"),
    ]
    assert reply_text(blocks, None) == "hi\n[image image/png, about 3 bytes, not shown]"
    assert reply_text([], {"rows": 2}) == '{"rows": 2}'
    assert reply_text([], None) == "(the tool returned no content)"


class _Named(Tool[McpArguments]):
    input_model = McpArguments

    async def run(self, args: McpArguments, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(self.name)


def _named(name: str) -> Tool[McpArguments]:
    cls = type(name, (_Named,), {"name": name, "description": name})
    tool: Tool[McpArguments] = cls()
    return tool


def test_enabled_tools_can_name_mcp_tools_by_pattern(workspace: Path) -> None:
    extras = [_named("mcp__gh__list"), _named("mcp__gh__delete"), _named("mcp__db__query")]
    settings = ToolSettings(enabled=["read_file", "mcp__gh__l*", "mcp__db__query"])
    executor = ToolExecutor(
        workspace=workspace,
        settings=settings,
        approval="full-auto",
        approver=None,
        more_tools=lambda: extras,
    )

    names = [spec.name for spec in executor.specs()]

    assert names == ["read_file", "mcp__gh__list", "mcp__db__query"]
    with pytest.raises(ValidationError, match="unknown tool"):
        ToolSettings(enabled=["read_fil"])


@pytest.mark.parametrize(
    "content", [b" " * (2 << 20) + b"{}", b"[" * 100_000 + b"]" * 100_000, b"\xff{}"]
)
def test_a_hostile_project_file_is_reported_not_loaded(tmp_path: Path, content: bytes) -> None:
    (tmp_path / ".mcp.json").write_bytes(content)

    found = read_project_servers(tmp_path)

    assert found.servers == {}
    assert len(found.problems) == 1
    assert found.problems[0].startswith(".mcp.json")
    assert "fix or remove it" in found.problems[0]

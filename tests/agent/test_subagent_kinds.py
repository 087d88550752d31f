"""A read-only sub-agent (``explore``, or ``permissionMode: plan``) runs only what reads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agent.subagents.kinds import only_reading
from providers.messages import ToolUseBlock
from tools import ToolSettings
from tools.base import Tool, ToolContext
from tools.builtin import builtin_tools
from tools.hooks import Permit, Refusal, ToolInvocation
from tools.mcp.connection import RemoteTool
from tools.mcp.tool import mcp_tool


def _check(tool: Tool[Any], args: dict[str, Any], tmp_path: Path) -> Refusal | Permit | None:
    invocation = ToolInvocation(
        call=ToolUseBlock(id="toolu_1", name=tool.name, input=args),
        tool=tool,
        args=tool.input_model.model_validate(args),
        context=ToolContext(
            workspace=tmp_path, settings=ToolSettings(), record_checkpoint=lambda path: None
        ),
    )
    return asyncio.run(only_reading(invocation))


def _mcp(read_only_hint: bool) -> Tool[Any]:
    remote = RemoteTool("drop_table", "Drops a table.", {"type": "object"}, read_only_hint, False)
    return mcp_tool(None, "db", remote, 30.0, 30.0)  # type: ignore[arg-type]  # never run


def test_an_mcp_tool_is_refused_whatever_its_server_claims(tmp_path: Path) -> None:
    for hint in (False, True):
        refused = _check(_mcp(hint), {}, tmp_path)
        assert isinstance(refused, Refusal), hint
        assert "mcp__db__drop_table may change things" in refused.reason


def test_reads_and_read_only_commands_run_and_others_are_refused(tmp_path: Path) -> None:
    tools = {tool.name: tool for tool in builtin_tools()}
    assert _check(tools["read_file"], {"path": "a.py"}, tmp_path) is None
    assert _check(tools["run_command"], {"command": "git log -1"}, tmp_path) is None
    assert isinstance(_check(tools["run_command"], {"command": "rm a.py"}, tmp_path), Refusal)
    assert isinstance(
        _check(tools["write_file"], {"path": "a.py", "content": ""}, tmp_path), Refusal
    )

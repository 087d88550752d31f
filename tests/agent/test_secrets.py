"""Secrets stay off the screen and out of AGENT_HOME; AGENT_HOME is private; AGENTS.md stays
inside the workspace."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from rich.console import Console

from agent.engine.system_prompt import (
    MAX_INSTRUCTIONS_CHARS,
    build_system_prompt,
    read_instructions,
)
from agent.setup.home import make_private
from agent.terminal.input_line import PrivateFileHistory
from agent.terminal.ui import ConsoleUI
from providers import ToolResultBlock, ToolUseBlock
from sessions import Redactor
from tools import CheckpointRecorded

KEY = "sk-ant-api03-Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0Js"
REDACT = Redactor({"ANTHROPIC_API_KEY": KEY}).text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_tool_preview_never_shows_a_key(tmp_path: Path) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=True)
    ui = ConsoleUI(console, workspace=tmp_path, redact=REDACT)
    (tmp_path / ".env").write_text("OLD=1\n")
    ui.begin_turn()
    ui.on_event(CheckpointRecorded(path=".env", existed_before=True, turn=1, tool_use_id="t1"))
    (tmp_path / ".env").write_text(f"OLD=1\nANTHROPIC_API_KEY={KEY}\n")
    call = ToolUseBlock(
        id="t1", name="write_file", input={"path": ".env", "content": f"ANTHROPIC_API_KEY={KEY}"}
    )
    ui.on_tool_result(call, ToolResultBlock(tool_use_id="t1", content="Replaced .env."))
    shell = ToolUseBlock(id="t2", name="run_command", input={"command": f"echo {KEY}"})
    ui.on_tool_result(shell, ToolResultBlock(tool_use_id="t2", content=f"{KEY}\n[exit code 0]"))
    ui.finish()

    shown = buffer.getvalue()
    assert "+ANTHROPIC_API_KEY=[redacted" in shown  # the diff is shown, without the key
    for fragment in (KEY[:16], KEY[-16:], KEY[12:28]):  # previews cut values short
        assert fragment not in shown


def test_history_file_is_private_and_never_holds_a_typed_key(tmp_path: Path) -> None:
    history_file = tmp_path / "history"
    history_file.write_text(f"\n# earlier\n+my key is {KEY}\n")  # written by an older version
    os.chmod(history_file, 0o644)
    history = PrivateFileHistory(history_file, REDACT)

    loaded = list(history.load_history_strings())
    history.store_string(f"use {KEY} for\nthe deploy")

    assert loaded == ["my key is [redacted:ANTHROPIC_API_KEY]"]
    text = history_file.read_text()
    assert KEY[:12] not in text
    assert "+use [redacted:ANTHROPIC_API_KEY] for\n+the deploy\n" in text
    assert _mode(history_file) == 0o600


def test_history_that_cannot_be_written_is_skipped_not_fatal(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(target, tmp_path / "history")
    PrivateFileHistory(tmp_path / "history", REDACT).store_string("hello")  # O_NOFOLLOW: skipped
    assert target.read_text() == ""


def test_agent_home_is_created_private_and_loose_modes_are_narrowed(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh" / "agent"
    make_private(fresh)
    assert [_mode(fresh / name) for name in ("", "sessions", "logs", "checkpoints")] == [0o700] * 4

    old = tmp_path / "old"
    (old / "logs").mkdir(parents=True)
    (old / "sessions").mkdir()
    for directory in (old, old / "logs", old / "sessions"):
        os.chmod(directory, 0o755)
    (old / "history").write_text("+x\n")
    (old / "logs" / "agent-20250101.jsonl").write_text("{}\n")
    for file in (old / "history", old / "logs" / "agent-20250101.jsonl"):
        os.chmod(file, 0o644)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)
    os.symlink(elsewhere, old / "checkpoints")

    make_private(old)

    assert _mode(old) == _mode(old / "logs") == _mode(old / "sessions") == 0o700
    assert _mode(old / "history") == _mode(old / "logs" / "agent-20250101.jsonl") == 0o600
    assert _mode(elsewhere) == 0o755  # a link in the home does not redirect the chmod


def test_make_private_never_raises(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    make_private(not_a_dir)  # the session store reports this one clearly
    assert not_a_dir.read_text() == ""


def test_agents_md_linked_out_of_the_workspace_is_not_sent(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    credentials = tmp_path / "credentials"
    credentials.write_text(f"aws_secret={KEY}\n")
    os.symlink(credentials, workspace / "AGENTS.md")

    assert read_instructions(workspace) is None
    assert "aws_secret" not in build_system_prompt(workspace)


def test_agents_md_linked_inside_the_workspace_is_read(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "agents.md").write_text("Use tabs.\n")
    os.symlink(tmp_path / "docs" / "agents.md", tmp_path / "AGENTS.md")
    assert "Use tabs." in build_system_prompt(tmp_path)


def test_agents_md_is_bounded_and_a_fifo_is_skipped(tmp_path: Path) -> None:
    with (tmp_path / "AGENTS.md").open("wb") as handle:
        handle.write(b"rule\n" * 10)
        handle.truncate(1024**3)  # 1 GB, sparse: only the first bytes may be read
    text = read_instructions(tmp_path)
    assert text is not None
    assert len(text) <= MAX_INSTRUCTIONS_CHARS * 4 + 1
    assert "[... truncated ...]" in build_system_prompt(tmp_path)

    (tmp_path / "AGENTS.md").unlink()
    os.mkfifo(tmp_path / "AGENTS.md")
    assert read_instructions(tmp_path) is None

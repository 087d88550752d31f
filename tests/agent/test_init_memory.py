"""Project instructions: CLAUDE.md when there is no AGENTS.md, /init and /memory in the REPL."""

from __future__ import annotations

from pathlib import Path

from agent.engine.system_prompt import build_system_prompt
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn


def test_claude_md_is_read_when_there_is_no_agents_md(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Use pnpm.\n")
    assert "Project instructions from CLAUDE.md:\nUse pnpm." in build_system_prompt(tmp_path)

    (tmp_path / "AGENTS.md").write_text("Use npm.\n")
    prompt = build_system_prompt(tmp_path)
    assert "from AGENTS.md:\nUse npm." in prompt
    assert "pnpm" not in prompt


def test_init_asks_the_model_to_write_agents_md(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "AGENTS.md", "content": "# Build\nmake\n"}),
        Reply.text("Wrote AGENTS.md."),
    )
    term = spawn("--yes")
    term.prompt()
    assert "/init" in term.command("/help")
    term.send_line("/init")
    term.expect("Wrote AGENTS.md")
    term.prompt()
    term.exit()

    assert "write an AGENTS.md" in str(fake_llm.requests[0].body)
    assert (workspace / "AGENTS.md").read_text() == "# Build\nmake\n"


def test_memory_opens_the_instructions_in_the_editor(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "edited by $0" >> "$1"\n')
    editor.chmod(0o755)
    (workspace / "CLAUDE.md").write_text("Old notes.\n")
    term = spawn(env={"EDITOR": str(editor), "VISUAL": ""})
    term.prompt()

    shown = term.command("/memory")
    term.exit()

    assert "CLAUDE.md: read at the start of each session" in shown
    assert (workspace / "CLAUDE.md").read_text() == f"Old notes.\nedited by {editor}\n"
    assert not (workspace / "AGENTS.md").exists()
    assert fake_llm.requests == []

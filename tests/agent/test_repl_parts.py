"""The REPL's parts without a terminal: completion, command suggestions, approval, AGENTS.md."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from agent.engine.system_prompt import build_system_prompt
from agent.terminal.approval import PromptApprover
from agent.terminal.commands import closest
from agent.terminal.input_line import CommandInfo, LineNotice, SlashCompleter, build_session
from agent.terminal.ui import ConsoleUI
from tools import ApprovalRequest

COMMANDS = [
    CommandInfo("/help", "/help", "show commands and keys"),
    CommandInfo("/model", "/model [ref]", "show or switch the model", lambda: [("a:x", "chain")]),
    CommandInfo("/exit", "/exit", "leave"),
]


def completions(text: str) -> list[tuple[str, str]]:
    completer = SlashCompleter(lambda: COMMANDS)
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.display_meta_text) for c in found]


def test_slash_commands_complete_with_their_descriptions() -> None:
    assert completions("/m") == [("/model", "show or switch the model")]
    assert len(completions("/")) == 3
    assert completions("/model a") == [("a:x", "chain")]
    assert completions("plain text") == []


@pytest.mark.parametrize(
    ("typed", "meant"), [("/stast", "/stats"), ("/exti", "/exit"), ("/resum", "/resume")]
)
def test_unknown_commands_suggest_the_closest(typed: str, meant: str) -> None:
    names = ["/help", "/resume", "/sessions", "/stats", "/cost", "/exit", "/undo"]
    assert closest(typed, names) == meant


@pytest.mark.parametrize("typed", ["/foo", "/x", "/deploy", "/zzzzzz"])
def test_a_loose_likeness_is_no_suggestion(typed: str) -> None:
    names = ["/help", "/resume", "/doctor", "/stats", "/cost", "/exit", "/undo", "/model"]
    assert closest(typed, names) is None


@pytest.mark.parametrize(
    ("typed", "meant"), [("/hlep", "/help"), ("/doctr", "/doctor"), ("/mod", "/model")]
)
def test_typos_and_unique_beginnings_are_suggested(typed: str, meant: str) -> None:
    names = ["/help", "/resume", "/doctor", "/stats", "/cost", "/exit", "/undo", "/model"]
    assert closest(typed, names) == meant


def approval() -> ApprovalRequest:
    return ApprovalRequest(
        tool="run_command", summary="run: pytest -q", details="pytest -q", kind="command"
    )


def approver(answer: str | BaseException) -> tuple[PromptApprover, io.StringIO]:
    buffer = io.StringIO()
    ui = ConsoleUI(Console(file=buffer, width=80, force_terminal=True))

    async def ask(question: str) -> str:
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return PromptApprover(ui, ask), buffer


async def test_approval_yes_no_and_always() -> None:
    yes, shown = approver("y")
    assert await yes.approve(approval())
    assert "run: pytest -q" in shown.getvalue()
    no, _ = approver("")
    assert not await no.approve(approval())
    always, _ = approver("a")
    assert await always.approve(approval())
    always.ask = None  # type: ignore[assignment]  # a second call must not ask again
    assert await always.approve(approval())


async def test_ctrl_c_at_the_approval_prompt_cancels_the_turn() -> None:
    interrupted, _ = approver(KeyboardInterrupt())
    with pytest.raises(asyncio.CancelledError):
        await interrupted.approve(approval())


async def test_ctrl_v_tells_why_on_the_prompt_and_never_leaves_raw_mode(tmp_path: Path) -> None:
    """Printing the sentence (run_in_terminal) would put the tty in cooked mode for a moment,
    and a Ctrl-C or Ctrl-D typed then is the tty's, never the prompt's. The pty test cannot
    time a key into that moment; here the terminal's input tells whether it was asked to."""
    why = "Ctrl-V: no clipboard tool found to read an image with."
    notice = LineNotice()
    screen = io.StringIO()
    with create_pipe_input() as keys:
        cooked: list[bool] = []
        cooked_mode = keys.cooked_mode
        keys.cooked_mode = lambda: cooked.append(True) or cooked_mode()
        output = Vt100_Output(screen, lambda: Size(rows=24, columns=80))
        with create_app_session(input=keys, output=output):
            session = build_session(
                tmp_path / "history", lambda: [], on_paste_image=lambda: ("", why), notice=notice
            )
            keys.send_text("\x16\r")  # Ctrl-V, then Enter
            assert await session.prompt_async(lambda: notice.above("› ")) == ""
            shown = screen.getvalue()
            keys.send_text("typed\x16\x03after\r")  # Ctrl-C at once clears the line
            assert await session.prompt_async(lambda: notice.above("› ")) == "after"

    assert cooked == []
    assert why in shown  # drawn by the prompt, on its own output
    assert notice.text == ""  # the line changed: the sentence went


def test_agents_md_is_read_into_the_system_prompt(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run tests with `make check`.\n")
    prompt = build_system_prompt(tmp_path)
    assert "Project instructions from AGENTS.md" in prompt
    assert "Run tests with `make check`." in prompt
    assert "AGENTS.md" not in build_system_prompt(tmp_path / "missing")

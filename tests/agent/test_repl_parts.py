"""The REPL's parts without a terminal: completion, command suggestions, approval, AGENTS.md."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console

from agent.engine.system_prompt import build_system_prompt
from agent.terminal.approval import PromptApprover
from agent.terminal.commands import closest
from agent.terminal.input_line import CommandInfo, SlashCompleter
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


def test_agents_md_is_read_into_the_system_prompt(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run tests with `make check`.\n")
    prompt = build_system_prompt(tmp_path)
    assert "Project instructions from AGENTS.md" in prompt
    assert "Run tests with `make check`." in prompt
    assert "AGENTS.md" not in build_system_prompt(tmp_path / "missing")

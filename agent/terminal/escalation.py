"""The last rung of the recovery ladder: when no model can answer now, ask the person.

Recovery has used its budget or every model of the chain is down. Instead of only failing
the turn, the REPL offers to wait for the provider (a countdown Ctrl-C stops), to switch to
another configured model, or to stop with the session kept. ``-p`` exits 75 instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

from rich.text import Text

from agent.engine.outcome import TurnResult
from agent.script.report import provider_unavailable
from agent.terminal.status_line import duration_text
from agent.terminal.ui import ConsoleUI
from providers.models import ModelRef
from recovery import RequestHeld

T = TypeVar("T")

DEFAULT_WAIT = 60.0
"""Seconds offered when the provider did not say how long to wait."""


class EscalationHost(Protocol):
    """What the question needs from the REPL."""

    ui: ConsoleUI

    async def ask(self, question: str) -> str: ...

    def model_chain(self) -> list[str]: ...

    def current_model(self) -> str: ...

    def switch_model(self, ref: ModelRef) -> None: ...

    async def run_command(self, work: Coroutine[Any, Any, T]) -> T | None: ...


async def try_again(host: EscalationHost, result: TurnResult) -> bool:
    """After a turn no model could answer: ask what to do, and do it. True when the turn
    should be sent again (after the wait, or on the model chosen)."""
    if not provider_unavailable(result):
        return False
    wait = result.retry_after if result.retry_after is not None else DEFAULT_WAIT
    ready_at = time.monotonic() + wait  # the server's wait runs while the person reads
    others = [ref for ref in host.model_chain() if ref != host.current_model()]
    choices = f"[w] wait {duration_text(wait)} and try again"
    if others:
        choices += " · [m] switch model"
    answer = await host.ask(f"No model can answer now. {choices} · [s] stop (session kept): ")
    choice = answer.strip().lower()[:1]
    if choice == "w":
        return await _wait(host, max(ready_at - time.monotonic(), 0.0))
    if choice == "m" and others:
        return await _switch(host, others)
    host.ui.show(Text("Stopped; the session is kept. Send a message to go on.", style="dim"))
    return False


async def _wait(host: EscalationHost, seconds: float) -> bool:
    held = RequestHeld(
        model=host.current_model(), delay=seconds, retry_at=time.monotonic() + seconds, server=True
    )
    host.ui.show(Text(f"Waiting {duration_text(seconds)} (Ctrl-C stops waiting)...", "yellow"))

    async def countdown() -> bool:
        host.ui.on_event(held)  # the status line counts it down
        await asyncio.sleep(seconds)
        return True

    return await host.run_command(countdown()) is True


async def _switch(host: EscalationHost, others: list[str]) -> bool:
    for number, ref in enumerate(others, 1):
        host.ui.show(Text(f"  {number}. {ref}"))
    picked = (await host.ask("Model number (Enter: the first): ")).strip() or "1"
    if not picked.isdigit() or not 1 <= int(picked) <= len(others):
        host.ui.show(Text(f"No model {picked!r}; the session is kept.", style="yellow"))
        return False
    try:
        host.switch_model(ModelRef.parse(others[int(picked) - 1]))
    except ValueError as error:
        host.ui.show(Text(str(error), style="red"))
        return False
    return True

"""A turn with the hooks around it: SessionStart, UserPromptSubmit, Stop, and the feedback
PostToolUse hooks leave for the model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent.engine.outcome import TurnResult, TurnStatus
from agent.hooks.engine import Hooks

MAX_STOP_CONTINUATIONS = 3
"""Turns a Stop hook may add after the model answered, before the answer stands."""


async def run_hooked_turn(
    hooks: Hooks,
    turn: Callable[[str | None], Awaitable[TurnResult]],
    prompt: str | None,
    *,
    start: str | None,
    model: str,
    note: Callable[[str], None],
) -> TurnResult:
    """Run ``turn(prompt)`` with the hooks around it.

    Args:
        start: ``startup`` or ``resume`` for the session's first turn (SessionStart runs),
            else None.
        note: Tells the model something with the next prompt (hook context and feedback).
    """
    if start is not None and (context := await hooks.session_start(start, model=model)):
        note(context)
    if prompt is not None:
        blocked, context = await hooks.user_prompt(prompt)
        if blocked is not None:
            return TurnResult(TurnStatus.FAILED, error=f"Blocked by a hook: {blocked}")
        prompt = f"{prompt}\n\n{context}" if context else prompt
    result = await turn(prompt)
    for continued in range(MAX_STOP_CONTINUATIONS):
        await hooks.drain()
        if result.status is not TurnStatus.DONE:
            break
        reason = await hooks.stop(active=continued > 0, last_message=result.answer)
        if reason is None:
            break
        result = await turn(reason)
    await hooks.drain()
    for feedback in hooks.take_feedback():
        note(f"<hook-feedback>{feedback}</hook-feedback>")
    return result

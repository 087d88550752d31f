"""Hooks with Claude Code's schema and semantics (see ``docs/hooks.md``).

How ``agent.app`` wires them (nothing else needs to change):

1. Build one per session, after the config and the session are known::

       hooks = Hooks(config.hooks, workspace=workspace, session_id=session.id,
                     transcript_path=session.path, modes=modes, events=bus)

   Update ``hooks.session_id`` / ``hooks.transcript_path`` when ``/new`` or a resume changes
   the session; ``permission_mode`` is read from ``modes`` (`agent.permissions.modes.Modes`)
   as each hook runs.
2. Tools: pass ``hooks=[hooks.before_tool]`` to ``tools.ToolExecutor`` (PreToolUse).
3. Faces: add ``hooks`` to the engine's faces, e.g. ``Faces([face, hooks])`` — it fires
   PostToolUse / PostToolUseFailure from ``on_tool_result``, Notification for a ``Notice``,
   and Recovery for ``FallbackActivated``, ``GaveUp`` (provider unavailable) and a turn that
   ended with ``max_steps`` or ``repeated_call``. Those run in the background: ``await
   hooks.drain()`` after each turn and before exit. After ``drain``, ``hooks.take_feedback()``
   returns what PostToolUse hooks said for the model; add it to the next request (e.g. as
   ``<hook-feedback>`` text in the next user message) or drop it.
4. Await the lifecycle calls yourself:
   - before a prompt is sent: ``blocked, context = await hooks.user_prompt(prompt)``; if
     ``blocked`` is set, show it and do not run the turn; else append ``context`` (if any) to
     the prompt;
   - after a turn ended with an answer: ``reason = await hooks.stop(active=was_continued,
     last_message=answer)``; if ``reason`` is set, run another turn with ``reason`` as the
     prompt and ``active=True`` (stop after a few such turns);
   - ``context = await hooks.session_start("startup" | "resume" | "clear" | "compact")`` once
     the session is open (add ``context`` to the first prompt), ``await
     hooks.session_end("prompt_input_exit" | "clear" | "other")`` before exit;
   - ``await hooks.pre_compact("manual" | "auto", instructions)`` before compacting;
   - ``await hooks.recovery("provider_unavailable", {...})`` only for what is not already an
     event on the bus (the face covers fallbacks, GaveUp and loop stops).

None of these raises for a hook's failure: it is a `providers.Notice` on ``events``.
"""

from __future__ import annotations

from agent.hooks.engine import PERMISSION_MODES, Hooks
from agent.hooks.runner import HookVerdict, parse_output, run_hook
from agent.hooks.settings import (
    CLAUDE_TOOL_NAMES,
    HOOK_EVENTS,
    CommandHook,
    HookEvent,
    HookMatcher,
    HookSettings,
)

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "HOOK_EVENTS",
    "PERMISSION_MODES",
    "CommandHook",
    "HookEvent",
    "HookMatcher",
    "HookSettings",
    "HookVerdict",
    "Hooks",
    "parse_output",
    "run_hook",
]

"""One-line banners for events: what recovery, compaction and tools did, without noise."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from agent.engine.outcome import SideModelSwitch, SubagentRecovery
from providers import Event, Notice
from recovery import CircuitOpened, GaveUp

QUIET = frozenset(
    {
        "turn_ended",  # the REPL shows how a turn ended
        "checkpoint_recorded",  # the tool line and its diff say it
        "command_changed_files",  # the line after the turn counts them
        "tool_failed",  # the tool line is red already
        "tool_refused",
        "stream_restarted",  # the stream reset is shown where the text is
        "compaction_started",  # the status line says it; the outcome gets a banner
        "circuit_closed",
        "tool_started",  # the tool line follows
        "mode_changed",  # the mode line under the prompt shows it
        "todos_changed",  # the plan is drawn above the status line and the prompt
        "background_started",  # the tool line says it
        "subagent_progress",  # a child's live line shows it
        "undo_applied",  # /undo's report names each file put back or removed
    }
)

_STYLES: dict[str, tuple[str, str]] = {
    "retry_scheduled": ("⏳", "yellow"),
    "request_held": ("⏳", "yellow"),
    "fallback_activated": ("⇄", "bold yellow"),
    "model_restored": ("⇄", "green"),
    "subagent_fallback": ("⇄", "bold yellow"),
    "subagent_model_restored": ("⇄", "green"),
    "side_model_switch": ("⇄", "dim"),
    "tokens_escalated": ("⤒", "yellow"),
    "continuation_requested": ("↪", "yellow"),
    "continuation_exhausted": ("!", "red"),
    "compaction_applied": ("⇣", "cyan"),
    "compaction_failed": ("!", "red"),
    "compaction_disabled": ("!", "red"),
    "budget_exhausted": ("!", "red"),
    "circuit_opened": ("!", "red"),
    "gave_up": ("✗", "bold red"),
    "tool_retried": ("↻", "yellow"),
    "tool_timed_out": ("⏱", "red"),
    "tool_repeated_failure": ("!", "yellow"),
    "tool_repeated_call": ("!", "yellow"),
    "rolled_back": ("↶", "yellow"),
    "undo_applied": ("↶", "green"),
    "mcp_server_changed": ("•", "yellow"),
    "workspace_moved": ("!", "yellow"),
    "endpoint_unreachable": ("⏳", "yellow"),
    "endpoint_answers": ("✓", "green"),
    "background_ended": ("•", "dim"),
}


def is_quiet(event: Event, *, verbose: bool = False) -> bool:
    """Whether ``event`` is shown some other way (or not at all).

    Unless ``verbose``, three more are: giving up (the turn's error says it, once), a
    breaker opening on the only model (the retries go on; the status line shows them) and
    ``small_model`` moving along its chain (side requests only: the session's model stays;
    ``/stats`` counts it). A
    sub-agent's recovery event is shown as that event would be (a child's give-up: its
    `task` result and its summary line say it).
    """
    if isinstance(event, SubagentRecovery):
        return is_quiet(event.recovery, verbose=verbose)
    if event.type in QUIET:
        return True
    if verbose:
        return False
    if isinstance(event, GaveUp | SideModelSwitch):
        return True
    return isinstance(event, CircuitOpened) and not event.fallback


def banner(event: Event, redact: Callable[[str], str] = lambda text: text) -> Text:
    """``⇄ Switched from a to b (reason)``: an icon, then the event's own description, with
    secrets hidden by ``redact`` (a server's error may quote the key it was sent)."""
    if isinstance(event, Notice):
        return notice_line(event, redact)
    kind = event.recovery.type if isinstance(event, SubagentRecovery) else event.type
    icon, style = _STYLES.get(kind, ("•", "yellow"))
    line = Text(f"{icon} ", style=style)
    line.append(redact(event.describe()), style=style)
    return line


_NOTICE_STYLES = {"note": "", "info": "dim", "warning": "yellow"}


def notice_line(notice: Notice, redact: Callable[[str], str] = lambda text: text) -> Text:
    """A notice as it is shown: a warning in yellow, information dimmed, a note plain."""
    return Text(redact(notice.text), style=_NOTICE_STYLES[notice.level])

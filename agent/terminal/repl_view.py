"""What the REPL shows between turns: the last exchange on resume, /stats, /cost, /help."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from agent.engine.outcome import unwrapped
from agent.engine.turn import CONTINUE_AFTER_TOOL_CUT, CONTINUE_PROMPT
from agent.setup.doctor import Finding
from agent.terminal.input_line import CommandInfo
from agent.terminal.mentions import without_attachments
from agent.terminal.renderables import tool_line
from agent.terminal.status_line import compact_number, detour_text, duration_text
from compaction.conversation import COMPACTION_MARK
from providers import Event, Message, ToolResultBlock, Usage
from providers.profiles import cost_of
from recovery import RecoveryStats, RetryScheduled
from recovery.fleet import FleetView
from sessions.loaded import is_shell_run, is_typed_prompt

PROMPT_LINES = 4
ANSWER_LINES = 12
TOOL_LINES = 5
_SHELL_RUN = re.compile(r"<bash-input>(.*?)</bash-input>\n<bash-stdout>(.*?)</bash-stdout>", re.S)
AGENT_PROMPTS = frozenset({CONTINUE_PROMPT, CONTINUE_AFTER_TOOL_CUT})
"""Prompts the agent itself sends; on resume they are not shown as the person's."""


def typed_by_person(message: Message) -> bool:
    """Whether ``message`` is a prompt the person typed, not a note or request of the agent."""
    if not is_typed_prompt(message):
        return False
    return message.text.strip() not in AGENT_PROMPTS and not message.text.startswith(
        COMPACTION_MARK
    )


def last_exchange(messages: Sequence[Message], width: int) -> RenderableType:
    """The person's last prompt, its last few tool calls and the final answer, each cut short.

    A long turn must not fill the screen on resume: earlier tool calls are counted, not
    listed, and only the last answer is shown.
    """
    results: dict[str, ToolResultBlock] = {
        block.tool_use_id: block
        for message in messages
        for block in message.content
        if isinstance(block, ToolResultBlock)
    }
    prompt = next((m for m in messages if typed_by_person(m)), None)
    calls = [b for m in messages if m.role == "assistant" for b in m.tool_uses]
    answers = [m.text for m in messages if m.role == "assistant" and m.text.strip()]
    parts: list[RenderableType] = []
    if prompt is not None:
        parts.append(Text("› " + _head(_typed_text(prompt), PROMPT_LINES), style="bold"))
    if len(calls) > TOOL_LINES:
        earlier = len(calls) - TOOL_LINES
        parts.append(Text(f"… {earlier} earlier tool call{'s' if earlier > 1 else ''}", "dim"))
    for call in calls[-TOOL_LINES:]:
        result = results.get(call.id) or ToolResultBlock(
            tool_use_id=call.id, content="(no result)", is_error=True
        )
        parts.append(tool_line(call, result, width))
    if answers:
        parts.append(Markdown(_head(answers[-1], ANSWER_LINES)))
    return Group(*parts)


def _typed_text(message: Message) -> str:
    """What the person typed: a ``!command`` run as ``! command`` and its output."""
    if not is_shell_run(message):
        return without_attachments(message.text)
    return _SHELL_RUN.sub(lambda found: f"! {found[1]}\n{found[2].rstrip()}", message.text)


def _head(text: str, max_lines: int) -> str:
    """The first ``max_lines`` lines of ``text``, with a count of the lines left out."""
    lines = text.strip().splitlines()
    if len(lines) <= max_lines:
        return "\n".join(lines)
    return "\n".join([*lines[:max_lines], f"… ({len(lines) - max_lines} more lines)"])


def stats_table(stats: RecoveryStats, events: Sequence[Event], sandbox: str = "") -> Table:
    """``/stats``: what recovery did this session, counted by kind, and the sandbox in force."""
    counts = Counter(event.type for event in events)
    retried = [event for event in unwrapped(events) if isinstance(event, RetryScheduled)]
    by_kind = Counter(event.kind.value for event in retried)  # the children's too
    retries = ", ".join(f"{kind} {n}" for kind, n in sorted(by_kind.items())) or "none"
    times = " · ".join(f"{model} {duration_text(s)}" for model, s in stats.time_on_models)
    rows = [
        ("model", stats.current),
        *([("fallback", detour_text(stats.detour, datetime.now()))] if stats.detour else []),
        *([("time on each model", times)] if len(stats.time_on_models) > 1 else []),
        ("requests", str(stats.requests)),
        ("retries", f"{stats.retries} ({retries})"),
        ("time spent waiting", f"{stats.waited:.1f}s"),
        ("fallbacks", str(stats.fallbacks)),
        ("max_tokens escalations", str(stats.escalations)),
        ("stream restarts", str(stats.stream_restarts)),
        ("continuations", str(counts["continuation_requested"])),
        ("compactions", str(counts["compaction_applied"])),
        ("tool failures", str(counts["tool_failed"])),
        ("tool retries", str(counts["tool_retried"])),
        ("retry budget left", f"{stats.budget_tokens:.1f}"),
        ("models skipped (circuit open)", ", ".join(stats.open_circuits) or "none"),
    ]
    rows.extend(fleet_rows(stats))
    if sandbox:
        rows.append(("sandbox", sandbox))
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for name, value in rows:
        table.add_row(Text(name), Text(value))  # plain: "[ab12cd34]" or a model name is no markup
    return table


def fleet_rows(stats: RecoveryStats) -> list[tuple[str, str]]:
    """What the agents sharing this session's keys know together: two rows per key."""
    if not stats.fleet_backend:
        return []
    where = {"file": "agents on this machine", "redis": "agents on every machine (Redis)"}
    rows = [("shared state", where.get(stats.fleet_backend, "this process only"))]
    for view in stats.fleet:
        health, headroom = fleet_lines(view)
        rows.append((f"  {view.model} [{view.account[:8]}]", health))
        if headroom:
            rows.append(("", headroom))
    return rows


def fleet_lines(view: FleetView) -> tuple[str, str]:
    """``server wait 12s · breaker closed · in flight 2`` and ``requests 3/50 left · ...``."""
    health = [
        f"server wait {view.wait:.0f}s" if view.wait > 0 else "no server wait",
        f"breaker open {view.breaker_open:.0f}s" if view.breaker_open else "breaker closed",
        f"in flight {view.in_flight}",
    ]
    headroom = []
    for name, level in (("requests", view.requests), ("tokens", view.tokens)):
        if level is not None:
            headroom.append(f"{name} {compact_number(level[0])}/{compact_number(level[1])} left")
    if view.budget is not None:
        headroom.append(f"retry budget {view.budget:.0f}")
    return " · ".join(health), " · ".join(headroom)


def cost_table(
    this_run: Usage,
    session_total: Usage,
    by_model: dict[str, Usage],
    primary: str = "",
    by_purpose: dict[str, Usage] | None = None,
) -> RenderableType:
    """``/cost``: tokens used in this run and over the session, per model with what it cost at
    list prices ("?" where a price is unknown), per purpose (the turns, compaction, ...), and
    the share that ran on fallbacks."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("", "input", "output", "cache read", "cache write", "cost"):
        table.add_column(column, justify="right" if column else "left", no_wrap=True)

    def row(name: str, usage: Usage, cost: float | str | None = "") -> None:
        money = cost if isinstance(cost, str) else ("?" if cost is None else f"${cost:.4f}")
        table.add_row(
            Text(name),
            compact_number(usage.input_tokens),
            compact_number(usage.output_tokens),
            compact_number(usage.cache_read_tokens),
            compact_number(usage.cache_write_tokens),
            money,
        )

    row("this run", this_run)
    row("session", session_total, cost_of(by_model) if by_model else "")
    for model, usage in sorted(by_model.items()):
        row(f"  {model}", usage, cost_of({model: usage}))
    for purpose, usage in sorted((by_purpose or {}).items(), key=lambda item: item[0] != "turn"):
        row(f"  for {'turns' if purpose == 'turn' else purpose}", usage)
    on_fallback = {m: u for m, u in by_model.items() if not _is_primary(m, primary)}
    if not primary or not on_fallback:
        return table
    tokens = sum(_tokens(u) for u in on_fallback.values())
    share = tokens / max(1, sum(_tokens(u) for u in by_model.values()))
    cost = cost_of(on_fallback)
    money = "" if cost is None else f", ${cost:.4f}"
    note = Text(f"On fallback models: {share:.0%} of the tokens{money}.", style="yellow")
    return Group(table, note)


def _is_primary(model: str, primary: str) -> bool:
    """Whether ``model`` (as a response names it, often with a date) is ``primary``
    (``provider:model``)."""
    name = primary.partition(":")[2] or primary
    return model == name or model.startswith(f"{name}-")


def _tokens(usage: Usage) -> int:
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
    )


_MARKS = {"ok": ("✓", "green"), "warning": ("!", "yellow"), "error": ("✗", "red")}


def doctor_table(findings: Sequence[Finding]) -> Table:
    """``/doctor``: one line per check, its verdict, and the fix where one is needed."""
    table = Table(box=None, show_header=False, pad_edge=False)
    for _ in range(3):
        table.add_column(overflow="fold")
    for finding in findings:
        mark, style = _MARKS[finding.level]
        detail = Text(finding.detail)
        if finding.fix:
            detail.append(f" — {finding.fix}", style=style)
        table.add_row(Text(mark, style=style), Text(finding.what, style="bold"), detail)
    return table


def help_table(commands: Sequence[CommandInfo]) -> RenderableType:
    """``/help``: the commands and the keys."""
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for info in commands:
        # Text, not str: rich would read "[id]" in "/resume [id]" as a markup tag and drop it.
        table.add_row(Text(info.usage), Text(info.description))
    table.add_row(Text("@path"), Text("send a file (or a directory's listing) with the prompt"))
    table.add_row(Text("!command"), Text("run a command now; its output goes with the next prompt"))
    table.add_row(Text("!"), Text("shell mode on/off: every line is a command"))
    keys = Text(
        "Enter sends · Alt-Enter or Esc-Enter: new line · Ctrl-R: search history · "
        "Tab: complete /commands and @paths · Shift-Tab: cycle modes (accept edits, plan) · "
        "Ctrl-C: interrupt a turn · Ctrl-C twice or Ctrl-D: exit",
        style="dim",
    )
    return Group(table, Text(""), keys)


def print_picker(console: Console, rows: Sequence[tuple[str, str, str]]) -> None:
    """A numbered list of sessions: (id, when, first prompt)."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("#", "id", "updated", "first prompt"):
        table.add_column(column, no_wrap=column != "first prompt", overflow="ellipsis")
    for number, (session_id, when, prompt) in enumerate(rows, start=1):
        # A prompt is the person's text: as markup, "[/b]" in it would crash the REPL.
        table.add_row(str(number), session_id, when, Text(prompt))
    console.print(table)


def toolbar_line(
    model: str,
    usage: Usage,
    session_id: str,
    background: int = 0,
    mode: str | None = None,
    mcp_down: str | None = None,
) -> str:
    """The line under the prompt: the mode, running background commands, the model, tokens,
    the session, and MCP servers that are down."""
    tokens = compact_number(usage.input_tokens + usage.output_tokens)
    line = f" {model} · {tokens} tokens · session {session_id} "
    if background:
        line = f" {background} background (/bashes) ·{line}"
    if mode:
        line = f" {mode} ·{line}"
    if mcp_down:
        line += f"· {mcp_down} "
    return line

"""``/permissions``: the rules in force, deny first, each with the file or flag it came from."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agent.permissions.listing import ListedRule

_STYLES = {"deny": "red", "ask": "yellow", "allow": "green"}


def permissions_table(
    rules: Sequence[ListedRule],
    warnings: Sequence[str] = (),
    waiting: Sequence[str] = (),
    mode: str = "default",
    mode_note: str | None = None,
    plan_note: str | None = None,
    read_only_tools: Sequence[str] = (),
    commands_note: str | None = None,
) -> RenderableType:
    """The rules (or how to add some), the project's rules that wait for its trust, what
    could not be read in a settings file, the mode now (by Claude Code's name), what
    Claude Code's settings started it as, the MCP tools marked read-only for plan mode,
    what guards plan mode where the kernel cannot (`agent.permissions.plan.plan_guard_note`),
    and ``commands_note``: how far the path rules reach into commands."""
    parts: list[RenderableType] = []
    if not rules:
        parts.append(
            Text(
                "No permission rules. Add them under permissions: in agent.yaml, or in "
                ".claude/settings.json as for Claude Code.",
                style="dim",
            )
        )
    else:
        table = Table(box=None, pad_edge=False, header_style="bold")
        for column in ("", "rule", "from"):
            table.add_column(column, overflow="fold")
        for rule in rules:
            where = Text(rule.origin or "this session")
            if rule.note:
                where.append(f"  ({rule.note})", style="dim")
            table.add_row(Text(rule.kind, style=_STYLES[rule.kind]), Text(rule.text), where)
        parts.append(table)
        parts.append(Text("Checked in this order: deny, then ask, then allow.", style="dim"))
    if commands_note is not None:
        parts.append(Text(commands_note, style="dim"))
    parts += [Text(f"Not in force: {line}", style="dim") for line in waiting]
    parts += [Text(f"! {warning}", style="yellow") for warning in warnings]
    parts.append(Text(f"Mode: {mode} (Shift-Tab cycles)", style="dim"))
    if mode_note is not None:
        parts.append(Text(f"Started as {mode_note}", style="dim"))
    if read_only_tools:
        marked = ", ".join(read_only_tools)
        parts.append(Text(f"Run in plan mode (you marked them read-only): {marked}", style="dim"))
    if plan_note is not None:
        parts.append(Text(f"! {plan_note}", style="yellow"))
    return Group(*parts)

"""``/permissions``: the rules in force, deny first, each numbered, with the file, flag or
approval-prompt answer it came from; ``/permissions remove N`` takes back one given at the
approval prompt (``[a]lways for this tool``, or a ``[p]`` prefix saved for the project)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agent.permissions.check import PermissionCheck
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
        for column in ("#", "", "rule", "from"):
            table.add_column(column, overflow="fold")
        for number, rule in enumerate(rules, 1):
            where = Text(rule.origin or "this session")
            if rule.note:
                where.append(f"  ({rule.note})", style="dim")
            kind = Text(rule.kind, style=_STYLES[rule.kind])
            table.add_row(Text(str(number), style="dim"), kind, Text(rule.text), where)
        parts.append(table)
        parts.append(Text("Checked in this order: deny, then ask, then allow.", style="dim"))
        if any(rule.removable for rule in rules):
            hint = "/permissions remove N takes back a rule given at the approval prompt."
            parts.append(Text(hint, style="dim"))
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


def permissions_command(
    permissions: PermissionCheck,
    arguments: str,
    *,
    plan_note: str | None = None,
    commands_note: str | None = None,
    offered: Collection[str] | None = None,
) -> RenderableType:
    """``/permissions`` (the table) or ``/permissions remove N|RULE`` (what changed, or why
    nothing did); the notes are `permissions_table`'s, and a rule for a tool not in
    ``offered`` (the session's tools) is noted as ignored."""
    verb, _, target = arguments.strip().partition(" ")
    if not verb:
        return permissions_table(
            permissions.listing(offered),
            permissions.warnings,
            permissions.waiting,
            permissions.modes.mode,
            permissions.mode_note,
            plan_note,
            permissions.read_only_tools,
            commands_note,
        )
    target = target.strip()
    if verb != "remove" or not target:
        return Text("Usage: /permissions, or /permissions remove N (or the rule)", style="red")
    listed = permissions.listing()
    if target.isdigit():
        if not 1 <= int(target) <= len(listed):
            return Text(f"No rule {target}: /permissions lists {len(listed)}.", style="red")
        chosen = listed[int(target) - 1]
        if chosen.kind != "allow":
            where = chosen.origin or "this session"
            return Text(
                f"{chosen.kind} {chosen.text} comes from {where}: remove it there.", style="red"
            )
        target = chosen.text
    try:
        said = permissions.forget(target)
    except ValueError as error:
        return Text(f"{error}.", style="red")
    except OSError as error:
        said = f"Removed {target} for this session; the saved rule stays ({error})."
        return Text(said, style="yellow")
    return Text(said, style="green")

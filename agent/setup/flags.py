"""Command-line flags as configuration: each flag that sets a key is declared once, with it.

A flag's value becomes an override keyed by its dotted configuration path (``sandbox.mode``),
as codex's ``-c key=value`` does; ``--set KEY=VALUE`` reaches every other key. Overrides win
over every file and the environment (`agent.setup.startup.Options`).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import typer
import yaml

if TYPE_CHECKING:
    from agent.setup.startup import Options

Choice = TypeVar("Choice", bound=StrEnum)

CONFIG_FLAGS: dict[str, str] = {}
"""Option name → the configuration key it sets (`config_option`)."""
CONSTANT_FLAGS: dict[str, tuple[str, str]] = {}
"""Switches that set a configuration key to one value: option name → (key, value)."""
NAMED_FLAGS: dict[str, dict[str, dict[str, Any]]] = {}
"""Options whose value names settings: option name → value → {key: value}."""

PERMISSION_MODES: dict[str, dict[str, Any]] = {
    "default": {"approval": "ask"},
    "acceptEdits": {"approval": "auto-edit"},
    "plan": {"plan_mode": True},
    "bypassPermissions": {"approval": "full-auto"},
}
"""Claude Code's ``--permission-mode`` values, as our settings."""


def config_option(key: str, *names: str, constant: str | None = None, **kwargs: Any) -> Any:
    """A Typer option that sets the configuration key ``key`` (dotted: ``sandbox.mode``).

    This is the only place a flag is tied to configuration: its value becomes an override in
    `Options.overrides`, which wins over every file and the environment.
    """
    if constant is None:
        CONFIG_FLAGS[names[0]] = key
    else:
        CONSTANT_FLAGS[names[0]] = (key, constant)
    return typer.Option(*names, **kwargs)


def named_option(values: dict[str, dict[str, Any]], *names: str, **kwargs: Any) -> Any:
    """A Typer option whose value (one of ``values``) stands for several settings at once,
    as Claude Code's ``--permission-mode plan`` does; a flag setting the same key is an error.
    """
    NAMED_FLAGS[names[0]] = values
    return typer.Option(*names, **kwargs)


def flag_overrides(ctx: typer.Context, settings: list[str]) -> dict[str, Any]:
    """The configuration the flags on the command line set, by dotted key.

    ``settings`` are ``--set KEY=VALUE`` pairs (the value read as YAML: ``3``, ``true``,
    ``[a, b]``); the dedicated flags win over them, and switches such as ``--yes`` win last.
    """
    overrides = dict(_key_value(item) for item in settings)
    for param in ctx.command.params:
        name, value = param.opts[0], ctx.params.get(param.name or "")
        if name in CONFIG_FLAGS and value not in (None, [], ()):
            overrides[CONFIG_FLAGS[name]] = _plain(value)
    for param in ctx.command.params:
        name = param.opts[0]
        if name in CONSTANT_FLAGS and ctx.params.get(param.name or ""):
            key, constant = CONSTANT_FLAGS[name]
            overrides[key] = constant
    for param in ctx.command.params:
        name, value = param.opts[0], ctx.params.get(param.name or "")
        if name in NAMED_FLAGS and value is not None:
            named = NAMED_FLAGS[name][str(value)]
            if clash := [key for key in named if key in overrides]:
                raise typer.BadParameter(
                    f"{name} and the flag setting {clash[0]} conflict; use one"
                )
            overrides |= named
    return overrides


def group_options(ctx: typer.Context, workspace: Path) -> Options:
    """The options the flags before a subcommand give (--model, --set, --config ...)."""
    from agent.setup.startup import Options

    parent = cast(typer.Context, ctx.parent)  # the group's context: the flags before it
    return Options(
        workspace=workspace,
        config_file=parent.params.get("config"),
        overrides=flag_overrides(parent, list(parent.params.get("settings") or [])),
        verbose=bool(parent.params.get("verbose")),
    )


def _key_value(item: str) -> tuple[str, Any]:
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise typer.BadParameter(f"{item!r} is not KEY=VALUE (e.g. --set recovery.max_attempts=5)")
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = text
    return key.strip(), value


def _plain(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def choice(kind: type[Choice]) -> Callable[[str], Choice]:
    """Parse an option value into ``kind``; a bad value gets one line listing the choices.

    (Typer's own enum parsing goes through pydantic, whose message starts "Value error,".)
    """

    def parse(value: str) -> Choice:
        try:
            return kind(value)
        except ValueError:
            choices = ", ".join(member.value for member in kind)
            raise typer.BadParameter(f"{value!r} is not one of {choices}.") from None

    return parse


PROMPT_OPTIONS = ("-p", "--print")


def with_empty_prompt(args: list[str], options: set[str]) -> list[str]:
    """``args`` with an empty value after a ``-p`` that has none (``agent -p --resume ID``).

    Click would take the next option (or nothing) as the prompt; an empty prompt means
    "continue the interrupted turn". Only our own option names count as "no value", so a
    prompt that happens to start with a dash still works.
    """
    fixed: list[str] = []
    for index, arg in enumerate(args):
        fixed.append(arg)
        following = args[index + 1] if index + 1 < len(args) else None
        if arg in PROMPT_OPTIONS and (following is None or following.split("=")[0] in options):
            fixed.append("")
        if arg == "--":
            fixed += args[index + 1 :]
            break
    return fixed

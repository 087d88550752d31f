"""Settings that tiny models can cope with.

A model of a few hundred million parameters (the bundled ``local:smollm2``) cannot keep six
tool schemas apart in a 2k-token window: given all of them it calls one tool over and over
until ``max_steps``. Offered three read-only tools, a short step budget and an early stop on
repeated calls, it answers or stops within seconds. Whatever the person set explicitly wins.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent.setup.config import Config
from providers.models import ModelRef

TINY_MODEL_PREFIXES = ("smollm",)
"""Model names (after ``provider:``) of models too small for the full tool set."""

TINY_TOOLS = ["read_file", "list_files", "search"]
TINY_MAX_STEPS = 8
TINY_REPEATED_CALL_LIMIT = 3


def is_tiny(model_name: str) -> bool:
    """Whether ``model_name`` is a model known to be too small for the full tool set."""
    return model_name.lower().startswith(TINY_MODEL_PREFIXES)


def fit_to_tiny_model(config: Config, ref: ModelRef | None = None) -> tuple[Config, str | None]:
    """``config`` with the tiny-model settings when ``ref`` (default: its main model) is
    tiny, and a notice.

    Only keys the person left unset change; the notice says which and how to undo it.
    """
    ref = ref or config.model_chain()[0]
    if not is_tiny(ref.name):
        return config, None
    tools = config.tools
    tool_changes: dict[str, object] = {}
    if _unchosen(tools, "enabled"):
        tool_changes["enabled"] = list(TINY_TOOLS)
    if _unchosen(tools, "repeated_call_limit"):
        limit = max(TINY_REPEATED_CALL_LIMIT, tools.repeated_call_warn)
        tool_changes["repeated_call_limit"] = limit
    changes: dict[str, object] = {}
    if _unchosen(config, "max_steps"):
        changes["max_steps"] = TINY_MAX_STEPS
    if not tool_changes and not changes:
        return config, None
    fitted = config.model_copy(update={**changes, "tools": tools.model_copy(update=tool_changes)})
    return fitted, _notice(fitted)


def _unchosen(settings: BaseModel, key: str) -> bool:
    """Whether ``key`` is unset or still has its default value."""
    default = type(settings).model_fields[key].get_default(call_default_factory=True)
    return key not in settings.model_fields_set or getattr(settings, key) == default


def _notice(config: Config) -> str:
    tools = config.tools.enabled
    offered = ", ".join(tools) if tools else "no tools"
    return (
        f"This is a tiny model: it is offered {offered}, and a turn stops after "
        f"{config.max_steps} steps or {config.tools.repeated_call_limit} identical calls "
        "(tools.enabled, max_steps and tools.repeated_call_limit in the config change this)."
    )

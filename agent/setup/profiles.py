"""The effective profile of a model: the table (`providers.profiles`) plus the configuration.

The configuration adds the ``models:`` overrides and the local ``n_ctx`` (`Config.limits`), a
provider's ``prompt_cache: false``, and what the person chose: a tiny model gets the tiny-model
tool set, step budget and early stop (`providers.profiles.TinySettings`) only for the keys the
person left unset. The engine asks for the current model's profile when it needs it, so a
fallback or ``/model`` changes the tools and limits from the next request on.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent.setup.config import Config
from providers.models import ModelLimits, ModelRef
from providers.profiles import ModelProfile, TinySettings, model_profile
from recovery import RecoveringProvider
from tools import ToolSettings

TINY_TOOLS = list(TinySettings().tools)
TINY_MAX_STEPS = TinySettings().max_steps


def is_tiny(model_name: str) -> bool:
    """Whether ``model_name`` is a model known to be too small for the full tool set."""
    return model_profile(model_name).tiny is not None


def sees_images(config: Config, ref: ModelRef) -> bool:
    """Whether ``ref`` can be shown images: its ``models:`` entry's ``vision`` if set, else
    every model but the in-process local ones."""
    override = config.models.get(str(ref))
    if override is not None and override.vision is not None:
        return override.vision
    return not (ref.provider == "local" or config.provider(ref.provider).type == "local")


class Profiles:
    """The effective `ModelProfile` of each model under one configuration (computed once).

    Args:
        config: The configuration as loaded, before anything model-specific is applied.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._profiles: dict[ModelRef, ModelProfile] = {}
        self._tools: dict[ModelRef, ToolSettings] = {}

    def of(self, ref: ModelRef) -> ModelProfile:
        """The profile of ``ref``: its limits, tiny settings, prompt caching and price."""
        if ref not in self._profiles:
            self._profiles[ref] = self._build(ref)
        return self._profiles[ref]

    def _build(self, ref: ModelRef) -> ModelProfile:
        known = model_profile(ref.name)
        provider = self.config.provider(ref.provider)
        local = ref.provider == "local" or provider.type == "local"
        return ModelProfile(
            limits=self.config.limits(ref),
            tiny=self._tiny(known.tiny),
            prompt_cache=known.prompt_cache and provider.prompt_cache,
            pricing=None if local else known.pricing,  # the list price is the vendor's
            vision=sees_images(self.config, ref),
        )

    def _tiny(self, defaults: TinySettings | None) -> TinySettings | None:
        """``defaults`` where the person left the key unset; what they chose elsewhere."""
        if defaults is None:
            return None
        config, tools = self.config, self.config.tools
        chosen_tools = tools.enabled if not _unchosen(tools, "enabled") else None
        return TinySettings(
            tools=defaults.tools if chosen_tools is None else tuple(chosen_tools),
            max_steps=defaults.max_steps if _unchosen(config, "max_steps") else config.max_steps,
            repeated_call_limit=max(defaults.repeated_call_limit, tools.repeated_call_warn)
            if _unchosen(tools, "repeated_call_limit")
            else tools.repeated_call_limit,
        )

    def max_steps(self, ref: ModelRef) -> int:
        """Model calls allowed per turn on ``ref``."""
        tiny = self.of(ref).tiny
        return self.config.max_steps if tiny is None else tiny.max_steps

    def tool_settings(self, ref: ModelRef) -> ToolSettings:
        """The ``tools:`` settings on ``ref`` (the same object each time, so a change shows)."""
        if ref not in self._tools:
            tiny = self.of(ref).tiny
            settings = self.config.tools
            if tiny is not None:
                update = {
                    "enabled": list(tiny.tools),
                    "repeated_call_limit": tiny.repeated_call_limit,
                }
                settings = settings.model_copy(update=update)
            self._tools[ref] = settings
        return self._tools[ref]

    def notice(self, ref: ModelRef) -> str | None:
        """What the person should know when ``ref`` is a tiny model given settings they did not
        choose: what applies and how to change it. None otherwise."""
        tiny = self.of(ref).tiny
        config, tools = self.config, self.config.tools
        unset = [_unchosen(tools, "enabled"), _unchosen(tools, "repeated_call_limit")]
        if tiny is None or not any([*unset, _unchosen(config, "max_steps")]):
            return None
        offered = ", ".join(tiny.tools) if tiny.tools else "no tools"
        return (
            f"This is a tiny model: it is offered {offered}, and a turn stops after "
            f"{tiny.max_steps} steps or {tiny.repeated_call_limit} identical calls "
            "(tools.enabled, max_steps and tools.repeated_call_limit in the config change this)."
        )


class CurrentModel:
    """The profile of the model ``provider`` uses now, asked for each time it is needed: the
    engine's tools, step budget and compaction read it, so a fallback or ``/model`` changes
    them from the next request on.
    """

    def __init__(self, profiles: Profiles, provider: RecoveringProvider) -> None:
        self.profiles = profiles
        self.provider = provider

    def name(self) -> str:
        """The model's ``provider:name``."""
        return str(self.provider.current)

    def tool_settings(self) -> ToolSettings:
        return self.profiles.tool_settings(self.provider.current)

    def max_steps(self) -> int:
        return self.profiles.max_steps(self.provider.current)

    def limits(self) -> ModelLimits:
        return self.profiles.of(self.provider.current).limits


def _unchosen(settings: BaseModel, key: str) -> bool:
    """Whether ``key`` is unset or still has its default value."""
    default = type(settings).model_fields[key].get_default(call_default_factory=True)
    return key not in settings.model_fields_set or getattr(settings, key) == default

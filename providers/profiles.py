"""What we know about each model, in one table: limits, tiny-model needs, caching, prices.

`model_profile` looks a model name up by its longest matching prefix, as vendors name their
models in families (``claude-sonnet-4-5-20250929`` is a ``claude-sonnet-4-5``). What the
configuration adds (``models:`` overrides, a provider's ``prompt_cache: false``, what the person
chose over the tiny-model defaults) is applied above this layer, in ``agent.setup.profiles``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from providers.messages import Usage
from providers.models import DEFAULT_LIMITS, ModelLimits


@dataclass(frozen=True)
class Pricing:
    """A model's list price in USD per million tokens."""

    input: float
    output: float
    cache_read: float | None = None
    """Input read from the prompt cache; None when the vendor publishes no cached price."""
    cache_write: float | None = None
    """Input written to the prompt cache; None when the vendor publishes no such price."""

    def cost(self, usage: Usage) -> float | None:
        """What ``usage`` costs in USD; None if it used a kind of token with no known price."""
        total = usage.input_tokens * self.input + usage.output_tokens * self.output
        for tokens, price in (
            (usage.cache_read_tokens, self.cache_read),
            (usage.cache_write_tokens, self.cache_write),
        ):
            if tokens and price is None:
                return None
            total += tokens * (price or 0.0)
        return total / 1_000_000


@dataclass(frozen=True)
class TinySettings:
    """What a tiny model can cope with: a few read-only tools, a short turn, an early stop.

    A model of a few hundred million parameters (the bundled ``local:smollm2``) cannot keep six
    tool schemas apart in a 2k-token window: given all of them it calls one tool over and over
    until ``max_steps``. Offered three read-only tools, a short step budget and an early stop
    on repeated calls, it answers or stops within seconds.
    """

    tools: tuple[str, ...] = ("read_file", "list_files", "search")
    max_steps: int = 8
    repeated_call_limit: int = 3


@dataclass(frozen=True)
class ModelProfile:
    """Everything model-dependent the agent needs to know about one model.

    Attributes:
        limits: Context window and output ceiling.
        tiny: The settings a model too small for the full tool set gets; None for others.
        prompt_cache: Whether requests mark prompt-cache breakpoints (Anthropic type).
        pricing: The list price; None when unknown (never a guess).
        vision: Whether the model can be shown images.
    """

    limits: ModelLimits = DEFAULT_LIMITS
    tiny: TinySettings | None = None
    prompt_cache: bool = True
    pricing: Pricing | None = None
    vision: bool = True


DEFAULT_PROFILE = ModelProfile()
TINY = TinySettings()

# Prices: the vendors' published list prices (anthropic.com/pricing and platform.openai.com/docs/
# pricing, standard tier, prompts up to 200k tokens), USD per million tokens. A price applies to
# the name it is listed under and that name's dated snapshots only (`_priced`): a sibling we do
# not list (``gpt-4o-realtime-preview``, a newer ``claude-opus-4-6``) gets its family's limits
# but no price. Limits: the vendors' published context windows and output ceilings.
# Anthropic's cache writes (5-minute TTL) are 1.25x the input price.
_OPUS_4 = Pricing(15.0, 75.0, 1.50, 18.75)
_SONNET_4 = Pricing(3.0, 15.0, 0.30, 3.75)
_GPT_4_1 = ModelLimits(1_047_576, 32_768)
_GPT_4O = ModelLimits(128_000, 16_384)
_GPT_5 = ModelLimits(400_000, 128_000)

PROFILES: dict[str, ModelProfile] = {
    "claude": ModelProfile(ModelLimits(200_000, 8_192)),
    "claude-opus-4": ModelProfile(ModelLimits(200_000, 32_000), pricing=_OPUS_4),
    "claude-opus-4-0": ModelProfile(ModelLimits(200_000, 32_000), pricing=_OPUS_4),
    "claude-opus-4-1": ModelProfile(ModelLimits(200_000, 32_000), pricing=_OPUS_4),
    "claude-opus-4-5": ModelProfile(
        ModelLimits(200_000, 64_000), pricing=Pricing(5.0, 25.0, 0.50, 6.25)
    ),
    "claude-sonnet-4": ModelProfile(ModelLimits(200_000, 64_000), pricing=_SONNET_4),
    "claude-sonnet-4-0": ModelProfile(ModelLimits(200_000, 64_000), pricing=_SONNET_4),
    "claude-sonnet-4-5": ModelProfile(ModelLimits(200_000, 64_000), pricing=_SONNET_4),
    "claude-haiku-4": ModelProfile(ModelLimits(200_000, 64_000)),
    "claude-haiku-4-5": ModelProfile(
        ModelLimits(200_000, 64_000), pricing=Pricing(1.0, 5.0, 0.10, 1.25)
    ),
    "claude-3-7-sonnet": ModelProfile(ModelLimits(200_000, 64_000)),
    "claude-3-5-haiku": ModelProfile(ModelLimits(200_000, 8_192)),
    "claude-3-5-sonnet": ModelProfile(ModelLimits(200_000, 8_192)),
    "gpt-4.1": ModelProfile(_GPT_4_1, pricing=Pricing(2.0, 8.0, 0.50)),
    "gpt-4.1-mini": ModelProfile(_GPT_4_1, pricing=Pricing(0.40, 1.60, 0.10)),
    "gpt-4.1-nano": ModelProfile(_GPT_4_1, pricing=Pricing(0.10, 0.40, 0.025)),
    "gpt-4o": ModelProfile(_GPT_4O, pricing=Pricing(2.50, 10.0, 1.25)),
    "gpt-4o-2024-05-13": ModelProfile(_GPT_4O, pricing=Pricing(5.0, 15.0)),
    "gpt-4o-mini": ModelProfile(_GPT_4O, pricing=Pricing(0.15, 0.60, 0.075)),
    "gpt-5": ModelProfile(_GPT_5, pricing=Pricing(1.25, 10.0, 0.125)),
    "gpt-5-mini": ModelProfile(_GPT_5, pricing=Pricing(0.25, 2.0, 0.025)),
    "gpt-5-nano": ModelProfile(_GPT_5, pricing=Pricing(0.05, 0.40, 0.005)),
    "o3": ModelProfile(ModelLimits(200_000, 100_000)),
    "o4-mini": ModelProfile(ModelLimits(200_000, 100_000)),
    "qwen2.5-coder": ModelProfile(ModelLimits(32_768, 8_192)),
    "llama3": ModelProfile(ModelLimits(8_192, 4_096)),
    "smollm": ModelProfile(tiny=TINY),
    "smollm2": ModelProfile(ModelLimits(2_048, 1_024), tiny=TINY),
}
"""Model-name prefix → profile; the longest matching prefix wins. Keys are lower case."""

_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8})?")
"""What may follow a priced name and keep its price: nothing, or a date (a dated snapshot)."""


def cost_of(usage_by_model: Mapping[str, Usage]) -> float | None:
    """What ``usage_by_model`` (vendor model name → tokens) costs at list prices, in USD;
    None when any model's price, or the price of a kind of token it used, is unknown."""
    total = 0.0
    for model, usage in usage_by_model.items():
        pricing = model_profile(model).pricing
        cost = pricing.cost(usage) if pricing is not None else None
        if cost is None:
            return None
        total += cost
    return round(total, 6)


def model_profile(model_name: str) -> ModelProfile:
    """What the table says about ``model_name`` (longest matching prefix, any case), else
    `DEFAULT_PROFILE`: default limits, not tiny, no price."""
    name = model_name.lower()
    best = ""
    for prefix in PROFILES:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    if not best:
        return DEFAULT_PROFILE
    profile = PROFILES[best]
    if profile.pricing is not None and not _SNAPSHOT.fullmatch(name[len(best) :]):
        return replace(profile, pricing=None)
    return profile

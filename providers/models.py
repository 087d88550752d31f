"""Model references (``provider:model``) and what we know about common models' limits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelRef:
    """A model named as ``provider:model``, e.g. ``anthropic:claude-sonnet-4-5``.

    ``provider`` is either a built-in provider (``anthropic``, ``openai``, ``local``) or the name
    of an entry under ``providers:`` in the configuration (an OpenAI-compatible server, say).
    """

    provider: str
    name: str

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """Parse ``provider:model``; raise `ValueError` with what was expected otherwise."""
        provider, sep, name = text.strip().partition(":")
        if not sep or not provider or not name:
            raise ValueError(
                f"model reference {text!r} must look like 'provider:model', "
                "e.g. 'anthropic:claude-sonnet-4-5' or 'openai:gpt-4.1'"
            )
        return cls(provider=provider, name=name)

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


@dataclass(frozen=True)
class ModelLimits:
    """How much a model can read (context window) and write (output ceiling), in tokens."""

    context_window: int
    max_output_tokens: int


DEFAULT_LIMITS = ModelLimits(context_window=128_000, max_output_tokens=8_192)

# Longest prefix wins. Figures are the vendors' published limits.
KNOWN_LIMITS: dict[str, ModelLimits] = {
    "claude-opus-4": ModelLimits(200_000, 32_000),
    "claude-sonnet-4": ModelLimits(200_000, 64_000),
    "claude-haiku-4": ModelLimits(200_000, 64_000),
    "claude-3-7-sonnet": ModelLimits(200_000, 64_000),
    "claude-3-5-haiku": ModelLimits(200_000, 8_192),
    "claude-3-5-sonnet": ModelLimits(200_000, 8_192),
    "claude": ModelLimits(200_000, 8_192),
    "gpt-4.1": ModelLimits(1_047_576, 32_768),
    "gpt-4o": ModelLimits(128_000, 16_384),
    "gpt-5": ModelLimits(400_000, 128_000),
    "o3": ModelLimits(200_000, 100_000),
    "o4-mini": ModelLimits(200_000, 100_000),
    "qwen2.5-coder": ModelLimits(32_768, 8_192),
    "llama3": ModelLimits(8_192, 4_096),
    "smollm2": ModelLimits(2_048, 1_024),
}


def known_limits(model_name: str) -> ModelLimits:
    """The published limits of ``model_name`` (longest matching prefix), else a safe default."""
    best = ""
    for prefix in KNOWN_LIMITS:
        if model_name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return KNOWN_LIMITS[best] if best else DEFAULT_LIMITS

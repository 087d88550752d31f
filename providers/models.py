"""Model references (``provider:model``) and the shape of a model's limits.

What is known about each model (limits included) is one table: `providers.profiles`.
"""

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

"""Token accounting: the provider's own ``usage`` numbers, plus an estimate for what is new.

After each response the provider tells us what the request and its answer cost
(input + output tokens). That figure is the truth for those messages; only the messages added
since are estimated, at `chars_per_token` characters a token. When the conversation no longer
starts with the counted messages (after compaction, say), everything is estimated again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compaction.settings import CompactionSettings
from providers import Message, ToolSpec, Usage
from providers.models import ModelLimits
from providers.wire_cache import shared_prefix

# Role markers and block framing cost a few tokens per message on both wire formats.
MESSAGE_OVERHEAD_TOKENS = 4


@dataclass(frozen=True)
class ContextBudget:
    """The token levels that drive compaction for one model.

    Attributes:
        usable: Context window minus the output reserve.
        threshold: Above this, compact proactively.
        target: What compaction aims for.
    """

    usable: int
    threshold: int
    target: int

    @classmethod
    def of(cls, limits: ModelLimits, settings: CompactionSettings) -> ContextBudget:
        """Budget of a model with ``limits`` under ``settings``."""
        # The reserve never takes more than half the window, whatever the output ceiling says.
        reserve = min(
            settings.output_reserve_tokens, limits.max_output_tokens, limits.context_window // 2
        )
        usable = max(1, limits.context_window - reserve)
        return cls(
            usable=usable,
            threshold=int(usable * settings.context_compact_threshold),
            target=int(usable * settings.context_compact_target),
        )


class TokenCounter:
    """Counts a conversation's tokens, calibrated by the provider's reported usage.

    Args:
        chars_per_token: Characters per token for estimated text.
    """

    def __init__(self, chars_per_token: float = 4.0) -> None:
        self.chars_per_token = chars_per_token
        self._counted: list[Message] = []
        self._counted_tokens = 0

    def observe(self, messages: Sequence[Message], usage: Usage) -> None:
        """Record that ``messages`` (a request's messages and its answer) cost ``usage``.

        A response without usage figures (all zero) teaches nothing and is ignored.
        """
        if usage.total_tokens <= 0:
            return
        self._counted = list(messages)
        self._counted_tokens = usage.total_tokens

    def forget(self) -> None:
        """Drop the calibration (e.g. after switching to a model with another tokenizer)."""
        self._counted = []
        self._counted_tokens = 0

    def count(
        self, messages: Sequence[Message], *, system: str = "", tools: Sequence[ToolSpec] = ()
    ) -> int:
        """Tokens ``messages`` take in a request with this system prompt and these tools.

        The provider's figure covers the longest prefix it counted; only the rest is estimated.
        System prompt and tool specs are estimated only when nothing was counted.
        """
        common = shared_prefix(messages, self._counted, equal=True)
        if common == 0:
            return self.estimate_overhead(system, tools) + self.estimate(messages)
        # The counted messages may have diverged at the end (e.g. a stitched answer).
        diverged = self.estimate(self._counted[common:])
        return max(0, self._counted_tokens - diverged) + self.estimate(messages[common:])

    def estimate(self, messages: Sequence[Message]) -> int:
        """An estimate of the tokens in ``messages``, from their characters alone."""
        return sum(self.estimate_message(message) for message in messages)

    def estimate_message(self, message: Message) -> int:
        """An estimate of one message's tokens, tool inputs and results included."""
        return MESSAGE_OVERHEAD_TOKENS + self.estimate_text(message.chars)

    def estimate_overhead(self, system: str, tools: Sequence[ToolSpec]) -> int:
        """An estimate of the tokens of the system prompt and tool specs."""
        return self.estimate_text(len(system) + sum(tool.chars for tool in tools))

    def estimate_text(self, chars: int | str) -> int:
        """Tokens for ``chars`` characters (or the characters of a string)."""
        n = len(chars) if isinstance(chars, str) else chars
        return math.ceil(n / self.chars_per_token)

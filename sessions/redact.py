"""Redaction of secrets (API keys, tokens) from anything written to disk: sessions and logs.

A `Redactor` knows the values of secret-looking environment variables and recognises
key-shaped strings by their form. Plug it into structlog as a processor::

    structlog.configure(processors=[..., Redactor.from_environ(), JSONRenderer()])
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

ALWAYS_SECRET = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_PASSWORD", "_ACCESS_KEY")
MIN_SECRET_LENGTH = 8
"""Shorter values are left alone: redacting ``1`` or ``true`` everywhere would wreck the text."""

KEY_PATTERNS = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}",
    r"sk-[A-Za-z0-9_\-]{16,}",
    r"(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"AKIA[0-9A-Z]{16}",
)
KEY_ANCHORS = (
    "sk-",
    "Bearer ",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AKIA",
)
"""Every match of a `KEY_PATTERNS` entry contains one of these (case and all): text with none
of them, and none of the known secret values, holds nothing to redact. Looking for them with
``in`` is many times faster than running the patterns over text that is almost never secret
(every tool output, every session record, every log line)."""
MASK = "[redacted]"


class Redactor:
    """Replaces secret values and key-shaped strings with ``[redacted]`` (or ``[redacted:VAR]``).

    Args:
        secrets: Mapping of a label (usually the environment variable's name) to a secret value.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        self._secrets = dict(secrets or {})
        self._labels: dict[str, str] = {}
        for label, value in (secrets or {}).items():
            if len(value) >= MIN_SECRET_LENGTH:
                self._labels[value] = label
                # Also the JSON-escaped form, so a serialised record is checked as it is.
                self._labels.setdefault(json.dumps(value, ensure_ascii=False)[1:-1], label)
        literal = [re.escape(value) for value in sorted(self._labels, key=len, reverse=True)]
        self._pattern = re.compile("|".join([*literal, *KEY_PATTERNS]))
        # A value that contains an anchor needs no search of its own.
        uncovered = [v for v in self._labels if not any(a in v for a in KEY_ANCHORS)]
        self._anchors, self._anchor_pattern = _prefilter([*uncovered, *KEY_ANCHORS])

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str] | None = None, extra_names: Iterable[str] = ()
    ) -> Redactor:
        """A redactor for the secret-looking variables of ``environ`` (default: ``os.environ``).

        Secret-looking: ``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, any name ending in
        ``_API_KEY``, ``_TOKEN``, ``_SECRET``, ``_PASSWORD`` or ``_ACCESS_KEY``, and
        ``extra_names``.
        """
        env = os.environ if environ is None else environ
        names = set(ALWAYS_SECRET) | set(extra_names)
        secrets = {
            name: value
            for name, value in env.items()
            if name in names or name.upper().endswith(SECRET_SUFFIXES)
        }
        return cls(secrets)

    def with_secrets(self, secrets: Mapping[str, str]) -> Redactor:
        """A redactor that also hides ``secrets`` (e.g. API keys written in the config file)."""
        merged = dict(self._secrets)
        merged.update(secrets)
        return Redactor(merged)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced."""
        if not self._may_hold_secret(text):
            return text
        return self._pattern.sub(self._mask, text)

    def contains_secret(self, text: str) -> bool:
        """Whether ``text`` holds anything this redactor would replace."""
        return self._may_hold_secret(text) and self._pattern.search(text) is not None

    def _may_hold_secret(self, text: str) -> bool:
        return any(map(text.__contains__, self._anchors)) or (  # in C: no frame per anchor
            self._anchor_pattern is not None and self._anchor_pattern.search(text) is not None
        )

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value (dicts, lists, strings) with secrets replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(key): self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value

    def __call__(
        self, logger: object, method_name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        """A structlog processor: redacts every value of the log event."""
        for key, item in list(event_dict.items()):
            event_dict[key] = (
                self.value(item) if isinstance(item, str | dict | list | tuple) else item
            )
        return event_dict

    def _mask(self, match: re.Match[str]) -> str:
        label = self._labels.get(match.group(0))
        return f"[redacted:{label}]" if label else MASK


def _prefilter(anchors: list[str]) -> tuple[tuple[str, ...], re.Pattern[str] | None]:
    """The anchors to look for one by one with ``in``, and a pattern for those that share
    their first two characters with another (``ghp_``, ``gho_``, ... ``github_pat_``).

    Each ``in`` reads the whole text: one pattern whose alternatives share a literal prefix
    is searched for that prefix in a single pass, ~6x faster than an ``in`` per anchor.
    """
    groups: dict[str, list[str]] = {}
    for anchor in dict.fromkeys(anchors):
        groups.setdefault(anchor[:2], []).append(anchor)
    alone = tuple(group[0] for group in groups.values() if len(group) == 1)
    shared = [re.escape(a) for group in groups.values() if len(group) > 1 for a in group]
    return alone, re.compile("|".join(shared)) if shared else None

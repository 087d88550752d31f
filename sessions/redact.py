"""Redaction of secrets (API keys, tokens) from anything written to disk: sessions and logs.

A `Redactor` knows the values of secret-looking environment variables and recognises
key-shaped strings by their form. A known value is also found encoded (base64, base64url,
hex), reversed, or in slices of 8 characters or more (`sessions.secret_forms`). Plug it into
structlog as a processor::

    structlog.configure(processors=[..., Redactor.from_environ(), JSONRenderer()])
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

import re2
from re2 import _re2  # the automaton itself: the wrapper's str handling doubles the cost

from sessions.secret_forms import encoded_forms, json_escaped, slices

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
of them, and none of the known secret values' forms, holds nothing to redact. One RE2
automaton looks for all of them in a single pass over the bytes: text that is almost never
secret (every tool output, every session record, every log line) costs that pass alone."""
MASK = "[redacted]"

_UNANCHORED = _re2.RE2.Anchor.UNANCHORED


def _options(**settings: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    for name, setting in settings.items():
        setattr(options, name, setting)
    return options


def _literals(texts: Iterable[str]) -> str:
    return "|".join(re2.escape(text) for text in sorted(texts, key=len, reverse=True))


def _byte_literals(texts: Iterable[str]) -> bytes:
    """An RE2 pattern matching any of ``texts`` in their UTF-8 bytes, read as Latin-1."""
    quote = _re2.RE2.QuoteMeta  # leaves bytes >= 0x80 as they are: literal in Latin-1
    return b"|".join(quote(text.encode("utf-8", "surrogatepass")) for text in texts)


class Redactor:
    """Replaces secret values and key-shaped strings with ``[redacted]`` (or ``[redacted:VAR]``).

    Args:
        secrets: Mapping of a label (usually the environment variable's name) to a secret value.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        self._secrets = dict(secrets or {})
        self._labels: dict[str, str] = {}
        self._forms: dict[str, tuple[str, str, int]] = {}
        """Encoded form or slice → (label, the value, where the slice starts; -1: a form)."""
        for label, value in (secrets or {}).items():
            if len(value) >= MIN_SECRET_LENGTH:
                self._labels[value] = label
                # Also the JSON-escaped form, so a serialised record is checked as it is.
                self._labels.setdefault(json_escaped(value), label)
                self._add_forms(label, value)
        literal = [re.escape(value) for value in sorted(self._labels, key=len, reverse=True)]
        self._pattern = re.compile("|".join([*literal, *KEY_PATTERNS]))
        # Leftmost-longest: an encoded form, not the slice that starts where it does.
        self._derived = (
            re2.compile(_literals(self._forms), _options(longest_match=True))
            if self._forms
            else None
        )
        anchors = [*self._labels, *self._forms, *KEY_ANCHORS]
        self._shortest = min(map(len, anchors))
        # Latin-1 over the UTF-8 bytes: each literal is matched byte for byte, no decoding.
        self._filter = _re2.RE2(
            _byte_literals(anchors), _options(encoding=re2.Options.Encoding.LATIN1)
        )

    def _add_forms(self, label: str, value: str) -> None:
        for form in encoded_forms(value):
            self._forms.setdefault(form, (label, value, -1))
            self._forms.setdefault(json_escaped(form), (label, value, -1))
        for start, piece in slices(value):
            self._forms.setdefault(piece, (label, value, start))
            self._forms.setdefault(json_escaped(piece), (label, value, -1))

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
        text = self._pattern.sub(self._mask, text)
        return self._without_forms(_encodable(text)) if self._derived is not None else text

    def contains_secret(self, text: str) -> bool:
        """Whether ``text`` holds anything this redactor would replace."""
        return self._may_hold_secret(text) and (
            self._pattern.search(text) is not None
            or (self._derived is not None and self._derived.search(_encodable(text)) is not None)
        )

    def _may_hold_secret(self, text: str) -> bool:
        if len(text) < self._shortest:
            return False
        data = text.encode("utf-8", "surrogatepass")
        return bool(self._filter.Match(_UNANCHORED, data, 0, len(data))[0][0] >= 0)

    def _without_forms(self, text: str) -> str:
        """``text`` with each encoded form and slice of a known value replaced; a slice as
        far as it goes on matching the value."""
        assert self._derived is not None
        parts: list[str] = []
        done = 0
        for match in self._derived.finditer(text):
            start, end = match.span()
            if end <= done:  # inside a slice already extended past this match
                continue
            label, value, offset = self._forms[match.group()]
            if offset >= 0:
                offset += end - start
                while end < len(text) and offset < len(value) and text[end] == value[offset]:
                    end, offset = end + 1, offset + 1
            parts += [text[done : max(start, done)], f"[redacted:{label}]"]
            done = end
        return "".join(parts) + text[done:] if parts else text

    def value(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings) with secrets replaced: a copy when there
        are any, else the value itself."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict | list | tuple) and not self._may_hold_secret_in(value):
            return value
        return self._copy(value)

    def _copy(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._copy(key): self._copy(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._copy(item) for item in value]
        return value

    def _may_hold_secret_in(self, value: object) -> bool:
        """`_may_hold_secret` over every string in ``value`` at once, as JSON: one pass of
        the automaton instead of one call per string (its fixed cost is most of a short
        string's). A serialised value holds each form JSON-escaped, which the filter knows."""
        try:
            text = json.dumps(value, ensure_ascii=False, default=str, check_circular=False)
        except (TypeError, ValueError, RecursionError):  # keys no JSON can hold: ask each
            return True
        return self._may_hold_secret(text)

    def __call__(
        self, logger: object, method_name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        """A structlog processor: redacts every value of the log event."""
        items = {
            key: item
            for key, item in event_dict.items()
            if isinstance(item, str | dict | list | tuple)
        }
        if items and self._may_hold_secret_in(items):
            for key, item in items.items():
                event_dict[key] = self._copy(item)
        return event_dict

    def _mask(self, match: re.Match[str]) -> str:
        label = self._labels.get(match.group(0))
        return f"[redacted:{label}]" if label else MASK


def _encodable(text: str) -> str:
    """``text``, with any lone surrogate (which RE2's wrapper cannot encode) replaced."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text

"""The other forms a known secret can take in text: encoded, reversed, or cut into slices.

A model, a tool or a script that prints a key base64-encoded, in hex, backwards, or a piece
at a time would otherwise carry it past a redactor that only knows the key as it is. Every
form here is a literal string, so one RE2 automaton can look for all of them at once.
"""

from __future__ import annotations

import base64
import binascii
import json

SLICE = 8
"""Shortest slice of a secret that is redacted: shorter pieces are too common to hide."""


def encoded_forms(value: str) -> set[str]:
    """``value`` reversed, in hex (both cases) and in base64 and base64url, each in the three
    alignments it can take inside a longer encoded text.

    An aligned encoding's first and last characters also depend on the bytes around the
    secret; only the characters that depend on the secret alone are kept, so the form is
    found wherever the secret sits in the encoded data.
    """
    data = value.encode("utf-8", "surrogatepass")
    forms = {value[::-1], binascii.hexlify(data).decode(), binascii.hexlify(data).decode().upper()}
    for shift in range(3):  # bytes before the secret in its 3-byte group
        encoded = base64.b64encode(bytes(shift) + data).decode()
        core = encoded[-(-8 * shift // 6) : 8 * (shift + len(data)) // 6]
        forms.add(core)
        forms.add(core.replace("+", "-").replace("/", "_"))
    return {form for form in forms if len(form) >= SLICE} - {value}


def slices(value: str) -> list[tuple[int, str]]:
    """Every `SLICE`-character piece of ``value``, with where it starts: a longer slice
    holds one at each of its positions."""
    return [(start, value[start : start + SLICE]) for start in range(len(value) - SLICE + 1)]


def json_escaped(text: str) -> str:
    """``text`` as it appears inside a JSON string (a serialised record is checked as is)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return text  # nearly every key: nothing to escape, and no call to json
    return json.dumps(text, ensure_ascii=False)[1:-1]

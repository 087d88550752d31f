"""`JsonBody`: a request body encoded as JSON text, each message encoded once.

`WireCache` maps each message to the vendor's dicts once, but handing those dicts to an SDK
still cost the whole conversation on every request: the SDK copies the body (so a retry can
resend it) and then encodes it. At 20 tool steps that is about 0.3 ms a request; at 200 it is
2.3 ms, and it keeps growing with the history. The adapters send the body as bytes instead
(the SDK's ``post(..., content=...)``), and this keeps each message's JSON text from one
request to the next, so a request costs what its new messages cost.

A message's text is keyed by its identity, or by that of its content: `WireCache` keeps an
OpenAI message dict, and an Anthropic message's content list, from one request to the next.
A joined or marked message (`with_cache_breakpoints`) is a new list and is encoded anew.
Wire values are never changed once built, the rule `WireCache` already relies on.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JsonBody", "encode"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""As the SDKs encode a body: UTF-8 text, no spaces, no NaN (which is not JSON)."""


def encode(value: Any) -> str:
    """``value`` as JSON text, encoded as the SDKs encode a body."""
    return _ENCODER.encode(value)


class JsonBody:
    """Builds request bodies, remembering the encoded messages (and the lists and dicts among
    the other fields, such as the tools) of the latest one.

    What the latest request no longer sent is dropped, so a compacted history does not keep
    its old messages' text alive.
    """

    def __init__(self) -> None:
        self._latest: dict[int, tuple[object, str]] = {}

    def __call__(self, fields: dict[str, Any], messages: list[dict[str, Any]]) -> bytes:
        """``fields`` with ``"messages": messages``, as UTF-8 JSON."""
        kept: dict[int, tuple[object, str]] = {}
        parts: list[str] = []
        for message in messages:
            text = self._known(message, kept)
            if text is None and "content" not in message:
                text = encode(message)
            elif text is None:
                content = message.get("content")
                encoded = self._known(content, kept)
                if encoded is None:
                    encoded = encode(content)
                    kept[id(content)] = (content, encoded)
                rest = {key: value for key, value in message.items() if key != "content"}
                text = encode(rest)[:-1] + ("," if rest else "") + '"content":' + encoded + "}"
                kept[id(message)] = (message, text)
            parts.append(text)
        head = [f"{encode(key)}:{self._value(value, kept)}," for key, value in fields.items()]
        self._latest = kept
        return ("{" + "".join(head) + '"messages":[' + ",".join(parts) + "]}").encode()

    def _value(self, value: object, kept: dict[int, tuple[object, str]]) -> str:
        """A field's text; a list or dict (tools, a system prompt) is kept like a message."""
        if not isinstance(value, (list, dict)):
            return encode(value)
        text = self._known(value, kept)
        if text is None:
            text = encode(value)
            kept[id(value)] = (value, text)
        return text

    def _known(self, value: object, kept: dict[int, tuple[object, str]]) -> str | None:
        """The text ``value`` was encoded as for the latest request (or this one), if it was."""
        entry = self._latest.get(id(value)) or kept.get(id(value))
        if entry is None or entry[0] is not value:
            return None
        kept[id(value)] = entry
        return entry[1]

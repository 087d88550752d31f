"""`JsonBody`: a request body encoded as JSON text, each message encoded once.

`WireCache` maps each message to the vendor's dicts once, but handing those dicts to an SDK
still cost the whole conversation on every request: the SDK copies the body (so a retry can
resend it) and then encodes it. At 20 tool steps that is about 0.3 ms a request; at 200 it is
2.3 ms, and it keeps growing with the history. The adapters send the body as bytes instead
(the SDK's ``post(..., content=...)``), and this keeps each message's JSON text from one
request to the next, so a request costs what its new messages cost.

`WireCache` keeps each message's wire dict from one request to the next, so the messages a
request shares with the one before are the same objects; a joined or marked message
(`with_cache_breakpoints`) is a new dict and is encoded anew. Wire values are never changed
once built, the rule `WireCache` already relies on.
"""

from __future__ import annotations

import json
from typing import Any

from providers.wire_cache import shared_prefix

__all__ = ["JsonBody", "encode"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""As the SDKs encode a body: UTF-8 text, no spaces, no NaN (which is not JSON)."""


def encode(value: Any) -> str:
    """``value`` as JSON text, encoded as the SDKs encode a body."""
    return _ENCODER.encode(value)


class JsonBody:
    """Builds request bodies, remembering the messages of the latest one and their text.

    A conversation grows at its end, so a request starts with the messages the latest one
    sent: those, found by identity (or equality, for a small dict rebuilt per request such
    as OpenAI's system message), reuse their text, and only the rest is encoded. Lists and
    dicts among the other fields (tools, a marked system prompt) are kept the same way.
    """

    def __init__(self) -> None:
        self._messages: list[dict[str, Any]] = []
        self._texts: list[str] = []
        self._fields: dict[str, tuple[object, str]] = {}

    def __call__(self, fields: dict[str, Any], messages: list[dict[str, Any]]) -> bytes:
        """``fields`` with ``"messages": messages``, as UTF-8 JSON."""
        same = shared_prefix(messages, self._messages, equal=True)
        texts = self._texts[:same]
        texts += map(encode, messages[same:])
        self._messages, self._texts = list(messages), texts
        head = "".join(
            [f"{encode(key)}:{self._field(key, value)}," for key, value in fields.items()]
        )
        return ("{" + head + '"messages":[' + ",".join(texts) + "]}").encode()

    def _field(self, key: str, value: object) -> str:
        if not isinstance(value, (list, dict)):
            return encode(value)
        kept = self._fields.get(key)
        if kept is not None and kept[0] is value:
            return kept[1]
        text = encode(value)
        self._fields[key] = (value, text)
        return text

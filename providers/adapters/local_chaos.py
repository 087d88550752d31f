"""Chaos mode for the offline model: `providers.chaos` faults acted out around llama.cpp's
embedded server, where the local adapter has no HTTP to replace.

Each fault takes the shape the runtime itself gives such a failure, so the adapter's own
translation (`classify_server_error`, `classify_local`) and the whole of `recovery` run:
an error object with the status an HTTP server would send (429, 503, the context-size
error), a dropped generation as a connection error, a truncated answer as chunks ending
with ``finish_reason: "length"``, a stall as a wait before the first token.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from providers.adapters.chaos_wire import compactable, cut_openai_chunks
from providers.chaos import ChaosPlan, FaultKind

ChunkHandler = Callable[[dict[str, Any]], bool]
"""llama.cpp's per-chunk callback: True stops the generation."""
Complete = Callable[[dict[str, Any], ChunkHandler], Any]
"""``server.handle_chat_completions``."""

_ERRORS: dict[FaultKind, dict[str, Any]] = {
    FaultKind.RATE_LIMIT: {"code": 429, "type": "rate_limit_error", "message": "rate limited"},
    FaultKind.RATE_LIMIT_WAIT: {"code": 429, "type": "rate_limit_error", "message": "rate limited"},
    FaultKind.OVERLOAD: {"code": 503, "type": "unavailable_error", "message": "Loading model"},
    FaultKind.OUTAGE: {"code": 503, "type": "unavailable_error", "message": "Loading model"},
    FaultKind.OVERFLOW: {
        "code": 400,
        "type": "exceed_context_size_error",
        "message": "the request exceeds the available context size",
    },
}


class LocalChaos:
    """Puts each completion of the local model through the fault its plan draws.

    Args:
        plan: The seeded plan shared by every model of the chain.
        model: ``provider:model``, for the record of injected faults.
        primary: This is the first model of the chain (the one an outage takes down).
        clock: Monotonic seconds (the outage's duration is measured on it).
    """

    def __init__(
        self,
        plan: ChaosPlan,
        *,
        model: str,
        primary: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._plan = plan
        self._model = model
        self._primary = primary
        self._clock = clock

    def around(self, complete: Complete, body: dict[str, Any], cancel: threading.Event) -> Complete:
        """``complete`` for the request ``body``, with this request's fault (if any) in it."""
        fault = self._plan.draw(
            self._model, primary=self._primary, now=self._clock(), compactable=compactable(body)
        )
        if fault is None:
            return complete
        if fault in _ERRORS:
            error = _ERRORS[fault] | {"message": f"chaos: {_ERRORS[fault]['message']}"}
            return lambda body, on_chunk: {"error": error}
        if fault is FaultKind.RESET:
            raise ConnectionResetError("chaos: the generation was dropped before it started")
        if fault is FaultKind.STALL:
            cancel.wait(self._plan.spec.stall)
            return complete
        if fault is FaultKind.CUT_STREAM:
            return _cut_after_first_chunk(complete)
        if fault is FaultKind.TRUNCATE:
            return _truncated(complete)
        return complete  # a tool fault is never drawn for a request


def _cut_after_first_chunk(complete: Complete) -> Complete:
    def cut(body: dict[str, Any], on_chunk: ChunkHandler) -> Any:
        complete(body, lambda chunk: on_chunk(chunk) or True)
        raise ConnectionAbortedError("chaos: the answer was cut off after its first tokens")

    return cut


def _truncated(complete: Complete) -> Complete:
    def truncated(body: dict[str, Any], on_chunk: ChunkHandler) -> Any:
        chunks: list[dict[str, Any]] = []

        def keep(chunk: dict[str, Any]) -> bool:
            chunks.append(chunk)
            return False

        result = complete(body, keep)
        failed = any("error" in chunk for chunk in chunks)
        for chunk in chunks if failed else cut_openai_chunks(chunks):
            if on_chunk(chunk):
                break
        return result

    return truncated

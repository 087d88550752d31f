"""Provider that runs a GGUF model in-process with xllamacpp (llama.cpp): no server, no key.

One call is one streamed chat completion with the tools, run by llama.cpp's embedded server:
it renders the chat template, keeps the evaluated prompt (system prompt and tools) in its KV
cache for the next call, and parses tool calls as they stream, so an answer is generated once.
The call runs in a daemon thread so the event loop stays responsive and the process can exit
without waiting for it; streamed text is handed to ``on_delta`` on the loop's thread. A
cancelled call stops generating at the next token.

The bundled SmolLM2 model gets `COMPACT_TOOL_TEMPLATE` (its own template has no tools); other
GGUF files keep the template they ship with. Under ``--chaos``, each completion meets its fault
around llama.cpp's server (`local_chaos`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import structlog

from providers.adapters.local_chaos import LocalChaos
from providers.adapters.local_model import BUNDLED_MODEL, load_model, resolve_model_path
from providers.adapters.local_prompt import COMPACT_TOOL_TEMPLATE
from providers.adapters.openai_mapping import to_openai_messages, to_openai_tools
from providers.adapters.openai_stream import ChunkAccumulator
from providers.adapters.support import refuse_server_tools, timeout_error
from providers.classify import is_context_overflow
from providers.errors import ErrorKind, LlmError
from providers.messages import Usage
from providers.provider import ChatRequest, ChatResponse, DeltaHandler, StopReason, StreamDelta

__all__ = ["LocalProvider", "classify_local", "classify_server_error", "plain_text_messages"]

log = structlog.get_logger("providers.adapters.local")

T = TypeVar("T")
REPEAT_PENALTY = 1.1
"""llama.cpp's long-time default; 1.0 (none) lets small models repeat one sentence."""


class _Cancelled(Exception):
    """The caller stopped waiting; the worker stops generating."""


class LocalProvider:
    """`Provider` for a GGUF model run in-process by xllamacpp (llama.cpp).

    The model file is checked here and loaded on the first call (once per process).

    Args:
        model: ``smollm2`` (the bundled SmolLM2-135M-Instruct) or a path to a ``.gguf`` file.
        n_ctx: Context window in tokens.
        threads: CPU threads for generation; None lets llama.cpp choose.
        provider_name: Name used in errors and responses.
        temperature: Sampling temperature when the request does not set one.
        seed: Sampling seed, the same for every call so the same request gets the same answer.
        request_timeout: Deadline in seconds for a request that sets none.
        chaos: Injects chaos mode's faults into each completion (`local_chaos`).

    Raises:
        LlmError: if the model file is missing, unreadable or not GGUF (the message names it).
    """

    def __init__(
        self,
        model: str,
        *,
        n_ctx: int = 8192,
        threads: int | None = None,
        provider_name: str = "local",
        temperature: float = 0.2,
        seed: int = 0,
        request_timeout: float | None = None,
        chaos: LocalChaos | None = None,
    ) -> None:
        self.model = model
        self.chaos = chaos
        self.provider_name = provider_name
        self.path: Path = resolve_model_path(model, provider=provider_name)
        self.n_ctx = n_ctx
        self.threads = threads
        self.chat_template = COMPACT_TOOL_TEMPLATE if model == BUNDLED_MODEL else None
        self.temperature = temperature
        self.seed = seed
        self.request_timeout = request_timeout

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Generate the answer to ``request`` in a worker thread; raise only `LlmError`."""
        refuse_server_tools(request, provider=self.provider_name)
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        emit = _loop_handoff(loop, on_delta, cancel) if on_delta is not None else None
        deadline = request.timeout or self.request_timeout
        try:
            async with asyncio.timeout(deadline):
                return await _in_daemon_thread(
                    lambda: self._generate(request, emit, cancel), cancel
                )
        except TimeoutError as exc:
            message = f"no complete answer within {deadline:g}s"
            raise timeout_error(message, provider=self.provider_name, model=self.model) from exc
        finally:
            cancel.set()

    def _generate(
        self, request: ChatRequest, emit: DeltaHandler | None, cancel: threading.Event
    ) -> ChatResponse:
        try:
            server = load_model(
                self.path,
                n_ctx=self.n_ctx,
                threads=self.threads,
                chat_template=self.chat_template,
                provider=self.provider_name,
                model=self.model,
            )
            if cancel.is_set():
                raise _Cancelled
            return self._complete(server, request, emit, cancel)
        except (LlmError, _Cancelled):
            raise
        except Exception as exc:
            error = classify_local(exc, provider=self.provider_name, model=self.model)
            log.info("llm_error", kind=error.kind.value, error=error.message)
            raise error from exc

    def _complete(
        self,
        server: Any,
        request: ChatRequest,
        emit: DeltaHandler | None,
        cancel: threading.Event,
    ) -> ChatResponse:
        body: dict[str, Any] = {
            "messages": plain_text_messages(to_openai_messages(request.system, request.messages)),
            "max_tokens": request.max_tokens,
            "temperature": self.temperature if request.temperature is None else request.temperature,
            "seed": self.seed,
            # llama.cpp's server no longer penalises repeats by default; small models then
            # loop on one sentence until max_tokens ("I'm glad to help. I'm glad to help. ...").
            "repeat_penalty": REPEAT_PENALTY,
            "stream": True,
        }
        if request.tools:
            body["tools"] = to_openai_tools(request.tools)
        accumulator = ChunkAccumulator(emit)
        errors: list[dict[str, Any]] = []
        timings: dict[str, Any] = {}

        def on_chunk(chunk: dict[str, Any]) -> bool:
            if "error" in chunk:
                errors.append(chunk["error"])
                return True
            accumulator.add(chunk)
            timings.update(chunk.get("timings") or {})
            return cancel.is_set()  # True stops llama.cpp before the next token

        complete = server.handle_chat_completions
        if self.chaos is not None:
            complete = self.chaos.around(complete, body, cancel)
        result = complete(body, on_chunk)
        if isinstance(result, dict) and "error" in result:
            errors.append(result["error"])
        if errors:
            raise classify_server_error(errors[0], provider=self.provider_name, model=self.model)
        if cancel.is_set():
            raise _Cancelled
        cached = int(timings.get("cache_n") or 0)  # prompt tokens reused from the KV cache
        read = int(timings.get("prompt_n") or 0)
        generated = int(timings.get("predicted_n") or 0)
        accumulator.usage = Usage(
            input_tokens=read, output_tokens=generated, cache_read_tokens=cached
        )
        return self._response(accumulator, cached + read + generated)

    def _response(self, accumulator: ChunkAccumulator, tokens_in_context: int) -> ChatResponse:
        accumulator.model = self.model
        response = accumulator.response(provider=self.provider_name)
        if response.stop_reason is StopReason.MAX_TOKENS and tokens_in_context >= self.n_ctx - 1:
            # llama.cpp shortens the output to what fits: the window is full, not the budget.
            return response.model_copy(update={"stop_reason": StopReason.CONTEXT_WINDOW})
        return response


# At exit, a generation still running stops at its next token and is waited for this long: a
# daemon thread stopped by interpreter shutdown inside llama.cpp would abort the process.
EXIT_GRACE_SECONDS = 5.0
_running: dict[threading.Thread, threading.Event] = {}


async def _in_daemon_thread(work: Callable[[], T], cancel: threading.Event) -> T:
    """Run ``work`` in a daemon thread: unlike ``asyncio.to_thread``, exit never waits for it.

    A cancelled caller stops waiting at once; the thread notices ``cancel`` at the next token.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            value = work()
        except BaseException as exc:  # handed to the waiting coroutine, which re-raises it
            _call_soon(loop, settle, functools.partial(future.set_exception, exc))
        else:
            _call_soon(loop, settle, functools.partial(future.set_result, value))
        finally:
            _running.pop(threading.current_thread(), None)

    thread = threading.Thread(target=run, name="local-model", daemon=True)
    _running[thread] = cancel
    thread.start()
    return await future


@atexit.register
def _stop_generations() -> None:
    """Stop what is still generating and let it leave llama.cpp before the interpreter ends."""
    for cancel in list(_running.values()):
        cancel.set()
    deadline = time.monotonic() + EXIT_GRACE_SECONDS
    for thread in list(_running):
        thread.join(max(0.0, deadline - time.monotonic()))


def _call_soon(loop: asyncio.AbstractEventLoop, *args: Any) -> None:
    """Schedule on ``loop`` unless it has closed (the caller left; nobody needs the result)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(*args)


def _loop_handoff(
    loop: asyncio.AbstractEventLoop, on_delta: DeltaHandler, cancel: threading.Event
) -> DeltaHandler:
    """A handler for the worker thread that calls ``on_delta`` on the loop's thread."""

    def deliver(delta: StreamDelta) -> None:
        if not cancel.is_set():
            on_delta(delta)

    def handoff(delta: StreamDelta) -> None:
        _call_soon(loop, deliver, delta)

    return handoff


def plain_text_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages with lists of text parts joined into one text, as templates expect."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "\n\n".join(part.get("text", "") for part in content)
        out.append(message | {"content": content})
    return out


def classify_server_error(
    error: dict[str, Any], *, provider: str = "local", model: str = ""
) -> LlmError:
    """Translate an error object from llama.cpp's server into a `LlmError`.

    ``exceed_context_size_error`` (a prompt that does not fit) is
    `ErrorKind.CONTEXT_OVERFLOW`, so compaction can help; other 4xx are bad requests, 503 (a
    model still loading) is overloaded.
    """
    text = str(error.get("message") or error.get("type") or "llama.cpp error")
    code = int(error.get("code") or 0)
    if error.get("type") == "exceed_context_size_error" or is_context_overflow(text):
        kind = ErrorKind.CONTEXT_OVERFLOW
    elif code == 503:
        kind = ErrorKind.OVERLOADED
    elif code == 429:  # a server that limits its clients (chaos mode acts one out)
        kind = ErrorKind.RATE_LIMIT
    elif 400 <= code < 500:
        kind = ErrorKind.BAD_REQUEST
    else:
        kind = ErrorKind.UNKNOWN
    return LlmError(kind, text, provider=provider, model=model)


def classify_local(exc: Exception, *, provider: str = "local", model: str = "") -> LlmError:
    """Translate what the runtime raised into a `LlmError`."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ConnectionError):  # only chaos mode drops an in-process generation
        return LlmError(ErrorKind.CONNECTION, text, provider=provider, model=model)
    if isinstance(exc, MemoryError):
        message = "not enough memory for the model; try a smaller n_ctx or model"
        return LlmError(ErrorKind.BAD_REQUEST, message, provider=provider, model=model)
    if isinstance(exc, ValueError) and is_context_overflow(text):
        return LlmError(ErrorKind.CONTEXT_OVERFLOW, text, provider=provider, model=model)
    if isinstance(exc, ValueError | TypeError):
        return LlmError(ErrorKind.BAD_REQUEST, text, provider=provider, model=model)
    return LlmError(
        ErrorKind.UNKNOWN, f"{type(exc).__name__}: {text}", provider=provider, model=model
    )

"""Provider that runs a GGUF model in-process with llama-cpp-python: no server, no API key.

The model runs in a worker thread so the event loop stays responsive; streamed text is handed
to ``on_delta`` on the loop's thread. A cancelled call stops generating at the next token (a
prompt being read, or a tool call being written, finishes first; its result is discarded).

Tool calls go through llama-cpp-python's ``chatml-function-calling`` handler, with messages
mapped by `agent.llm.openai_mapping`. That handler cannot stream when it may choose between a
tool call and a message, and on choosing a message it constrains the text to a function name
or the end marker; so with tools, the call is made whole first, and when no tool was chosen
the answer is generated again, streamed, without tools. Its template also renders only
system, user and assistant messages, so tool results are sent as user messages.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import structlog

from agent.llm.adapter_support import timeout_error
from agent.llm.classify import is_context_overflow
from agent.llm.errors import ErrorKind, LlmError
from agent.llm.local_model import LoadedModel, load_model, resolve_model_path
from agent.llm.messages import Usage
from agent.llm.openai_mapping import to_openai_messages, to_openai_tools
from agent.llm.openai_stream import ChunkAccumulator
from agent.llm.provider import ChatRequest, ChatResponse, DeltaHandler, StopReason, StreamDelta

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["DEFAULT_CHAT_FORMAT", "LocalProvider", "chatml_messages", "classify_local"]

DEFAULT_CHAT_FORMAT = "chatml-function-calling"

log = structlog.get_logger("agent.llm.local")


class _Cancelled(Exception):
    """The caller stopped waiting; the worker stops generating."""


class LocalProvider:
    """`Provider` for a GGUF model run in-process by llama-cpp-python.

    The model file is checked here and loaded on the first call (once per process).

    Args:
        model: ``smollm2`` (the bundled SmolLM2-135M-Instruct) or a path to a ``.gguf`` file.
        n_ctx: Context window in tokens.
        threads: CPU threads for generation; None lets llama.cpp choose.
        chat_format: llama-cpp-python chat format; tools need a function-calling one.
        provider_name: Name used in errors and responses.
        temperature: Sampling temperature when the request does not set one.
        seed: Sampling seed, reset for every call so the same request gets the same answer.
        request_timeout: Deadline in seconds for a request that sets none.

    Raises:
        LlmError: if the model file is missing, unreadable or not GGUF (the message names it).
    """

    def __init__(
        self,
        model: str,
        *,
        n_ctx: int = 8192,
        threads: int | None = None,
        chat_format: str = DEFAULT_CHAT_FORMAT,
        provider_name: str = "local",
        temperature: float = 0.2,
        seed: int = 0,
        request_timeout: float | None = None,
    ) -> None:
        self.model = model
        self.provider_name = provider_name
        self.path: Path = resolve_model_path(model, provider=provider_name)
        self.n_ctx = n_ctx
        self.threads = threads
        self.chat_format = chat_format
        self.temperature = temperature
        self.seed = seed
        self.request_timeout = request_timeout

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Generate the answer to ``request`` in a worker thread; raise only `LlmError`."""
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        emit = _loop_handoff(loop, on_delta, cancel) if on_delta is not None else None
        deadline = request.timeout or self.request_timeout
        try:
            async with asyncio.timeout(deadline):
                return await asyncio.to_thread(self._generate, request, emit, cancel)
        except TimeoutError as exc:
            message = f"no complete answer within {deadline:g}s"
            raise timeout_error(message, provider=self.provider_name, model=self.model) from exc
        finally:
            cancel.set()

    def _generate(
        self, request: ChatRequest, emit: DeltaHandler | None, cancel: threading.Event
    ) -> ChatResponse:
        try:
            loaded = load_model(
                self.path,
                n_ctx=self.n_ctx,
                threads=self.threads,
                chat_format=self.chat_format,
                provider=self.provider_name,
                model=self.model,
            )
            with loaded.lock:
                if cancel.is_set():
                    raise _Cancelled
                return self._complete(loaded, request, emit, cancel)
        except (LlmError, _Cancelled):
            raise
        except Exception as exc:
            error = classify_local(exc, provider=self.provider_name, model=self.model)
            log.info("llm_error", kind=error.kind.value, error=error.message)
            raise error from exc

    def _complete(
        self,
        loaded: LoadedModel,
        request: ChatRequest,
        emit: DeltaHandler | None,
        cancel: threading.Event,
    ) -> ChatResponse:
        llama = loaded.llama
        llama.set_seed(self.seed)
        messages = to_openai_messages(request.system, request.messages)
        if self.chat_format == DEFAULT_CHAT_FORMAT:
            messages = chatml_messages(messages)
        params: dict[str, Any] = {
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": self.temperature if request.temperature is None else request.temperature,
        }
        accumulator = ChunkAccumulator(emit)
        if request.tools:
            tools = to_openai_tools(request.tools)
            body = llama.create_chat_completion(
                **params, tools=cast(Any, tools), tool_choice="auto"
            )
            choice = (cast(dict[str, Any], body).get("choices") or [{}])[0]
            if (choice.get("message") or {}).get("tool_calls"):
                accumulator.add({"choices": [choice | {"delta": choice["message"]}]})
                accumulator.usage = _usage(cast(dict[str, Any], body).get("usage"))
                return self._response(accumulator, llama.n_tokens)
            _keep_state(llama)
        generated = 0
        for chunk in cast(Any, llama.create_chat_completion(**params, stream=True)):
            if cancel.is_set():
                raise _Cancelled
            accumulator.add(chunk)
            generated += 1
        # Streamed chunks carry no usage: the tokens in the context are the prompt plus the
        # answer, give or take the last token.
        accumulator.usage = Usage(
            input_tokens=max(0, llama.n_tokens - generated), output_tokens=generated
        )
        return self._response(accumulator, llama.n_tokens)

    def _response(self, accumulator: ChunkAccumulator, tokens_in_context: int) -> ChatResponse:
        accumulator.model = self.model
        response = accumulator.response(provider=self.provider_name)
        if response.stop_reason is StopReason.MAX_TOKENS and tokens_in_context >= self.n_ctx - 1:
            # llama.cpp shortens the output to what fits: the window is full, not the budget.
            return response.model_copy(update={"stop_reason": StopReason.CONTEXT_WINDOW})
        return response


def _keep_state(llama: Llama) -> None:
    """Cache the evaluated tool prompt: the answer's prompt (no tools) is about to replace it.

    llama-cpp-python caches states only after streamed completions; the tool choice is not
    streamed, so without this the next call would read the whole tool prompt again.
    """
    if llama.cache is not None:
        llama.cache[llama._input_ids[: llama.n_tokens].tolist()] = llama.save_state()


def _loop_handoff(
    loop: asyncio.AbstractEventLoop, on_delta: DeltaHandler, cancel: threading.Event
) -> DeltaHandler:
    """A handler for the worker thread that calls ``on_delta`` on the loop's thread."""

    def deliver(delta: StreamDelta) -> None:
        if not cancel.is_set():
            on_delta(delta)

    def handoff(delta: StreamDelta) -> None:
        loop.call_soon_threadsafe(deliver, delta)

    return handoff


def _usage(usage: dict[str, Any] | None) -> Usage:
    usage = usage or {}
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
    )


def chatml_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages adjusted to what the ``chatml-function-calling`` template renders.

    Its template shows only system, user and assistant messages, each with text content: tool
    results become user messages naming the function, and lists of text parts become text.
    """
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
        content = message.get("content")
        if isinstance(content, list):
            content = "\n\n".join(part.get("text", "") for part in content)
        if message["role"] == "tool":
            name = names.get(message["tool_call_id"], "the function")
            out.append({"role": "user", "content": f"functions.{name} returned:\n{content}"})
        else:
            out.append(message | {"content": content})
    return out


def classify_local(exc: Exception, *, provider: str = "local", model: str = "") -> LlmError:
    """Translate what llama-cpp-python raised into a `LlmError`.

    It raises ``ValueError("Requested tokens (N) exceed context window of M")`` for a prompt
    that does not fit: that is `ErrorKind.CONTEXT_OVERFLOW`, so compaction can help.
    """
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ValueError) and is_context_overflow(text):
        return LlmError(ErrorKind.CONTEXT_OVERFLOW, text, provider=provider, model=model)
    if isinstance(exc, MemoryError):
        message = "not enough memory for the model; try a smaller n_ctx or model"
        return LlmError(ErrorKind.BAD_REQUEST, message, provider=provider, model=model)
    if isinstance(exc, ValueError | TypeError):
        return LlmError(ErrorKind.BAD_REQUEST, text, provider=provider, model=model)
    return LlmError(
        ErrorKind.UNKNOWN, f"{type(exc).__name__}: {text}", provider=provider, model=model
    )

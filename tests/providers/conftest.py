"""Adapters pointed at the fake LLM server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pytest

from providers import Provider
from providers.adapters.anthropic import AnthropicProvider
from providers.adapters.openai import OpenAIProvider
from tests.fakes.llm_server import FakeLlmServer

Protocol = Literal["anthropic", "openai"]
MakeProvider = Callable[..., Provider]


@pytest.fixture
def make_provider(fake_llm: FakeLlmServer) -> MakeProvider:
    """``make_provider("anthropic" | "openai", stream=True, **options)`` → a real adapter."""

    def make(protocol: Protocol, stream: bool = True, **options: Any) -> Provider:
        if protocol == "anthropic":
            return AnthropicProvider(
                api_key="test-key", base_url=fake_llm.anthropic_url, stream=stream, **options
            )
        return OpenAIProvider(
            api_key="test-key", base_url=fake_llm.openai_url, stream=stream, **options
        )

    return make

"""web_search's ``anthropic`` backend: the real Anthropic adapter sends the server tool
``web_search_20250305`` to the fake LLM server, whose answer carries the server's
``web_search_tool_result`` blocks and cited text; another vendor's adapter refuses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from providers.adapters.anthropic import AnthropicProvider
from providers.adapters.openai import OpenAIProvider
from providers.models import ModelLimits, ModelRef
from recovery import ModelTarget, RecoveringProvider, RecoverySettings
from tests.fakes.llm_script import Reply, ServerPart, StopName
from tests.fakes.llm_server import FakeLlmServer
from tools.base import ToolContext, ToolError
from tools.settings import ToolSettings
from tools.web import ServerSearch, WebSearch
from tools.web.search import WebSearchInput
from tools.web.search_backends import SearchError
from tools.web.server_search import SEARCH_SYSTEM, found_in

CHANGELOG = "https://github.com/encode/httpx/blob/master/CHANGELOG.md"
DOCS = "https://www.python-httpx.org/advanced/proxies/"


def _searched(*, error: str | None = None, stop: StopName = "end_turn") -> Reply:
    results: Any = (
        {"type": "web_search_tool_result_error", "error_code": error}
        if error
        else [
            {"type": "web_search_result", "title": "httpx changelog", "url": CHANGELOG,
             "encrypted_content": "EqQBCioI", "page_age": "November 28, 2024"},
            {"type": "web_search_result", "title": "Proxies - HTTPX", "url": DOCS,
             "encrypted_content": "EqQBCioJ", "page_age": None},
        ]
    )  # fmt: skip
    cited = {
        "type": "web_search_result_location",
        "url": CHANGELOG,
        "title": "httpx changelog",
        "encrypted_index": "Eo8BCioI",
        "cited_text": "The deprecated proxies argument has now been removed.",
    }
    return Reply(
        parts=(
            ServerPart(
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_01",
                    "name": "web_search",
                    "input": {"query": "httpx 0.28 proxies"},
                }
            ),
            ServerPart(
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": results}
            ),
            ServerPart(
                {"type": "text", "text": "httpx 0.28 removed proxies=.", "citations": [cited]}
            ),
        ),
        stop=stop,
    )


def _context(tmp_path: Path) -> ToolContext:
    return ToolContext(
        workspace=tmp_path, settings=ToolSettings(), record_checkpoint=lambda path: None
    )


@pytest.mark.parametrize("stream", [True, False])
async def test_the_server_tool_is_sent_and_its_results_are_numbered_with_the_cited_text(
    fake_llm: FakeLlmServer, tmp_path: Path, stream: bool
) -> None:
    fake_llm.script(_searched())
    provider = AnthropicProvider(api_key="test", base_url=fake_llm.anthropic_url, stream=stream)
    tool = WebSearch(ServerSearch(provider), service="Anthropic web search")

    args = WebSearchInput(
        query="httpx 0.28 proxies", allowed_domains=["github.com", "python-httpx.org"]
    )
    text = (await tool.run(args, _context(tmp_path))).content

    [request] = fake_llm.requests
    assert request.body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 3,
            "allowed_domains": ["github.com", "python-httpx.org"],
        }
    ]
    assert SEARCH_SYSTEM in str(request.body["system"])
    assert "httpx 0.28 proxies" in str(request.body["messages"])
    lines = text.splitlines()
    assert lines[0].startswith("Web search for 'httpx 0.28 proxies' through Anthropic web search")
    assert "1. httpx changelog" in lines
    assert f"   {CHANGELOG}" in lines
    assert (
        "   The deprecated proxies argument has now been removed. (page age: November 28, 2024)"
        in lines
    )
    assert "2. Proxies - HTTPX" in lines
    assert "Anthropic web search also wrote: httpx 0.28 removed proxies=." in text


async def test_a_search_error_from_anthropic_is_a_clear_failure(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.script(_searched(error="too_many_requests"))
    provider = AnthropicProvider(api_key="test", base_url=fake_llm.anthropic_url)
    tool = WebSearch(ServerSearch(provider), service="Anthropic web search")

    with pytest.raises(ToolError) as caught:
        await tool.run(WebSearchInput(query="httpx proxies"), _context(tmp_path))

    assert "Anthropic's web search failed: too_many_requests" in caught.value.message
    assert caught.value.category.value == "transient"


async def test_an_answer_without_a_search_is_not_taken_for_results(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.script(Reply.text("I think httpx has proxies."))
    provider = AnthropicProvider(api_key="test", base_url=fake_llm.anthropic_url)
    tool = WebSearch(ServerSearch(provider), service="Anthropic web search")

    with pytest.raises(ToolError) as caught:
        await tool.run(WebSearchInput(query="httpx proxies"), _context(tmp_path))

    assert "the model answered without searching" in caught.value.message


async def test_another_vendors_model_refuses_the_server_tool_before_sending(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    provider = OpenAIProvider(api_key="test", base_url=fake_llm.openai_url)
    tool = WebSearch(ServerSearch(provider), service="Anthropic web search")

    with pytest.raises(ToolError) as caught:
        await tool.run(WebSearchInput(query="httpx proxies"), _context(tmp_path))

    assert "[bad_request] web_search_20250305 runs on Anthropic's servers only" in (
        caught.value.message
    )
    assert fake_llm.requests == []


def test_one_failed_search_of_several_leaves_the_others_results() -> None:
    failed = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    result = {"type": "web_search_result", "title": "T", "url": DOCS, "encrypted_content": "x"}
    blocks = [
        {"type": "web_search_tool_result", "tool_use_id": "a", "content": failed},
        {"type": "web_search_tool_result", "tool_use_id": "b", "content": [result]},
    ]

    found = found_in(blocks, "")

    assert [hit.url for hit in found.hits] == [DOCS]
    with pytest.raises(SearchError, match="failed: max_uses_exceeded"):
        found_in(blocks[:1], "")


async def test_a_paused_search_keeps_its_results_and_is_not_sent_again(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    # A long server-tool run ends in pause_turn: what came is whole. Recovery once took it
    # for a cut stream and sent the request again, so every search ran (and was billed) twice.
    fake_llm.script(_searched(stop="pause_turn"), _searched())
    adapter = AnthropicProvider(api_key="test", base_url=fake_llm.anthropic_url)
    target = ModelTarget(ModelRef("anthropic", "claude-test"), adapter, ModelLimits(200_000, 8_000))
    provider = RecoveringProvider([target], settings=RecoverySettings(base_backoff=0.01))
    tool = WebSearch(ServerSearch(provider), service="Anthropic web search")

    text = (await tool.run(WebSearchInput(query="httpx proxies"), _context(tmp_path))).content

    assert len(fake_llm.requests) == 1
    assert "1. httpx changelog" in text

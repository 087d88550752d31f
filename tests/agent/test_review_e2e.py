"""End to end: what a reply the model sends once does to the requests of later turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.engine.loop import AgentLoop
from agent.engine.outcome import TurnStatus
from providers import Provider
from providers.adapters.anthropic import AnthropicProvider
from providers.adapters.openai import OpenAIProvider
from tests.fakes.cli import MODELS, Protocol, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.providers.test_review_wire_validity import anthropic_problems, openai_problems
from tools import ToolExecutor, ToolSettings

PROTOCOLS: list[Protocol] = ["anthropic", "openai"]


@pytest.mark.parametrize("reply", ["", "\n\n"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_empty_reply_does_not_poison_the_next_turn(
    protocol: Protocol, reply: str, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text(reply), *[Reply.text("Here I am.")] * 2)
    common = ("--yes", "--model", MODELS[protocol])
    first = run_agent("-p", "hi", *common, server=fake_llm, workspace=workspace, home=decoy_home)
    assert first.code == 0, first.stderr
    second = run_agent(
        "--continue",
        "-p",
        "hello?",
        *common,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert second.code == 0, second.stderr

    check = anthropic_problems if protocol == "anthropic" else openai_problems
    assert [check(request.body["messages"]) for request in fake_llm.requests[1:]] == [[]] * (
        len(fake_llm.requests) - 1
    )


@pytest.mark.parametrize("reply", ["", "\n\n"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_empty_reply_does_not_poison_the_next_prompt_of_a_live_session(
    protocol: Protocol, reply: str, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    provider: Provider
    if protocol == "anthropic":
        provider = AnthropicProvider(api_key="test-key", base_url=fake_llm.anthropic_url)
    else:
        provider = OpenAIProvider(api_key="test-key", base_url=fake_llm.openai_url)
    tools = ToolExecutor(
        workspace=workspace, settings=ToolSettings(), approval="full-auto", approver=None
    )
    loop = AgentLoop(provider=provider, tools=tools, system="sys")
    fake_llm.script(Reply.text(reply), Reply.text("Here I am."))

    assert (await loop.run_turn("hi")).status is TurnStatus.DONE
    assert (await loop.run_turn("hello?")).answer == "Here I am."

    sent = fake_llm.requests[-1].body["messages"]
    check = anthropic_problems if protocol == "anthropic" else openai_problems
    assert check(sent) == []

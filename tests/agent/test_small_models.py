"""Tiny models get a tool set and limits they can cope with, unless the person chose others."""

from __future__ import annotations

from pathlib import Path

from agent.setup.config import Config
from agent.setup.profiles import TINY_MAX_STEPS, TINY_TOOLS, Profiles, is_tiny
from providers.models import ModelRef
from tests.fakes.in_process import agent_in_process
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tools import ToolSettings


def test_the_bundled_model_is_tiny_and_hosted_models_are_not() -> None:
    assert is_tiny("smollm2")
    assert is_tiny("SmolLM2-360M-Instruct")
    assert not is_tiny("claude-sonnet-4-5")
    assert not is_tiny("/models/qwen2.5-coder-7b.gguf")


SMOLLM2 = ModelRef.parse("local:smollm2")


def test_a_tiny_model_gets_few_tools_few_steps_and_an_early_stop() -> None:
    profiles = Profiles(Config(model="local:smollm2"))
    notice = profiles.notice(SMOLLM2)

    assert profiles.tool_settings(SMOLLM2).enabled == TINY_TOOLS
    assert profiles.max_steps(SMOLLM2) == TINY_MAX_STEPS
    assert profiles.tool_settings(SMOLLM2).repeated_call_limit == 3
    assert notice is not None
    assert "tiny model" in notice
    assert "offered read_file, list_files, search" in notice
    assert "tools.repeated_call_limit" in notice


def test_what_the_person_chose_is_kept() -> None:
    config = Config(
        model="local:smollm2",
        max_steps=20,
        tools=ToolSettings(enabled=["read_file"], repeated_call_limit=6),
    )
    profiles = Profiles(config)
    assert profiles.tool_settings(SMOLLM2) == config.tools
    assert profiles.max_steps(SMOLLM2) == 20
    assert profiles.notice(SMOLLM2) is None


def test_defaults_copied_from_the_example_config_count_as_not_chosen() -> None:
    config = Config.model_validate(
        {"model": "local:smollm2", "max_steps": 50, "tools": {"enabled": None}}
    )
    profiles = Profiles(config)
    assert profiles.max_steps(SMOLLM2) == TINY_MAX_STEPS
    assert profiles.tool_settings(SMOLLM2).enabled == TINY_TOOLS


def test_other_models_are_left_alone() -> None:
    config = Config(model="anthropic:claude-sonnet-4-5")
    profiles = Profiles(config)
    ref = config.model_chain()[0]
    assert profiles.of(ref).tiny is None
    assert profiles.tool_settings(ref) is config.tools
    assert profiles.max_steps(ref) == config.max_steps
    assert profiles.notice(ref) is None


def test_the_notice_says_what_applies_when_the_person_chose_no_tools() -> None:
    config = Config.model_validate({"model": "local:smollm2", "tools": {"enabled": []}})
    profiles = Profiles(config)
    assert profiles.tool_settings(SMOLLM2).enabled == []
    assert "offered no tools" in (profiles.notice(SMOLLM2) or "")


def test_switching_models_with_slash_model_refits_the_tools_and_limits(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    overrides = {"model": "anthropic:claude-test"}
    with agent_in_process(fake_llm, workspace, decoy_home, overrides) as (agent, _):
        everything = [spec.name for spec in agent.tools.specs()]

        tiny = agent.use_model(ModelRef.parse("openai:smollm2-test"))
        offered_to_tiny = [spec.name for spec in agent.tools.specs()]
        steps_for_tiny = agent.loop.max_steps
        capable = agent.use_model(ModelRef.parse("anthropic:claude-test"))

        assert "tiny model" in (tiny or "")
        assert offered_to_tiny == TINY_TOOLS
        assert steps_for_tiny == TINY_MAX_STEPS
        assert capable is None
        assert [spec.name for spec in agent.tools.specs()] == everything
        assert len(everything) > len(TINY_TOOLS)
        assert agent.loop.max_steps == Config().max_steps


async def test_a_fallback_to_a_tiny_model_sends_it_the_tiny_tool_set(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    overrides = {"model": "anthropic:claude-test", "fallback_models": ["openai:smollm2-test"]}
    with agent_in_process(fake_llm, workspace, decoy_home, overrides) as (agent, shown):
        (workspace / "notes.md").write_text("hello")
        fake_llm.script(
            Fault.status(401, "authentication_error"),
            Reply.tool_call("read_file", {"path": "notes.md"}),
            Reply.text("tiny here"),
        )
        result = await agent.run_turn("hi")

    assert result.answer == "tiny here"
    first, _switched, after = fake_llm.requests
    assert len(first.body["tools"]) > len(TINY_TOOLS)
    # The request that failed over was already built; the next one is the tiny model's own.
    assert [tool["function"]["name"] for tool in after.body["tools"]] == TINY_TOOLS
    assert "tiny model" in shown.getvalue()

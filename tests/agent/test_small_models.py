"""Tiny models get a tool set and limits they can cope with, unless the person chose others."""

from __future__ import annotations

from agent.config import Config
from agent.small_models import TINY_MAX_STEPS, TINY_TOOLS, fit_to_tiny_model, is_tiny
from tools import ToolSettings


def test_the_bundled_model_is_tiny_and_hosted_models_are_not() -> None:
    assert is_tiny("smollm2")
    assert is_tiny("SmolLM2-360M-Instruct")
    assert not is_tiny("claude-sonnet-4-5")
    assert not is_tiny("/models/qwen2.5-coder-7b.gguf")


def test_a_tiny_model_gets_few_tools_few_steps_and_an_early_stop() -> None:
    fitted, notice = fit_to_tiny_model(Config(model="local:smollm2"))

    assert fitted.tools.enabled == TINY_TOOLS
    assert fitted.max_steps == TINY_MAX_STEPS
    assert fitted.tools.repeated_call_limit == 3
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
    fitted, notice = fit_to_tiny_model(config)
    assert fitted == config
    assert notice is None


def test_defaults_copied_from_the_example_config_count_as_not_chosen() -> None:
    config = Config.model_validate(
        {"model": "local:smollm2", "max_steps": 50, "tools": {"enabled": None}}
    )
    fitted, _ = fit_to_tiny_model(config)
    assert fitted.max_steps == TINY_MAX_STEPS
    assert fitted.tools.enabled == TINY_TOOLS


def test_other_models_are_left_alone() -> None:
    config = Config(model="anthropic:claude-sonnet-4-5")
    assert fit_to_tiny_model(config) == (config, None)


def test_the_notice_says_what_applies_when_the_person_chose_no_tools() -> None:
    config = Config.model_validate({"model": "local:smollm2", "tools": {"enabled": []}})
    fitted, notice = fit_to_tiny_model(config)
    assert fitted.tools.enabled == []
    assert "offered no tools" in (notice or "")

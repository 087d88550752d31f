"""The effective profile: the table plus what the configuration says about a model."""

from __future__ import annotations

from agent.setup.config import Config, LocalSettings, ModelOverride, ProviderSettings
from agent.setup.profiles import Profiles
from providers.models import ModelLimits, ModelRef
from providers.profiles import TINY, TinySettings, model_profile
from tools import ToolSettings


def test_a_known_model_gets_the_table_s_profile() -> None:
    ref = ModelRef.parse("anthropic:claude-sonnet-4-5")
    profile = Profiles(Config()).of(ref)
    assert profile == model_profile("claude-sonnet-4-5")


def test_configured_limits_win_over_the_table() -> None:
    ref = ModelRef.parse("anthropic:claude-sonnet-4-5")
    config = Config(models={str(ref): ModelOverride(context_window=50_000)})
    assert Profiles(config).of(ref).limits == ModelLimits(50_000, 64_000)


def test_a_local_model_has_the_local_window_and_no_price() -> None:
    config = Config(local=LocalSettings(n_ctx=4096, max_output_tokens=512))
    profile = Profiles(config).of(ModelRef.parse("local:smollm2"))
    assert profile.limits == ModelLimits(4096, 512)
    assert profile.pricing is None
    assert profile.tiny == TINY


def test_a_provider_without_prompt_caching_turns_it_off() -> None:
    proxy = ProviderSettings(type="anthropic", base_url="http://proxy.test", prompt_cache=False)
    config = Config(providers={"proxy": proxy})
    assert not Profiles(config).of(ModelRef.parse("proxy:claude-sonnet-4-5")).prompt_cache
    assert Profiles(config).of(ModelRef.parse("anthropic:claude-sonnet-4-5")).prompt_cache


def test_what_the_person_set_beats_the_tiny_defaults() -> None:
    config = Config(max_steps=20, tools=ToolSettings(enabled=["read_file"]))
    profile = Profiles(config).of(ModelRef.parse("local:smollm2"))
    assert profile.tiny == TinySettings(
        tools=("read_file",), max_steps=20, repeated_call_limit=TINY.repeated_call_limit
    )


def test_the_tiny_early_stop_never_comes_before_the_configured_warning() -> None:
    config = Config(tools=ToolSettings(repeated_call_warn=5, repeated_call_limit=6))
    # The limit was chosen: it stays.
    assert Profiles(config).tool_settings(ModelRef.parse("local:smollm2")).repeated_call_limit == 6
    config = Config(tools=ToolSettings(repeated_call_warn=4))
    tiny = Profiles(config).of(ModelRef.parse("local:smollm2")).tiny
    assert tiny is not None
    assert tiny.repeated_call_limit == 4

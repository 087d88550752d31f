"""The one table of what is known about each model: longest prefix wins, unknown gets defaults."""

from __future__ import annotations

import pytest

from providers.messages import Usage
from providers.models import DEFAULT_LIMITS, ModelLimits
from providers.profiles import DEFAULT_PROFILE, PROFILES, TINY, Pricing, model_profile


def test_the_longest_matching_prefix_wins() -> None:
    assert model_profile("claude-3-5-sonnet-20241022").limits == ModelLimits(200_000, 8_192)
    assert model_profile("claude-sonnet-4-5").limits == ModelLimits(200_000, 64_000)
    assert model_profile("gpt-4.1-mini").pricing == Pricing(0.40, 1.60, 0.10)
    assert model_profile("gpt-4.1").pricing == Pricing(2.0, 8.0, 0.50)
    assert model_profile("smollm2-360m").limits == ModelLimits(2_048, 1_024)


def test_an_unknown_model_gets_the_default_limits_and_no_price() -> None:
    profile = model_profile("mistral-large")
    assert profile == DEFAULT_PROFILE
    assert profile.limits == DEFAULT_LIMITS
    assert profile.pricing is None
    assert profile.tiny is None


def test_a_price_covers_its_own_name_and_dated_snapshots_only() -> None:
    sonnet = model_profile("claude-sonnet-4-5").pricing
    assert sonnet == Pricing(3.0, 15.0, 0.30, 3.75)
    assert model_profile("claude-sonnet-4-5-20250929").pricing == sonnet
    assert model_profile("gpt-4o-2024-08-06").pricing == model_profile("gpt-4o").pricing
    # A sibling nobody listed is not guessed: the family's limits, no price.
    realtime = model_profile("gpt-4o-realtime-preview")
    assert realtime.limits == model_profile("gpt-4o").limits
    assert realtime.pricing is None
    assert model_profile("claude-opus-4-9").pricing is None
    assert model_profile("claude-3-5-haiku").pricing is None


def test_models_are_tiny_by_name_in_any_case() -> None:
    assert model_profile("smollm2").tiny == TINY
    assert model_profile("SmolLM2-360M-Instruct").tiny == TINY
    assert model_profile("smollm-135m").tiny == TINY
    assert model_profile("claude-sonnet-4-5").tiny is None
    assert model_profile("/models/qwen2.5-coder-7b.gguf").tiny is None


def test_the_table_keys_are_lower_case_and_prices_positive() -> None:
    for prefix, profile in PROFILES.items():
        assert prefix == prefix.lower()
        if profile.pricing is not None:
            assert profile.pricing.input > 0
            assert profile.pricing.output > 0


def test_a_run_costs_its_tokens_at_the_list_price() -> None:
    pricing = model_profile("claude-sonnet-4-5").pricing
    assert pricing is not None
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=2_000_000,
        cache_write_tokens=400_000,
    )
    # 3 + 1.5 + 0.6 + 1.5 USD: input, output, cache reads, cache writes at 1.25x input.
    assert pricing.cost(usage) == pytest.approx(6.6)


def test_tokens_of_a_kind_without_a_price_make_the_cost_unknown() -> None:
    pricing = model_profile("gpt-4o-2024-05-13").pricing
    assert pricing is not None
    assert pricing.cost(Usage(input_tokens=10, output_tokens=10)) is not None
    assert pricing.cost(Usage(input_tokens=10, cache_read_tokens=5)) is None

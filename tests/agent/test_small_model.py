"""``small_model``: checked like the model chain, and the provider side requests go to."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.setup.config import Config, ConfigError, load_config
from agent.setup.model_chain import build_chain
from agent.setup.small_model import side_provider
from recovery import RecoveringProvider
from recovery.fleet import Fleet, open_store

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test-key-0123456789", "OPENAI_API_KEY": "sk-test-0123"}


@pytest.mark.parametrize(
    ("value", "said"),
    [("haiku", "must look like 'provider:model'"), ("mylab:small", "providers:")],
)
def test_a_bad_small_model_is_named(tmp_path: Path, value: str, said: str) -> None:
    (tmp_path / "agent.yaml").write_text(f"small_model: {value}\n")
    with pytest.raises(ConfigError, match="small_model") as error:
        load_config(cwd=tmp_path, environ={"HOME": str(tmp_path)})
    assert said in str(error.value)


def _session(config: Config, tmp_path: Path) -> tuple[RecoveringProvider, Fleet]:
    fleet = Fleet(open_store(config.recovery.shared, tmp_path, lambda text: None), config.recovery)
    chain = build_chain(config, ENV)
    return RecoveringProvider(chain, settings=config.recovery, fleet=fleet), fleet


def test_without_small_model_side_requests_go_to_the_session(tmp_path: Path) -> None:
    config = Config(model="anthropic:claude-test")
    session, fleet = _session(config, tmp_path)

    side, notice = side_provider(config, ENV, session=session, events=lambda e: None, fleet=fleet)

    assert side is session
    assert notice is None


def test_small_model_comes_first_then_the_sessions_chain(tmp_path: Path) -> None:
    config = Config(
        model="anthropic:claude-test",
        fallback_models=["openai:gpt-test"],
        small_model="anthropic:claude-small",
    )
    session, fleet = _session(config, tmp_path)

    side, notice = side_provider(config, ENV, session=session, events=lambda e: None, fleet=fleet)

    assert isinstance(side, RecoveringProvider)
    assert [str(target.ref) for target in side.chain] == [
        "anthropic:claude-small",
        "anthropic:claude-test",
        "openai:gpt-test",
    ]
    assert notice is None

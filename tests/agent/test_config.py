"""Configuration: the documented example, precedence and error messages."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import pytest
import yaml

from agent.setup.config import Config, ConfigError, load_config
from providers.models import ModelRef
from tools.guard.sandbox import SandboxMode
from tools.hooks import ApprovalMode

EXAMPLE = Path(__file__).parents[2] / "config.example.yaml"


def test_the_example_documents_every_key_with_its_default() -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    example = Config.model_validate(data)
    assert example == Config()
    documented = set(data)
    # `model` stays a comment: a copied example must not turn off the no-key local default.
    assert documented == set(Config.model_fields) - {"model"}
    assert f"\n# model: {Config().model}\n" in EXAMPLE.read_text()
    assert "model" not in example.model_fields_set
    for section in ("recovery", "tools", "compaction", "sessions", "local"):
        model = type(getattr(example, section))
        assert set(data[section]) == set(model.model_fields), section


def test_flags_beat_environment_beat_project_beat_user(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "agent").mkdir(parents=True)
    (home / ".config" / "agent" / "config.yaml").write_text("model: anthropic:user\nmax_steps: 7\n")
    (tmp_path / "agent.yaml").write_text("model: anthropic:project\n")
    environ = {"HOME": str(home), "AGENT_MODEL": "openai:env"}

    config, paths = load_config(cwd=tmp_path, environ=environ)
    assert config.model == "openai:env"
    assert config.max_steps == 7  # from the user file, not overridden
    assert len(paths) == 2

    config, _ = load_config(cwd=tmp_path, environ=environ, overrides={"model": "anthropic:flag"})
    assert config.model == "anthropic:flag"


def test_base_url_from_the_environment_reaches_the_builtin_provider(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    config, _ = load_config(cwd=tmp_path, environ=environ)
    openai = config.provider("openai")
    assert openai.base_url == "http://127.0.0.1:9/v1"
    assert openai.api_key_env == "OPENAI_API_KEY"


def test_explicit_config_file_replaces_the_discovered_ones(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("max_steps: 3\n")
    explicit = tmp_path / "other.yaml"
    explicit.write_text("max_steps: 9\n")
    config, paths = load_config(cwd=tmp_path, explicit=explicit, environ={"HOME": str(tmp_path)})
    assert config.max_steps == 9
    assert paths == [explicit]


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(cwd=tmp_path, explicit=tmp_path / "nope.yaml", environ={})


def test_unknown_provider_in_the_chain_is_named(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("fallback_models: [mylab:qwen]\n")
    with pytest.raises(ConfigError, match="mylab") as error:
        load_config(cwd=tmp_path, environ={"HOME": str(tmp_path)})
    assert "providers:" in str(error.value)


def test_local_servers_on_their_usual_ports_need_no_provider_entry(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("model: ollama:qwen2.5-coder:7b\n")
    config, _ = load_config(cwd=tmp_path, environ={"HOME": str(tmp_path)})
    assert config.provider("ollama").base_url == "http://127.0.0.1:11434/v1"
    assert config.provider("vllm").base_url == "http://127.0.0.1:8000/v1"


def test_model_chain_is_deduplicated_in_order() -> None:
    config = Config(
        model="anthropic:a", fallback_models=["openai:b", "anthropic:a", "openai:b", "local:c"]
    )
    assert [str(ref) for ref in config.model_chain()] == ["anthropic:a", "openai:b", "local:c"]


def test_limits_prefer_configured_values_over_known_ones() -> None:
    config = Config(models={"anthropic:claude-sonnet-4-5": {"max_output_tokens": 1000}})
    limits = config.limits(ModelRef.parse("anthropic:claude-sonnet-4-5"))
    assert limits.max_output_tokens == 1000
    assert limits.context_window == 200_000


def test_a_config_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(b"model: anthropic:x\n# caf\xe9\n")
    with pytest.raises(
        ConfigError, match=r"not UTF-8 text \(invalid byte at offset 24\); save it as UTF-8"
    ):
        load_config(cwd=tmp_path, explicit=config, environ={})


def test_a_config_file_nested_absurdly_deep_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("model: " + "[" * 100_000)
    with pytest.raises(ConfigError, match=r"nested too deeply|not valid YAML"):
        load_config(cwd=tmp_path, explicit=config, environ={})


@pytest.mark.parametrize(
    "url",
    [
        "::::not a url",
        "api.example.com",
        "ftp://x.example",
        "http://",
        "http://h:port",
        "http://a b",
    ],
)
def test_a_base_url_that_is_not_an_http_url_is_refused_at_load(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError, match=r"ANTHROPIC_BASE_URL=.* must be an http"):
        load_config(cwd=tmp_path, environ={"ANTHROPIC_BASE_URL": url})
    config = tmp_path / "agent.yaml"
    config.write_text(yaml.safe_dump({"providers": {"mine": {"type": "openai", "base_url": url}}}))
    with pytest.raises(ConfigError, match=r"providers.mine.base_url: .*must be an http"):
        load_config(cwd=tmp_path, environ={})


def test_a_good_base_url_with_a_port_and_path_is_kept(tmp_path: Path) -> None:
    url = "http://127.0.0.1:8080/v1"
    config, _ = load_config(cwd=tmp_path, environ={"OPENAI_BASE_URL": url})
    assert config.provider("openai").base_url == url


def test_an_unquoted_off_means_off_not_false(tmp_path: Path) -> None:
    config_file = tmp_path / "agent.yaml"
    config_file.write_text("sandbox:\n  mode: off\nrecovery:\n  shared:\n    backend: off\n")

    config, _ = load_config(cwd=tmp_path, explicit=config_file, environ={})

    assert config.sandbox.mode == "off"
    assert config.recovery.shared.backend == "off"
    config_file.write_text("sandbox:\n  mode: on\n")  # true says nothing about which mode
    with pytest.raises(ConfigError, match=r"sandbox\.mode"):
        load_config(cwd=tmp_path, explicit=config_file, environ={})


@pytest.mark.parametrize(
    ("text", "choices"),
    [("approval: yolo\n", ApprovalMode), ("sandbox:\n  mode: loose\n", SandboxMode)],
)
def test_a_bad_mode_is_refused_with_every_allowed_value(
    tmp_path: Path, text: str, choices: type[StrEnum]
) -> None:
    config_file = tmp_path / "agent.yaml"
    config_file.write_text(text)

    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, explicit=config_file, environ={})

    assert all(f"'{choice}'" in str(caught.value) for choice in choices)


@pytest.mark.parametrize("mode", list(ApprovalMode))
def test_every_approval_mode_is_accepted_as_text(tmp_path: Path, mode: ApprovalMode) -> None:
    config_file = tmp_path / "agent.yaml"
    config_file.write_text(f"approval: {mode.value}\n")

    config, _ = load_config(cwd=tmp_path, explicit=config_file, environ={})

    assert config.approval is mode

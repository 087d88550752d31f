"""Configuration spread over the user file and the project file, and what its errors show."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.setup.config import ConfigError, load_config
from providers.models import ModelRef


def _user_config(tmp_path: Path, text: str) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".config" / "agent").mkdir(parents=True)
    (home / ".config" / "agent" / "config.yaml").write_text(text)
    return {"HOME": str(home)}


def test_project_file_may_use_a_provider_the_user_file_defines(tmp_path: Path) -> None:
    environ = _user_config(
        tmp_path, "providers:\n  ollama:\n    type: openai\n    base_url: http://127.0.0.1:9/v1\n"
    )
    (tmp_path / "agent.yaml").write_text(
        "model: ollama:qwen2.5-coder:32b\nfallback_models: [ollama:llama3:8b]\n"
    )

    config, paths = load_config(cwd=tmp_path, environ=environ)

    assert len(paths) == 2
    assert config.model_chain() == [
        ModelRef("ollama", "qwen2.5-coder:32b"),
        ModelRef("ollama", "llama3:8b"),
    ]
    assert config.provider("ollama").base_url == "http://127.0.0.1:9/v1"


def test_a_provider_defined_nowhere_is_still_an_error_naming_the_file(tmp_path: Path) -> None:
    environ = _user_config(tmp_path, "max_steps: 7\n")
    (tmp_path / "agent.yaml").write_text("model: mylab:qwen2.5-coder:32b\n")

    with pytest.raises(ConfigError, match=r"'mylab'.*providers:") as error:
        load_config(cwd=tmp_path, environ=environ)
    assert str(tmp_path / "agent.yaml") in str(error.value)


def test_a_chain_error_does_not_echo_the_api_keys_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(
        "model: vlab:qwen\n"
        "providers:\n  vla:\n    type: openai\n    api_key: sk-secret-0123456789\n"
    )

    with pytest.raises(ConfigError, match="'vlab'") as error:
        load_config(cwd=tmp_path, environ={"HOME": str(tmp_path)})
    assert "sk-secret" not in str(error.value)

"""Configuration that reads like a person wrote it, and errors in the file's own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.setup.config import ConfigError, load_config
from agent.setup.trust import ProjectTrust


def _load(tmp_path: Path, text: str) -> object:
    config_file = tmp_path / "agent.yaml"
    config_file.write_text(text)
    config, _ = load_config(cwd=tmp_path, explicit=config_file, environ={})
    return config


@pytest.mark.parametrize(
    ("text", "mode"),
    [("sandbox: read-only\n", "read-only"), ("sandbox: off\n", "off"), ("sandbox: 'off'\n", "off")],
)
def test_a_sandbox_scalar_is_its_mode(tmp_path: Path, text: str, mode: str) -> None:
    config = _load(tmp_path, text)
    assert config.sandbox.mode == mode  # type: ignore[attr-defined]


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    return str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "sandbox: [1, 2]\n",
        "sandbox: 3\n",
        "recovery: nope\n",
        "sandbox: loose\n",
        "approval: off\n",
        "model: [\n",
        "a: b: c\n",
        "providers:\n  mine: {type: openai, bse_url: x}\n",
    ],
)
def test_no_error_names_a_class_or_a_stream(tmp_path: Path, text: str) -> None:
    message = _error(tmp_path, text)
    for internal in ("Settings", "<unicode string>", "instance of", "Input should"):
        assert internal not in message, message
    assert str(tmp_path / "agent.yaml") in message


def test_yaml_errors_name_the_line(tmp_path: Path) -> None:
    message = _error(tmp_path, "max_steps: 3\nmodel: [\n")
    assert "agent.yaml is not valid YAML, line 3" in message


def test_off_where_a_mode_is_expected_is_explained(tmp_path: Path) -> None:
    message = _error(tmp_path, "approval: off\n")
    assert "got false (YAML reads unquoted off/no as false)" in message
    assert "'ask', 'auto-edit' or 'full-auto'" in message


def test_a_mapping_where_a_scalar_was_given_lists_its_keys(tmp_path: Path) -> None:
    message = _error(tmp_path, "recovery: nope\n")
    assert "recovery: got 'nope': should be a mapping with keys such as" in message
    assert "max_attempts" in message or "budget" in message


@pytest.mark.parametrize(
    ("text", "guess"),
    [
        ("sandbx: {}\n", "sandbox"),
        ("max_step: 3\n", "max_steps"),
        ("sandbox:\n  mod: off\n", "mode"),
        ("providers:\n  mine: {type: openai, bse_url: x}\n", "base_url"),
    ],
)
def test_an_unknown_key_gets_did_you_mean(tmp_path: Path, text: str, guess: str) -> None:
    assert f"did you mean {guess!r}?" in _error(tmp_path, text)


def test_a_project_sandbox_off_scalar_still_waits_for_trust(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text("sandbox: off\n")
    trust = ProjectTrust(tmp_path / "home", workspace)

    config, _ = load_config(cwd=workspace, environ={"HOME": str(tmp_path)}, trust=trust)

    assert config.sandbox.mode == "workspace-write"
    assert trust.held is not None
    assert trust.held.lines() == ["sandbox.mode: off (loosen the command sandbox)"]

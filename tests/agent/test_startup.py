"""Start-up: flags as one configuration layer, and the one boot sequence."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.setup.startup import Options, SetupError, boot
from agent.setup.trust import ProjectTrust


def test_dotted_overrides_become_one_nested_layer(tmp_path: Path) -> None:
    options = Options(
        workspace=tmp_path,
        overrides={"model": "openai:x", "sandbox.mode": "off", "recovery.max_attempts": 3},
    )
    assert options.config_layer() == {
        "model": "openai:x",
        "sandbox": {"mode": "off"},
        "recovery": {"max_attempts": 3},
    }


def test_a_key_set_both_as_a_value_and_as_a_section_is_a_setup_error(tmp_path: Path) -> None:
    options = Options(workspace=tmp_path, overrides={"sandbox": "off", "sandbox.mode": "off"})
    with pytest.raises(SetupError, match="sandbox"):
        options.config_layer()


def test_fresh_options_start_a_new_session_or_resume_one(tmp_path: Path) -> None:
    options = Options(workspace=tmp_path, overrides={"model": "openai:x"}, continue_latest=True)
    assert options.fresh().continue_latest is False
    assert options.fresh().resume is None
    assert options.fresh(resume="01ABC").resume == "01ABC"
    assert options.fresh().overrides == {"model": "openai:x"}


def _environ(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "AGENT_HOME": str(home / ".agent"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }


def test_boot_asks_about_held_settings_once_and_applies_what_is_allowed(tmp_path: Path) -> None:
    workspace, home = tmp_path / "work", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "agent.yaml").write_text("approval: full-auto\n")
    asked: list[ProjectTrust] = []

    def allow(trust: ProjectTrust) -> bool:
        asked.append(trust)
        assert trust.held is not None
        trust.allow(trust.held)
        return True

    started = boot(Options(workspace=workspace), _environ(home), ask_trust=allow)
    assert len(asked) == 1
    assert started.config.approval == "full-auto"
    assert started.home == home / ".agent"
    assert (home / ".agent").stat().st_mode & 0o077 == 0  # private before anything is written

    again = boot(Options(workspace=workspace), _environ(home), ask_trust=allow)
    assert len(asked) == 1  # remembered for this workspace
    assert again.config.approval == "full-auto"


def test_boot_without_asking_leaves_held_settings_out_and_says_so(tmp_path: Path) -> None:
    workspace, home = tmp_path / "work", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "agent.yaml").write_text("approval: full-auto\n")
    started = boot(Options(workspace=workspace), _environ(home))
    assert started.config.approval != "full-auto"
    assert started.trust.held is not None

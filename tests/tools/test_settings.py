from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from tools import ToolSettings

EXAMPLE = Path(__file__).parents[2] / "config.example.yaml"


def test_example_config_documents_every_tool_setting() -> None:
    section = yaml.safe_load(EXAMPLE.read_text())["tools"]
    assert set(section) == set(ToolSettings.model_fields)
    assert ToolSettings.model_validate(section) == ToolSettings()


def test_inconsistent_limits_are_rejected() -> None:
    with pytest.raises(ValidationError, match="repeated_failure_limit"):
        ToolSettings(repeated_failure_warn=4, repeated_failure_limit=3)
    with pytest.raises(ValidationError, match="repeated_call_limit"):
        ToolSettings(repeated_call_warn=4, repeated_call_limit=3)
    with pytest.raises(ValidationError, match="max_command_timeout"):
        ToolSettings(command_timeout=900)


def test_enabled_names_the_builtin_tools_and_limits_what_the_model_sees(tmp_path: Path) -> None:
    from tools import ToolExecutor, builtin_tools
    from tools.settings import BUILTIN_TOOL_NAMES

    assert [tool.name for tool in builtin_tools()] == list(BUILTIN_TOOL_NAMES)
    settings = ToolSettings(enabled=["read_file", "search"])
    executor = ToolExecutor(workspace=tmp_path, settings=settings, approval="ask", approver=None)
    assert [spec.name for spec in executor.specs()] == ["read_file", "search"]


def test_enabled_rejects_unknown_tools_with_the_allowed_names() -> None:
    with pytest.raises(ValueError, match="unknown tool") as error:
        ToolSettings(enabled=["read_file", "rm"])
    assert "run_command" in str(error.value)


def test_enabled_may_name_the_tools_the_agent_adds_beside_the_built_in_ones() -> None:
    settings = ToolSettings(enabled=["read_file", "task", "web_fetch", "skill"])
    assert settings.enabled == ["read_file", "task", "web_fetch", "skill"]

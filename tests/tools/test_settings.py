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
    with pytest.raises(ValidationError, match="max_command_timeout"):
        ToolSettings(command_timeout=900)

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compaction import CompactionSettings


def test_defaults_are_consistent() -> None:
    settings = CompactionSettings()
    assert settings.context_compact_target < settings.context_compact_threshold


def test_target_must_be_below_threshold() -> None:
    with pytest.raises(ValidationError, match="below"):
        CompactionSettings(context_compact_threshold=0.6, context_compact_target=0.7)


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ValidationError):
        CompactionSettings.model_validate({"threshold": 0.5})

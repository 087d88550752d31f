"""The `rec` fixture: an event recorder that builds recovering providers on the virtual clock."""

from __future__ import annotations

import pytest

from tests.fakes.clock import VirtualClock
from tests.recovery.support import Recorder


@pytest.fixture
def rec(clock: VirtualClock) -> Recorder:
    return Recorder(clock)

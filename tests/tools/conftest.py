"""Helpers for tool tests: an executor in a decoy workspace that records its events."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from providers.events import Event
from providers.messages import ToolResultBlock, ToolUseBlock
from tests.fakes.clock import VirtualClock
from tools import ApprovalMode, ApprovalRequest, Approver, ToolExecutor, ToolSettings
from tools.guard.sandbox import LAYERS_VARIABLE, Sandbox, SandboxSettings, namespaces_missing

_ids = itertools.count(1)
NAMESPACES_MISSING = namespaces_missing()


def call(name: str, **arguments: Any) -> ToolUseBlock:
    """A tool call as the model would send it."""
    return ToolUseBlock(id=f"toolu_{next(_ids):04d}", name=name, input=arguments)


class RecordingApprover:
    """Answers approval requests from a fixed decision and remembers them."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def approve(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return self.answer


class Harness:
    """An executor plus the events it emitted."""

    def __init__(self, executor: ToolExecutor, events: list[Event], clock: VirtualClock) -> None:
        self.executor = executor
        self.events = events
        self.clock = clock

    async def run(self, name: str, **arguments: Any) -> ToolResultBlock:
        return await self.executor.execute(call(name, **arguments))

    def of_type(self, kind: str) -> list[Event]:
        return [event for event in self.events if event.type == kind]


MakeHarness = Callable[..., Harness]


@pytest.fixture
def make_harness(workspace: Path, decoy_home: Path, clock: VirtualClock) -> MakeHarness:
    """Build a `Harness` in the decoy workspace; keyword arguments go to `ToolExecutor`."""

    def make(
        approval: ApprovalMode = "full-auto",
        approver: Approver | None = None,
        settings: ToolSettings | Callable[[], ToolSettings] | None = None,
        **kwargs: Any,
    ) -> Harness:
        events: list[Event] = []
        executor = ToolExecutor(
            workspace=workspace,
            settings=settings or ToolSettings(),
            approval=approval,
            approver=approver,
            events=events.append,
            sleep=clock.sleep,
            home=decoy_home,
            **kwargs,
        )
        executor.begin_turn()
        return Harness(executor, events, clock)

    return make


@pytest.fixture
def harness(make_harness: MakeHarness) -> Harness:
    """A full-auto harness in the decoy workspace."""
    return make_harness()


@pytest.fixture(params=["namespaces", "landlock"])
def layer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each sandbox layer in turn: namespaces (+ Landlock), then Landlock alone."""
    if request.param == "namespaces" and NAMESPACES_MISSING:
        pytest.skip(f"no namespaces here: {NAMESPACES_MISSING}")
    if request.param == "landlock":
        monkeypatch.setenv(LAYERS_VARIABLE, "landlock")
    return str(request.param)


@pytest.fixture
def sandbox(layer: str, tmp_path: Path) -> Sandbox:
    """The sandbox `Sandbox.create` builds for this layer, minus the system temp dir (which
    holds the decoy HOME and the canaries)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    built = Sandbox.create(SandboxSettings(), scratch=scratch)
    assert built.namespaces is (layer == "namespaces"), built.describe()
    return replace(built, writable=(scratch,))

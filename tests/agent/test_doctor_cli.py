"""``agent doctor`` and ``agent -p /doctor``: /doctor's checks from a shell, with an exit code
that says whether something is broken."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer


@pytest.mark.parametrize("args", [("doctor",), ("-p", "/doctor")])
def test_doctor_from_a_shell_checks_the_model_and_exits_0(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, args: tuple[str, ...]
) -> None:
    fake_llm.script(Reply.text("ok"))
    run = run_agent(*args, server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 0, run.stdout + run.stderr
    assert "✓  model anthropic:" in run.stdout
    assert "answered in" in run.stdout
    assert "sandbox" in run.stdout
    assert "Everything needed works" in run.stdout
    assert len(fake_llm.requests) == 1  # one tiny probe, no turn
    assert not list((decoy_home / ".agent" / "sessions").glob("*.jsonl"))  # no session left


def test_doctor_exits_1_and_says_the_fix_when_the_key_is_refused(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(401))
    run = run_agent("doctor", server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 1, run.stdout + run.stderr
    assert "✗" in run.stdout
    assert "1 check failed" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_doctor_exits_2_on_a_configuration_it_cannot_load(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent(
        "--set", "model=nonsense", "doctor", server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 2
    assert "provider:model" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert not fake_llm.requests

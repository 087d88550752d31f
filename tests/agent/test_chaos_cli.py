"""``--chaos`` / ``AGENT_CHAOS`` through ``agent -p``: said at the start and the end, with a
table of faults; a bad profile is a usage error in words."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer


def test_a_run_under_chaos_says_so_and_ends_with_its_faults(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.respond_with(lambda request: Reply.text("done"))
    run = run_agent(
        "-p",
        "hi",
        "--chaos",
        "outage:seconds=0.5",
        "--set",
        "recovery.base_backoff=0.2",
        "--set",
        "recovery.probe_backoff=0.2",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    assert "done" in run.stdout
    assert "chaos mode: outage (seed 0, rate 0.3): faults are injected into" in run.stderr
    ended = re.search(r"chaos mode: outage \(seed 0, rate 0.3\) ended: (\d+) faults in", run.stderr)
    assert ended, run.stderr
    faults = int(ended.group(1))
    assert faults >= 1
    assert re.search(
        rf"outage +{faults} injected · {faults} retries of server / overloaded", run.stderr
    ), run.stderr
    assert len(fake_llm.requests) == 1  # the faults never reached the server


def test_no_recovery_sends_once_and_reports_the_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(529, "overloaded_error"), Reply.text("too late"))
    run = run_agent(
        "-p", "hi", "--no-recovery", server=fake_llm, workspace=workspace, home=decoy_home
    )
    assert run.code != 0
    assert "overloaded" in run.stderr
    assert len(fake_llm.requests) == 1


def test_a_bad_chaos_profile_is_a_usage_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent(
        "-p",
        "hi",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        env={"AGENT_CHAOS": "earthquake"},
    )
    assert run.code == 2
    assert "unknown chaos profile 'earthquake'; use one of: rate-limits" in run.stderr
    assert "Traceback" not in run.stderr
    assert fake_llm.requests == []

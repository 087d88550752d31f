"""``--chaos`` / ``AGENT_CHAOS`` through ``agent -p``: said at the start and the end, with a
table of faults; a bad profile is a usage error in words."""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchmarks.chaos.run import NOTES, NOTES_TEXT, answer
from tests.fakes.cli import AgentRun, run_agent
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
    ended = re.search(
        r"chaos mode: outage \(seed 0, rate 0.3\) ended: (\d+) faults? in",
        run.stderr,
    )
    assert ended, run.stderr
    faults = int(ended.group(1))
    assert faults >= 1
    assert re.search(
        rf"outage +{faults} injected · {faults} retr(?:y|ies) of server / overloaded", run.stderr
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


def run_task(
    spec: str, fake_llm: FakeLlmServer, workspace: Path, home: Path, *flags: str
) -> tuple[AgentRun, str]:
    """``agent -p`` on the chaos benchmark's task (read notes.txt, write t3.txt) under
    ``spec``; the run and its table of faults."""
    fake_llm.respond_with(answer)
    (workspace / NOTES).write_text(NOTES_TEXT)
    run = run_agent(
        "-p",
        "task-3: write t3.txt",
        "--yes",
        "--chaos",
        spec,
        *flags,
        server=fake_llm,
        workspace=workspace,
        home=home,
    )
    assert run.code == 0, run.stderr
    assert (workspace / "t3.txt").read_text() == "token-3"
    table = run.stderr[run.stderr.index(" ended: ") :]
    return run, table


def test_an_answer_cut_at_the_output_limit_is_asked_again_and_the_task_done(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run, table = run_task("truncation:rate=0.5:seed=4", fake_llm, workspace, decoy_home)
    raised = re.search(r"truncate +(\d+) injected · (\d+) output-limit raises?", table)
    assert raised, table
    assert int(raised.group(1)) >= 1
    assert int(raised.group(2)) >= 1
    assert "done task-3" in run.stdout


def test_an_overflow_comes_once_there_is_something_to_compact_and_is_compacted(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _, table = run_task("overflow:turn=1", fake_llm, workspace, decoy_home)
    assert re.search(r"overflow +1 injected · 1 compaction\b", table), table
    # The first request held only the prompt; the second, with the notes just read, met the
    # overflow (the server never saw it), and was sent again with the notes' middle cut out.
    first, retried = fake_llm.requests[0], json.dumps(fake_llm.requests[1].body["messages"])
    assert len(first.body["messages"]) == 1
    assert "characters cut to fit the context window" in retried
    assert "note 0: the build" in retried
    assert "note 149: the build" in retried
    assert "note 75: the build" not in retried


def test_tool_faults_are_met_by_the_tool_timeout_and_the_models_next_call(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    files_before = sorted(p.name for p in workspace.parent.iterdir())
    run, table = run_task(
        "tools:rate=0.5:seed=8",
        fake_llm,
        workspace,
        decoy_home,
        "--set=tools.file_tool_timeout=0.2",
    )
    assert "faults are injected into this run's model requests and tool calls" in run.stderr
    assert re.search(r"tool_fail +1 injected", table), table
    assert re.search(r"tool_hang +\d+ injected · \d+ stopped at the tool timeout", table), table
    assert sorted(p.name for p in workspace.parent.iterdir()) == files_before
    assert sorted(p.name for p in workspace.iterdir()) == [NOTES, "t3.txt"]

"""The approval question for a command says what it runs and what it writes, from the one
analysis of the command. The person declines every call here, so nothing runs."""

from __future__ import annotations

import pytest

from tests.tools.conftest import MakeHarness, RecordingApprover


@pytest.mark.parametrize(
    ("command", "told"),
    [
        ("git log | grep fix > out.txt", "runs: git, grep · writes: out.txt"),
        ("bash -c 'touch a' && tee b < c", "runs: bash, touch, tee · writes: b"),
        ("sudo /usr/bin/make install", "runs: make · as root: make"),
        ("$tool --version", "runs: ? · cannot be read before it runs: the program's name `$tool`"),
    ],
)
async def test_the_question_summarises_what_runs_and_what_is_written(
    make_harness: MakeHarness, command: str, told: str
) -> None:
    approver = RecordingApprover(answer=False)
    harness = make_harness(approval="ask", approver=approver)

    result = await harness.run("run_command", command=command)

    assert result.is_error
    (request,) = approver.requests
    assert told in request.summary
    assert request.details == command


async def test_a_plain_command_is_not_told_twice(make_harness: MakeHarness) -> None:
    approver = RecordingApprover(answer=False)
    harness = make_harness(approval="ask", approver=approver)

    await harness.run("run_command", command="ls -la")

    assert approver.requests[0].summary == "run: ls -la"

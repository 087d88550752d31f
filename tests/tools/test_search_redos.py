"""search and list_files run the model's patterns in linear time (issue 27: a ReDoS froze the
agent, Ctrl-C and SIGTERM included, because Python's re held the GIL for hours)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

from tests.fakes.cli import MODELS, agent_command, agent_env, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.tools.conftest import Harness

ATTACK = "a" * 34 + "!"
HANG_GUARD = 30.0
"""Not a speed target: Python's re takes hours here, so reaching it means the bug is back."""


async def test_a_catastrophic_pattern_finishes_with_no_match(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "trap.txt").write_text(f"{ATTACK}\n")
    result = await asyncio.wait_for(harness.run("search", pattern="(a+)+$"), HANG_GUARD)
    assert not result.is_error
    assert result.content == "No matches for /(a+)+$/ in .."


async def test_a_catastrophic_glob_finishes(harness: Harness, workspace: Path) -> None:
    (workspace / ("a" * 40)).write_text("x\n")
    glob = "*a" * 16 + "b"
    listed = await asyncio.wait_for(harness.run("list_files", pattern=glob), HANG_GUARD)
    assert listed.content.startswith("No files match")
    found = await asyncio.wait_for(harness.run("search", pattern="x", glob=glob), HANG_GUARD)
    assert found.content.startswith("No matches")


async def test_look_around_is_refused_with_what_to_do(harness: Harness) -> None:
    result = await harness.run("search", pattern=r"foo(?=bar)")
    assert result.is_error
    assert "look-ahead" in result.content
    assert "rewrite it without them" in result.content
    back = await harness.run("search", pattern=r"(\w)\1")
    assert back.is_error
    assert "back-references" in back.content


async def test_anchors_and_line_ends_mean_each_line(harness: Harness, workspace: Path) -> None:
    (workspace / "crlf.txt").write_bytes(b"first\r\nfoo\r\nlast\n")
    result = await harness.run("search", pattern="^foo$")
    assert result.content == "crlf.txt:2: foo"
    starts = await harness.run("search", pattern=r"\Alast")
    assert starts.content == "crlf.txt:3: last"


def test_the_agent_survives_the_attack_as_a_model_would_send_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "trap.txt").write_text(f"{ATTACK}\n")
    fake_llm.script(Reply.tool_call("search", {"pattern": "(a+)+$"}), Reply.text("nothing found"))
    run = run_agent(
        *("-p", "search", "--output-format", "json", "--model", MODELS["anthropic"]),
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        timeout=HANG_GUARD,
    )
    assert run.code == 0, run.stderr
    assert run.json()["result"] == "nothing found"
    assert "No matches for /(a+)+$/" in str(fake_llm.requests[-1].body)
    assert "re2.cc" not in run.stderr  # RE2 writes nothing of its own


def test_sigterm_during_a_search_of_a_big_tree_ends_the_agent(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    for n in range(300):
        (workspace / f"f{n}.txt").write_text(f"{ATTACK}\n" * 2000)
    fake_llm.script(
        *[Reply.tool_call("search", {"pattern": f"(a+)+$|x{n}"}) for n in range(50)],
        Reply.text("done"),
    )
    proc = subprocess.Popen(
        agent_command("-p", "search", "--model", MODELS["anthropic"]),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        while len(fake_llm.requests) < 2:  # the first search has run; others follow
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.terminate()
        code = proc.wait(timeout=HANG_GUARD)
    finally:
        proc.kill()
    assert code == 143


async def test_a_hostile_gitignore_cannot_freeze_a_walk(harness: Harness, workspace: Path) -> None:
    (workspace / ".gitignore").write_text("*a" * 14 + "b\n" + "**/" * 6 + "*z*z*z\n")
    (workspace / ("a" * 60)).write_text("needle\n")
    listed = await asyncio.wait_for(harness.run("list_files"), HANG_GUARD)
    assert "a" * 60 in listed.content
    found = await asyncio.wait_for(harness.run("search", pattern="needle"), HANG_GUARD)
    assert f"{'a' * 60}:1: needle" in found.content

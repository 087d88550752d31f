"""The per-step benchmark compares like with like: its bare SDK loop sends the agent's requests."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.step_layers import LAYERS
from benchmarks.turn_bench import FILE_TEXT, agent_turn, bare_turn, responder, server_process
from tests.fakes.cli import REPO_ROOT
from tests.fakes.llm_server import FakeLlmServer


def _bodies(server: FakeLlmServer) -> list[object]:
    # Tool-call ids count the server's replies, so they differ between the two runs.
    return [
        json.loads(re.sub(r"toolu_fake_\d+_\d+", "ID", json.dumps(request.body)))
        for request in server.requests
    ]


def test_bare_loop_sends_the_same_requests_as_the_agent(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    for n in range(3):
        (workspace / f"code{n}.py").write_text(FILE_TEXT)
    fake_llm.respond_with(responder(3))
    asyncio.run(agent_turn(fake_llm, decoy_home, workspace, 3))
    ours = _bodies(fake_llm)
    fake_llm.reset()
    fake_llm.respond_with(responder(3))
    asyncio.run(bare_turn(fake_llm, workspace, 3))
    bare = _bodies(fake_llm)
    assert len(ours) == 2 + 4  # the warm-up turn (a call, the answer), then 3 calls and the answer
    assert bare == ours


def test_the_server_process_answers_both_sides(workspace: Path, decoy_home: Path) -> None:
    for n in range(2):
        (workspace / f"code{n}.py").write_text(FILE_TEXT)
    with server_process(2) as server:
        ours = asyncio.run(agent_turn(server, decoy_home, workspace, 2))
        bare = asyncio.run(bare_turn(server, workspace, 2))
    assert min(*ours, *bare) > 0


def test_step_layers_times_every_layer_it_names() -> None:
    run = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "benchmarks" / "step_layers.py"),
            "--turns",
            "1",
            "--steps",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert run.returncode == 0, run.stderr
    timed = {line.split()[0] for line in run.stdout.splitlines()[2:]}
    assert {path for _, path in LAYERS} <= timed  # each one was found and called

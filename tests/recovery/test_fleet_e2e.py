"""Real ``agent -p`` processes sharing one key against a capacity-limited fake server.

Each agent does a task of two tool calls and an answer; the server takes 2 requests a
second (burst 2) and answers 429 with retry-after beyond that. However the file or Redis
backend is reached, every task finishes and no request is sent before a retry-after that
any agent had been given
(allowing the 250 ms a 429 takes to reach the agent and be published).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from recovery.fleet.redis_store import RedisStore
from tests.fakes.fleet import FleetRun, run_fleet, task_responder, write_config
from tests.fakes.llm_server import FakeLlmServer
from tests.recovery.test_fleet_stores import HOLD_AND_HANG, python

AGENTS = 3
STEPS = 2


def start(server: FakeLlmServer) -> None:
    server.respond_with(task_responder(STEPS))
    server.limit_capacity(rate=2.0, burst=2).start_gate(AGENTS)


def assert_fleet_finished(run: FleetRun, server: FakeLlmServer) -> None:
    for agent in run.runs:
        assert agent.code == 0, agent.stderr[-2000:]
        assert agent.json()["status"] == "done"
        assert "not shared" not in agent.stdout + agent.stderr
    capacity = server.capacity
    assert capacity is not None
    assert capacity.early_settled == 0
    assert capacity.received - capacity.throttled == AGENTS * (STEPS + 1)


def test_agents_share_recovery_state_through_a_file(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    start(fake_llm)
    config = write_config(tmp_path / "agent.yaml", {"backend": "file"})

    run = run_fleet(fake_llm, tmp_path, agents=AGENTS, config=config)

    assert_fleet_finished(run, fake_llm)
    state = json.loads((tmp_path / "home" / ".agent" / "recovery" / "fleet.json").read_text())
    [record] = state.values()
    assert record["requests"]["limit"] == 2
    assert record["inflight"] == {}
    assert "sk-ant" not in json.dumps(state)


def test_agents_share_recovery_state_through_redis(
    fake_llm: FakeLlmServer, tmp_path: Path, redis_url: str
) -> None:
    start(fake_llm)
    config = write_config(tmp_path / "agent.yaml", {"backend": "redis", "url": redis_url})

    run = run_fleet(fake_llm, tmp_path, agents=AGENTS, config=config)

    assert_fleet_finished(run, fake_llm)
    [record] = RedisStore(redis_url).snapshot().values()
    assert record["requests"]["limit"] == 2
    assert not (tmp_path / "home" / ".agent" / "recovery" / "fleet.json").exists()


def test_a_lock_holder_killed_with_sigkill_does_not_stall_the_fleet(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    start(fake_llm)
    config = write_config(tmp_path / "agent.yaml", {"backend": "file"})
    state_dir = tmp_path / "home" / ".agent" / "recovery"
    state_dir.mkdir(parents=True)
    holder = python(HOLD_AND_HANG, str(state_dir))
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "holding"

    def kill_holder() -> None:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)

    try:
        run = run_fleet(fake_llm, tmp_path, agents=AGENTS, config=config, on_started=kill_holder)
    finally:
        if holder.poll() is None:
            holder.kill()

    assert holder.returncode == -signal.SIGKILL
    assert_fleet_finished(run, fake_llm)
    assert json.loads((state_dir / "fleet.json").read_text())


def test_unreachable_redis_means_one_warning_and_every_task_done(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.respond_with(task_responder(0))
    config = write_config(
        tmp_path / "agent.yaml", {"backend": "redis", "url": "redis://127.0.0.1:9/0"}
    )

    run = run_fleet(fake_llm, tmp_path, agents=1, config=config)

    [agent] = run.runs
    assert agent.code == 0, agent.stderr[-2000:]
    data = agent.json()
    assert data["status"] == "done"
    # Said once to the person, and once in the record a script reads.
    assert agent.stderr.count("not shared with other agents") == 1, agent.stderr
    notices = [e["text"] for e in data["events"] if e["type"] == "notice"]
    assert len(notices) == 1
    assert "not shared with other agents" in notices[0]

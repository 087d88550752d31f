"""Chaos mode: the seeded plan (same seed, same faults) and, through the real SDKs against
the fake server, each profile's faults met and recovered from."""

from __future__ import annotations

import random
import re

import pytest

from compaction.stages import TRIM_FLOOR as compaction_trim_floor
from providers import (
    ChatRequest,
    ErrorKind,
    Event,
    LlmError,
    Message,
    StopReason,
    ToolUseBlock,
)
from providers.adapters.anthropic import AnthropicProvider
from providers.adapters.chaos_transport import chaos_client
from providers.adapters.chaos_wire import TRIM_FLOOR, compactable
from providers.adapters.openai import OpenAIProvider
from providers.chaos import ChaosPlan, ChaosSpec, FaultKind
from providers.models import ModelLimits, ModelRef
from recovery import ModelTarget, RecoveringProvider, RecoverySettings
from recovery.chaos_report import chaos_report
from tests.fakes.clock import VirtualClock
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.providers.conftest import MakeProvider

REQUEST = ChatRequest(messages=[Message.user("hi")])


def test_a_spec_reads_its_profile_and_settings() -> None:
    spec = ChaosSpec.parse("all:seed=7:rate=0.3")
    assert (spec.profile, spec.seed, spec.rate) == ("all", 7, 0.3)
    assert spec.describe() == "chaos mode: all (seed 7, rate 0.3)"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("earthquake", "unknown chaos profile 'earthquake'; use one of: rate-limits"),
        ("all:seed", "chaos setting 'seed' is not KEY=VALUE"),
        ("all:seed=x", "chaos setting seed wants a number, not 'x'"),
        ("all:rate=2", "chaos setting rate=2 is out of range"),
    ],
)
def test_a_bad_spec_says_what_is_accepted(text: str, says: str) -> None:
    with pytest.raises(ValueError, match="^" + says.replace("(", r"\(")):
        ChaosSpec.parse(text)


def test_the_recovery_settings_refuse_a_bad_spec_in_words() -> None:
    with pytest.raises(ValueError, match="unknown chaos profile 'nope'"):
        RecoverySettings(chaos="nope")


def draws(spec: str, requests: int = 200, compactable: bool = True) -> list[FaultKind | None]:
    plan = ChaosPlan(ChaosSpec.parse(spec))
    return [
        plan.draw("a:m", primary=True, now=float(n), compactable=compactable)
        for n in range(requests)
    ]


def test_the_same_seed_gives_the_same_faults_and_another_seed_others() -> None:
    assert draws("all:seed=7:seconds=0") == draws("all:seed=7:seconds=0")
    assert draws("all:seed=7:seconds=0") != draws("all:seed=8:seconds=0")
    assert draws("truncation:seed=3") == draws("truncation:seed=3")
    assert draws("truncation:seed=3") != draws("truncation:seed=4")


def test_each_profile_injects_only_its_own_faults() -> None:
    for profile, allowed in [
        ("rate-limits", {FaultKind.RATE_LIMIT, FaultKind.RATE_LIMIT_WAIT}),
        ("overload", {FaultKind.OVERLOAD}),
        ("flaky-network", {FaultKind.RESET, FaultKind.CUT_STREAM, FaultKind.STALL}),
        ("truncation", {FaultKind.TRUNCATE}),
        ("tools", set()),  # tool faults come with tool calls, never with requests
    ]:
        seen = {fault for fault in draws(f"{profile}:rate=0.5") if fault is not None}
        assert seen == allowed, profile


def tool_draws(spec: str, calls: int = 200) -> list[FaultKind | None]:
    plan = ChaosPlan(ChaosSpec.parse(spec))
    return [plan.draw_tool("read_file") for _ in range(calls)]


def test_tool_faults_are_seeded_and_leave_the_request_faults_as_they_were() -> None:
    assert tool_draws("tools:seed=3") == tool_draws("tools:seed=3")
    assert tool_draws("tools:seed=3") != tool_draws("tools:seed=4")
    assert {f for f in tool_draws("tools:rate=0.5") if f} == {
        FaultKind.TOOL_FAIL,
        FaultKind.TOOL_HANG,
        FaultKind.TOOL_FLOOD,
    }
    assert set(tool_draws("overload:rate=1")) == {None}
    # A run's tool calls draw from their own generator: its requests meet the same faults.
    plan = ChaosPlan(ChaosSpec.parse("all:seed=9:seconds=0"))
    mixed = []
    for n in range(50):
        plan.draw_tool("write_file")
        mixed.append(plan.draw("a:m", primary=True, now=float(n), compactable=True))
    assert mixed == draws("all:seed=9:seconds=0", 50)
    assert plan.tool_calls == 50
    assert any(fault.model == "tool:write_file" for fault in plan.injected)


def test_overflow_comes_at_the_chosen_request_and_an_outage_lasts_its_seconds() -> None:
    assert draws("overflow:turn=4", 6) == [None, None, None, FaultKind.OVERFLOW, None, None]
    plan = ChaosPlan(ChaosSpec.parse("outage:seconds=30"))
    assert plan.draw("a:m", primary=True, now=100.0, compactable=True) is FaultKind.OUTAGE
    assert plan.draw("b:m", primary=False, now=110.0, compactable=True) is None  # fallback up
    assert plan.draw("a:m", primary=True, now=129.0, compactable=True) is FaultKind.OUTAGE
    assert plan.draw("a:m", primary=True, now=130.0, compactable=True) is None
    # In `all`, an overflow due during the outage comes with the first request after it.
    plan = ChaosPlan(ChaosSpec.parse("all:turn=1:seconds=10:rate=0"))
    assert plan.draw("a:m", primary=True, now=0.0, compactable=True) is FaultKind.OUTAGE
    assert plan.draw("b:m", primary=False, now=1.0, compactable=True) is FaultKind.OVERFLOW
    assert plan.draw("b:m", primary=False, now=2.0, compactable=True) is None


def test_overflow_waits_for_a_conversation_compaction_can_shrink() -> None:
    # A real server rejects a long conversation, never a three-line one.
    plan = ChaosPlan(ChaosSpec.parse("overflow:turn=2"))
    sizes = [True, False, False, True, True]
    faults = [plan.draw("a:m", primary=True, now=0.0, compactable=c) for c in sizes]
    assert faults == [None, None, None, FaultKind.OVERFLOW, None]


def recovering(
    plan: ChaosPlan,
    fake_llm: FakeLlmServer,
    clock: VirtualClock,
    protocol: str,
    events: list[Event] | None = None,
) -> RecoveringProvider:
    targets = []
    for position, name in enumerate(["primary-model", "fallback-model"]):
        client = chaos_client(
            plan,
            model=f"{protocol}:{name}",
            primary=position == 0,
            clock=clock.now,
            sleep=clock.sleep,
        )
        if protocol == "anthropic":
            adapter: AnthropicProvider | OpenAIProvider = AnthropicProvider(
                api_key="k", base_url=fake_llm.anthropic_url, http_client=client
            )
        else:
            adapter = OpenAIProvider(api_key="k", base_url=fake_llm.openai_url, http_client=client)
        ref = ModelRef(protocol, name)
        targets.append(ModelTarget(ref, adapter, ModelLimits(200_000, 8_000)))
    settings = RecoverySettings(base_backoff=0.01, probe_backoff=0.05, overload_backoff=0.05)
    return RecoveringProvider(
        targets,
        settings=settings,
        events=events.append if events is not None else None,
        clock=clock.now,
        sleep=clock.sleep,
        rng=random.Random(3),
    )


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize(
    "spec", ["rate-limits:rate=0.5", "overload:rate=0.3", "flaky-network:rate=0.5:stall=0.01"]
)
async def test_every_call_is_answered_under_each_profile(
    protocol: str, spec: str, fake_llm: FakeLlmServer, clock: VirtualClock
) -> None:
    fake_llm.respond_with(lambda request: Reply.text("fine"))
    plan = ChaosPlan(ChaosSpec.parse(f"{spec}:seed=5"))
    provider = recovering(plan, fake_llm, clock, protocol)

    answers = [(await provider.chat(REQUEST)).message.text for _ in range(8)]

    assert answers == ["fine"] * 8
    assert plan.injected, "the profile injected nothing"
    report = chaos_report(plan, [])
    assert report.startswith(f"chaos mode: {plan.spec.profile} (seed 5")


@pytest.mark.parametrize("spec", ["all:rate=0.6", "flaky-network:rate=0.6:stall=0.01"])
async def test_the_rows_retries_add_up_to_the_runs(
    spec: str, fake_llm: FakeLlmServer, clock: VirtualClock
) -> None:
    # overload and outage both surface as server / overloaded errors, reset and cut stream
    # both as connection errors: each retry must be counted under one fault only.
    fake_llm.respond_with(lambda request: Reply.text("fine"))
    plan = ChaosPlan(ChaosSpec.parse(f"{spec}:seed=11"))
    events: list[Event] = []
    provider = recovering(plan, fake_llm, clock, "anthropic", events)
    for _ in range(12):
        await provider.chat(REQUEST)

    report = chaos_report(plan, events)
    retried = sum(1 for event in events if event.type == "retry_scheduled")
    rows = [int(n) for n in re.findall(r"(\d+) retr(?:y|ies) of", report)]
    assert retried > 0
    assert sum(rows) == retried, report
    assert f"recovery: {retried} retr{'y' if retried == 1 else 'ies'}" in report


async def test_after_an_outage_of_the_primary_the_session_comes_back_to_it(
    fake_llm: FakeLlmServer, clock: VirtualClock
) -> None:
    fake_llm.respond_with(lambda request: Reply.text(f"from {request.model}"))
    plan = ChaosPlan(ChaosSpec.parse("outage:seconds=40"))
    provider = recovering(plan, fake_llm, clock, "anthropic")

    assert (await provider.chat(REQUEST)).message.text == "from fallback-model"
    clock.advance(31)
    assert (await provider.chat(REQUEST)).message.text == "from fallback-model"  # still down
    clock.advance(61)
    assert (await provider.chat(REQUEST)).message.text == "from primary-model"
    assert plan.counts()[FaultKind.OUTAGE] >= 2


async def test_an_overflow_reaches_the_caller_as_a_context_overflow(
    fake_llm: FakeLlmServer, clock: VirtualClock
) -> None:
    fake_llm.respond_with(lambda request: Reply.text("fine"))
    provider = recovering(ChaosPlan(ChaosSpec.parse("overflow:turn=2")), fake_llm, clock, "openai")
    await provider.chat(REQUEST)
    await provider.chat(REQUEST)  # nothing to compact in it: a real server takes it
    long = ChatRequest(
        messages=[Message.user("a" * 3_000), Message.assistant("b"), *REQUEST.messages]
    )
    with pytest.raises(LlmError) as caught:
        await provider.chat(long)
    assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_truncated_answer_stops_at_the_output_limit_in_its_text_or_its_tool_call(
    protocol: str, stream: bool, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    plan = ChaosPlan(ChaosSpec.parse("truncation:rate=1"))
    client = chaos_client(plan, model=f"{protocol}:m", primary=True)
    adapter = make_provider(protocol, stream, http_client=client)
    whole = "The answer is forty-two, as it always was."
    arguments = {"path": "a.txt", "content": "x" * 40}
    fake_llm.script(Reply.text(whole), Reply.tool_call("write_file", arguments, text="Writing."))

    text = await adapter.chat(REQUEST)
    call = await adapter.chat(REQUEST)

    assert text.stop_reason is StopReason.MAX_TOKENS
    assert whole.startswith(text.message.text)
    assert 0 < len(text.message.text) < len(whole)
    assert call.stop_reason is StopReason.MAX_TOKENS
    assert call.message.text == "Writing."
    (cut,) = [block for block in call.message.content if isinstance(block, ToolUseBlock)]
    assert cut.input != arguments  # cut inside its JSON: what is left does not parse
    assert plan.counts() == {FaultKind.TRUNCATE: 2}


async def test_a_truncated_answer_is_asked_again_with_a_higher_limit(
    fake_llm: FakeLlmServer, clock: VirtualClock
) -> None:
    fake_llm.respond_with(lambda request: Reply.text("a whole answer"))
    plan = ChaosPlan(ChaosSpec.parse("truncation:rate=0.5:seed=4"))  # cut, then whole
    events: list[Event] = []
    provider = recovering(plan, fake_llm, clock, "anthropic", events)
    response = await provider.chat(REQUEST.model_copy(update={"max_tokens": 100}))
    assert response.message.text == "a whole answer"
    assert [fault.kind for fault in plan.injected] == [FaultKind.TRUNCATE]
    assert [request.body["max_tokens"] for request in fake_llm.requests] == [100, 200]
    assert [event.type for event in events] == ["tokens_escalated"]
    report = chaos_report(plan, events)
    assert re.search(r"truncate +1 injected · 1 output-limit raise, 0 continuations", report)


def anthropic_body(result: str, earlier: str = "") -> dict[str, object]:
    messages: list[dict[str, object]] = []
    if earlier:
        messages += [
            {"role": "user", "content": earlier},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        ]
    call = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}
    messages += [
        {"role": "user", "content": [{"type": "text", "text": "read a"}]},
        {"role": "assistant", "content": [call]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}],
        },
    ]
    return {"messages": messages}


def openai_body(result: str) -> dict[str, object]:
    call = {"id": "t1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    return {
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "read a"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "t1", "content": result},
        ]
    }


def test_a_conversation_is_compactable_when_compaction_could_take_enough_away() -> None:
    assert not compactable(anthropic_body("ok"))
    assert not compactable(openai_body("x" * 3_000))  # trimming keeps 2,000 of an unread one
    assert compactable(anthropic_body("x" * 4_500))
    assert compactable(openai_body("x" * 4_500))
    assert compactable(anthropic_body("ok", earlier="an earlier question " * 120))
    assert not compactable({"messages": [{"role": "user", "content": "y" * 10_000}]})
    assert compaction_trim_floor == TRIM_FLOOR  # what chaos assumes compaction keeps

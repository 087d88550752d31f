"""However the servers keep failing, one call ends within bounded requests and waiting."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import ChatRequest, ChatResponse, DeltaHandler, ErrorKind, LlmError, Purpose
from providers.testing import Answer, FunctionProvider
from recovery import RecoveringProvider, RecoverySettings
from tests.fakes.clock import VirtualClock
from tests.recovery.support import REQUEST, fail, target

TRANSIENT = [kind for kind in ErrorKind if kind.transient]
waits = st.none() | st.floats(min_value=0, max_value=1_000, allow_nan=False)
failures = st.lists(st.tuples(st.sampled_from(TRANSIENT), waits), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    scripts=st.lists(failures, min_size=1, max_size=3),
    purpose=st.sampled_from(list(Purpose)),
    seed=st.integers(0, 2**16),
)
def test_an_outage_ends_within_bounded_requests_and_time(
    scripts: list[list[tuple[ErrorKind, float | None]]], purpose: Purpose, seed: int
) -> None:
    config = RecoverySettings(max_attempts=6, max_total_wait=120, max_retry_wait=60)
    clock = VirtualClock()
    providers = [FunctionProvider(_cycling(script)) for script in scripts]
    chain = [target(f"p{i}:m", provider) for i, provider in enumerate(providers)]
    recovering = RecoveringProvider(
        chain, settings=config, clock=clock.now, sleep=clock.sleep, rng=random.Random(seed)
    )
    request = REQUEST.model_copy(update={"purpose": purpose})
    start = clock.now()
    with pytest.raises(LlmError) as caught:
        asyncio.run(recovering.chat(request))
    assert all(f"p{i}:m" in str(caught.value) for i in range(len(chain)))
    sent = sum(len(provider.requests) for provider in providers)
    assert sent <= len(chain) * config.max_attempts
    assert clock.now() - start <= config.max_total_wait
    assert all(wait <= config.max_retry_wait for wait in clock.sleeps)


def _cycling(script: list[tuple[ErrorKind, float | None]]) -> Answer:
    errors = [fail(kind, retry_after=wait) for kind, wait in script]
    index = 0

    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        nonlocal index
        error = errors[index % len(errors)]
        index += 1
        raise error

    return answer

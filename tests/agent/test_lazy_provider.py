"""`LazyProvider`: the vendor SDK is imported in the background, never twice, never in the way."""

from __future__ import annotations

import asyncio
import threading

import pytest

from providers import ChatRequest, Message, Provider
from providers.lazy import LazyProvider
from providers.testing import ScriptedProvider, text

REQUEST = ChatRequest(messages=[Message.user("hi")])


class SlowFactory:
    """Builds a scripted provider once `release` is set, as a slow SDK import would."""

    def __init__(self, *, failures: int = 0) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.calls = 0
        self.failures = failures
        self.built = ScriptedProvider([text("one"), text("two")])

    def __call__(self) -> Provider:
        self.calls += 1
        self.started.set()
        if not self.release.wait(timeout=30):
            raise AssertionError("the test never released the factory")
        if self.calls <= self.failures:
            raise ImportError("No module named 'anthropic'")
        return self.built


async def test_warm_up_returns_at_once_and_the_first_request_waits_for_that_build() -> None:
    factory = SlowFactory()
    lazy = LazyProvider(factory, "anthropic:x")

    lazy.warm_up()  # returns while the factory is still blocked
    assert await asyncio.to_thread(factory.started.wait, 10)
    assert not lazy.loaded
    request = asyncio.create_task(lazy.chat(REQUEST))
    ticks = 0
    while ticks < 5:  # the event loop keeps running while the request waits for the build
        await asyncio.sleep(0)
        ticks += 1
    assert not request.done()
    factory.release.set()

    assert (await request).message.text == "one"
    assert (await lazy.chat(REQUEST)).message.text == "two"
    assert factory.calls == 1
    assert lazy.loaded


async def test_a_failed_background_build_is_retried_by_the_first_request() -> None:
    factory = SlowFactory(failures=1)
    factory.release.set()
    lazy = LazyProvider(factory, "anthropic:x")

    lazy.warm_up()  # fails in the background: nothing is raised, nothing is shown
    response = await lazy.chat(REQUEST)

    assert response.message.text == "one"
    assert factory.calls == 2


async def test_a_build_that_keeps_failing_fails_the_request_as_without_warm_up() -> None:
    factory = SlowFactory(failures=2)
    factory.release.set()
    lazy = LazyProvider(factory, "anthropic:x")

    lazy.warm_up()
    with pytest.raises(ImportError, match="anthropic"):
        await lazy.chat(REQUEST)


async def test_cancelling_a_request_that_waits_does_not_cancel_the_build() -> None:
    factory = SlowFactory()
    lazy = LazyProvider(factory, "anthropic:x")
    lazy.warm_up()
    waiting = asyncio.create_task(lazy.chat(REQUEST))
    await asyncio.sleep(0)

    waiting.cancel()  # Ctrl-C while the SDK is still importing
    with pytest.raises(asyncio.CancelledError):
        await waiting
    factory.release.set()

    assert (await lazy.chat(REQUEST)).message.text == "one"
    assert factory.calls == 1


def test_warm_up_twice_builds_once() -> None:
    factory = SlowFactory()
    factory.release.set()
    lazy = LazyProvider(factory, "anthropic:x")

    lazy.warm_up()
    lazy.warm_up()
    assert lazy.get() is factory.built
    lazy.warm_up()  # already built: nothing starts

    assert factory.calls == 1

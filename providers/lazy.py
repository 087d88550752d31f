"""A provider built on demand, so start-up does not pay for a vendor SDK import.

The REPL asks for it to be built in the background (`LazyProvider.warm_up`) once its prompt is
on screen: importing ``anthropic`` takes 1–3 s, which would otherwise come after the person
pressed Enter, although they spent seconds typing at an idle prompt.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol, runtime_checkable

import structlog

from providers import ChatRequest, ChatResponse, DeltaHandler, Provider

log = structlog.get_logger("providers.lazy")


@runtime_checkable
class Readies(Protocol):
    """A provider with work to do before its first request (`LazyProvider.ready`)."""

    async def ready(self) -> None: ...


class LazyProvider:
    """A `Provider` that calls ``factory`` once, when first needed, and delegates to it.

    Configuration problems (a missing key) are checked before this is built, so a failure of
    ``factory`` is rare. A background build that fails is only logged; the first request then
    builds again in the foreground and reports the failure as it would without the warm-up.

    Args:
        factory: Builds the real provider (and imports its SDK).
        name: What `repr` shows before the provider exists.
    """

    def __init__(self, factory: Callable[[], Provider], name: str = "provider") -> None:
        self._factory = factory
        self._name = name
        self._provider: Provider | None = None
        self._building = threading.Lock()
        self._warming: Future[None] | None = None

    @property
    def loaded(self) -> bool:
        """Whether the real provider has been built."""
        return self._provider is not None

    def warm_up(self) -> None:
        """Start building the real provider in a background thread; returns at once.

        Does nothing if it is built or being built. The thread is a daemon: a person who
        leaves at once does not wait for an import they never needed.
        """
        if self._provider is not None or self._warming is not None:
            return
        warming: Future[None] = Future()
        warming.set_running_or_notify_cancel()  # a cancelled wait must not cancel the build
        self._warming = warming
        thread = threading.Thread(
            target=self._build_in_background, args=(warming,), name="warm-up", daemon=True
        )
        thread.start()

    def _build_in_background(self, done: Future[None]) -> None:
        try:
            self.get()
        except Exception as error:  # the first request builds again and reports it
            log.info("provider_warm_up_failed", provider=self._name, error=repr(error))
        finally:
            done.set_result(None)

    def get(self) -> Provider:
        """The real provider, built now if needed (waits for a build in progress)."""
        with self._building:
            if self._provider is None:
                self._provider = self._factory()
            return self._provider

    async def ready(self) -> None:
        """Build the real provider (import its SDK) without blocking the event loop.

        Recovery awaits this before it consults the state shared with other agents: an
        import of 1–3 s between that look and the send made the look stale (agents sent
        into a retry-after another agent had been told of meanwhile). A failing build is
        left for `chat` to report.
        """
        if self._provider is not None:
            return
        warming = self._warming
        if warming is not None:
            await asyncio.wrap_future(warming)
            return
        try:
            await asyncio.to_thread(self.get)
        except Exception as error:  # chat builds again and reports it
            log.info("provider_build_failed", provider=self._name, error=repr(error))

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Answer ``request`` with the real provider."""
        warming = self._warming
        if self._provider is None and warming is not None:
            # Wait for the import already under way without blocking the event loop, so
            # the spinner runs and Ctrl-C works; it started earlier, so it ends sooner.
            await asyncio.wrap_future(warming)
        return await self.get().chat(request, on_delta)

    def __repr__(self) -> str:
        state = "loaded" if self._provider is not None else "not loaded"
        return f"LazyProvider({self._name}, {state})"

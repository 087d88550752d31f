"""A provider built on its first request, so start-up does not pay for a vendor SDK import."""

from __future__ import annotations

from collections.abc import Callable

from agent.llm import ChatRequest, ChatResponse, DeltaHandler, Provider


class LazyProvider:
    """A `Provider` that calls ``factory`` once, on the first `chat`, and delegates to it.

    Importing the vendor SDKs takes from a few hundred milliseconds to seconds; the REPL
    should show its prompt before that. Configuration problems (a missing key) are checked
    before this is built, so a failure here is rare and surfaces on the first request.

    Args:
        factory: Builds the real provider (and imports its SDK).
        name: What `repr` shows before the provider exists.
    """

    def __init__(self, factory: Callable[[], Provider], name: str = "provider") -> None:
        self._factory = factory
        self._name = name
        self._provider: Provider | None = None

    @property
    def loaded(self) -> bool:
        """Whether the real provider has been built."""
        return self._provider is not None

    def get(self) -> Provider:
        """The real provider, built now if needed."""
        if self._provider is None:
            self._provider = self._factory()
        return self._provider

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Answer ``request`` with the real provider."""
        return await self.get().chat(request, on_delta)

    def __repr__(self) -> str:
        state = "loaded" if self._provider is not None else "not loaded"
        return f"LazyProvider({self._name}, {state})"

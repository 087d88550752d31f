"""What the recovery layer tells subscribers: one event per retry, switch, escalation, limit."""

from __future__ import annotations

from typing import Literal

from providers import ErrorKind, Event, RequestKind

_WHAT_HAPPENED: dict[ErrorKind, str] = {
    ErrorKind.RATE_LIMIT: "Rate limited by {provider}",
    ErrorKind.OVERLOADED: "{provider} is overloaded",
    ErrorKind.SERVER: "{provider} had a server error",
    ErrorKind.TIMEOUT: "{provider} timed out",
    ErrorKind.CONNECTION: "Connection to {provider} failed",
    ErrorKind.UNREACHABLE: "Cannot reach {provider}",
}


def _seconds(value: float) -> str:
    return f"{value:.1f}s" if value < 10 and value != int(value) else f"{value:.0f}s"


class RetryScheduled(Event):
    """A request failed and will be sent again after ``delay`` seconds (at ``retry_at``)."""

    type: Literal["retry_scheduled"] = "retry_scheduled"
    kind: ErrorKind
    attempt: int
    """The number of the coming attempt."""
    max_attempts: int
    delay: float
    retry_at: float
    """Clock time of the retry, for a live countdown."""
    model: str
    provider: str
    request_id: str | None = None
    message: str = ""
    status: int | None = None
    """The HTTP status the server answered with; None for a failure without one (a dropped
    connection, a timeout, a stalled stream)."""
    purpose: RequestKind = RequestKind.TURN
    """What the request was for: a turn's, or a side request's (a compaction's summary,
    web_fetch's answer over a page)."""

    def describe(self) -> str:
        what = _WHAT_HAPPENED.get(self.kind, "{provider} call failed").format(
            provider=self.provider or self.model
        )
        return (
            f"{what} — retrying in {_seconds(self.delay)} "
            f"(attempt {self.attempt}/{self.max_attempts})"
        )


class RequestHeld(Event):
    """A request waits ``delay`` seconds before it is sent (until ``retry_at``): a server told
    this agent, or another on the same key, to wait (``server``), or the shared rate-limit
    headroom is too low to send now."""

    type: Literal["request_held"] = "request_held"
    model: str
    delay: float
    retry_at: float
    """Clock time the request goes, for a live countdown."""
    server: bool
    other_agent: bool = False
    """The server's wait was told to another agent on the same key (through the fleet)."""

    def describe(self) -> str:
        if self.server and self.other_agent:
            return (
                f"{self.model}: waiting {_seconds(self.delay)}: the API asked another agent "
                "on this key to slow down"
            )
        why = "the server asked to wait" if self.server else "pacing under the rate limit"
        return f"{self.model}: {why} — sending in {_seconds(self.delay)}"


class FallbackActivated(Event):
    """The session switched to another model of the chain.

    After a passing failure the model it left is tried again in ``returns_in`` seconds;
    after a bad key, no quota or an unknown model (``stays_because``) the switch holds for
    the rest of the session.
    """

    type: Literal["fallback_activated"] = "fallback_activated"
    from_model: str
    to_model: str
    reason: str
    primary: str = ""
    """The model the session comes back to (empty: the one it left)."""
    returns_in: float | None = None
    stays_because: str | None = None
    purpose: RequestKind = RequestKind.TURN
    """What the request that moved it was for."""

    def describe(self) -> str:
        line = f"Switched from {self.from_model} to {self.to_model} ({self.reason})"
        if self.stays_because is not None:
            return f"{line} — for the rest of the session: {self.stays_because}"
        if self.returns_in is not None:
            primary = self.primary or self.from_model
            return f"{line} — {primary} is tried again in {_seconds(self.returns_in)}"
        return line


class ModelRestored(Event):
    """The model the session fell back from answered a trial: the session is back on it."""

    type: Literal["model_restored"] = "model_restored"
    model: str
    from_model: str
    after: float
    """Seconds the session spent on the fallback."""
    purpose: RequestKind = RequestKind.TURN
    """What the request its trial was sent with was for."""

    def describe(self) -> str:
        spent = _seconds(self.after)
        return f"Back on {self.model}: it answers again ({spent} on {self.from_model})"


class TokensEscalated(Event):
    """A response stopped at ``max_tokens``; it is being requested again with a higher limit."""

    type: Literal["tokens_escalated"] = "tokens_escalated"
    model: str
    from_tokens: int
    to_tokens: int

    def describe(self) -> str:
        return f"Answer cut at {self.from_tokens} tokens — asking again with {self.to_tokens}"


class StreamRestarted(Event):
    """Partially streamed output was discarded because the request is being sent again."""

    type: Literal["stream_restarted"] = "stream_restarted"
    model: str
    reason: str

    def describe(self) -> str:
        return f"Stream from {self.model} interrupted ({self.reason}) — starting over"


class BudgetExhausted(Event):
    """The session's retry budget cannot pay for another retry: no more retries for now."""

    type: Literal["budget_exhausted"] = "budget_exhausted"
    model: str
    kind: ErrorKind
    tokens_left: float

    def describe(self) -> str:
        return f"Retry budget used up — not retrying {self.model} ({self.kind.value})"


class CircuitOpened(Event):
    """A model failed too often in a row: new calls skip it until ``retry_at``.

    With ``fallback`` the call that opened it moves to the next model; without, that call
    goes on retrying this model (there is no other), and only new calls fail fast.
    """

    type: Literal["circuit_opened"] = "circuit_opened"
    model: str
    failures: int
    cooldown: float
    retry_at: float
    fallback: bool = False

    def describe(self) -> str:
        head = f"{self.model} failed {self.failures} times in a row — "
        if self.fallback:
            return (
                head
                + f"using the next model; {self.model} is tried again in "
                + _seconds(self.cooldown)
            )
        return head + (
            f"still retrying this request; new requests fail at once for "
            f"{_seconds(self.cooldown)} unless it answers"
        )


class CircuitClosed(Event):
    """A model whose breaker was open answered again."""

    type: Literal["circuit_closed"] = "circuit_closed"
    model: str

    def describe(self) -> str:
        return f"{self.model} is answering again"


class GaveUp(Event):
    """Recovery could not complete a call; ``message`` says what each model said.

    A side request's give-up (a compaction's summary, web_fetch's answer: see `side_request`)
    fails that request only: its caller goes on without the answer.
    """

    type: Literal["gave_up"] = "gave_up"
    kind: ErrorKind
    requests: int
    waited: float
    message: str
    retry_after: float | None = None
    model: str = ""
    """The model whose error ``kind`` is, as the chain names it: the first the call tried
    that failed (`recovery.report.combined_error`); empty in sessions saved before it was
    kept."""
    purpose: RequestKind = RequestKind.TURN
    """What the call was for."""

    @property
    def side_request(self) -> bool:
        """Whether the call was a side request, not a turn's (an agent's or a sub-agent's):
        its give-up fails no turn."""
        return self.purpose not in (RequestKind.TURN, RequestKind.SUBAGENT)

    def describe(self) -> str:
        return (
            f"Gave up after {self.requests} requests and {_seconds(self.waited)} "
            f"of waiting: {self.message}"
        )


RecoveryEvent = (
    RetryScheduled
    | RequestHeld
    | FallbackActivated
    | ModelRestored
    | TokensEscalated
    | StreamRestarted
    | BudgetExhausted
    | CircuitOpened
    | CircuitClosed
    | GaveUp
)

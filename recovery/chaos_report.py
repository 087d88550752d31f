"""The table a run under ``--chaos`` ends with: the faults injected and what recovery did."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from providers import ErrorKind, Event
from providers.chaos import ChaosPlan, FaultKind
from recovery.events import RetryScheduled

ANSWERED_BY: dict[FaultKind, tuple[ErrorKind, ...]] = {
    FaultKind.RATE_LIMIT: (ErrorKind.RATE_LIMIT,),
    FaultKind.RATE_LIMIT_WAIT: (ErrorKind.RATE_LIMIT,),
    FaultKind.OVERLOAD: (ErrorKind.OVERLOADED, ErrorKind.SERVER),
    FaultKind.OUTAGE: (ErrorKind.SERVER, ErrorKind.OVERLOADED),
    FaultKind.RESET: (ErrorKind.CONNECTION,),
    FaultKind.CUT_STREAM: (ErrorKind.CONNECTION,),
    FaultKind.STALL: (),
    FaultKind.TRUNCATE: (),
    FaultKind.OVERFLOW: (ErrorKind.CONTEXT_OVERFLOW,),
    FaultKind.TOOL_FAIL: (),
    FaultKind.TOOL_HANG: (),
    FaultKind.TOOL_FLOOD: (),
}
"""The error kinds a fault surfaces as, once the SDK and the adapter have read it (none:
it is not an error of a request)."""

_TALLY = (
    ("retry_scheduled", "retry", "retries"),
    ("request_held", "wait", "waits"),
    ("stream_restarted", "stream restart", "stream restarts"),
    ("fallback_activated", "fallback", "fallbacks"),
    ("model_restored", "return to the primary", "returns to the primary"),
    ("compaction_applied", "compaction", "compactions"),
    ("tokens_escalated", "output-limit raise", "output-limit raises"),
    ("continuation_requested", "continuation", "continuations"),
    ("tool_failed", "tool error the model read", "tool errors the model read"),
    ("gave_up", "call given up", "calls given up"),
)


def chaos_report(plan: ChaosPlan, events: Sequence[Event]) -> str:
    """Plain text: one row per fault kind, then the recovery events of the run.

    Each retry is counted once, under the fault that caused it, so the rows add up to the
    total on the last line; a retry of an error no fault explains gets a row of its own.
    ``events`` are recovery's own: a caller that publishes some wrapped (a sub-agent's, named
    as the child's) hands them in unwrapped, so every request of the run is counted.
    """
    retries, unexplained = _retries_by_fault(plan, events)
    tally = Counter(event.type for event in events)
    counts = plan.counts()
    faults, requests = len(plan.injected), plan.requests
    head = f"{plan.spec.describe()} ended: {_n(faults, 'fault')} in {_n(requests, 'request')}"
    if plan.injects_tool_faults:
        head += f" and {_n(plan.tool_calls, 'tool call')}"
    rows = [head]
    width = max((len(kind.value) for kind in counts), default=5)
    for kind, injected in sorted(counts.items()):
        rows.append(
            f"  {kind.value:<{width}}  {injected:>4} injected · {_how(kind, retries, tally)}"
        )
    if unexplained:
        other = f"{_n(unexplained, 'retry', 'retries')} of errors not injected"
        rows.append(f"  {'other':<{width}}        {other}")
    done = ", ".join(_n(tally[name], one, many) for name, one, many in _TALLY)
    rows.append(f"  recovery: {done}")
    return "\n".join(rows)


def _retries_by_fault(plan: ChaosPlan, events: Sequence[Event]) -> tuple[Counter[FaultKind], int]:
    """Retries per fault kind, and those no injected fault explains.

    A fault fails one request, so it causes at most one retry: each retry goes to the
    earliest fault not yet matched whose error kind it retried (faults and retries come in
    the same order). Matching by error kind alone counted an overload's retry under both
    ``overload`` and ``outage``, and the rows added up to more than the run retried.
    """
    waiting = [fault.kind for fault in plan.injected if ANSWERED_BY.get(fault.kind)]
    found: Counter[FaultKind] = Counter()
    unexplained = 0
    for event in events:
        if not isinstance(event, RetryScheduled):
            continue
        match = next((i for i, kind in enumerate(waiting) if event.kind in ANSWERED_BY[kind]), None)
        if match is None:
            unexplained += 1
        else:
            found[waiting.pop(match)] += 1
    return found, unexplained


def _how(kind: FaultKind, retries: Counter[FaultKind], tally: Counter[str]) -> str:
    """What recovery did about faults of ``kind``."""
    if kind is FaultKind.STALL:
        return "waited out (no error)"
    if kind is FaultKind.OVERFLOW:
        return _n(tally["compaction_applied"], "compaction")
    if kind is FaultKind.TRUNCATE:
        raised, continued = tally["tokens_escalated"], tally["continuation_requested"]
        return f"{_n(raised, 'output-limit raise')}, {_n(continued, 'continuation')}"
    if kind is FaultKind.TOOL_FAIL:
        retried = _n(tally["tool_retried"], "retry", "retries")
        return f"{retried}, the rest an error result the model read"
    if kind is FaultKind.TOOL_HANG:
        return f"{tally['tool_timed_out']} stopped at the tool timeout"
    if kind is FaultKind.TOOL_FLOOD:
        return "cut to the tool output limit (tools.max_output_chars) before the model read it"
    kinds = ANSWERED_BY[kind]
    retried = _n(retries[kind], "retry", "retries")
    return f"{retried} of {' / '.join(error.value for error in kinds)}"


def _n(count: int, one: str, many: str = "") -> str:
    """``count`` and the noun in its number: "1 retry", "3 retries", "0 faults"."""
    return f"{count} {one if count == 1 else many or one + 's'}"

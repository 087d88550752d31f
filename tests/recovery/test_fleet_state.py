"""The pure changes agents make to a fleet record: pacing, limits, breaker, budget."""

from __future__ import annotations

import json

import pytest

from providers.ratelimit import Headroom, RateLimits
from recovery.fleet import state
from recovery.fleet.state import Hold, Limits

NOW = 1_800_000_000.0
NONE = Limits()


def reported(remaining: int, limit: int = 10, reset_in: float = 5.0) -> RateLimits:
    return RateLimits(requests=Headroom(limit=limit, remaining=remaining, reset_in=reset_in))


def test_an_empty_record_lets_a_request_go_and_counts_it_in_flight() -> None:
    record: state.Record = {}

    hold = state.reserve(record, NOW, 100, "a", NONE)

    assert hold == Hold(0.0)
    assert state.inflight_count(record, NOW) == 1
    state.release(record, NOW + 1, "a", None)
    assert state.inflight_count(record, NOW + 1) == 0


def test_a_server_wait_holds_everyone_until_it_passes() -> None:
    record: state.Record = {}
    state.wait_until(record, NOW + 30)
    state.wait_until(record, NOW + 10)  # an earlier wait never shortens a later one

    assert state.reserve(record, NOW, 1, "b", NONE) == Hold(30.0, server=True)
    assert state.reserve(record, NOW + 30, 1, "b", NONE) == Hold(0.0)


def test_low_headroom_paces_sends_at_the_refill_rate() -> None:
    record: state.Record = {}
    state.release(record, NOW, "x", reported(remaining=2, limit=10, reset_in=4.0))  # 2/s

    assert state.reserve(record, NOW, 1, "a", NONE) == Hold(0.0)
    assert state.reserve(record, NOW, 1, "b", NONE) == Hold(0.0)
    third = state.reserve(record, NOW, 1, "c", NONE)

    assert third.seconds == pytest.approx(0.5)
    assert not third.server
    assert state.reserve(record, NOW + 0.5, 1, "c", NONE) == Hold(0.0)


def test_reported_headroom_never_forgets_sends_the_server_has_not_counted_yet() -> None:
    record: state.Record = {}
    state.release(record, NOW, "x", reported(remaining=5, limit=10, reset_in=10.0))
    for holder in "abcd":
        state.reserve(record, NOW, 1, holder, NONE)

    # An answer to a request sent before those four still says 5 are left.
    state.release(record, NOW, "a", reported(remaining=5, limit=10, reset_in=10.0))

    assert state.headroom_view(record["requests"], NOW) == (1, 10)


def test_headroom_is_full_again_at_its_reset_time_without_a_known_rate() -> None:
    record: state.Record = {}
    state.release(record, NOW, "x", reported(remaining=10, limit=10, reset_in=3.0))
    record["requests"]["level"] = 0.0

    assert state.reserve(record, NOW, 1, "a", NONE).seconds == pytest.approx(3.0)
    assert state.reserve(record, NOW + 3, 1, "a", NONE) == Hold(0.0)


def test_requests_per_minute_cap_waits_for_the_oldest_send_to_age_out() -> None:
    record: state.Record = {}
    limits = Limits(requests_per_minute=2)
    state.reserve(record, NOW, 1, "a", limits)
    state.reserve(record, NOW + 10, 1, "b", limits)

    assert state.reserve(record, NOW + 20, 1, "c", limits).seconds == pytest.approx(40.0)
    assert state.reserve(record, NOW + 60.5, 1, "c", limits) == Hold(0.0)


def test_tokens_per_minute_cap_counts_estimated_input_tokens() -> None:
    record: state.Record = {}
    limits = Limits(tokens_per_minute=1000)
    state.reserve(record, NOW, 600, "a", limits)
    state.reserve(record, NOW + 5, 300, "b", limits)

    assert state.reserve(record, NOW + 6, 200, "c", limits).seconds == pytest.approx(54.0)
    # A request larger than the whole cap goes alone once the window is empty.
    assert state.reserve(record, NOW + 66, 5000, "d", limits) == Hold(0.0)


def test_max_concurrent_ignores_holders_that_died_or_outlived_their_lease() -> None:
    record: state.Record = {}
    limits = Limits(max_concurrent=1)
    state.reserve(record, NOW, 1, "alive", limits)

    assert state.reserve(record, NOW, 1, "b", limits).seconds > 0
    dead = state.reserve(record, NOW, 1, "b", limits, alive=lambda holder: holder != "alive")
    assert dead == Hold(0.0)
    assert state.reserve(record, NOW + state.LEASE, 1, "c", Limits(max_concurrent=2)).seconds == 0


def test_the_breaker_opens_at_the_threshold_and_closes_on_a_success() -> None:
    record: state.Record = {}
    for _ in range(2):
        state.breaker_failure(record, NOW, threshold=3, cooldown=30)
    assert state.breaker_open_for(record, NOW) == 0

    state.breaker_failure(record, NOW, threshold=3, cooldown=30)

    assert state.breaker_open_for(record, NOW + 10) == pytest.approx(20)
    state.breaker_success(record)
    assert state.breaker_open_for(record, NOW + 10) == 0


def test_the_budget_pays_until_empty_and_refills_over_time() -> None:
    record: state.Record = {}
    assert state.budget_change(record, NOW, 10, -6)
    assert not state.budget_change(record, NOW, 10, -6)
    assert state.budget_level(record, NOW, 10) == pytest.approx(4)

    later = NOW + state.BUDGET_REFILL_SECONDS / 2
    assert state.budget_level(record, later, 10) == pytest.approx(9)


def test_the_budget_is_full_again_within_a_minute() -> None:
    record: state.Record = {}
    assert state.budget_change(record, NOW, 10, -10, "old-run")
    assert state.budget_level(record, NOW + 60, 10) == pytest.approx(10)


def test_a_budget_spent_only_by_exited_agents_is_full() -> None:
    record: state.Record = {}
    state.budget_change(record, NOW, 10, -8, "old-run")
    state.budget_change(record, NOW, 10, -1, "other")

    def only_other_alive(holder: str) -> bool:
        return holder == "other"

    assert state.budget_level(record, NOW, 10, only_other_alive) == pytest.approx(1)
    assert state.budget_level(record, NOW, 10, lambda holder: False) == 10
    # The next spend forgets the exited spender.
    assert state.budget_change(record, NOW, 10, -1, "new-run", only_other_alive)
    assert record["budget"]["by"] == ["other", "new-run"]


def test_a_success_on_a_healthy_model_leaves_the_record_as_it_was() -> None:
    record: state.Record = {}
    state.breaker_success(record)
    assert state.budget_change(record, NOW, 10, +1)
    assert record == {}  # so the shared file is not rewritten on every answer

    state.budget_change(record, NOW, 10, -4)
    assert state.budget_change(record, NOW + 1, 10, +1)
    assert state.budget_level(record, NOW + 1, 10) == pytest.approx(7, abs=0.2)


@pytest.mark.parametrize(
    "garbage",
    [
        {"not_before": "soon", "requests": [1, 2], "inflight": {"a": "x"}, "sends": "many"},
        {"breaker": 3, "budget": {"tokens": None}, "sent_tokens": [[1], ["a", 2]]},
        {"requests": {"limit": "10", "level": None, "rate": [], "full_at": "x"}},
    ],
)
def test_a_damaged_record_from_disk_is_read_as_what_it_can_say(garbage: state.Record) -> None:
    record = json.loads(json.dumps(garbage))
    limits = Limits(requests_per_minute=5, tokens_per_minute=50, max_concurrent=3)

    assert state.reserve(record, NOW, 10, "a", limits).seconds >= 0
    state.release(record, NOW, "a", reported(remaining=1))
    assert state.breaker_open_for(record, NOW) >= 0
    assert state.budget_level(record, NOW, 10) >= 0


def test_a_renewed_slot_outlives_the_lease_and_an_abandoned_one_does_not() -> None:
    record: state.Record = {}
    one = Limits(max_concurrent=1)
    state.reserve(record, NOW, 1, "streaming", one)

    later = NOW + state.LEASE - 1
    state.renew(record, later, "streaming")
    state.renew(record, later, "never-reserved")  # a renewal never takes a slot

    assert state.reserve(record, NOW + state.LEASE + 1, 1, "b", one).seconds > 0
    assert state.inflight_count(record, NOW + state.LEASE + 1) == 1
    assert state.reserve(record, later + state.LEASE, 1, "b", one) == Hold(0.0)

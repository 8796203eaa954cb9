"""The one reconnect policy: 1 s doubling to 30 s, jitter up to half the delay, back to the first
delay once a connection has lasted 60 s. Tested with a seeded random and a hand-moved clock."""

from __future__ import annotations

import random

import pytest

from lobby_display.backoff import FIRST_DELAY, HEALTHY_AFTER, JITTER, MAX_DELAY, Backoff


class Clock:
    """Seconds that move only when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class NoJitter(random.Random):
    def uniform(self, a: float, b: float) -> float:
        return a


class MaxJitter(random.Random):
    def uniform(self, a: float, b: float) -> float:
        return b


def test_the_field_tested_defaults() -> None:
    assert (FIRST_DELAY, MAX_DELAY, HEALTHY_AFTER, JITTER) == (1.0, 30.0, 60.0, 0.5)
    backoff = Backoff()
    assert (backoff.first, backoff.cap, backoff.healthy_after) == (1.0, 30.0, 60.0)


def test_doubles_from_one_second_to_a_cap_of_thirty() -> None:
    backoff = Backoff(rng=NoJitter(), clock=Clock())
    delays = [backoff.next_delay() for _ in range(8)]
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]
    assert backoff.attempt == 8


def test_jitter_adds_up_to_half_the_delay() -> None:
    assert Backoff(rng=MaxJitter()).next_delay() == 1.5
    backoff = Backoff(rng=random.Random(4), clock=Clock())
    delays = [backoff.next_delay() for _ in range(40)]
    bases = [1, 2, 4, 8, 16] + [30] * 35
    for delay, base in zip(delays, bases, strict=True):
        assert base <= delay <= base * 1.5
    capped = delays[5:]
    assert len(set(capped)) == len(capped), "each delay draws its own jitter"
    assert max(capped) - min(capped) > 5, "the jitter spreads over the half delay"


def test_a_seeded_random_gives_the_same_delays() -> None:
    def run() -> list[float]:
        backoff = Backoff(rng=random.Random(7), clock=Clock())
        return [backoff.next_delay() for _ in range(10)]

    assert run() == run()


def test_a_connection_that_lasted_a_minute_starts_afresh() -> None:
    clock = Clock()
    backoff = Backoff(rng=NoJitter(), clock=clock)
    assert [backoff.next_delay() for _ in range(4)] == [1, 2, 4, 8]
    backoff.started()
    clock.now += 59.9  # not quite a minute: the failures add up
    assert backoff.next_delay() == 16
    backoff.started()
    clock.now += 60.0
    assert backoff.next_delay() == 1
    assert backoff.attempt == 1


def test_only_the_connection_that_started_last_counts() -> None:
    clock = Clock()
    backoff = Backoff(rng=NoJitter(), clock=clock)
    backoff.started()
    clock.now += 120
    assert backoff.next_delay() == 1
    # A failure without a connection since (a refused attempt) is not healthy, however long
    # after the last connection it comes.
    clock.now += 120
    assert backoff.next_delay() == 2
    assert backoff.next_delay() == 4


def test_reset_goes_back_to_the_first_delay() -> None:
    backoff = Backoff(rng=NoJitter(), clock=Clock())
    for _ in range(5):
        backoff.next_delay()
    backoff.reset()
    assert backoff.attempt == 0
    assert backoff.next_delay() == 1


def test_other_delays_keep_the_shape() -> None:
    clock = Clock()
    backoff = Backoff(0.05, 0.4, 1.0, rng=NoJitter(), clock=clock)
    assert [backoff.next_delay() for _ in range(5)] == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.4])
    backoff.started()
    clock.now += 1.0
    assert backoff.next_delay() == pytest.approx(0.05)


def test_never_gives_up_however_long_the_outage() -> None:
    backoff = Backoff(rng=MaxJitter(), clock=Clock())
    for _ in range(5000):  # 5,000 attempts: about two days at the cap
        delay = backoff.next_delay()
    assert delay == 45.0
    assert backoff.attempt == 5000

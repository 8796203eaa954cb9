"""Garbage collections between frames: the screen collects the generation the interpreter would
have, at a moment of its choosing, and hands the collector back when it stops."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from lobby_display.collection import RUSH_LIMIT, QuietCollector


@pytest.fixture
def collector() -> Iterator[QuietCollector]:
    quiet = QuietCollector(thresholds=(700, 10, 10))
    yield quiet
    quiet.hand_back()


@pytest.mark.parametrize(
    ("counts", "generation"),
    [
        ((700, 10, 10), None),  # at the thresholds: not yet (the interpreter waits to pass them)
        ((701, 0, 0), 0),
        ((701, 11, 0), 1),
        ((3, 11, 0), 1),
        ((701, 11, 11), 2),
        ((0, 0, 11), 2),
    ],
)
def test_the_generation_due_is_the_oldest_past_its_threshold(
    collector: QuietCollector, counts: tuple[int, int, int], generation: int | None
) -> None:
    assert collector.due(counts) == generation


def test_no_collection_is_due_when_the_interpreter_s_thresholds_switch_it_off() -> None:
    assert QuietCollector(thresholds=(0, 10, 10)).due((10**6, 99, 99)) is None


def test_the_young_generation_waits_for_a_quiet_moment_up_to_the_rush_limit(
    collector: QuietCollector,
) -> None:
    assert not collector.pressing((RUSH_LIMIT * 700, 0, 0))
    assert collector.pressing((RUSH_LIMIT * 700 + 1, 0, 0))


def test_the_screen_takes_the_collector_over_and_hands_it_back(collector: QuietCollector) -> None:
    assert gc.isenabled()
    collector.take_over()
    assert collector.in_charge and not gc.isenabled()
    young: list[list[int]] = [
        [] for _ in range(2000)
    ]  # past the threshold, and nothing collected them
    assert gc.get_count()[0] > 700
    assert collector.collect() in (0, 1, 2)
    assert gc.get_count()[0] < len(young)
    assert collector.collections == 1
    collector.hand_back()
    assert gc.isenabled() and not collector.in_charge


def test_a_collector_switched_off_by_someone_else_stays_off(collector: QuietCollector) -> None:
    gc.disable()
    try:
        collector.take_over()
        assert not collector.in_charge
        collector.hand_back()
        assert not gc.isenabled()
    finally:
        gc.enable()

"""The size of the calls shown together: it falls at once for a wider label and rises again only
after ten minutes without one, for each size of card (`SteadySize`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lobby_display.widgets.now_calling import SIZE_MEMORY, SteadySize

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
SIX_CARDS = (21, 6)
THREE_CARDS = (33, 9)


def minutes(count: float) -> datetime:
    return NOW + timedelta(minutes=count)


def test_the_memory_is_ten_minutes() -> None:
    assert timedelta(minutes=10) == SIZE_MEMORY


def test_a_wider_label_shrinks_the_calls_at_once() -> None:
    size = SteadySize()
    assert size.settle(60, SIX_CARDS, NOW) == 60
    assert size.settle(48, SIX_CARDS, minutes(1)) == 48


def test_the_calls_grow_back_only_after_ten_minutes_without_a_wider_label() -> None:
    size = SteadySize()
    size.settle(48, SIX_CARDS, NOW)
    # The wide label has left the cards: the others would fit 60 pixels, but stay at 48.
    assert size.settle(60, SIX_CARDS, minutes(2)) == 48
    assert size.settle(60, SIX_CARDS, minutes(9.9)) == 48
    assert size.settle(60, SIX_CARDS, minutes(10)) == 60
    # And from then on they stay at 60 even where a moment's labels would fit larger.
    assert size.settle(64, SIX_CARDS, minutes(12)) == 60


def test_a_wide_label_shown_again_keeps_the_small_size_ten_more_minutes() -> None:
    size = SteadySize()
    size.settle(48, SIX_CARDS, NOW)
    assert size.settle(48, SIX_CARDS, minutes(8)) == 48
    assert size.settle(60, SIX_CARDS, minutes(17)) == 48
    assert size.settle(60, SIX_CARDS, minutes(18)) == 60


def test_each_size_of_card_keeps_its_own_size() -> None:
    size = SteadySize()
    size.settle(48, SIX_CARDS, NOW)
    assert size.settle(90, THREE_CARDS, minutes(1)) == 90
    assert size.settle(100, THREE_CARDS, minutes(2)) == 90
    # Six cards again: their own smaller size is still remembered.
    assert size.settle(60, SIX_CARDS, minutes(3)) == 48


def test_a_single_call_is_as_large_as_its_card() -> None:
    size = SteadySize()
    size.settle(48, SIX_CARDS, NOW)
    assert size.settle(0, None, minutes(1)) == 0
    assert size.settle(60, SIX_CARDS, minutes(2)) == 48


def test_a_clock_set_back_does_not_hold_a_small_size_for_hours() -> None:
    size = SteadySize()
    size.settle(48, SIX_CARDS, NOW)
    assert size.settle(60, SIX_CARDS, NOW - timedelta(hours=3)) == 60


def test_the_sizes_kept_are_bounded() -> None:
    size = SteadySize()
    for width in range(100):
        size.settle(40, (width, 6), NOW)
    assert len(size.kept) <= 16
    # The latest boxes are the ones kept.
    assert size.settle(60, (99, 6), minutes(1)) == 40

"""Board: counters (order, names per locale, values)."""

from __future__ import annotations

from lobby_display.updates import CounterChanged, CountersSnapshot
from tests.helpers.board_support import at, counter, make_board, reference


def test_counters_follow_the_configured_order_and_filter() -> None:
    board = make_board(counter_ids=("c2", "c1"))

    board.apply(
        CountersSnapshot({key: counter(key, 1) for key in ("c1", "c2", "c3")}),
        at(0),
    )

    assert [view.counter_id for view in board.counters()] == ["c2", "c1"]


def test_without_configured_order_counters_are_sorted_by_name() -> None:
    board = make_board(locales=("en_US",))

    board.apply(
        CountersSnapshot(
            {
                "c1": counter("c1", 1, {"en_US": "visitors"}),
                "c2": counter("c2", 2, {"en_US": "Appointments"}),
                "c3": counter("c3", 3, {"en_US": "Parcels"}),
            }
        ),
        at(0),
    )

    assert [view.counter_id for view in board.counters()] == ["c2", "c3", "c1"]


def test_counter_names_in_every_locale_from_reference_and_feed() -> None:
    board = make_board()
    board.apply(reference(counters={"c1": {"fr_FR": "Visiteurs", "en_US": "Visitors"}}), at(0))

    board.apply(CounterChanged(counter("c1", 12, {"de_DE": "Besucher"})), at(1))

    (view,) = board.counters()
    assert dict(view.names) == {"fr_FR": "Visiteurs", "en_US": "Visitors", "de_DE": "Besucher"}
    assert view.value == 12


def test_a_counter_change_updates_its_value() -> None:
    board = make_board()
    board.apply(CountersSnapshot({"c1": counter("c1", 3), "c2": counter("c2", 5)}), at(0))

    changes = board.apply(CounterChanged(counter("c1", 4)), at(1))

    assert changes.counters == {"c1"}
    assert [(view.counter_id, view.value) for view in board.counters()] == [("c1", 4), ("c2", 5)]


def test_a_counter_known_only_by_name_has_no_value_yet() -> None:
    board = make_board()

    board.apply(reference(counters={"c1": {"en_US": "Visitors"}}), at(0))

    (view,) = board.counters()
    assert dict(view.names) == {"en_US": "Visitors"}
    assert view.value is None


def test_a_counter_absent_from_a_new_snapshot_leaves() -> None:
    board = make_board()
    board.apply(CountersSnapshot({"c1": counter("c1", 3), "c2": counter("c2", 5)}), at(0))

    changes = board.apply(CountersSnapshot({"c2": counter("c2", 5)}), at(1))

    assert [view.counter_id for view in board.counters()] == ["c2"]
    assert changes.counters == {"c1"} and changes.layout

"""The "Today" column: the opening hours of the place's local day, in order, each once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from lobby_display.views import TimeslotView, slots_of_day

PARIS = ZoneInfo("Europe/Paris")


def slot(start: str, hours: float) -> TimeslotView:
    begin = datetime.fromisoformat(start)
    return TimeslotView(begin, begin + timedelta(hours=hours))


def test_the_same_slot_given_twice_is_listed_once_and_slots_come_in_order() -> None:
    morning = slot("2026-11-24T08:30:00+01:00", 3.5)
    afternoon = slot("2026-11-24T13:30:00+01:00", 3.5)
    now = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    assert slots_of_day((afternoon, morning, afternoon), now, PARIS) == (morning, afternoon)


def test_the_previous_evening_is_not_today() -> None:
    yesterday = slot("2026-11-23T18:00:00+01:00", 3)
    today = slot("2026-11-24T08:30:00+01:00", 3.5)
    now = datetime(2026, 11, 24, 7, 0, tzinfo=UTC)
    assert slots_of_day((yesterday, today), now, PARIS) == (today,)


def test_a_slot_open_across_midnight_is_shown_while_it_lasts() -> None:
    night = slot("2026-11-23T22:00:00+01:00", 4)  # until 02:00 on the 24th
    now = datetime(2026, 11, 24, 0, 30, tzinfo=UTC)  # 01:30 in Paris
    assert slots_of_day((night,), now, PARIS) == (night,)
    later = datetime(2026, 11, 24, 2, 0, tzinfo=UTC)
    assert slots_of_day((night,), later, PARIS) == ()


def test_the_day_is_the_place_s_not_utc_s() -> None:
    # 00:30 in Paris on the 25th is still the 24th in UTC: Paris's day is the 25th.
    late = slot("2026-11-24T20:00:00+01:00", 2)
    early = slot("2026-11-25T08:00:00+01:00", 2)
    now = datetime(2026, 11, 24, 23, 30, tzinfo=UTC)
    assert slots_of_day((late, early), now, PARIS) == (early,)
    assert slots_of_day((late, early), now, UTC) == (late,)

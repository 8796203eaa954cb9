"""The simulated place on its virtual clock, without HTTP: determinism, a lifelike day,
records the display can read."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest

from lobby_display import models
from lobby_display.models import LOCALES, Counter, Endpoint, Queue, QueueState, Ticket, clean_text
from lobby_display.simulator import Feed, Place, PlaceEvent, PlaceOptions
from lobby_display.simulator.names import label_prefix, ticket_label

START = datetime(2026, 11, 22, 13, 5, tzinfo=UTC)
SERVICE_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}:00,0000[+-]\d{4}$")
ISO_Z_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
LEGAL = {
    0: {100, 200, 600},
    50: {0, 100, 200, 600},
    100: {200, 600},
    200: {300, 500},
    300: {400},
    400: {600},
    500: {700},
}


def busy_hour(
    seed: int = 3, speed: float = 10.0, **options: object
) -> tuple[Place, list[PlaceEvent]]:
    place = Place(PlaceOptions(seed=seed, speed=speed, start=START, **options))  # type: ignore[arg-type]
    return place, place.step(3600)


def test_same_seed_gives_the_same_story_however_the_steps_are_cut() -> None:
    options = PlaceOptions(seed=11, speed=20, start=START)
    whole = Place(options).step(1800)
    place = Place(options)
    pieces: list[PlaceEvent] = []
    cuts = random.Random(5)
    while place.elapsed < 1800:
        pieces += place.step(min(cuts.uniform(0, 4), 1800 - place.elapsed))
    assert len(whole) > 1000
    assert pieces == whole


def test_another_seed_gives_another_story() -> None:
    first = Place(PlaceOptions(seed=1, speed=20, start=START)).step(600)
    second = Place(PlaceOptions(seed=2, speed=20, start=START)).step(600)
    assert [event.data for event in first[:20]] != [event.data for event in second[:20]]


def test_a_busy_hour_has_calls_recalls_no_shows_cancellations_and_done_tickets() -> None:
    _, events = busy_hour()
    history: dict[str, list[int]] = defaultdict(list)
    recalled: dict[str, int] = {}
    recalls = []
    for event in events:
        if event.feed is Feed.TICKETS:
            if event.data["recalledCount"] > recalled.get(event.key, 0):
                recalls.append(event.data)
            recalled[event.key] = event.data["recalledCount"]
            history[event.key].append(event.data["state"])
    paths = [tuple(states) for states in history.values()]
    assert any(states[-2:] == (500, 700) for states in paths), "tickets are done"
    assert any(200 in states for states in paths), "tickets are called"
    assert any(100 in states for states in paths), "tickets are alerted"
    assert any(states[-3:] == (300, 400, 600) for states in paths), "no-shows expire"
    assert any(states[-1] == 600 and 200 not in states for states in paths), "cancellations"
    assert recalls, "called tickets are recalled"
    for recall in recalls:
        assert recall["state"] == 200
        assert len(recall["timeline"]["recalledAt"]) == recall["recalledCount"]
    actions = {(event.feed, event.action) for event in events}
    assert (Feed.TICKETS, "CREATE") in actions
    assert (Feed.TICKETS, "DELETE") in actions
    assert (Feed.COUNTERS, "UPDATE") in actions


def test_tickets_only_make_legal_moves_and_leave_when_done_or_canceled() -> None:
    place, events = busy_hour(seed=5)
    last: dict[str, int] = {}
    for event in events:
        if event.feed is not Feed.TICKETS:
            continue
        state = event.data["state"]
        before = last.get(event.key)
        if event.action == "CREATE":
            assert before is None and state in (0, 50)
        elif before is not None and before != state:
            assert state in LEGAL[before], f"{before} -> {state}"
        if event.action == "DELETE":
            assert state in (600, 700)
            assert event.key not in place.tickets
        last[event.key] = state
    assert all(ticket.state not in (600, 700) for ticket in place.tickets.values())


def test_queues_pause_close_booking_fill_up_and_endpoints_open_and_close() -> None:
    _, events = busy_hour(seed=3, speed=30)
    states = [event.data for event in events if event.feed is Feed.QUEUES]
    assert any(state["pause"] for state in states)
    assert any(not state["bookingIsOpened"] for state in states)
    assert any(state["queueIsFull"] for state in states)
    assert any(not state["queueIsOpened"] for state in states)
    assert any(state["queueIsOpened"] for state in states)
    firsts = {
        str(state["allFirstAvailabilities"])
        for state in states
        if state["queueId"] == states[0]["queueId"]
    }
    assert len(firsts) > 3, "first availabilities move"
    counters = [event.data["infos"]["value"] for event in events if event.feed is Feed.COUNTERS]
    assert len(counters) > 10


def test_records_read_back_through_the_display_models() -> None:
    place, _ = busy_hour()
    records = place.records
    tickets = records.tickets(place.current_tickets())
    assert tickets
    for raw in tickets:
        ticket = Ticket.model_validate(raw)
        assert ticket.ticket_id == raw["ticketId"] and ticket.label == raw["label"]
        for name, moment in raw["timeline"].items():
            if name != "recalledAt" and moment is not None:
                assert SERVICE_SHAPE.match(moment), moment
        assert raw["lang"] in LOCALES
        assert isinstance(raw["endpoint"]["name"], str)
    for queue in place.queues.values():
        state = QueueState.model_validate(records.queue_state(queue))
        raw_state = records.queue_state(queue)
        assert state.queue_id == queue.queue_id
        assert set(raw_state["allFirstAvailabilities"]) == {kind.type_id for kind in queue.types}
        for by_size in raw_state["allFirstAvailabilities"].values():
            assert list(by_size) == [str(size) for size in range(1, queue.max_group + 1)]
            assert all(ISO_Z_SHAPE.match(moment) for moment in by_size.values())
        for slot in raw_state["dayQueueTimeslot"]:
            assert ISO_Z_SHAPE.match(slot["startTime"]) and ISO_Z_SHAPE.match(slot["endTime"])
        counter = Counter.model_validate(records.counter(queue))
        assert counter.counter_id == queue.queue_id
        assert SERVICE_SHAPE.match(records.counter(queue)["infos"]["nextRestart"])
        assert Queue.model_validate(records.queue(queue)).name.keys() == set(LOCALES)
        for endpoint in queue.endpoints:
            assert Endpoint.model_validate(records.endpoint(endpoint)).state in (0, 2)
    assert models.Place.model_validate(records.place_record()).timezone == "Europe/Paris"


def test_a_ticket_names_its_endpoint_in_its_own_language_only() -> None:
    place, _ = busy_hour()
    called = [ticket for ticket in place.tickets.values() if ticket.endpoint_id]
    assert called
    for ticket in called:
        record = place.records.ticket(ticket)
        endpoint = place.endpoints[ticket.endpoint_id or ""]
        assert record["endpoint"] == {
            "id": endpoint.endpoint_id,
            "name": endpoint.names[ticket.lang],
        }
        assert record["queue"]["name"] == place.queues[ticket.queue_id].names[ticket.lang]


@pytest.mark.parametrize("hour", range(24))
def test_queues_are_open_whatever_the_hour_the_demo_starts(hour: int) -> None:
    start = datetime(2026, 3, 29, hour, 20, tzinfo=UTC)  # the day clocks go forward, too
    place = Place(PlaceOptions(seed=hour, start=start, queues=5))
    open_queues = [queue for queue in place.queues.values() if place.is_open(queue)]
    assert len(open_queues) >= 4
    later = [queue for queue in place.queues.values() if not place.in_slot(queue)]
    for queue in later:
        state = place.records.queue_state(queue)
        assert state["nextQueueTimeslot"] is not None
        assert state["dayQueueTimeslot"], "a closed queue still shows today's hours"


def test_names_are_in_nine_locales_and_labels_have_a_letter_prefix() -> None:
    place = Place(PlaceOptions(seed=1, start=START, queues=30, tickets=300))
    for queue in place.queues.values():
        assert set(queue.names) == set(LOCALES)
        assert all(name.strip() for name in queue.names.values())
    first = next(iter(place.queues.values()))
    assert first.names["fr_FR"] == "Cartes d'identité" and first.names["th_TH"] == "บัตรประชาชน"
    labels = {ticket.label for ticket in place.tickets.values()}
    assert any(re.fullmatch(r"A\d{3}", label) for label in labels)
    assert any(re.fullmatch(r"[A-Z]{2}-\d{2,}", label) for label in labels)
    assert len({label_prefix(index) for index in range(300)}) == 300
    assert ticket_label("K", 42) == "K042" and ticket_label("BX-", 12) == "BX-12"
    desks = [endpoint.names for endpoint in place.endpoints.values()]
    assert {"fr_FR": "Guichet 3", "zh_TW": "3號櫃檯", "ko_KR": "3번 창구"}.items() <= desks[
        2
    ].items()


def test_ten_thousand_current_tickets_for_the_scale_benchmark() -> None:
    place = Place(PlaceOptions(seed=1, start=START, queues=30, tickets=10_000))
    assert len(place.tickets) == 10_000
    assert len(place.queues) == 30
    assert sum(place.waiting_totals(queue)[0] for queue in place.queues.values()) > 9000


def test_hostile_names_and_labels_are_hostile_and_clean_up_at_the_boundary() -> None:
    place = Place(PlaceOptions(seed=1, start=START))
    events = place.set_hostile(True)
    assert events, "called tickets and counters are re-sent"
    names = [
        name
        for queue in place.queues.values()
        for name in place.records.queue(queue)["name"].values()
    ]
    labels = [record["label"] for record in place.records.tickets(place.current_tickets())]
    everything = "".join(names + labels)
    for needle in ("\x1b[2J", "\x1b]0;pwned\x07", "\x9b", "\u202e", "\u200b", "\x00", "[bold red]"):
        assert needle in everything, repr(needle)
    assert any(len(name) > 100_000 for name in names)
    assert any(name.count("\u0301") > 500 for name in names)
    for text in names + labels:
        cleaned = clean_text(text)
        assert not any(char in cleaned for char in "\x1b\x9b\x00\u202e\u200b")
    assert Ticket.model_validate(place.records.tickets(place.current_tickets())[0]).label


def test_a_burst_makes_real_consistent_ticket_events() -> None:
    place = Place(PlaceOptions(seed=1, start=START))
    events = place.burst(900)
    tickets = [event for event in events if event.feed is Feed.TICKETS]
    assert len(tickets) >= 900
    assert {event.action for event in tickets} == {"CREATE", "UPDATE", "DELETE"}
    for event in tickets:
        if event.action == "DELETE":
            assert event.key not in place.tickets
    assert [event for event in events if event.feed is Feed.QUEUES], "queue states follow"
    waiting = sum(place.waiting_totals(queue)[0] for queue in place.queues.values())
    assert waiting == sum(1 for t in place.tickets.values() if t.state in (0, 50, 100))


def test_counters_restart_and_the_history_empties_at_midnight() -> None:
    start = datetime(2026, 11, 22, 22, 40, tzinfo=UTC)  # 23:40 in Paris
    place = Place(PlaceOptions(seed=4, speed=5, start=start))
    assert any(queue.counter_value for queue in place.queues.values()) and place.history
    events = place.step(21 * 60)
    restarts = [e for e in events if e.feed is Feed.COUNTERS and e.data["infos"]["value"] == 0]
    assert {event.key for event in restarts} == set(place.queues)
    assert all(e.data["infos"]["nextRestart"].startswith("2026-11-24T00:00:00") for e in restarts)
    assert all(ticket.done_at is None or ticket.done_at > 20 * 60 for ticket in place.history)


def test_the_clock_only_goes_forward_and_says_when_it_is_next_due() -> None:
    place = Place(PlaceOptions(seed=1, start=START))
    with pytest.raises(ValueError):
        place.step(-1)
    due = place.next_due()
    assert due is not None and due > 0
    assert place.step(due / 2) == []
    assert place.now == START + timedelta(seconds=due / 2)
    assert place.step(due) != []


def test_a_queue_state_read_at_any_moment_is_the_last_one_reported() -> None:
    place = Place(PlaceOptions(seed=8, speed=15, start=START))
    cuts = random.Random(2)
    for _ in range(400):
        place.step(cuts.uniform(0, 20))
        for queue in place.queues.values():
            assert place.records.queue_state(queue) == queue.last_state
            assert place.records.counter(queue) == queue.last_counter


@pytest.mark.parametrize("hour", [22, 23, 0, 1, 2])
def test_each_local_day_has_its_two_sessions_in_order_across_midnight(hour: int) -> None:
    """A place started around midnight (Paris) keeps coherent days: each local day holds its
    two sessions once, in order, the first one possibly begun the evening before, and the
    hours of a queue's day are listed in order, each once, for two days running."""
    start = datetime(2026, 11, 23, hour, 10, tzinfo=UTC)
    place = Place(PlaceOptions(seed=hour, start=start, queues=5, timezone="Europe/Paris"))
    for _ in range(2 * 24 * 6):  # two days, ten minutes at a time
        place.step(600)
        for queue in place.queues.values():
            starts = [begin for begin, _ in queue.slots]
            assert starts == sorted(set(starts)), "every session once, in order"
            for (_, end), (begin, _) in zip(queue.slots, queue.slots[1:], strict=False):
                assert end <= begin, "sessions do not overlap"
            day = place.records.queue_state(queue)["dayQueueTimeslot"]
            listed = [(slot["startTime"], slot["endTime"]) for slot in day]
            assert listed == sorted(set(listed))
            assert len(listed) <= 3, "the day's two sessions (and the next one begun tonight)"

"""Micro-benchmark: the cost of applying one ticket event to the board, 100 vs 10,000 tickets.

The board keeps tickets by id and its counts incrementally, so one event should cost the same
whatever the number of current tickets. This measures it: the median over many runs of the
time per event, for a waiting ticket changing state and for a call (a recall each time), with
100 and with 10,000 current tickets, and the ratio. A full snapshot is timed for scale.

Run: `.venv/bin/python bench/bench_board.py` (prints a table; `--json` prints the numbers).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from lobby_display.board import Board, BoardSettings
from lobby_display.models import QueueState, Ticket, TicketState, Timeline
from lobby_display.updates import QueueStatesSnapshot, TicketChanged, TicketsSnapshot

T0 = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
SIZES = (100, 10_000)
EVENTS_PER_RUN = 500
RUNS = 41


def _template() -> Ticket:
    return Ticket.model_validate(
        {
            "ticketId": "template",
            "label": "A000",
            "queue": {"id": "q1", "name": "Post"},
            "appointmentType": {"id": "visit", "name": "Visit"},
            "state": 0,
            "groupSize": 2,
            "lang": "en_US",
            "endpoint": {"id": "e1", "name": "Desk 1"},
        }
    )


def _board(size: int, with_queue_state: bool) -> tuple[Board, list[Ticket]]:
    """A board holding `size` current tickets (spread over four queues)."""
    template = _template()
    tickets = [
        template.model_copy(
            update={
                "ticketId": f"t{index}",
                "label": f"A{index:05d}",
                "queue": template.queue.model_copy(update={"id": f"q{index % 4}"}),
            }
        )
        for index in range(size)
    ]
    board = Board(BoardSettings(recent_calls=6), started_at=T0)
    if with_queue_state:
        board.apply(
            QueueStatesSnapshot({f"q{n}": QueueState(queue_id=f"q{n}") for n in range(4)}), T0
        )
    board.apply(TicketsSnapshot(tuple(tickets)), T0)
    return board, tickets


def _per_event(run: Callable[[], None], events: int) -> float:
    """Median time per event in microseconds over RUNS runs of `events` events."""
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / events / 1000)
    return statistics.median(samples)


def state_change_cost(size: int) -> float:
    """A waiting ticket alternating between booked and alerted (counted from the tickets)."""
    board, tickets = _board(size, with_queue_state=False)
    middle = tickets[size // 2]
    versions = [
        TicketChanged(middle.model_copy(update={"state": state}))
        for state in (TicketState.ALERTED, TicketState.BOOKED)
    ]
    updates = [versions[index % 2] for index in range(EVENTS_PER_RUN)]
    now = T0 + timedelta(seconds=1)

    def run() -> None:
        for update in updates:
            board.apply(update, now)

    return _per_event(run, EVENTS_PER_RUN)


def call_cost(size: int) -> float:
    """A called ticket recalled again and again: each event is a new call to list."""
    board, tickets = _board(size, with_queue_state=True)
    middle = tickets[size // 2]
    total = EVENTS_PER_RUN * RUNS
    now = T0 + timedelta(seconds=1)
    updates = [
        TicketChanged(
            middle.model_copy(
                update={
                    "state": TicketState.CALLED,
                    "recalledCount": recall,
                    "timeline": Timeline(called_at=now),
                }
            )
        )
        for recall in range(total)
    ]
    batches = iter(range(0, total, EVENTS_PER_RUN))

    def run() -> None:
        first = next(batches)
        for update in updates[first : first + EVENTS_PER_RUN]:
            board.apply(update, now)

    return _per_event(run, EVENTS_PER_RUN)


def snapshot_cost(size: int) -> float:
    """A whole snapshot of `size` tickets applied again (after a reconnect), in milliseconds."""
    board, tickets = _board(size, with_queue_state=True)
    snapshot = TicketsSnapshot(tuple(tickets))
    samples = []
    for _ in range(7):
        start = time.perf_counter_ns()
        board.apply(snapshot, T0 + timedelta(seconds=2))
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples)


def run() -> dict[str, dict[str, float]]:
    """Every measurement: {measure: {"100": value, "10000": value, "ratio": value}}."""
    results: dict[str, dict[str, float]] = {}
    for name, measure in (
        ("state change (µs/event)", state_change_cost),
        ("call (µs/event)", call_cost),
        ("snapshot (ms)", snapshot_cost),
    ):
        values = {str(size): measure(size) for size in SIZES}
        values["ratio"] = values[str(SIZES[1])] / values[str(SIZES[0])]
        results[name] = values
    return results


def main(argv: list[str] | None = None) -> int:
    """Print the measurements as a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    results = run()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"board: one ticket event, median of {RUNS} runs of {EVENTS_PER_RUN} events")
    print(f"{'measure':<26}{'100 tickets':>14}{'10,000 tickets':>17}{'ratio':>8}")
    for name, values in results.items():
        print(
            f"{name:<26}{values[str(SIZES[0])]:>14.2f}{values[str(SIZES[1])]:>17.2f}"
            f"{values['ratio']:>8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

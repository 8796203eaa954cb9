"""Scale: the cost of one ticket event with 100 and with 10,000 current tickets.

Two measures:

- the board alone (`bench/bench_board.py`): the time `Board.apply` takes per event, for a
  waiting ticket changing state and for a call, medians of many runs;
- the whole display (`python -m lobby_display run` on a 160 x 50 pty that plays foot: images
  on) against a simulated place
  of 30 queues holding 100 or 10,000 current tickets (its own story slowed to nothing): the CPU
  time the display spends per ticket event during a burst of 100 events/s, from
  /proc/PID/stat. This includes reading the feeds, the board and the redraws.

Target: the 10,000-ticket cost at most 1.5 times the 100-ticket cost.

Run: `.venv/bin/python -m bench.bench_scale [--quick]`
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import bench_board
from bench.harness import (
    LIVE_MARK,
    Marks,
    Terminal,
    cpu_seconds,
    display_argv,
    display_config,
    record_publications,
    simulated_place,
)

QUEUES = 30
SIZES = (100, 10_000)
RATE = 100
#: Seconds of burst per size (full run, quick run).
SECONDS = (15.0, 4.0)
TARGET_RATIO = 1.5


@dataclass
class DisplayScale:
    """CPU of the display per ticket event, at one number of current tickets."""

    tickets: int
    ticket_events: int
    cpu_ms_per_event: float


@dataclass
class ScaleResult:
    """Board and display costs; ratios are 10,000 over 100."""

    board: dict[str, dict[str, float]]
    display: list[DisplayScale]

    @property
    def display_ratio(self) -> float:
        """CPU per event with 10,000 tickets over CPU per event with 100."""
        return self.display[1].cpu_ms_per_event / self.display[0].cpu_ms_per_event


def display_cost(tickets: int, seconds: float, seed: int = 13) -> DisplayScale:
    """The display's CPU per ticket event during a burst, with `tickets` current tickets."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-scale-") as folder,
        simulated_place(seed=seed, speed=0.001, queues=QUEUES, tickets=tickets) as sim,
    ):
        config = display_config(sim, Path(folder))
        marks = Marks(live=LIVE_MARK)
        with Terminal(display_argv(config), watch=marks) as display:
            marks.wait(120)
            time.sleep(3.0)
            published = record_publications(sim)
            before = cpu_seconds(display.pid)
            sim.burst(RATE, duration=seconds)
            sim.wait_burst(seconds + 60)
            time.sleep(1.0)  # the last frames
            cpu = cpu_seconds(display.pid) - before
        with published.lock:
            events = published.ticket_events
    return DisplayScale(tickets, events, 1000 * cpu / max(events, 1))


def measure(quick: bool = False) -> ScaleResult:
    """The board micro-benchmark, then the display at both sizes."""
    seconds = SECONDS[1] if quick else SECONDS[0]
    board = bench_board.run()
    display = [display_cost(size, seconds) for size in SIZES]
    return ScaleResult(board, display)


def target_met(result: ScaleResult) -> bool:
    """Every per-event ratio (board and display) at most 1.5."""
    ratios = [values["ratio"] for name, values in result.board.items() if "event" in name] + [
        result.display_ratio
    ]
    return max(ratios) <= TARGET_RATIO


def table(result: ScaleResult) -> list[str]:
    """The result as Markdown table rows (with the header)."""
    lines = [
        "| measure | 100 tickets | 10,000 tickets | ratio |",
        "|---|---|---|---|",
    ]
    for name, values in result.board.items():
        lines.append(
            f"| board: {name} | {values['100']:.2f} | {values['10000']:.2f} "
            f"| {values['ratio']:.2f} |"
        )
    small, large = result.display
    lines.append(
        f"| display: CPU per ticket event at {RATE} events/s (ms) "
        f"| {small.cpu_ms_per_event:.2f} | {large.cpu_ms_per_event:.2f} "
        f"| {result.display_ratio:.2f} |"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the result (Markdown or JSON)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 s bursts instead of 15 s")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    result = measure(args.quick)
    if args.json:
        print(json.dumps({**asdict(result), "display_ratio": result.display_ratio}, indent=2))
    else:
        print("\n".join(table(result)))
    return 0 if target_met(result) else 1


if __name__ == "__main__":
    sys.exit(main())

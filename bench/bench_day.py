"""A day in a minute: the memory of the display through a simulated 12-hour day of 5,000 tickets.

The simulator's place runs at speed 720: arrivals, calls, services, pauses and breaks happen 720
times as often, so one minute holds the events of twelve hours. 23 queues at that speed issue
about 5,000 tickets in the minute (the number is counted and reported). The display runs as the
kiosk does on a 160 x 50 pty that plays foot (`harness.FOOT`); its RSS is sampled every half
second (/proc/PID/status). The bare Textual clock runs at the same time, for scale. Two days one
after the other: images on (`graphics = "auto"`: sixel) and off (`graphics = "text"`).

Reported: RSS after the warm-up (the first 10 s: about two simulated hours, every queue and
counter drawn and every cache filled), at the end, and the peak (VmHWM). Targets: no growth
beyond 5 % from warm-up to the end, and the display's RSS below twice the bare app's.

Run: `.venv/bin/python -m bench.bench_day [--quick]`
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.harness import (
    BARE_MARK,
    LIVE_MARK,
    Marks,
    Terminal,
    bare_argv,
    cpu_seconds,
    display_argv,
    display_config,
    memory,
    record_publications,
    simulated_place,
)

QUEUES = 23
SPEED = 720.0
#: Seconds of the day (full run, quick run) and of its warm-up.
SECONDS = (60.0, 15.0)
WARM_UP = (10.0, 5.0)
TARGET_GROWTH = 0.05
TARGET_RATIO = 2.0


#: The two ways the display is run: images on (what foot says it shows) and off.
VARIANTS = {"on": "auto", "off": "text"}


@dataclass
class DayResult:
    """Memory of the display (and the bare app) through the day."""

    images: str
    seconds: float
    simulated_hours: float
    tickets: int
    ticket_events: int
    events: int
    rss_warm: float
    rss_end: float
    rss_peak: float
    bare_rss_end: float
    cpu_percent: float
    samples: list[tuple[float, int]]

    @property
    def growth(self) -> float:
        """RSS at the end over RSS after the warm-up, minus one."""
        return self.rss_end / self.rss_warm - 1

    @property
    def ratio(self) -> float:
        """The display's RSS at the end over the bare app's."""
        return self.rss_end / self.bare_rss_end


def measure(quick: bool = False, seed: int = 3) -> list[DayResult]:
    """The day with images on, then off."""
    return [measure_variant(quick, seed, images) for images in VARIANTS]


def measure_variant(quick: bool = False, seed: int = 3, images: str = "on") -> DayResult:
    """Run the day and sample the display's memory."""
    seconds, warm_up = (SECONDS[1], WARM_UP[1]) if quick else (SECONDS[0], WARM_UP[0])
    with (
        tempfile.TemporaryDirectory(prefix="bench-day-") as folder,
        simulated_place(seed=seed, speed=SPEED, queues=QUEUES, tickets=8 * QUEUES) as sim,
    ):
        config = display_config(sim, Path(folder), graphics=VARIANTS[images])
        display_marks = Marks(live=LIVE_MARK)
        bare_marks = Marks(clock=BARE_MARK)
        with (
            Terminal(display_argv(config), watch=display_marks) as display,
            Terminal(bare_argv(), watch=bare_marks) as bare,
        ):
            display_marks.wait(60)
            bare_marks.wait(60)
            published = record_publications(sim)
            started = time.monotonic()
            cpu_start = cpu_seconds(display.pid)
            samples: list[tuple[float, int]] = []
            rss_warm = 0
            while (elapsed := time.monotonic() - started) < seconds:
                rss = memory(display.pid)[0]
                samples.append((round(elapsed, 1), rss))
                if not rss_warm and elapsed >= warm_up:
                    rss_warm = rss
                time.sleep(0.5)
            cpu = cpu_seconds(display.pid) - cpu_start
            rss_end, peak = memory(display.pid)
            bare_end = memory(bare.pid)[0]
            elapsed = time.monotonic() - started
        with published.lock:
            tickets, ticket_events, events = (
                published.created,
                published.ticket_events,
                published.events,
            )
    return DayResult(
        images=images,
        seconds=elapsed,
        simulated_hours=elapsed * SPEED / 3600,
        tickets=tickets,
        ticket_events=ticket_events,
        events=events,
        rss_warm=rss_warm,
        rss_end=rss_end,
        rss_peak=peak,
        bare_rss_end=bare_end,
        cpu_percent=100 * cpu / elapsed,
        samples=samples,
    )


def target_met(result: DayResult) -> bool:
    """No growth beyond 5 % after warm-up, and below twice the bare app's RSS."""
    return result.growth <= TARGET_GROWTH and result.ratio < TARGET_RATIO


def table(results: list[DayResult]) -> list[str]:
    """The results as Markdown table rows (with the header)."""
    mib = 2**20
    lines = [
        "| images | simulated | tickets issued | events (all feeds) | RSS after warm-up "
        "| RSS at the end | growth | peak RSS | bare app RSS | display / bare | display CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        lines.append(
            f"| {result.images} | {result.simulated_hours:.1f} h in {result.seconds:.0f} s "
            f"| {result.tickets:,} | {result.events:,} | {result.rss_warm / mib:.1f} MiB "
            f"| {result.rss_end / mib:.1f} MiB | {100 * result.growth:+.1f} % "
            f"| {result.rss_peak / mib:.1f} MiB | {result.bare_rss_end / mib:.1f} MiB "
            f"| {result.ratio:.2f} | {result.cpu_percent:.0f} % |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the result (Markdown or JSON)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 s (three hours) instead of 60 s")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    results = measure(args.quick)
    if args.json:
        print(json.dumps([{**asdict(r), "growth": r.growth} for r in results], indent=2))
    else:
        print("\n".join(table(results)))
    return 0 if all(target_met(result) for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())

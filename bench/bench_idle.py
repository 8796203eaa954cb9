"""Idle cost: CPU and memory of the display over two minutes of a quiet day, next to a bare clock.

A quiet day is one ticket event every 5 seconds (an arrival, a call or a ticket done, from the
simulator's burst mode) with the clock ticking. The display runs as the kiosk does on a
160 x 50 pty that plays foot (`harness.FOOT`: ticket labels are sixel pictures), against a
simulated place whose own story is slowed down to nothing (speed 0.001), so the events are
exactly the ones sent: the simulator's default place (5 queues, as the demo shows) and a large
one (30 queues, pages of queue rows). The bare Textual app
showing a clock (`bench/bare_clock.py`) runs at the same time on a pty of the same size: both
are measured in the same two minutes, on the same machine load. CPU is user + system time
from /proc/PID/stat, memory VmRSS and VmHWM from /proc/PID/status.

Run: `.venv/bin/python -m bench.bench_idle [--quick]`
"""

from __future__ import annotations

import argparse
import itertools
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
    core_share,
    cpu_seconds,
    display_argv,
    display_config,
    memory,
    simulated_place,
    spread,
)

#: The places measured: the simulator's default (the demo's), and a large one.
PLACES = (5, 30)
EVENT_EVERY = 5.0
#: Measured seconds (full run, quick run), after a warm-up, in windows for the spread.
SECONDS = (120.0, 20.0)
WINDOW = (30.0, 10.0)
WARM_UP = 10.0
#: Targets: at most twice the bare app's CPU, and below 1 % of a core.
TARGET_RATIO = 2.0
TARGET_PERCENT = 1.0


@dataclass
class ProcessCost:
    """CPU and memory of one program over the measured time."""

    cpu_percent: float
    """Mean over the whole time, in % of one core."""
    window_median: float
    window_min: float
    window_max: float
    rss_mean: float
    rss_end: float
    rss_peak: float


@dataclass
class IdleResult:
    """The display and the bare app, measured together."""

    queues: int
    seconds: float
    events: int
    display: ProcessCost
    bare: ProcessCost

    @property
    def ratio(self) -> float:
        """Display CPU over bare CPU."""
        return self.display.cpu_percent / self.bare.cpu_percent


def measure(quick: bool = False, queues: int = PLACES[0], seed: int = 5) -> IdleResult:
    """Run both programs, send one event every 5 s, and measure."""
    seconds, window = (SECONDS[1], WINDOW[1]) if quick else (SECONDS[0], WINDOW[0])
    with (
        tempfile.TemporaryDirectory(prefix="bench-idle-") as folder,
        simulated_place(seed=seed, speed=0.001, queues=queues, tickets=10 * queues) as sim,
    ):
        config = display_config(sim, Path(folder))
        display_marks = Marks(live=LIVE_MARK)
        bare_marks = Marks(clock=BARE_MARK)
        with (
            Terminal(display_argv(config), watch=display_marks) as display,
            Terminal(bare_argv(), watch=bare_marks) as bare,
        ):
            display_marks.wait(60)
            bare_marks.wait(60)
            pids = {"display": display.pid, "bare": bare.pid}
            events = 0
            next_event = time.monotonic()
            warm_until = time.monotonic() + WARM_UP
            while time.monotonic() < warm_until:
                if time.monotonic() >= next_event:
                    sim.burst(1000, count=1)
                    next_event += EVENT_EVERY
                time.sleep(0.05)
            started = time.monotonic()
            cpu_start = {name: cpu_seconds(pid) for name, pid in pids.items()}
            cpu_marks = {name: [cpu_start[name]] for name in pids}
            rss: dict[str, list[int]] = {name: [] for name in pids}
            next_window = started + window
            next_sample = started
            # A little past the last window, so that its mark is taken inside the loop.
            end = started + seconds + 0.2
            while (now := time.monotonic()) < end:
                if now >= next_event:
                    sim.burst(1000, count=1)
                    events += 1
                    next_event += EVENT_EVERY
                if now >= next_sample:
                    for name, pid in pids.items():
                        rss[name].append(memory(pid)[0])
                    next_sample += 1.0
                if now >= next_window:
                    for name, pid in pids.items():
                        cpu_marks[name].append(cpu_seconds(pid))
                    next_window += window
                time.sleep(0.02)
            elapsed = time.monotonic() - started
            costs = {}
            for name, pid in pids.items():
                total = cpu_seconds(pid) - cpu_start[name]
                marks = cpu_marks[name]
                windows = [
                    100 * (after - before) / window for before, after in itertools.pairwise(marks)
                ]
                median, low, high = spread(windows)
                rss_now, peak = memory(pid)
                costs[name] = ProcessCost(
                    cpu_percent=100 * total / elapsed / core_share(),
                    window_median=median,
                    window_min=low,
                    window_max=high,
                    rss_mean=sum(rss[name]) / len(rss[name]),
                    rss_end=rss_now,
                    rss_peak=peak,
                )
    return IdleResult(queues, seconds, events, costs["display"], costs["bare"])


def target_met(result: IdleResult) -> bool:
    """At most twice the bare app's CPU, and below 1 % of a core."""
    return result.ratio <= TARGET_RATIO and result.display.cpu_percent < TARGET_PERCENT


def table(results: list[IdleResult], window: float) -> list[str]:
    """The results as Markdown table rows (with the header)."""
    lines = [
        f"| place | program | CPU (mean) | CPU per {window:.0f} s: median, min, max | RSS mean "
        "| RSS end | peak RSS | display / bare CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        for name, cost in (("display", result.display), ("bare Textual clock", result.bare)):
            ratio = f"**{result.ratio:.2f}**" if name == "display" else ""
            lines.append(
                f"| {result.queues} queues | {name} | {cost.cpu_percent:.2f} % "
                f"| {cost.window_median:.2f} %, {cost.window_min:.2f} %, "
                f"{cost.window_max:.2f} % | {cost.rss_mean / 2**20:.1f} MiB "
                f"| {cost.rss_end / 2**20:.1f} MiB | {cost.rss_peak / 2**20:.1f} MiB | {ratio} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the result (Markdown or JSON)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 s instead of 2 minutes")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    results = [measure(args.quick, queues) for queues in PLACES]
    if args.json:
        print(json.dumps([{**asdict(result), "ratio": result.ratio} for result in results]))
    else:
        print("\n".join(table(results, WINDOW[1] if args.quick else WINDOW[0])))
    return 0 if all(target_met(result) for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())

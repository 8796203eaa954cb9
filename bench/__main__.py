"""Run every benchmark, one after another, and (re)write docs/benchmarks.md with the numbers.

    python -m bench                      # everything, full durations (about ten minutes)
    python -m bench --only idle,start    # some of them; their sections are replaced, others kept
    python -m bench --quick              # short durations, a smoke run: prints, writes nothing

The numbers in docs/benchmarks.md come from full runs only: `--quick` never writes the file
(give `--output` to put a quick run elsewhere). Sections of the file that no benchmark writes
(the notes on profiling and fixes) are kept as they are.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any

from bench import (
    bench_day,
    bench_idle,
    bench_latency,
    bench_scale,
    bench_simulator,
    bench_start,
)
from bench.harness import ROOT, machine, spread

DOCUMENT = ROOT / "docs" / "benchmarks.md"
TITLE = "# Benchmarks"
SUMMARY = "## Summary"
MACHINE = "## Machine"


@dataclass
class Outcome:
    """What one benchmark gives the document."""

    name: str
    target: str
    result: str
    met: bool
    section: str
    raw: Any = None


def _latency(quick: bool) -> Outcome:
    results = bench_latency.measure(quick)
    at_100 = next(result for result in results if result.rate == 100)
    lines = [
        "## Event to screen",
        "",
        "From the simulator publishing a call to the frame that shows the ticket's label being",
        "read from the display's pty. The display runs as the kiosk does (`lobby-display run`) on",
        "a 160 x 50 pty; the simulator (30 queues) runs in the benchmark process, whose `publish`",
        "notes the moment each call is handed to the feeds; a thread reads the pty and notes when",
        "each label first appears in the text written. Both moments are the same process's",
        "`time.perf_counter()`. Bursts of ticket events (arrivals, calls, tickets done: about a",
        "third are calls) at 10, 100 and 500 events/s. *Drawn* counts the calls whose label was",
        "seen; a call followed by many others before the next frame can be pushed out of the",
        "recent-calls list before it is drawn (only drawn calls are in the percentiles).",
        "",
        *bench_latency.table(results),
        "",
        "Reproduce: `.venv/bin/python -m bench.bench_latency` (or `python -m bench --only "
        "latency`).",
    ]
    return Outcome(
        "Event to screen",
        "p99 ≤ 50 ms (3 frames at 60 Hz) at 100 events/s",
        f"p50 {at_100.p50_ms:.0f} ms, p99 {at_100.p99_ms:.0f} ms, max {at_100.max_ms:.0f} ms",
        bench_latency.target_met(results),
        "\n".join(lines),
        results,
    )


def _idle(quick: bool) -> Outcome:
    results = [bench_idle.measure(quick, queues) for queues in bench_idle.PLACES]
    window = bench_idle.WINDOW[1 if quick else 0]
    first = results[0]
    lines = [
        "## Idle cost",
        "",
        f"CPU and memory over {first.seconds:.0f} s of a quiet day: one ticket event every "
        f"{bench_idle.EVENT_EVERY:.0f} s",
        f"({first.events} events) from the simulator's burst mode, the clock ticking. Two places:",
        "the simulator's default (5 queues, the demo's) and a large one (30 queues). The display",
        "(`lobby-display run`) and a bare Textual app",
        "showing a clock (`bench/bare_clock.py`, one line redrawn every second) run at the same",
        "time, each on its own 160 x 50 pty, and are measured over the same seconds: CPU from",
        "/proc/PID/stat (user + system), memory from /proc/PID/status.",
        "",
        *bench_idle.table(results, window),
        "",
        "Reproduce: `.venv/bin/python -m bench.bench_idle`.",
    ]
    summary = "; ".join(
        f"{result.queues} queues: {result.display.cpu_percent:.2f} % vs "
        f"{result.bare.cpu_percent:.2f} % ({result.ratio:.2f} ×)"
        for result in results
    )
    return Outcome(
        "Idle cost",
        "CPU ≤ 2 × the bare clock's and < 1 % of a core",
        summary,
        all(bench_idle.target_met(result) for result in results),
        "\n".join(lines),
        results,
    )


def _day(quick: bool) -> Outcome:
    result = bench_day.measure(quick)
    samples = result.samples
    step = max(1, len(samples) // 12)
    trace = ", ".join(f"{at:.0f} s {rss / 2**20:.1f}" for at, rss in samples[::step])
    lines = [
        "## A day in a minute",
        "",
        f"A simulated 12-hour day: the place ({bench_day.QUEUES} queues) runs at speed "
        f"{bench_day.SPEED:.0f}, so every",
        "arrival, call, recall, pause and break of twelve hours happens within the minute.",
        "The display runs as the kiosk does on a 160 x 50 pty; its RSS is sampled every",
        "half second. *After warm-up* is the RSS at 10 s (about two simulated hours, every queue",
        "and counter drawn). The bare Textual clock runs at the same time.",
        "",
        *bench_day.table(result),
        "",
        f"RSS (MiB) through the run: {trace}.",
        "",
        "Reproduce: `.venv/bin/python -m bench.bench_day`.",
    ]
    return Outcome(
        "A day in a minute",
        "RSS growth ≤ 5 % after warm-up; RSS < 2 × the bare app's",
        f"{result.tickets:,} tickets; growth {100 * result.growth:+.1f} %, "
        f"{result.rss_end / 2**20:.0f} MiB vs {result.bare_rss_end / 2**20:.0f} MiB "
        f"({result.ratio:.2f} ×)",
        bench_day.target_met(result),
        "\n".join(lines),
        result,
    )


def _scale(quick: bool) -> Outcome:
    result = bench_scale.measure(quick)
    board = [values["ratio"] for name, values in result.board.items() if "event" in name]
    lines = [
        "## Scale",
        "",
        "The cost of one ticket event with 100 and with 10,000 current tickets: `Board.apply`",
        "alone (medians of 41 runs of 500 events; a whole snapshot for scale), and the whole",
        "display's CPU per ticket event during a burst of 100 events/s against a simulated place",
        "of 30 queues holding that many tickets.",
        "",
        *bench_scale.table(result),
        "",
        "Reproduce: `.venv/bin/python -m bench.bench_scale` (the board alone: "
        "`.venv/bin/python bench/bench_board.py`).",
    ]
    return Outcome(
        "Scale",
        "10,000 / 100 tickets ≤ 1.5 per event",
        f"board {max(board):.2f}, display {result.display_ratio:.2f}",
        bench_scale.target_met(result),
        "\n".join(lines),
        result,
    )


def _start(quick: bool) -> Outcome:
    result = bench_start.measure(quick)
    lines = [
        "## Start",
        "",
        "From just before the process is created to the pty delivering the first frame with",
        'live data (the status line says "Live": every feed has sent its first message). The',
        "display runs as the kiosk does against a simulated place of 30 queues; *restart* reuses",
        "the state directory of the previous run (cached API key, saved board), *first boot*",
        "starts from an empty one. The bare Textual clock is timed to its first frame. Runs",
        "alternate; a first round is discarded as warm-up.",
        "",
        *bench_start.table(result),
        "",
        "Reproduce: `.venv/bin/python -m bench.bench_start`.",
    ]
    restart = spread(result.restart)[0]
    bare = spread(result.bare)[0]
    return Outcome(
        "Start",
        "first frame with live data ≤ 2 × the bare app's first frame",
        f"restart {restart:.2f} s, first boot {spread(result.first_boot)[0]:.2f} s, "
        f"bare {bare:.2f} s ({result.ratio:.2f} ×)",
        bench_start.target_met(result),
        "\n".join(lines),
        result,
    )


def _simulator(quick: bool) -> Outcome:
    runs, count = (2, 2000) if quick else (5, 10_000)
    places = [
        bench_simulator.measure(runs, count, queues, tickets)
        for queues, tickets in ((5, 200), (30, 10_000))
    ]
    worst = min(spread([run.rate for run in place.ceiling])[0] for place in places)
    return Outcome(
        "Simulator throughput",
        f"≥ {bench_simulator.TARGET_RATE:,} events/s",
        f"ceiling {worst:,.0f} events/s (median, worst place)",
        worst >= bench_simulator.TARGET_RATE,
        bench_simulator.report(places).rstrip("\n"),
        places,
    )


BENCHMARKS: dict[str, Callable[[bool], Outcome]] = {
    "scale": _scale,
    "start": _start,
    "latency": _latency,
    "idle": _idle,
    "day": _day,
    "simulator": _simulator,
}


def introduction() -> str:
    """The top of the document: what this is and how to run it."""
    return "\n".join(
        [
            TITLE,
            "",
            "Written by `make bench` (`python -m bench`), which runs every benchmark below one",
            "after another against the embedded simulator and replaces their sections here;",
            "`python -m bench --only latency,idle` runs some of them. Every benchmark runs the",
            "real display: `lobby-display run` on a pseudo-terminal (160 x 50), as the kiosk",
            "unit starts it. `python -m bench --quick` is a smoke run with short durations: it",
            "prints and writes nothing here. Medians and spreads come from one run on the",
            "machine below; other work on the machine shows in the spread. Benchmark-only tools",
            "(py-spy, pyinstrument for profiling) are in the `bench` extra:",
            "`.venv/bin/pip install -e '.[bench]'`.",
        ]
    )


def machine_section() -> str:
    """The machine and software of this run."""
    info = machine()
    return "\n".join(
        [
            MACHINE,
            "",
            f"- CPU: {info['cpu']}, {info['cores']} cores; memory {info['memory']}",
            f"- System: {info['system']}",
            f"- Python {info['python']}, Textual {info['textual']}, Rich {info['rich']}",
            f"- Run: {time.strftime('%Y-%m-%d %H:%M %Z')}; load average {info['load']} at the end",
        ]
    )


def summary_section(outcomes: list[Outcome], previous: str) -> str:
    """The targets table: this run's rows, and rows of benchmarks not run this time."""
    rows = {
        outcome.name: (
            f"| {outcome.name} | {outcome.target} | {outcome.result} "
            f"| {'yes' if outcome.met else '**no**'} |"
        )
        for outcome in outcomes
    }
    kept = {}
    for line in previous.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) > 2 and cells[1] not in ("", "benchmark", "---") and cells[1] not in rows:
            kept[cells[1]] = line
    order = [
        "Event to screen",
        "Idle cost",
        "A day in a minute",
        "Scale",
        "Start",
        "Simulator throughput",
    ]
    merged = {**kept, **rows}
    lines = [
        SUMMARY,
        "",
        "| benchmark | target | result | met |",
        "|---|---|---|---|",
    ]
    lines += [merged[name] for name in order if name in merged]
    return "\n".join(lines)


def split_sections(text: str) -> list[tuple[str, str]]:
    """(heading, text) of each `## ` section; the heading of the top part is ''."""
    sections: list[tuple[str, str]] = []
    heading, body = "", []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((heading, "\n".join(body).strip("\n")))
            heading, body = line.strip(), [line]
        else:
            body.append(line)
    sections.append((heading, "\n".join(body).strip("\n")))
    return sections


def write_document(path: Path, outcomes: list[Outcome]) -> None:
    """Replace the sections of this run (and the top, summary, machine); keep the others."""
    old = split_sections(path.read_text(encoding="utf-8")) if path.exists() else []
    previous = dict(old)
    fresh = {outcome.section.splitlines()[0].strip(): outcome.section for outcome in outcomes}
    head = [
        ("", introduction()),
        (SUMMARY, summary_section(outcomes, previous.get(SUMMARY, ""))),
        (MACHINE, machine_section()),
    ]
    order = [
        "## Event to screen",
        "## Idle cost",
        "## A day in a minute",
        "## Scale",
        "## Start",
        bench_simulator.SECTION,
    ]
    body = [(name, fresh.get(name, previous.get(name, ""))) for name in order]
    generated = {name for name, _ in head} | set(order)
    others = [(name, text) for name, text in old if name not in generated and text]
    parts = [text for _, text in head + body + others if text]
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the chosen benchmarks; write the document (full runs) and print a summary."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short durations; writes nothing")
    parser.add_argument(
        "--only", default="", help=f"comma-separated, among: {', '.join(BENCHMARKS)}"
    )
    parser.add_argument("--output", type=Path, default=None, help="the Markdown file to update")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()] or list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark: {', '.join(unknown)}")
    output = args.output if args.output is not None else (None if args.quick else DOCUMENT)
    outcomes: list[Outcome] = []
    failed = []
    for name in chosen:
        print(f"== {name}{' (quick)' if args.quick else ''}", flush=True)
        started = time.monotonic()
        try:
            outcome = BENCHMARKS[name](args.quick)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            continue
        outcomes.append(outcome)
        print(outcome.section.split("\n", 2)[2], flush=True)
        print(
            f"-- {outcome.name}: {outcome.result}; target {'met' if outcome.met else 'MISSED'} "
            f"({time.monotonic() - started:.0f} s)",
            flush=True,
        )
    if output is not None and outcomes:
        write_document(output, outcomes)
        print(f"written to {output}")
    if args.json is not None:
        args.json.write_text(
            json.dumps({outcome.name: _plain(outcome.raw) for outcome in outcomes}, indent=2),
            encoding="utf-8",
        )
    print()
    for outcome in outcomes:
        print(f"{outcome.name:22} {'met   ' if outcome.met else 'MISSED'} {outcome.result}")
    for name in failed:
        print(f"{name:22} FAILED (see above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

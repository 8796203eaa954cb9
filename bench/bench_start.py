"""Start: from process start to the first frame with live data, next to the bare app's first frame.

The display is started as the kiosk is (`python -m lobby_display run --config FILE`) on a
160 x 50 pty that plays foot (`harness.FOOT`) against a simulated place of 30 queues; the time
runs from just before the process is created to the moment the pty delivers the frame whose
status line says "Live" (every feed has sent its first message and the board is drawn from it).
The cases:

- first boot: an empty state directory (no API key cached, no saved board): the display signs a
  developer token, asks for an API key, reads the reference data and the three feeds; images on
  (`graphics = "auto"`: the terminal is asked, foot says sixel);
- restart: the same directory again (the cached key and the board saved at the last stop), with
  images on, with images off (`graphics = "text"`: nothing is asked), and with images on
  (`auto`) on a terminal that answers nothing (`harness.SILENT`: the question waits for
  `ANSWER_SECONDS`, then mosaics).

The bare Textual clock is timed the same way, to its first frame. Runs alternate between the
programs; the first run of each is a discarded warm-up (it fills the OS file cache).

Run: `.venv/bin/python -m bench.bench_start [--quick]`
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.harness import (
    BARE_MARK,
    FOOT,
    LIVE_MARK,
    SILENT,
    Emulation,
    Marks,
    Terminal,
    bare_argv,
    display_argv,
    display_config,
    simulated_place,
    spread,
)

QUEUES = 30
#: Measured runs of each program (full run, quick run), after one warm-up run.
RUNS = (7, 2)
TARGET_RATIO = 2.0


@dataclass
class StartResult:
    """Seconds to the first frame (live data for the display), per run."""

    first_boot: list[float]
    restart: list[float]
    bare: list[float]
    restart_text: list[float] = field(default_factory=list)
    """Restarts with images off (`graphics = "text"`)."""
    restart_silent: list[float] = field(default_factory=list)
    """Restarts with `graphics = "auto"` on a terminal that answers nothing."""

    @property
    def ratio(self) -> float:
        """Median restart over median bare start (the case a kiosk meets every day)."""
        return spread(self.restart)[0] / spread(self.bare)[0]

    @property
    def first_boot_ratio(self) -> float:
        """Median first boot over median bare start."""
        return spread(self.first_boot)[0] / spread(self.bare)[0]


def time_to(argv: list[str], mark: object, emulation: Emulation = FOOT) -> float:
    """Seconds from starting `argv` on a pty to the first chunk showing `mark`."""
    marks = Marks(mark=mark)  # type: ignore[arg-type]
    with Terminal(argv, watch=marks, emulation=emulation) as program:
        seen = marks.wait(60)["mark"]
        return seen - program.started_at


def measure(quick: bool = False, seed: int = 9) -> StartResult:
    """Alternate display and bare starts; the display twice per round (first boot, restart)."""
    runs = RUNS[1] if quick else RUNS[0]
    result = StartResult([], [], [])
    with (
        tempfile.TemporaryDirectory(prefix="bench-start-") as folder,
        simulated_place(seed=seed, speed=1.0, queues=QUEUES, tickets=10 * QUEUES) as sim,
    ):
        for round_ in range(runs + 1):
            run = Path(folder) / f"run{round_}"
            config = display_config(sim, run)
            # The same state directory, images off.
            text = display_config(sim, run / "text", state=run / "state", graphics="text")
            first_boot = time_to(display_argv(config), LIVE_MARK)
            restart = time_to(display_argv(config), LIVE_MARK)
            restart_text = time_to(display_argv(text), LIVE_MARK)
            restart_silent = time_to(display_argv(config), LIVE_MARK, SILENT)
            bare = time_to(bare_argv(), BARE_MARK)
            if round_ == 0:
                continue
            result.first_boot.append(first_boot)
            result.restart.append(restart)
            result.restart_text.append(restart_text)
            result.restart_silent.append(restart_silent)
            result.bare.append(bare)
    return result


def target_met(result: StartResult) -> bool:
    """A restart shows live data within twice the bare app's start."""
    return result.ratio <= TARGET_RATIO


def table(result: StartResult) -> list[str]:
    """The result as Markdown table rows (with the header)."""
    lines = [
        "| program | to | median | min | max | runs | / bare |",
        "|---|---|---|---|---|---|---|",
    ]
    bare = spread(result.bare)[0]
    for name, to, values in (
        ("display, restart (key cached, board saved), images on", "live data", result.restart),
        ("display, restart, images off (`text`)", "live data", result.restart_text),
        (
            "display, restart, images `auto` on a terminal that answers nothing",
            "live data",
            result.restart_silent,
        ),
        ("display, first boot (empty state directory), images on", "live data", result.first_boot),
        ("bare Textual clock", "first frame", result.bare),
    ):
        median, low, high = spread(values)
        lines.append(
            f"| {name} | {to} | {median:.2f} s | {low:.2f} s | {high:.2f} s | {len(values)} "
            f"| {median / bare:.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the result (Markdown or JSON)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 runs instead of 7")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    result = measure(args.quick)
    if args.json:
        print(json.dumps({**asdict(result), "ratio": result.ratio}, indent=2))
    else:
        print("\n".join(table(result)))
    return 0 if target_met(result) else 1


if __name__ == "__main__":
    sys.exit(main())

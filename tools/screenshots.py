"""Screenshots for the README, from the real kiosk chain: what the TV shows.

`make screenshots` runs this (`python -m tools.screenshots` from the project's root; as root, with
sway, foot, grim and tesseract installed, as .ci/run installs them): for each picture, the embedded
simulator (its operators held, so only the calls made here happen), then sway on wlroots' headless
backend with foot full screen (systemd/foot.ini; pixelsize 60 at 3840x2160; the Noto CJK face of
the locale) running `lobby-display run` against it, and grim (tests/helpers/kiosk_chain.py, shared
with the chain's tests). A few tickets are called at the start; once their highlight has ended, the
next waiting tickets are called at their queues' desks and the picture is taken while the call is
highlighted, after OCR has read the label(s) from afar.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lobby_display.simulator import SimulatorServer
from tests.helpers.kiosk_chain import Scene, missing_tools, runtime, shared_directory

ROOT = Path(__file__).resolve().parents[1]

OUTPUT = ROOT / "docs" / "screenshots"


@dataclass(frozen=True)
class Shot:
    name: str
    locale: str
    size: tuple[int, int]
    calls: int
    """How many tickets are called together for the picture."""
    seed: int
    """The simulated place's seed (another seed, other labels and names)."""


SHOTS = (
    Shot("kiosk-fr_FR-1920x1080.png", "fr_FR", (1920, 1080), 1, 3),
    Shot("kiosk-ja_JP-1920x1080.png", "ja_JP", (1920, 1080), 1, 4),
    Shot("kiosk-th_TH-1920x1080.png", "th_TH", (1920, 1080), 1, 5),
    Shot("kiosk-en_US-3840x2160.png", "en_US", (3840, 2160), 1, 6),
    Shot("kiosk-en_US-1920x1080-five-calls.png", "en_US", (1920, 1080), 5, 7),
)


def next_waiting(sim: Any, count: int, first: int = 0) -> tuple[list[str], list[str]]:
    """Labels of the next waiting tickets of `count` queues in turn (from the `first`th
    queue with tickets waiting), and a desk of each ticket's queue."""

    def pick(simulator: Any) -> tuple[list[str], list[str]]:
        place = simulator.place
        labels: list[str] = []
        desks: list[str] = []
        queues = [queue for queue in place.queues.values() if queue.waiting]
        for turn in range(count):
            queue = queues[(first + turn) % len(queues)]
            waiting = [place.tickets[entry[2]].label for entry in queue.waiting]
            label = next(label for label in waiting if label not in labels)
            labels.append(label)
            desks.append(queue.endpoints[turn // len(queues) % len(queue.endpoints)].endpoint_id)
        return labels, desks

    result: tuple[list[str], list[str]] = sim.call(pick)
    return result


def o_as_zero(text: str) -> str:
    return text.replace("O", "0")


def take(shot: Shot, program: Any) -> None:
    """Take one picture (what OCR read is said, not judged: the tests judge)."""
    with (
        SimulatorServer(seed=shot.seed, speed=1.0) as sim,
        shared_directory() as folder,
        Scene(sim, folder, locale=shot.locale, size=shot.size, program=program) as scene,
    ):
        # Calls earlier in the day, for the recent calls; then the pictured call(s) alone.
        scene.call(*next_waiting(sim, 3), alone=False)
        labels, desks = next_waiting(sim, shot.calls, first=shot.seed)
        scene.call(labels, desks)
        # The picture is taken once OCR reads the label(s), or, failing that, the last one
        # before the highlight ended. O for 0 is let pass here: DejaVu Sans Bold's O and 0
        # are hard to tell apart from afar (B030 reads BO30); the tests avoid such labels.
        picture, seen = scene.wait_for(labels, highlighted=True, fold=o_as_zero)
        read = sorted(label.text for label in seen)
        picture.save(OUTPUT / shot.name, optimize=True)
    ok = sorted(map(o_as_zero, read)) == sorted(map(o_as_zero, labels))
    print(
        f"{(OUTPUT / shot.name).relative_to(ROOT)}: called {' '.join(labels)}; "
        f"read from afar: {' '.join(read) or 'nothing'}{'' if ok else '  <- not read right'}"
    )


def main() -> int:
    if os.geteuid() != 0:
        print("screenshots: run as root (sway and foot then run as a system user)", file=sys.stderr)
        return 2
    absent = missing_tools()
    if absent:
        print(f"screenshots: install {', '.join(absent)}", file=sys.stderr)
        return 2
    OUTPUT.mkdir(parents=True, exist_ok=True)
    program = runtime()
    for shot in SHOTS:
        take(shot, program)
    return 0


if __name__ == "__main__":
    sys.exit(main())

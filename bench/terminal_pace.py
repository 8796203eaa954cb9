"""How long a terminal takes to take in a frame of ticket pictures: foot on the kiosk chain
against the benchmarks' terminal (`harness.Terminal`), the same frame written the same way.

The latency benchmark's frames end when its terminal has read them, and a terminal that reads
slowly holds the display's writes back (and makes it draw fewer frames). This checks that the
benchmarks' terminal is no slower than the one on the TV: six label pictures of a 1080p card
(this project's encoder) and 28 lines of text, in one synchronised frame, written 60 times
with a pause of 0.1 s by a program that notes how long each write took.

Run as root, where `kiosk-shot` is (the workplace's tool: sway headless, foot with
systemd/foot.ini, at 1920x1080):
`.venv/bin/python -m bench.terminal_pace --kiosk-shot ../shared/tools/kiosk-shot`
(without it, the benchmarks' terminal alone).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import ROOT, Terminal
from lobby_display.graphics import sixel
from lobby_display.graphics.raster import rasterise

#: A card's label box on the benchmarks' screen (cells), and foot's cell (pixels).
BOX, CELL = (21, 6), (18, 36)
LABELS = tuple(f"AE-{number}" for number in range(10, 16))
WRITES, PAUSE = 60, 0.1

#: The program in the terminal: the Python of the system alone (the chain's user runs it).
WRITER = f"""
import os, statistics, sys, time
frame = open(sys.argv[1], "rb").read()
time.sleep(2)
taken = []
for _ in range({WRITES}):
    start, view = time.perf_counter(), memoryview(frame)
    while view:
        view = view[os.write(1, view):]
    taken.append((time.perf_counter() - start) * 1000)
    time.sleep({PAUSE})
taken.sort()
with open(sys.argv[2], "w") as out:
    out.write("median %.2f ms, p90 %.2f ms, max %.2f ms (%d writes of %d bytes)" % (
        statistics.median(taken), taken[int(0.9 * len(taken))], taken[-1], len(taken), len(frame)))
"""


def frame() -> bytes:
    """One synchronised frame: 28 lines of text, then the six pictures in a grid of cards."""
    text = b"".join(
        b"\x1b[%d;60H\x1b[38;2;200;200;200m  Desk %d   A%03d  12:0%d  " % (row, row, row, row % 10)
        for row in range(1, 29)
    )
    pictures = []
    for index, label in enumerate(LABELS):
        mask = rasterise(label, BOX[0] * CELL[0], BOX[1] * CELL[1])
        assert mask is not None
        picture = sixel.encode(mask, (30, 30, 30), (255, 175, 33), paint_background=False)
        pictures.append(b"\x1b[%d;%dH" % (2 + index // 3 * 9, 2 + index % 3 * 22) + picture)
    return b"\x1b[?2026h" + text + b"".join(pictures) + b"\x1b[?2026l"


def measure(kiosk_shot: str | None) -> dict[str, str]:
    """What each terminal took: foot on the kiosk chain (when `kiosk_shot` is given), and the
    benchmarks' terminal."""
    results = {}
    sys.setswitchinterval(0.0002)  # as the latency benchmark sets it for its terminal
    with tempfile.TemporaryDirectory(prefix="terminal-pace-") as name:
        folder = Path(name)
        folder.chmod(0o777)  # the chain's user writes its figures here
        (folder / "frame.bin").write_bytes(frame())
        (folder / "writer.py").write_text(WRITER)
        for path in folder.iterdir():
            path.chmod(0o644)
        argv = ["/usr/bin/python3", str(folder / "writer.py"), str(folder / "frame.bin")]
        if kiosk_shot:
            out = folder / "foot.txt"
            wait = str(int(WRITES * PAUSE) + 8)
            subprocess.run(
                [kiosk_shot, "-w", wait, "-o", str(folder / "foot.png"), "--", *argv, str(out)],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            results["foot (kiosk chain, 1920x1080)"] = out.read_text()
        out = folder / "bench.txt"
        with Terminal([*argv, str(out)]):
            deadline = time.monotonic() + WRITES * PAUSE + 30
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
        results["benchmarks' terminal (harness.Terminal)"] = out.read_text()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiosk-shot", help="the kiosk-shot tool (foot on the kiosk chain)")
    args = parser.parse_args(argv)
    for terminal, taken in measure(args.kiosk_shot).items():
        print(f"{terminal}: {taken}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

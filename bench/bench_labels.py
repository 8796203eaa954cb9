"""Ticket label pictures: what one picture costs, our sixel encoder against textual-image's.

A label picture is rasterised from the font (`graphics.raster.rasterise`: a coverage mask) and
encoded as sixel (`graphics.sixel.encode`: 16 steps from paper to ink, the theme's colours
exact). The same picture in RGB (the mask in the two colours) is given to textual-image 0.12.0's
encoder (`textual_image._sixel.image_to_sixels`, default options: up to 256 colours found by
Pillow's fast octree quantiser; its NumPy path is an optional extra, not installed here), the
one its sixel widget uses. Boxes as the TV shows them (foot, `systemd/foot.ini`):

- 1080p card: one call, 34 x 8 cells of 18 x 36 pixels (612 x 288);
- 4K card: the same cells at pixelsize 60, 36 x 72 pixels (1224 x 576);
- six calls: one of six cards, 16 x 3 cells of 18 x 36 pixels (288 x 108).

Each measure is the median of `RUNS` runs (each run draws every label of `LABELS` once; the
steps of a run alternate, so load on the machine falls on all of them alike). *Raster* is a
label not drawn before at that size (the label caches emptied; the font at that size loaded, as
it is once a card has been drawn). *Ours* is timed as the widget sends it (paper transparent), for
an ink not encoded before and for the same ink placed again in a card one cell wider (where a
label goes when the calls move on), and with paper painted (not encoded before), as *theirs*
paints every pixel. Sizes are the bytes sent. Every picture is
decoded again and compared with the exact RGB picture (the 1080p card; the largest difference
of a colour channel, 0-255, on paper, ink and the anti-aliased edge between).

Run: `.venv/bin/python -m bench.bench_labels [--quick]`
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from PIL import Image

from lobby_display.graphics import raster, sixel

#: Boxes: name -> (columns, rows, cell width, cell height).
BOXES = {
    "1080p card (34 x 8 cells of 18 x 36 px)": (34, 8, 18, 36),
    "4K card (34 x 8 cells of 36 x 72 px)": (34, 8, 36, 72),
    "six calls: one card (16 x 3 cells of 18 x 36 px)": (16, 3, 18, 36),
}
LABELS = ("A031", "BX-12", "K017", "C7")
#: Runs (full run, quick run).
RUNS = (31, 5)
#: The highlight colours of a call card: dark ink on amber paper.
PAPER, INK = (255, 179, 0), (16, 20, 24)


@dataclass
class BoxCost:
    """The cost of one picture of a box, in ms (medians), and the bytes sent."""

    box: str
    pixels: tuple[int, int]
    raster_ms: float
    ours_ms: float
    """A picture whose ink was not encoded before, paper transparent (as the widget sends)."""
    ours_placed_ms: float
    """The same ink again, in a box one cell wider."""
    ours_painted_ms: float
    theirs_ms: float | None
    ours_bytes: int
    ours_painted_bytes: int
    theirs_bytes: int | None
    theirs_colours: int | None

    @property
    def total_ms(self) -> float:
        """Raster and our encoding (as the widget sends it)."""
        return self.raster_ms + self.ours_ms

    @property
    def ratio(self) -> float | None:
        """Their encoding's time over ours (painted paper, as theirs)."""
        return None if self.theirs_ms is None else self.theirs_ms / self.ours_painted_ms


@dataclass
class Fidelity:
    """How far a decoded picture is from the exact one (largest channel difference, 0-255)."""

    encoder: str
    colours: int
    paper_max: int
    ink_max: int
    edge_max: int
    edge_mean: float
    unpainted: int


@dataclass
class LabelsResult:
    """Every box's cost, and the fidelity of both encoders on the 1080p card."""

    runs: int
    theirs_version: str | None
    boxes: list[BoxCost] = field(default_factory=list)
    fidelity: list[Fidelity] = field(default_factory=list)


def _theirs() -> tuple[Callable[[Image.Image], str] | None, str | None]:
    try:
        import importlib.metadata

        from textual_image._sixel import image_to_sixels
    except ImportError:
        return None, None
    return image_to_sixels, importlib.metadata.version("textual-image")


def coloured(mask: Image.Image) -> Image.Image:
    """The mask in the card's colours, as an RGB picture (what textual-image is given)."""
    return Image.composite(
        Image.new("RGB", mask.size, INK), Image.new("RGB", mask.size, PAPER), mask
    )


def _clear(module: Any, name: str) -> None:
    """Empty `module.name`'s cache, if it has one (older versions lack some)."""
    cached = getattr(module, name, None)
    if cached is not None:
        cached.cache_clear()


def _fresh_raster(label: str, width: int, height: int) -> Image.Image:
    for name in ("_place_ink", "_rasterise", "_fit", "_ink"):
        _clear(raster, name)
    mask = raster.rasterise(label, width, height)
    assert mask is not None, label
    return mask


def measure_box(name: str, runs: int) -> BoxCost:
    """Median times of raster, our encoder and theirs for one box, over `runs` runs."""
    columns, rows, cell_width, cell_height = BOXES[name]
    width, height = columns * cell_width, rows * cell_height
    theirs, _ = _theirs()
    masks = {label: _fresh_raster(label, width, height) for label in LABELS}  # fonts loaded
    # The same labels in a card one cell wider, at the same size (where a label goes when the
    # calls move on: the calls shown together share one size).
    wider: dict[str, Image.Image] = {}
    for label in LABELS:
        mask = raster.rasterise(
            label, width + cell_width, height, "", raster.fitted_size(label, width, height)
        )
        assert mask is not None, label
        wider[label] = mask
    pictures = {label: coloured(mask) for label, mask in masks.items()}

    def clear() -> None:
        _clear(sixel, "_ink_bands")

    # name -> (what is done before, untimed; what is timed)
    steps: dict[str, tuple[Callable[[str], Any], Callable[[str], Any]]] = {
        "raster": (lambda label: None, lambda label: _fresh_raster(label, width, height)),
        "ours": (
            lambda label: clear(),
            lambda label: sixel.encode(masks[label], PAPER, INK, paint_background=False),
        ),
        "placed": (
            lambda label: sixel.encode(masks[label], PAPER, INK, paint_background=False),
            lambda label: sixel.encode(wider[label], PAPER, INK, paint_background=False),
        ),
        "painted": (lambda label: clear(), lambda label: sixel.encode(masks[label], PAPER, INK)),
    }
    if theirs is not None:
        steps["theirs"] = (lambda label: None, lambda label: theirs(pictures[label]))
    times: dict[str, list[float]] = {step: [] for step in steps}
    order = list(steps)
    for run in range(runs):
        for step in order[run % len(order) :] + order[: run % len(order)]:
            before, timed = steps[step]
            for label in LABELS:
                before(label)
                started = time.perf_counter()
                timed(label)
                times[step].append((time.perf_counter() - started) * 1000)
    label = LABELS[0]
    their_output = theirs(pictures[label]) if theirs is not None else None
    return BoxCost(
        box=name,
        pixels=(width, height),
        raster_ms=statistics.median(times["raster"]),
        ours_ms=statistics.median(times["ours"]),
        ours_placed_ms=statistics.median(times["placed"]),
        ours_painted_ms=statistics.median(times["painted"]),
        theirs_ms=statistics.median(times["theirs"]) if "theirs" in times else None,
        ours_bytes=len(sixel.encode(masks[label], PAPER, INK, paint_background=False)),
        ours_painted_bytes=len(sixel.encode(masks[label], PAPER, INK)),
        theirs_bytes=None if their_output is None else len(their_output),
        theirs_colours=None if their_output is None else _colours(their_output),
    )


def _colours(sequence: str) -> int:
    return len(set(re.findall(r"#(\d+);2;", sequence)))


_TOKENS = re.compile(r"#(\d+)(?:;2;(\d+);(\d+);(\d+))?|!(\d+)(.)|([?-~])|\$|-")


def decode(sequence: str, under: tuple[int, int, int] = (255, 0, 255)) -> Image.Image:
    """The RGB picture a terminal shows for a sixel sequence over cells of the colour `under`."""
    body = sequence[sequence.index("q") + 1 : sequence.rindex("\x1b")]
    raster_match = re.match(r'"1;1;(\d+);(\d+)', body)
    assert raster_match is not None
    width, height = int(raster_match.group(1)), int(raster_match.group(2))
    pixels = bytearray(bytes(under) * width * height)
    colours: dict[int, bytes] = {}
    colour, x, band = 0, 0, 0
    for token in _TOKENS.finditer(body, raster_match.end()):
        text = token.group(0)
        if text[0] == "#":
            colour = int(token.group(1))
            if token.group(2) is not None:
                colours[colour] = bytes(round(int(token.group(i)) * 255 / 100) for i in (2, 3, 4))
        elif text == "$":
            x = 0
        elif text == "-":
            x, band = 0, band + 1
        else:
            count, char = (int(token.group(5)), token.group(6)) if token.group(5) else (1, text)
            bits = ord(char) - 0x3F
            if bits:
                rgb = colours[colour]
                for bit in range(6):
                    y = band * 6 + bit
                    if bits >> bit & 1 and y < height:
                        start = (y * width + x) * 3
                        pixels[start : start + 3 * count] = rgb * count
            x += count
    return Image.frombytes("RGB", (width, height), bytes(pixels))


def fidelity(name: str, sequence: str, mask: Image.Image) -> Fidelity:
    """The decoded `sequence` against the exact picture of `mask` in the card's colours."""
    exact = coloured(mask).tobytes()
    shown = decode(sequence).tobytes()
    coverage = mask.tobytes()
    paper = ink = edge = edge_sum = edges = unpainted = 0
    for index, value in enumerate(coverage):
        a, b = exact[3 * index : 3 * index + 3], shown[3 * index : 3 * index + 3]
        if b == b"\xff\x00\xff":
            unpainted += 1
        error = max(abs(p - q) for p, q in zip(a, b, strict=True))
        if value == 0:
            paper = max(paper, error)
        elif value == 255:
            ink = max(ink, error)
        else:
            edge = max(edge, error)
            edge_sum += error
            edges += 1
    return Fidelity(name, _colours(sequence), paper, ink, edge, edge_sum / max(edges, 1), unpainted)


def measure(quick: bool = False) -> LabelsResult:
    """Every box, then the fidelity of both encoders on the 1080p card."""
    runs = RUNS[1] if quick else RUNS[0]
    theirs, version = _theirs()
    result = LabelsResult(runs=runs, theirs_version=version)
    for name in BOXES:
        result.boxes.append(measure_box(name, runs))
    columns, rows, cell_width, cell_height = next(iter(BOXES.values()))
    mask = _fresh_raster(LABELS[0], columns * cell_width, rows * cell_height)
    result.fidelity.append(
        fidelity("ours (paper painted)", sixel.encode(mask, PAPER, INK).decode(), mask)
    )
    if theirs is not None:
        result.fidelity.append(fidelity("textual-image", theirs(coloured(mask)), mask))
    return result


def target_met(result: LabelsResult) -> bool:
    """Our encoder no slower than textual-image's on every box (painted paper, as theirs)."""
    return all(box.ratio is not None and box.ratio >= 1.0 for box in result.boxes)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} ms"


def _kib(value: int | None) -> str:
    return "—" if value is None else f"{value / 1024:.1f} KiB"


def table(result: LabelsResult) -> list[str]:
    """The costs as Markdown table rows (with the header)."""
    lines = [
        "| box | pixels | raster | ours: new ink (as sent) | ours: placed again "
        "| ours: paper painted | textual-image | theirs / ours (painted) | raster + ours "
        "| bytes: ours (as sent), painted, theirs | theirs' colours |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for box in result.boxes:
        ratio = "—" if box.ratio is None else f"{box.ratio:.1f} ×"
        lines.append(
            f"| {box.box} | {box.pixels[0]} x {box.pixels[1]} | {_ms(box.raster_ms)} "
            f"| {_ms(box.ours_ms)} | {_ms(box.ours_placed_ms)} | {_ms(box.ours_painted_ms)} "
            f"| {_ms(box.theirs_ms)} "
            f"| {ratio} | {_ms(box.total_ms)} "
            f"| {_kib(box.ours_bytes)}, {_kib(box.ours_painted_bytes)}, "
            f"{_kib(box.theirs_bytes)} | {box.theirs_colours or '—'} |"
        )
    return lines


def fidelity_table(result: LabelsResult) -> list[str]:
    """How exact the pictures are, as Markdown table rows (with the header)."""
    lines = [
        "| encoder | colours | paper: largest error | ink: largest error | edges: largest, mean "
        "| pixels not painted |",
        "|---|---|---|---|---|---|",
    ]
    for item in result.fidelity:
        lines.append(
            f"| {item.encoder} | {item.colours} | {item.paper_max} | {item.ink_max} "
            f"| {item.edge_max}, {item.edge_mean:.1f} | {item.unpainted:,} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the results (Markdown or JSON)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{RUNS[1]} runs instead of {RUNS[0]}")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    result = measure(args.quick)
    if args.json:
        print(json.dumps(asdict(result), indent=2))
    else:
        print("\n".join([*table(result), "", *fidelity_table(result)]))
    return 0 if target_met(result) else 1


if __name__ == "__main__":
    sys.exit(main())

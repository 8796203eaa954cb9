"""Proof on the real chain: the called label is legible from afar on what the TV shows.

sway (wlroots' headless backend, pixman) shows foot (systemd/foot.ini) full screen at the TV's
resolution; foot runs `lobby-display run` against the simulator, whose operators are held so
that only the calls made here appear; grim captures the output (tests/helpers/kiosk_chain.py).
For 1920x1080 (foot's pixelsize 30) and 3840x2160 (pixelsize 60), one compositor session
each:

- the screen is not blank: many colours, and the header reads the place's name;
- one call at a time, for labels of digits only, letters and digits, with a dash, and of six
  characters: OCR of the screenshot scaled to 25 % (as seen from four times farther) reads the
  label exactly, first in the highlight colours (dark on an amber card), then in the steady
  ones (amber on the panel), each time as the only big label on the screen;
- five calls at once: the five labels, each read exactly from afar.

Every test of one size shares one compositor session (pytest groups them by size).
Only words at least 0.9 cell high count (`BIG`): the recent-calls list, which holds the same
labels at body size, never does. No O/0 or other confusion is allowed: the labels above are
read exactly. Labels with a zero after a letter (B030, E012) are not yet: in DejaVu Sans Bold
the 0 is as round as the O, and OCR reads BO30, EQ12 (and O100 as 0100); that test is marked
as an expected failure until the label's typeface tells them apart.

As root, with sway, foot, grim, tesseract and the fonts installed (.ci/run installs them);
skipped otherwise, except under CI (`CI` set), where a missing tool fails. Set
KIOSK_CHAIN_SHOTS=DIR to keep every picture checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.simulator.names import PLACE
from tests.helpers.kiosk_chain import (
    BIG,
    FAR,
    Scene,
    SeenLabel,
    cell_height,
    colours,
    missing_tools,
    read_header,
    runtime,
    shared_directory,
)

SIZES = {"1080p": (1920, 1080), "4k": (3840, 2160)}
#: One call at a time: digits only, letters and digits, a dash, six characters (with a dash
#: and without).
ONE_CALL = ["1234", "A031", "B-12", "K-0172", "AB1234"]
FIVE_CALLS = ["1234", "B-12", "K-0172", "AB1234", "C077"]
LOCALE = "en_US"


def missing(reason: str) -> NoReturn:
    """Skip on a developer's machine; fail under CI, whose .ci/run installs every tool."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI installs it: see .ci/run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chain_tools() -> None:
    if os.geteuid() != 0:
        missing("the kiosk chain tests run as root (sway and foot then run as a system user)")
    absent = missing_tools()
    if absent:
        missing(f"the kiosk chain needs {', '.join(absent)}")
    try:
        import PIL  # noqa: F401
    except ImportError:
        missing("Pillow is not installed (a dependency of the project)")


@pytest.fixture(scope="module")
def screen(
    request: pytest.FixtureRequest, chain_tools: None, sim_account: ServiceAccount
) -> Iterator[Scene]:
    """The chain at one size, showing a simulated place with held operators."""
    size = SIZES[request.param]
    with (
        SimulatorServer(seed=3, speed=1.0, account=sim_account) as sim,
        shared_directory() as folder,
        Scene(sim, folder, locale=LOCALE, size=size, program=runtime()) as scene,
    ):
        yield scene


def keep(picture: Any, name: str) -> None:
    """Save a checked picture to $KIOSK_CHAIN_SHOTS, when set."""
    folder = os.environ.get("KIOSK_CHAIN_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        picture.save(Path(folder) / f"{name}.png")


def described(seen: list[SeenLabel], picture: Any, screen: Scene) -> str:
    """What was read, where and how big, when; and the ends of the chain's logs."""
    cell = cell_height(picture) * FAR
    labels = "; ".join(
        f"{label.text!r} ({'highlighted' if label.highlighted else 'steady'}, at {label.box}, "
        f"word heights {[round(h / cell, 2) for h in label.word_heights]} cells from afar)"
        for label in seen
    )
    when = f"{screen.since_call():.1f} s after the call"
    return f"{when}: {labels or 'no big label'}\n{screen.chain.logs()}"


@pytest.mark.parametrize("screen", list(SIZES), indirect=True)
def test_the_screen_is_not_blank_and_shows_the_header(screen: Scene) -> None:
    picture = screen.chain.capture()
    keep(picture, f"{picture.height}p-start")
    assert colours(picture) > 16, "the screen is (nearly) one colour"
    low, high = picture.convert("L").getextrema()
    assert high - low > 128, f"no contrast on the screen ({low}..{high})"
    header = read_header(picture)
    assert PLACE[LOCALE] in header, f"the header reads {header!r}"


@pytest.mark.parametrize("screen", list(SIZES), indirect=True)
@pytest.mark.parametrize("label", ONE_CALL)
def test_one_call_is_legible_from_afar_highlighted_then_steady(screen: Scene, label: str) -> None:
    screen.call([label])
    for highlighted in (True, False):
        look = "highlighted" if highlighted else "steady"
        picture, seen = screen.wait_for([label], highlighted=highlighted)
        keep(picture, f"{picture.height}p-{label}-{look}")
        assert [item.text for item in seen] == [label], described(seen, picture, screen)
        assert seen[0].highlighted is highlighted, described(seen, picture, screen)
        assert all(height >= BIG * cell_height(picture) * FAR for height in seen[0].word_heights)


@pytest.mark.parametrize("screen", list(SIZES), indirect=True)
def test_five_calls_are_each_legible_from_afar(screen: Scene) -> None:
    screen.call(FIVE_CALLS)
    picture, seen = screen.wait_for(FIVE_CALLS, highlighted=True)
    keep(picture, f"{picture.height}p-five")
    assert sorted(item.text for item in seen) == sorted(FIVE_CALLS), described(
        seen, picture, screen
    )
    assert all(item.highlighted for item in seen), described(seen, picture, screen)

"""What the display asks the terminal, and the drawing it chooses from the answers."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import termios
import threading
from collections.abc import Iterator

import pytest

from lobby_display.graphics.mosaic import Mosaic
from lobby_display.graphics.terminal import (
    DEFAULT_CELL,
    TerminalAnswers,
    ask,
    choose,
    pixel_cell,
)

FOOT = TerminalAnswers(sixel=True, cell=(18, 36))


@pytest.mark.parametrize(
    ("setting", "term", "answers", "sixel", "mosaic"),
    [
        ("auto", "foot", FOOT, True, Mosaic.SEXTANTS),
        ("auto", "foot", TerminalAnswers(sixel=False), False, Mosaic.SEXTANTS),
        ("auto", "tmux-256color", TerminalAnswers(sixel=False), False, Mosaic.QUADRANTS),
        ("auto", "linux", TerminalAnswers(sixel=False), False, Mosaic.HALF_BLOCKS),
        ("auto", "xterm-256color", TerminalAnswers(), False, Mosaic.QUADRANTS),
        ("text", "foot", FOOT, False, Mosaic.SEXTANTS),
        ("sixel", "xterm-256color", TerminalAnswers(), True, Mosaic.QUADRANTS),
        ("quadrants", "foot", FOOT, False, Mosaic.QUADRANTS),
        ("half-blocks", "foot", FOOT, False, Mosaic.HALF_BLOCKS),
    ],
)
def test_the_drawing_follows_the_setting_and_the_terminal(
    setting: str, term: str, answers: TerminalAnswers, sixel: bool, mosaic: Mosaic
) -> None:
    graphics = choose(setting, term, answers)  # type: ignore[arg-type]
    assert (graphics.sixel, graphics.mosaic) == (sixel, mosaic)


def test_a_terminal_that_does_not_say_its_cell_size_gets_the_common_one() -> None:
    assert choose("sixel", "xterm", TerminalAnswers()).cell == DEFAULT_CELL
    assert choose("auto", "foot", FOOT).cell == (18, 36)


class FakeTerminal:
    """The far side of a pty, answering the display's questions as a terminal would."""

    def __init__(self, answer: bytes | None, pixels: tuple[int, int] = (0, 0)) -> None:
        self.master, self.slave = pty.openpty()
        # 30 rows, 106 columns, and (when given) the pixel size foot reports for them.
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 106, *pixels))
        self.answer = answer
        self.asked = b""
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            while not self.asked.endswith(b"\x1b[c"):
                self.asked += os.read(self.master, 64)
        except OSError:
            return
        if self.answer is not None:
            os.write(self.master, self.answer)

    def close(self) -> None:
        os.close(self.slave)
        os.close(self.master)
        self._thread.join(timeout=5)


@pytest.fixture
def terminals() -> Iterator[list[FakeTerminal]]:
    made: list[FakeTerminal] = []
    yield made
    for terminal in made:
        terminal.close()


def test_foot_is_asked_for_its_attributes_and_its_pixels_come_from_the_pty(
    terminals: list[FakeTerminal],
) -> None:
    foot = FakeTerminal(b"\x1b[?62;4;22;28c", pixels=(1908, 1080))
    terminals.append(foot)
    answers = ask(foot.slave, foot.slave, timeout=5)
    assert answers == TerminalAnswers(sixel=True, cell=(18, 36))
    assert pixel_cell(foot.slave) == (18, 36)
    assert foot.asked == b"\x1b[c", "the cell size was read from the pty: only DA1 is asked"


def test_a_terminal_without_pixel_size_is_asked_for_its_cells(
    terminals: list[FakeTerminal],
) -> None:
    terminal = FakeTerminal(b"\x1b[6;20;10t\x1b[?64;1;9;15;18;21;22c")
    terminals.append(terminal)
    answers = ask(terminal.slave, terminal.slave, timeout=5)
    assert answers == TerminalAnswers(sixel=False, cell=(10, 20))
    assert terminal.asked == b"\x1b[16t\x1b[c"


def test_a_terminal_that_never_answers_costs_the_timeout_and_nothing_else(
    terminals: list[FakeTerminal],
) -> None:
    silent = FakeTerminal(None)
    terminals.append(silent)
    answers = ask(silent.slave, silent.slave, timeout=0.2)
    assert answers == TerminalAnswers(sixel=None, cell=None)
    # The terminal's mode is given back as it was (line editing and echo on).
    assert termios.tcgetattr(silent.slave)[3] & termios.ICANON


def test_no_terminal_no_question(tmp_path: object) -> None:
    read, write = os.pipe()
    try:
        assert ask(read, write, timeout=0.2) == TerminalAnswers()
    finally:
        os.close(read)
        os.close(write)

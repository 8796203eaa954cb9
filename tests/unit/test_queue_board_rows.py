"""Queue board rows drawn without Rich's table measuring them: the same segments as the table,
for headings and rows, cut names, hours on two lines, wide (CJK) and combining (Thai) text."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.table_row import CellKey, table_row_lines

WORDS = [
    "Passports and ID cards",
    "护照和身份证",
    "パスポート・身分証明書",
    "สำนักงานเขต 3",
    "Civil registry",
    "7 tickets · 9 people",
    "09:00–12:30\n14:00–17:30",
    "08:30–16:00",
    "in 25 min.",
    "—",
    "",
    "Next\navailable",
    "Reisepässe und Ausweise",
]
STYLES = [Style.null(), Style(bold=True), Style(color="green", bold=True), Style(dim=True)]


def table_lines(
    console: Console, cells: list[Text], widths: list[int], style: Style, *, header: bool
) -> list[list[Segment]]:
    """The row as Rich's table draws it (the reference)."""
    table = Table(
        box=None,
        expand=False,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1),
        header_style=style,
        show_header=header,
    )
    for index, width in enumerate(widths):
        heading = cells[index] if header else Text("")
        table.add_column(heading, width=width, no_wrap=True, overflow="ellipsis")
    if not header:
        table.add_row(*cells)
    options = console.options.update(highlight=False, width=console.width)
    return list(Segment.split_lines(console.render(table, options)))


@pytest.mark.parametrize("seed", range(40))
def test_a_row_is_drawn_as_the_table_draws_it(seed: int) -> None:
    chance = random.Random(seed)
    console = Console(file=io.StringIO(), width=160, force_terminal=True, color_system="truecolor")
    columns = chance.randint(2, 5)
    widths = [chance.randint(1, 26) for _ in range(columns)]
    header = chance.random() < 0.3
    cells = [Text(chance.choice(WORDS), style=chance.choice(STYLES)) for _ in range(columns)]
    style = chance.choice(STYLES) if header else Style.null()
    options = console.options.update(highlight=False, width=console.width)

    drawn = table_row_lines(console, options, cells, widths, style, header=header)

    assert drawn == table_lines(console, cells, widths, style, header=header)


@pytest.mark.parametrize("seed", range(10))
def test_cells_drawn_before_are_the_cells_drawn_afresh(seed: int) -> None:
    """Rows sharing cells (a queue's name and hours, another waiting count) drawn from the
    cells kept are the rows drawn without them."""
    chance = random.Random(seed)
    console = Console(file=io.StringIO(), width=160, force_terminal=True, color_system="truecolor")
    options = console.options.update(highlight=False, width=console.width)
    kept: DrawnCache[CellKey, list[list[Segment]]] = DrawnCache(64)
    widths = [chance.randint(1, 26) for _ in range(4)]
    for _ in range(30):
        cells = [Text(chance.choice(WORDS[:5]), style=chance.choice(STYLES)) for _ in range(4)]
        header = chance.random() < 0.2
        style = chance.choice(STYLES) if header else Style.null()
        from_kept = table_row_lines(
            console, options, cells, widths, style, header=header, drawn_cells=kept
        )
        assert from_kept == table_row_lines(console, options, cells, widths, style, header=header)
    assert kept.hits > 0, "rows shared cells"


def test_columns_wider_than_the_room_are_left_to_the_table() -> None:
    console = Console(file=io.StringIO(), width=20)
    options = console.options.update(width=20)
    cells = [Text("Passports and ID cards"), Text("Open")]
    assert table_row_lines(console, options, cells, [18, 4], Style.null(), header=False) is None

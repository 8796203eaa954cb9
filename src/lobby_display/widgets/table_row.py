"""One row of a borderless table (the queue board's, the recent calls') drawn as Rich's `Table`
draws it, without the table measuring every cell again (most of a row's cost)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rich.console import Console, ConsoleOptions
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from lobby_display.widgets.drawn import DrawnCache

#: One cell drawn (its lines of segments), by its text, width, padding and style.
CellKey = tuple[Hashable, ...]


def table_row_lines(
    console: Console,
    options: ConsoleOptions,
    cells: Sequence[Text],
    widths: Sequence[int],
    style: Style,
    *,
    header: bool,
    drawn_cells: DrawnCache[CellKey, list[list[Segment]]] | None = None,
) -> list[list[Segment]] | None:
    """One row of a table, drawn as Rich's `Table` draws it, without measuring it.

    The table has no borders, one cell of padding between columns and none at the edges, and
    columns of fixed `widths` that cut their text with an ellipsis; headings sit at the bottom
    of their row, cells at the top. Each cell goes through the same Rich calls as in the table;
    what is skipped is the table's measuring of every cell (most of a row's cost). None when the
    columns are wider than `options` allow: Rich would then share the width out.

    Cells already drawn with the same console are taken from `drawn_cells`: a queue's name,
    status and hours stay the same while its waiting count changes, a call's label and time
    while the list moves down, and they come back with their locale at each rotation.
    """
    count = len(cells)
    padded = [width + (index > 0) + (index < count - 1) for index, width in enumerate(widths)]
    if sum(padded) > options.max_width:
        return None
    drawn = []
    for index, (text, width) in enumerate(zip(cells, padded, strict=True)):
        padding = (0, 1 if index < count - 1 else 0, 0, 1 if index > 0 else 0)
        key: CellKey = (
            text.plain,
            text.style,
            tuple(text.spans),
            text.justify,
            text.overflow,
            text.no_wrap,
            width,
            padding,
            style,
        )
        lines = drawn_cells.get(key) if drawn_cells is not None else None
        if lines is None:
            cell_options = options.update(
                width=width, justify="left", no_wrap=True, overflow="ellipsis", height=None
            )
            lines = console.render_lines(Padding(text, padding), cell_options, style=style)
            if drawn_cells is not None:
                drawn_cells.set(key, lines)
        drawn.append(lines)
    height = max(len(lines) for lines in drawn)
    align = Segment.align_bottom if header else Segment.align_top
    shaped = [
        Segment.set_shape(align(lines, width, height, style), width, height)
        for lines, width in zip(drawn, padded, strict=True)
    ]
    return [[segment for lines in shaped for segment in lines[y]] for y in range(height)]


__all__ = ["CellKey", "table_row_lines"]

"""The recent calls' lines drawn without Rich's table measuring them: the same segments as the
panel's table, for the headings, the latest call and the others, cut counters, wide (CJK) and
combining (Thai) text, at the TV's width and narrow ones; a call's cells kept across locales."""

from __future__ import annotations

import random

import pytest
from textual.app import App, ComposeResult
from textual.strip import Strip

from lobby_display.widgets.recent_calls import (
    LABEL_WIDTH,
    RecentCallRow,
    RecentCallsPanel,
    _Columns,
    _Line,
)

LABELS = ["A017", "BX-12", "Z999", "AB-1234"]
COUNTERS = [
    "Counter 3",
    "Guichet 12 — état civil et passeports",
    "窗口 7",
    "窓口 12 パスポート",
    "ช่องบริการ 4",
    "—",
    "",
]
TIMES = ["14:05", "2:05 PM", "오후 2:05", "11月24日 14:05"]
HEADINGS = [
    ("Ticket", "Counter", "Called at"),
    ("Billet", "Guichet", "Appelé à"),
    ("票号", "窗口", "叫号时间"),
    ("บัตรคิว", "ช่องบริการ", "เวลาเรียก"),
]


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield RecentCallsPanel(capacity=6)


def segments(strips: list[Strip]) -> list[list[tuple[str, object]]]:
    return [[(segment.text, segment.style) for segment in strip] for strip in strips]


@pytest.mark.parametrize("width", [106, 52, 30])
async def test_a_line_is_drawn_as_the_panels_table_draws_it(width: int) -> None:
    chance = random.Random(width)
    async with _Host().run_test(size=(width, 20)) as pilot:
        await pilot.pause()
        panel = pilot.app.query_one(RecentCallsPanel)
        for _ in range(60):
            headings = chance.choice(HEADINGS)
            row = RecentCallRow(
                label=chance.choice(LABELS),
                counter=chance.choice(COUNTERS),
                time=chance.choice(TIMES),
            )
            layout = _Columns(
                label=max(LABEL_WIDTH, len(row.label), len(headings[0])),
                time=max(len(row.time), len(headings[2])) + chance.randint(0, 4),
                headings=headings,
            )
            line = chance.choice([_Line(None), _Line(row, latest=True), _Line(row)])

            drawn = panel.draw_row(line, layout)

            assert segments(drawn) == segments(panel.render_rows(panel.table(line, layout)))
            assert all(strip.cell_length == panel.size.width for strip in drawn)


async def test_a_call_drawn_again_in_another_locale_keeps_its_label_and_time_cells() -> None:
    async with _Host().run_test(size=(106, 20)) as pilot:
        await pilot.pause()
        panel = pilot.app.query_one(RecentCallsPanel)
        english = _Columns(label=LABEL_WIDTH, time=9, headings=HEADINGS[0])
        french = _Columns(label=LABEL_WIDTH, time=9, headings=HEADINGS[1])
        panel.draw_row(_Line(RecentCallRow("A017", "Counter 3", "14:05")), english)
        kept = panel._drawn_cells.hits

        in_french = _Line(RecentCallRow("A017", "Guichet 3", "14:05"))
        drawn = panel.draw_row(in_french, french)

        assert panel._drawn_cells.hits == kept + 2, "the label and the time were kept"
        assert segments(drawn) == segments(panel.render_rows(panel.table(in_french, french)))

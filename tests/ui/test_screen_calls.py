"""Calls on the screen: a new call appears large and highlighted, a recall is highlighted again,
the highlight ends on time, simultaneous calls share the space, the announcer hears of each."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from textual.color import Color
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip

from lobby_display.app import LobbyApp
from lobby_display.graphics import pictures
from lobby_display.graphics.mosaic import Mosaic
from lobby_display.graphics.pictures import picture_body, two_cores
from lobby_display.graphics.raster import rasterise
from lobby_display.graphics.terminal import Graphics
from lobby_display.updates import TicketChanged
from lobby_display.widgets import big_label, now_calling
from lobby_display.widgets.big_label import BigLabel
from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.now_calling import SIZE_MEMORY, CallCard
from tests.helpers.boards import (
    Clock,
    FakeSource,
    Layouts,
    Recorder,
    at,
    call,
    counters,
    make_board,
    make_settings,
    screen_text,
    ticket,
    wait_for,
)
from tests.helpers.pictures import sent_image
from tests.helpers.redraw import settled


def calls_app(
    clock: Clock,
    source: FakeSource,
    recorder: Recorder | None = None,
    graphics: Graphics | None = None,
    **display: object,
) -> LobbyApp:
    """The fixture board (its last call long steady), fed by `source`, its labels drawn the
    way `graphics` says (None: as on a text terminal)."""
    settings = make_settings(**display)
    # The fixture's last call is 10 minutes old here: nothing is highlighted at the start.
    board = make_board(settings, at(-600))
    app = LobbyApp(
        settings,
        source,
        clock=clock,
        board=board,
        hooks=recorder.hooks() if recorder else None,
        graphics=graphics,
    )
    app.animation_level = "none"
    return app


def theme_colour(app: LobbyApp, name: str) -> Color:
    """The colour the stylesheet's `$name` stands for in the app's theme."""
    return Color.parse(app.get_css_variables()[name])


def stands_out(app: LobbyApp, card: CallCard) -> bool:
    """The card is drawn in the highlight's colours, as a visitor sees it: on the theme's
    warning colour, its label and lines in the screen's background colour."""
    highlight, words = theme_colour(app, "warning"), theme_colour(app, "background")
    parts = (card.big, card.counter, card.recall)
    return card.background_colors[1] == highlight and all(
        part.rich_style.color is not None and Color.from_rich_color(part.rich_style.color) == words
        for part in parts
    )


async def shown_together(
    app: LobbyApp, pilot: Pilot[Any], source: FakeSource, *calls: TicketChanged
) -> list[CallCard]:
    """Push `calls` at one moment; their cards (newest first) once that many are shown."""
    source.push(*calls)
    panel = app.now_calling
    await wait_for(pilot, lambda: len(panel.shown_cards) == len(calls))
    return panel.shown_cards


async def test_a_new_call_appears_large_and_highlighted() -> None:
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    app = calls_app(clock, source, recorder)
    async with app.run_test(size=(160, 45)) as pilot:
        panel = app.now_calling
        await wait_for(pilot, lambda: panel.shown_cards != [])
        assert not panel.shown_cards[0].highlighted
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        await wait_for(pilot, lambda: panel.shown_cards[0].big.label == "K017")
        card = panel.shown_cards[0]
        assert card.highlighted
        assert stands_out(app, card)
        assert card.counter.text == "Please go to Desk 2"
        rows = card.big.mosaic_rows
        assert rows is not None
        assert len(rows) >= 7, "a single call on a 160x45 screen is at least 7 rows tall"
        inked = [row for row in rows if row.strip()]
        assert len(inked) >= 5
        assert all(row in screen_text(app) for row in inked)
        # Also the first of the recent calls, as plain text.
        first = app.recent_calls.visible_rows[0]
        assert (first.label, first.counter) == ("K017", "Desk 2")
        assert [[c.label for c in calls] for calls in recorder.calls] == [["K017"]]


@asynccontextmanager
async def highlighted_call(clock: Clock) -> AsyncIterator[tuple[LobbyApp, Pilot[Any]]]:
    """A screen whose latest call, K017, has just come and is highlighted for 8 s."""
    source = FakeSource()
    app = calls_app(clock, source, highlight_seconds=8)
    async with app.run_test(size=(120, 34)) as pilot:
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        await settled(app, pilot, source)
        yield app, pilot


async def test_the_highlight_ends_after_highlight_seconds_and_the_call_stays() -> None:
    clock = Clock()
    async with highlighted_call(clock) as (app, pilot):
        panel = app.now_calling
        clock.advance(7)
        app.tick()
        await pilot.pause()
        assert panel.shown_cards[0].highlighted, "still within the 8 seconds"
        clock.advance(1)
        app.tick()
        await pilot.pause()
        card = panel.shown_cards[0]
        assert not card.highlighted
        assert not stands_out(app, card)
        assert card.background_colors[1] != theme_colour(app, "warning")
        assert card.big.label == "K017", "the latest call stays on, steady"


async def test_a_theme_changed_during_a_highlight_recolours_the_card() -> None:
    """The config reloaded with another theme while a call is highlighted: its card takes the
    new theme's highlight at once, and its end leaves the new theme's card colours."""
    clock = Clock()
    async with highlighted_call(clock) as (app, pilot):
        card = app.now_calling.shown_cards[0]
        dark_highlight = theme_colour(app, "warning")
        assert stands_out(app, card)
        app.reload_settings(make_settings(highlight_seconds=8, theme="high-contrast"))
        await wait_for(pilot, lambda: theme_colour(app, "warning") != dark_highlight)
        await pilot.pause()
        assert card.highlighted
        assert stands_out(app, card), "in the high-contrast theme's colours"
        clock.advance(8)
        app.tick()
        await pilot.pause()
        assert not stands_out(app, card)
        assert card.background_colors[1] == theme_colour(app, "background")


async def test_the_end_of_a_highlight_redraws_the_calls_alone() -> None:
    """A highlight ends after every call: its end redraws the calls, not the header, the queue
    board, the counters and the status line too (on an idle screen with 30 queues, redrawing
    every part for it was a fifth of what the redraws and frames cost)."""
    clock = Clock()
    async with highlighted_call(clock) as (app, pilot):
        panel = app.now_calling
        next(timer for timer in app._timers if timer.name == "tick").pause()
        redrawn: list[str] = []
        parts = ("header", "now_calling", "recent_calls", "queue_board", "counters", "status_line")
        for name in parts:
            widget = getattr(app, name)

            def noted(*args: Any, _show: Any = widget.show, _name: str = name) -> None:
                redrawn.append(_name)
                _show(*args)

            widget.show = noted
        clock.advance(8)
        app.tick()
        await pilot.pause()
        assert not panel.shown_cards[0].highlighted
        assert sorted(redrawn) == ["now_calling", "recent_calls"]


async def test_the_highlight_ends_on_time_even_when_a_counter_is_redrawn_first() -> None:
    """A counter that changes just after a highlight's end, before the next tick, is redrawn
    (alone, on its timer) first: the end of the highlight is drawn with it, not forgotten until
    the next call (seen on the 4K kiosk chain: a card amber for 20 s and more)."""
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    app = calls_app(clock, source, recorder, highlight_seconds=6)
    async with app.run_test(size=(120, 34)) as pilot:
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        # Just after a tick of the app's own (every second), so that none comes in between.
        ticks = recorder.ticks
        await wait_for(pilot, lambda: recorder.ticks > ticks, timeout=3)
        clock.advance(6.2)
        app.apply_update(counters({"c-visitors": 129, "c-served": 98, "c-year": 12481}))
        await wait_for(pilot, lambda: "12,481" in screen_text(app))
        clock.advance(0.5)
        app.tick()
        await pilot.pause()
        card = panel.shown_cards[0]
        assert not card.highlighted, "the highlight ended 0.7 s ago"
        assert not stands_out(app, card)
        assert card.big.label == "K017"


async def test_a_recall_is_highlighted_again_and_says_so() -> None:
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    app = calls_app(clock, source, recorder, highlight_seconds=5)
    async with app.run_test(size=(120, 34)) as pilot:
        first_call = clock.now
        source.push(call("t-k017", "K017", "q-pass", 2, first_call))
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        clock.advance(30)
        app.tick()
        await pilot.pause()
        assert not panel.shown_cards[0].highlighted
        assert panel.shown_cards[0].recall.text == ""
        recalled = ticket(
            "t-k017",
            "K017",
            "q-pass",
            state=200,
            desk=2,
            called_at=first_call,
            recalled_at=[clock.now],
        )
        source.push(TicketChanged(recalled))
        await wait_for(pilot, lambda: panel.shown_cards[0].highlighted)
        card = panel.shown_cards[0]
        assert card.recall.text == "Called again"
        assert "Called again" in screen_text(app)
        assert [[(c.label, c.recall) for c in calls] for calls in recorder.calls] == [
            [("K017", 0)],
            [("K017", 1)],
        ]


async def test_a_cards_lines_are_drawn_for_that_card_though_every_card_shares_them() -> None:
    """The counter and recall lines of the cards come from drawings every card shares (each
    call moves every text on to the next card, at the same size); each must still be what
    Textual draws for that card: the same sentence in the highlight's colours, not in those it
    had when it was drawn steady."""
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, highlight_seconds=5)

    def card_lines() -> list[list[Strip]]:
        cards = app.now_calling.shown_cards
        lines = [line for card in cards for line in (card.counter, card.recall)]
        return [line.render_lines(Region(0, 0, *line.size)) for line in lines]

    async with app.run_test(size=(160, 45)) as pilot:
        panel = app.now_calling
        source.push(
            call("t-k017", "K017", "q-pass", 2, clock.now),
            call("t-c010", "C010", "q-residence", 4, clock.now),
        )
        await wait_for(pilot, lambda: len(panel.shown_cards) == 2)
        clock.advance(30)
        app.tick()
        await settled(app, pilot, source)
        assert not any(card.highlighted for card in panel.shown_cards)
        steady = card_lines()
        source.push(
            call("t-b050", "B050", "q-civil", 2, clock.now),
            call("t-d020", "D020", "q-civil", 4, clock.now),
        )
        await wait_for(pilot, lambda: panel.shown_cards[0].big.label == "D020")
        await settled(app, pilot, source)
        cards = panel.shown_cards
        assert all(card.highlighted for card in cards)
        assert sorted(card.counter.text for card in cards) == [
            "Please go to Desk 2",
            "Please go to Desk 4",
        ]
        shared = card_lines()
        assert shared != steady, "the highlight's colours"
        now_calling._LINES.clear()
        assert shared == card_lines(), "each line as Textual draws it for its card"


async def test_simultaneous_calls_share_the_space_newest_first() -> None:
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    app = calls_app(clock, source, recorder)
    async with app.run_test(size=(160, 45)) as pilot:
        cards = await shown_together(
            app,
            pilot,
            source,
            call("t-k017", "K017", "q-pass", 2, clock.now),
            call("t-b050", "B050", "q-civil", 1, clock.now),
            call("t-c010", "C010", "q-residence", 4, clock.now),
        )
        assert [card.big.label for card in cards] == ["C010", "B050", "K017"]
        assert all(card.highlighted for card in cards)
        # Once the grid has shared the space (the frame after the cards appear), every card
        # says where to go.
        sentences = [f"Please go to {desk}" for desk in ("Desk 1", "Desk 2", "Desk 4")]
        await wait_for(pilot, lambda: all(s in screen_text(app) for s in sentences))
        regions = [card.region for card in cards]
        for index, region in enumerate(regions):
            assert app.now_calling.region.contains_region(region)
            for other in regions[index + 1 :]:
                assert not region.overlaps(other)
        # The announcer hears of them in the order they were made.
        assert [c.label for calls in recorder.calls for c in calls] == ["K017", "B050", "C010"]


async def test_a_call_that_changes_the_number_of_cards_lays_the_screen_out_once() -> None:
    """A layout redraws every card (several milliseconds a call on a small PC): the call that
    adds a card, or leaves one alone, lays the screen out once, and its cards are in place
    after it (Textual asked for a second layout after every widget it resized)."""
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, highlight_seconds=8)
    async with app.run_test(size=(160, 45)) as pilot:
        panel = app.now_calling
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        await wait_for(pilot, lambda: [c.big.label for c in panel.shown_cards] == ["K017"])
        for _ in range(3):
            await pilot.pause()
        layouts = Layouts(app)
        clock.advance(2)
        source.push(call("t-b050", "B050", "q-civil", 1, clock.now))
        await wait_for(pilot, lambda: "Please go to Desk 1" in screen_text(app))
        for _ in range(5):
            await pilot.pause()
        cards = panel.shown_cards
        assert [card.big.label for card in cards] == ["B050", "K017"]
        assert layouts.count == 1, "two cards from one: one layout"
        assert "Please go to Desk 2" in screen_text(app)
        first, second = (card.region for card in cards)
        assert panel.region.contains_region(first) and panel.region.contains_region(second)
        assert not first.overlaps(second)
        assert first.height == second.height, "the calls of one moment share the space"
        layouts.count = 0
        clock.advance(30)
        source.push(call("t-c010", "C010", "q-residence", 4, clock.now))
        await wait_for(pilot, lambda: "Please go to Desk 4" in screen_text(app))
        for _ in range(5):
            await pilot.pause()
        assert [card.big.label for card in panel.shown_cards] == ["C010"]
        assert layouts.count == 1, "one card from two: one layout"
        assert panel.shown_cards[0].region.height > first.height


async def test_many_calls_on_a_small_screen_stay_readable_newest_first() -> None:
    """Five calls at once on 80x24: each card keeps its label and counter; the newest is on."""
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source)
    async with app.run_test(size=(80, 24)) as pilot:
        labels = ["A001", "B002", "C003", "D004", "E005"]
        source.push(
            *(
                call(f"t-{label}", label, "q-pass", number + 1, clock.now)
                for number, label in enumerate(labels)
            )
        )
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        cards = panel.shown_cards
        assert cards[0].big.label == "E005", "the call just made is always on screen"

        def on_screen(card: CallCard) -> bool:
            text = screen_text(app)
            drawn = card.big.mosaic_rows
            label_shown = (
                all(row in text for row in drawn if row.strip())
                if drawn is not None
                else card.big.label in text
            )
            return label_shown and card.counter.text in text

        # Once laid out (the frame after the cards appear), each label is drawn or written, and
        # each counter written.
        await wait_for(pilot, lambda: all(on_screen(card) for card in panel.shown_cards))
        cards = panel.shown_cards
        for card in cards:
            assert card.region.height >= 2
            assert panel.region.contains_region(card.region)
        for index, region in enumerate(regions := [card.region for card in cards]):
            for other in regions[index + 1 :]:
                assert not region.overlaps(other)


async def test_an_80x24_screen_still_draws_the_label_at_least_3_rows_tall() -> None:
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source)
    async with app.run_test(size=(80, 24)) as pilot:
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        rows = panel.shown_cards[0].big.mosaic_rows
        assert rows is not None
        assert len(rows) >= 3
        assert "Please go to Desk 2" in screen_text(app)


async def test_a_label_in_another_script_is_drawn_large_too() -> None:
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source)
    async with app.run_test(size=(120, 34)) as pilot:
        source.push(call("t-th", "ก๑๒", "q-pass", 2, clock.now))
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        big = panel.shown_cards[0].big
        rows = big.mosaic_rows
        assert rows is not None, "drawn in a Thai typeface, not left as text"
        assert next(row for row in rows if row.strip()) in screen_text(app)


async def test_a_sentence_too_long_for_the_card_gives_way_to_the_counter_name() -> None:
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, locales=["fr_FR"])
    sentence = "Veuillez vous présenter\u00a0: Guichet 2"
    async with app.run_test(size=(80, 24)) as pilot:
        # Three calls at once on the smallest screen: cards narrower than the sentence.
        source.push(
            call("t-a001", "A001", "q-civil", 1, clock.now),
            call("t-b002", "B002", "q-residence", 4, clock.now),
            call("t-k017", "K017", "q-pass", 2, clock.now),
        )
        panel = app.now_calling
        await wait_for(pilot, lambda: len(panel.shown_cards) >= 2)
        card = panel.shown_cards[0]
        assert card.big.label == "K017"
        await wait_for(pilot, lambda: 0 < card.content_size.width < len(sentence))
        await wait_for(pilot, lambda: card.counter.text == "Guichet 2")
        await pilot.resize_terminal(160, 45)
        await wait_for(pilot, lambda: card.content_size.width >= len(sentence))
        await wait_for(pilot, lambda: card.counter.text == sentence)


async def test_the_highlight_follows_the_announcement_when_its_sound_starts() -> None:
    """A call announced late (after a burst) is highlighted from the start of its sound."""
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    app = calls_app(clock, source, recorder, highlight_seconds=8)
    async with app.run_test(size=(120, 34)) as pilot:
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        announced = recorder.calls[0][0]
        clock.advance(6)  # the announcer reaches this call 6 s later
        app.highlight_call(announced)
        clock.advance(5)  # 11 s after the call: past 8 s, within 8 s of its sound
        app.tick()
        await pilot.pause()
        assert panel.shown_cards[0].highlighted
        clock.advance(3)
        app.tick()
        await pilot.pause()
        assert not panel.shown_cards[0].highlighted


async def test_on_a_sixel_terminal_a_screenshot_still_shows_the_called_label() -> None:
    clock, source = Clock(), FakeSource()
    app = calls_app(
        clock, source, graphics=Graphics(sixel=True, mosaic=Mosaic.SEXTANTS, cell=(18, 36))
    )
    async with app.run_test(size=(106, 30)) as pilot:
        source.push(call("t-k017", "K017", "q-pass", 2, clock.now))
        panel = app.now_calling
        await wait_for(pilot, lambda: panel.shown_cards[0].big.label == "K017")
        big = panel.shown_cards[0].big
        assert big.shows_image, "the TV gets the image"
        assert not "".join(big.render_line(y).text for y in range(big.size.height)).strip()
        # What `lobby-display screenshot` writes holds the label's drawing, not a blank card.
        svg = app.export_screenshot().replace("&#160;", " ")
        rows = big.mosaic_rows
        assert rows is not None
        inked = [row.split()[0] for row in rows if row.strip()]
        assert all(piece in svg for piece in inked)


async def test_calls_shown_together_are_drawn_at_one_size() -> None:
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source)
    async with app.run_test(size=(106, 30)) as pilot:
        await shown_together(
            app,
            pilot,
            source,
            call("t-c7", "C7", "q-pass", 1, clock.now),
            call("t-d42", "D0042", "q-civil", 2, clock.now),
            call("t-b12", "B-12", "q-residence", 4, clock.now),
        )
        await pilot.pause()
        heights = []
        for card in app.now_calling.shown_cards:
            big = card.big
            assert big.max_size > 0
            width, height = big.size
            cell_width, cell_height = big.graphics.cell
            drawing = rasterise(
                big.label, width * cell_width, height * cell_height, "", big.max_size
            )
            assert drawing is not None
            box = drawing.getbbox()
            assert box is not None
            heights.append(box[3] - box[1])
        # Capitals and digits of one font size are one height: the short "C7" is not larger.
        assert max(heights) - min(heights) <= 3, heights


@pytest.mark.parametrize(
    "graphics",
    [Graphics(), Graphics(mosaic=Mosaic.SEXTANTS), Graphics(sixel=True, cell=(18, 36))],
    ids=["quadrants", "sextants", "sixel"],
)
async def test_at_80x24_the_call_just_made_is_drawn_whatever_the_terminal(
    graphics: Graphics,
) -> None:
    """Six calls at once on the smallest screen: fewer cards rather than the newest as text."""
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, graphics=graphics)
    async with app.run_test(size=(80, 24)) as pilot:
        labels = ["A001", "B002", "C003", "D004", "E005", "F006"]
        source.push(
            *(
                call(f"t-{label}", label, "q-pass", number + 1, clock.now)
                for number, label in enumerate(labels)
            )
        )
        panel = app.now_calling
        await wait_for(pilot, lambda: bool(panel.shown_cards) and panel.shown_cards[0].highlighted)
        await pilot.pause()
        cards = panel.shown_cards
        assert cards[0].big.label == "F006"
        for card in cards:
            big = card.big
            drawn = big.shows_image if graphics.sixel else big.mosaic_rows is not None
            assert drawn, f"{big.label} in a {big.size} box is plain text"


async def test_calls_keep_the_size_a_wider_label_needed_for_ten_minutes() -> None:
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, graphics=Graphics(sixel=True, cell=(18, 36)))
    panel = app.now_calling

    async def group(*labels: str) -> tuple[int, tuple[int, int] | None]:
        """Calls `labels` at one moment; the size and box their cards are drawn at."""
        source.push(
            *(
                call(f"t-{label}-{clock.now:%H%M}", label, "q-pass", desk, clock.now)
                for desk, label in enumerate(labels, start=1)
            )
        )
        await wait_for(pilot, lambda: [c.big.label for c in panel.shown_cards] == [*labels][::-1])
        await pilot.pause()
        bigs = [card.big for card in panel.shown_cards]
        assert len({(big.max_size, big.image_box) for big in bigs}) == 1, "one size for all"
        return bigs[0].max_size, bigs[0].image_box

    async with app.run_test(size=(106, 30)) as pilot:
        wide, box = await group("K017", "K018", "MWM8")
        clock.advance(120)
        # The wide "MWM8" has gone: these would fit larger, but are drawn as the last ones were.
        assert await group("K019", "K020", "K021") == (wide, box)
        clock.advance(SIZE_MEMORY.total_seconds())
        grown, grown_box = await group("K022", "K023", "K024")
        assert grown_box == box
        assert grown > wide, "ten minutes on, the short labels are drawn as large as they fit"


async def test_cards_that_appear_draw_their_labels_alike_from_their_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A card shown for the first time has no width yet: its counter line must not be the
    sentence, which a card narrower than it wraps over two or three lines: that card's label
    was drawn a line or two smaller than its neighbours' in their first frame."""
    drawn: list[tuple[str, int, int]] = []
    encode = BigLabel._encode

    def noted(big: BigLabel, width: int, height: int, *colours: Any) -> str:
        drawn.append((big.label, width, height))
        return encode(big, width, height, *colours)

    monkeypatch.setattr(BigLabel, "_encode", noted)
    clock, source = Clock(), FakeSource()
    graphics = Graphics(sixel=True, mosaic=Mosaic.SEXTANTS, cell=(18, 36))
    app = calls_app(clock, source, graphics=graphics, locales=["fr_FR"])
    labels = {"A901", "B902", "K917"}
    async with app.run_test(size=(106, 30)) as pilot:
        # Three calls at once: three cards narrower than "Veuillez vous présenter : Guichet 2".
        await shown_together(
            app,
            pilot,
            source,
            call("t-a901", "A901", "q-civil", 1, clock.now),
            call("t-b902", "B902", "q-residence", 4, clock.now),
            call("t-k917", "K917", "q-pass", 2, clock.now),
        )
        await settled(app, pilot, source)
        cards = app.now_calling.shown_cards
        assert all(card.counter.text.startswith("Guichet") for card in cards)
        assert all(card.big.shows_image for card in cards)
    pictures = [item for item in drawn if item[0] in labels]
    assert pictures, "no picture of the new calls was made"
    # Every size a label was drawn at, all three were drawn at (the calls of one moment alike).
    sizes = {(width, height) for _, width, height in pictures}
    for size in sizes:
        assert {label for label, *at in pictures if tuple(at) == size} == labels, pictures


@pytest.mark.skipif(not two_cores(), reason="the picture maker runs on a second core")
async def test_a_new_calls_picture_is_made_on_the_other_core_as_the_screen_draws_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each new call's picture is made by the picture maker while its frame is laid out (also
    when the cards are laid out anew for it), and the card sends the picture the screen would
    have drawn; with the maker gone, the screen draws the next ones itself."""
    fresh_pictures(monkeypatch)
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, graphics=Graphics(sixel=True, cell=(18, 36)))
    maker = app.pictures
    assert maker is not None

    async def new_call(label: str) -> BigLabel:
        """A call of its own (the last one long steady): one card, in the same box."""
        clock.advance(120)
        source.push(call(f"t-{label}", label, "q-pass", 2, clock.now))
        await wait_for(pilot, lambda: app.now_calling.shown_cards[0].big.label == label)
        await settled(app, pilot, source)
        big = app.now_calling.shown_cards[0].big
        sends_picture_drawn_here(big)
        return big

    async with app.run_test(size=(106, 30)) as pilot:
        # The first call starts the maker (it draws that one here, the maker not ready yet).
        for number in range(1, 8):
            await new_call(f"K{number:03d}")
            if maker.made:
                break
        assert maker.made, "no picture was made ahead"
        # Two calls at once after a steady one: two cards where there was one, laid out anew.
        made = maker.made
        clock.advance(120)
        cards = await shown_together(
            app,
            pilot,
            source,
            call("t-k201", "K201", "q-pass", 1, clock.now),
            call("t-k202", "K202", "q-civil", 3, clock.now),
        )
        await settled(app, pilot, source)
        for card in cards:
            sends_picture_drawn_here(card.big)
        assert maker.made == made + 2, "both pictures of the new layout were made ahead"
        process = maker._process
        assert process is not None
        process.kill()
        process.wait()
        made = maker.made
        await new_call("K100")
        await new_call("K101")
        assert maker.made == made, "with the maker gone, the screen drew them"


@pytest.mark.skipif(not two_cores(), reason="the picture maker runs on a second core")
@pytest.mark.parametrize("size", [(160, 50), (106, 30)])
async def test_every_cards_picture_is_asked_for_in_the_box_it_is_drawn_in(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Groups of 2 to 6 calls at once lay the cards out anew each time, in grids whose cards
    differ by a cell where the width does not divide evenly: once the maker is ready, every new
    label's picture is made ahead, none drawn by the screen in a box it did not foresee."""
    fresh_pictures(monkeypatch)
    clock, source = Clock(), FakeSource()
    app = calls_app(clock, source, graphics=Graphics(sixel=True, cell=(18, 36)))
    maker = app.pictures
    assert maker is not None
    async with app.run_test(size=size) as pilot:
        for count in range(2, 7):
            made = maker.made
            clock.advance(120)
            labels = [f"K{count}{index:02d}" for index in range(count)]
            source.push(*(call(f"t-{label}", label, "q-pass", 2, clock.now) for label in labels))

            def newest_shown(newest: str = labels[-1]) -> bool:
                return app.now_calling.shown_cards[0].big.label == newest

            await wait_for(pilot, newest_shown)
            await settled(app, pilot, source)
            cards = app.now_calling.shown_cards
            assert len(cards) == count
            for card in cards:
                sends_picture_drawn_here(card.big)
            if count > 2:  # the first group starts the maker
                assert maker.made == made + count, (size, count)


def sends_picture_drawn_here(big: BigLabel) -> None:
    """The card sends the picture the screen would have drawn of its label in its box."""
    body = picture_body(big._picture_key(*big._box()))
    assert body is not None
    image = sent_image(big)
    assert image is not None and image.endswith(body.decode("ascii")), big.label


def fresh_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    """No picture kept by an earlier test (the big labels' stores are the module's: a label
    another test drew in the same box would be found there, not asked for), and the maker's
    pictures waited for (a busy test machine may take longer than a frame's wait to make one)."""
    monkeypatch.setattr(big_label, "_IMAGES", DrawnCache(big_label._MAX_DRAWN))
    monkeypatch.setattr(big_label, "_BODIES", DrawnCache(big_label._MAX_DRAWN))
    monkeypatch.setattr(pictures, "WAIT_SECONDS", 30.0)

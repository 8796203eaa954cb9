"""What every part of the board shares: the locale on screen, and a framed panel that says how
fresh its numbers are (reconnecting, out of date since 14:05, not available)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Final, Generic, Protocol, TypeVar

from rich.align import Align
from rich.console import RenderableType
from rich.segment import Segment
from rich.text import Text
from textual.content import Content
from textual.geometry import Region
from textual.reactive import reactive
from textual.strip import Strip

from lobby_display import strings
from lobby_display.i18n import LocaleText
from lobby_display.models import pick_name
from lobby_display.updates import FeedStatus
from lobby_display.views import Freshness, HealthView
from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.repaint import RepaintsAtOnce

#: Drawn where a number is unknown: never a false zero.
UNKNOWN: str = "—"


@dataclass(frozen=True, slots=True)
class Shown:
    """What a widget needs to write in the locale on screen at one moment.

    `text` translates and formats; `fallback` lists the locales whose names stand in for a
    missing one (the place's language first, then the other locales of the screen).
    """

    text: LocaleText
    now: datetime
    fallback: Sequence[str] = ()

    @property
    def locale(self) -> str:
        """The locale on screen."""
        return self.text.locale

    def name(self, names: Mapping[str, str]) -> str:
        """The name to show from a locale map of names ("" when there is none)."""
        return pick_name(names, self.text.locale, self.fallback)

    def moment(self, moment: datetime) -> str:
        """A past moment in few words: its clock time today, else its day and time."""
        if self.text.local(moment).date() == self.text.local(self.now).date():
            return self.text.clock(moment)
        return self.text.date_time(moment)


def freshness_note(health: HealthView, shown: Shown) -> str:
    """The words a part of the screen carries about its freshness ("" while live)."""
    match health.freshness:
        case Freshness.LIVE:
            return ""
        case Freshness.RECONNECTING:
            if health.status is FeedStatus.CONNECTING:
                return shown.text.text(strings.CONNECTING)
            return shown.text.text(strings.RECONNECTING)
        case Freshness.STALE | Freshness.WITHDRAWN:
            since = health.down_since or shown.now
            return shown.text.text(strings.OUT_OF_DATE_SINCE, time=shown.moment(since))
    return ""


_FRESHNESS_CLASSES = {
    Freshness.LIVE: "-live",
    Freshness.RECONNECTING: "-reconnecting",
    Freshness.STALE: "-stale",
    Freshness.WITHDRAWN: "-withdrawn",
}


class Panel(RepaintsAtOnce):
    """A framed part of the board: its heading in the top border, its freshness in the bottom.

    Reconnecting parts carry a mark; stale parts are dimmed and say since when they are out of
    date; withdrawn parts show "Not available" instead of their numbers (subclasses check
    `withdrawn`). Headings and notes are set as `Content`, so no text is read as markup.
    """

    DEFAULT_CSS = """
    Panel {
        border: round $primary 60%;
        border-title-color: $primary;
        border-title-style: bold;
        border-subtitle-color: $warning;
        border-subtitle-style: bold;
        border-subtitle-align: right;
        padding: 0 1;
    }
    Panel.-stale {
        text-opacity: 45%;
        border: dashed $warning;
    }
    Panel.-withdrawn {
        border: dashed $warning;
    }
    """

    freshness: reactive[Freshness] = reactive(Freshness.LIVE)
    """How fresh the panel's numbers are."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._heading = ""
        self._note = ""
        self.add_class(_FRESHNESS_CLASSES[Freshness.LIVE])

    def watch_freshness(self, old: Freshness, new: Freshness) -> None:
        self.remove_class(_FRESHNESS_CLASSES[old])
        self.add_class(_FRESHNESS_CLASSES[new])
        self.refresh()

    @property
    def withdrawn(self) -> bool:
        """True when the numbers are too old to be shown."""
        return self.freshness is Freshness.WITHDRAWN

    def set_heading(self, heading: str) -> None:
        """The heading in the top border (literal text)."""
        if heading != self._heading:
            self._heading = heading
            self._set_border_text(heading, top=True)

    def show_health(self, health: HealthView, shown: Shown) -> None:
        """Mark the panel with its part's freshness, in words in the bottom border."""
        self.freshness = health.freshness
        note = freshness_note(health, shown)
        if note != self._note:
            self._note = note
            self._set_border_text(note, top=False)

    def _set_border_text(self, text: str, *, top: bool) -> None:
        """`text` in the top border (the heading) or the bottom one (the note), redrawing that
        border line alone.

        Textual's `border_title` redraws the whole panel, and with it every widget inside: at
        each locale rotation, every card of the calls and its picture, sent to the terminal
        again (issue 16's host: a rotation's first frame 15 ms of CPU against 9 for a call's).
        """
        content = Content(text) if text else None
        attribute = "_border_title" if top else "_border_subtitle"
        if content is None or not self.outer_size:
            # Not laid out yet (drawn whole anyway), or cleared: as Textual sets it.
            setattr(self, attribute[1:], content)
            return
        # As Textual's own setter keeps it: the first line, tabs expanded.
        setattr(self, attribute, self.render_str(content).expand_tabs(4).split()[0])
        left, top_gutter = self.content_offset
        width, height = self.outer_size
        line = 0 if top else height - 1
        # Refreshed regions are relative to the content: the border is outside it.
        self.refresh(Region(-left, line - top_gutter, width, 1))

    @property
    def note(self) -> str:
        """The freshness words shown in the bottom border ("" while live)."""
        return self._note


@dataclass(frozen=True, slots=True)
class _Message:
    """The lines of a `LinePanel` that shows a message alone: the text, how many lines it is
    centred in, and the component class it is drawn in the style of."""

    text: str
    height: int
    component: str


class PanelText(Protocol):
    """What a `LinePanel` says (its `content`): at least the message shown when it has no row."""

    @property
    def empty(self) -> str:
        """What the panel says when there is nothing to show ("No calls yet", "Not available")."""
        ...


ContentT = TypeVar("ContentT", bound=PanelText)
RowT = TypeVar("RowT", bound=Hashable)
LayoutT = TypeVar("LayoutT", bound=Hashable)

#: One line of a `LinePanel`: the row it belongs to (a hashable value that says everything the
#: row shows) and which line of that row it is.
LineKey = tuple[RowT, int]
#: Most rows a `LinePanel` keeps drawn (every page of a large board, and rows that changed).
MAX_DRAWN_ROWS: Final = 512
#: Rows `LinePanel.draw_ahead` draws in one turn of the loop (a queue row: about 0.5 ms on this
#: project's benchmark machine).
ROWS_AHEAD_PER_TURN: Final = 4
#: Rows kept drawn beyond twice those on screen (rows of other pages, rows that changed).
_SPARE_DRAWN_ROWS: Final = 32


class LinePanel(Panel, Generic[ContentT, RowT, LayoutT]):
    """A panel of rows of type `RowT`, drawn line by line, which redraws only the lines whose
    row changed.

    Textual draws a widget whole when it is refreshed, about 0.2 ms a line: a 40-line queue
    board costs 10 ms however little changed, and a burst of events pays it again and again.
    A subclass's `show` builds its `content` (a `ContentT`) and hands it to `show_content`; the
    panel asks `lines_of` what each line shows (a row and a line of that row, and the layout the
    rows are drawn with; None: the content's `empty` message, in `MESSAGE_COMPONENT`'s style),
    again at each resize, and draws each row once with `draw_row`. It refreshes the lines whose
    row differs from the one on screen, and keeps the drawn rows until the layout, the width or
    the styles change.
    """

    MESSAGE_COMPONENT: ClassVar[str] = ""
    """The component class whose style the message is drawn in."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.content: ContentT | None = None
        """What the panel says; set by `show_content`."""
        self._line_keys: tuple[LineKey[RowT | _Message], ...] = ()
        self._row_layout: LayoutT | _Message | None = None
        self._drawn: DrawnCache[RowT | _Message, list[Strip]] = DrawnCache(MAX_DRAWN_ROWS)
        self._drawn_with: Hashable = None
        # Rows drawn ahead with another layout (`drawn_for`), and what with.
        self._drawn_ahead: DrawnCache[RowT | _Message, list[Strip]] = DrawnCache(MAX_DRAWN_ROWS)
        self._drawn_ahead_with: Hashable = None
        # Rows drawn ahead for the current drawing key (`draw_ahead`): kept until they are shown.
        self._kept_ahead: frozenset[RowT] = frozenset()
        # Within `render_lines`: the drawing key is followed, and the blank line once drawn.
        self._key_followed = False
        self._blank: Strip | None = None

    # --- what a subclass says --------------------------------------------------------------

    def lines_of(self, content: ContentT) -> tuple[Sequence[LineKey[RowT]], LayoutT] | None:
        """What each line shows (top to bottom) and the layout the rows are drawn with, at the
        current size; None to show `content.empty` instead."""
        raise NotImplementedError

    def draw_row(self, row: RowT, layout: LayoutT) -> list[Strip]:
        """The lines of `row`, drawn with `layout` at the current width and styles."""
        raise NotImplementedError

    def fit_content(self) -> None:
        """Called before the lines are asked for, when the content or the size changed (a
        subclass that arranges its rows for the size does it here)."""

    # --- the template ----------------------------------------------------------------------

    def show_content(self, content: ContentT) -> None:
        """Show `content`, redrawing the lines that changed."""
        self.content = content
        self.fit_content()
        self.show_rows()

    def on_resize(self) -> None:
        self.fit_content()
        self.show_rows()

    def empty_text(self, shown: Shown, nothing: str) -> str:
        """The message of a panel without rows: "Not available" when withdrawn, else
        `nothing` ("No counters", say), in the locale on screen."""
        return shown.text.text(strings.NOT_AVAILABLE if self.withdrawn else nothing)

    def show_rows(self) -> None:
        """The lines of the current content at the current size, or its message."""
        content = self.content
        if content is None:
            return
        lines = self.lines_of(content)
        if lines is None:
            height = max(self.size.height, 1)
            message = _Message(content.empty, height, self.MESSAGE_COMPONENT)
            self._show_lines([(message, y) for y in range(height)], message)
        else:
            self._show_lines(*lines)

    def _show_lines(
        self, lines: Sequence[LineKey[RowT | _Message]], layout: LayoutT | _Message
    ) -> None:
        old, new = self._line_keys, tuple(lines)
        self._line_keys = new
        if len(self._drawn) > 2 * len(new) + _SPARE_DRAWN_ROWS:
            # Keep the rows on screen (and those drawn ahead for the next turn): a busy day
            # would otherwise fill the store with rows that changed long ago.
            shown = {row for row, _ in new} | self._kept_ahead
            for row in set(self._drawn.keys()) - shown:
                self._drawn.discard(row)
        width = self.size.width
        if layout != self._row_layout or not width:
            self._row_layout = layout
            self.refresh()
            return
        start: int | None = None
        for y in range(max(len(old), len(new)) + 1):
            changed = y < max(len(old), len(new)) and (
                y >= len(old) or y >= len(new) or old[y] != new[y]
            )
            if changed and start is None:
                start = y
            elif not changed and start is not None:
                self.refresh(Region(0, start, width, y - start))
                start = None

    @property
    def row_layout(self) -> LayoutT | None:
        """The layout the rows are drawn with (None while a message is shown)."""
        layout = self._row_layout
        return None if isinstance(layout, _Message) else layout

    def _draw(self, row: RowT | _Message) -> list[Strip]:
        if isinstance(row, _Message):
            style = self.get_component_rich_style(row.component, partial=True)
            return self.render_rows(
                Align.center(Text(row.text, style=style), vertical="middle", height=row.height)
            )
        layout = self._row_layout
        # A row's lines are shown with the layout they came with (`show_rows`).
        assert layout is not None and not isinstance(layout, _Message)
        return self.draw_row(row, layout)

    def render_rows(self, renderable: RenderableType, width: int | None = None) -> list[Strip]:
        """`renderable` drawn at the panel's width (or `width` cells), as Textual draws a
        widget's content (the panel's own style under each segment), one strip a line."""
        width = self.size.width if width is None else width
        options = self.app.console_options.update(highlight=False, width=width)
        segments = self.app.console.render(renderable, options)
        return self.strips(
            Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False)
        )

    def strips(self, lines: Iterable[list[Segment]]) -> list[Strip]:
        """Lines of segments as strips, with the panel's own style under each segment (as
        Textual draws a widget's content)."""
        base = self.visual_style.rich_style
        return [Strip(Segment.apply_style(line, base)) for line in lines]

    def drawn_key(self, layout: Hashable) -> Hashable:
        """All that rows drawn with `layout` depend on: they are drawn again when it changes
        (the layout, the width, the panel's styles, the theme)."""
        return (layout, self.size.width, self.visual_style.rich_style, self.app.theme)

    def drawn_for(self, layout: LayoutT) -> DrawnCache[RowT | _Message, list[Strip]]:
        """Where to keep rows drawn ahead with `layout` (at the current width and styles), to
        be shown once the content comes with that layout (a locale's turn, say)."""
        drawn_with = self.drawn_key(layout)
        if drawn_with == self._drawn_with:
            return self._drawn
        if drawn_with != self._drawn_ahead_with:
            self._drawn_ahead.clear()
            self._drawn_ahead_with = drawn_with
        return self._drawn_ahead

    def draw_content_ahead(self, content: ContentT) -> None:
        """Draw the lines of `content` (the next locale's, say) ahead of its turn (`draw_ahead`):
        once it is shown, its lines are not drawn again. Nothing while the panel is withdrawn
        or not laid out."""
        if self.withdrawn or not self.size.width:
            return
        lines = self.lines_of(content)
        if lines is not None:
            self.draw_ahead(*lines)

    def draw_ahead(
        self,
        lines: Iterable[LineKey[RowT]],
        layout: LayoutT,
        draw: Callable[[RowT], list[Strip]] | None = None,
    ) -> None:
        """Draw the rows of `lines` not yet drawn with `layout` (with `draw`, else `draw_row`),
        and keep them (`drawn_for`): once the content comes with that layout (a locale's turn,
        say), they are shown without being drawn again.

        `ROWS_AHEAD_PER_TURN` rows a turn of the loop: a page of the queue board is tens of
        rows, and a call that comes meanwhile is drawn after the few rows under way, not after
        the whole page."""
        rows = tuple(row for row, _ in lines)
        # Drawn with the rows on screen (a page of the same layout), they are kept with them
        # until the turn; the rows of another layout have a store of their own.
        self._kept_ahead = frozenset(rows) if self.drawn_for(layout) is self._drawn else frozenset()
        self._draw_ahead_from(rows, 0, layout, draw)

    def _draw_ahead_from(
        self,
        rows: tuple[RowT, ...],
        start: int,
        layout: LayoutT,
        draw: Callable[[RowT], list[Strip]] | None,
    ) -> None:
        """Draw up to `ROWS_AHEAD_PER_TURN` of `rows` from `start` (those not drawn yet), and
        the rest at the next turn of the loop."""
        if not self.is_attached:
            return
        # Asked again at each turn: the store that matches the styles and width of now (a new
        # theme meanwhile clears it, and rows drawn with the old one must not go in).
        drawn = self.drawn_for(layout)
        index, count = start, 0
        while index < len(rows) and count < ROWS_AHEAD_PER_TURN:
            row = rows[index]
            index += 1
            if drawn.get(row) is None:
                drawn.set(row, self.draw_row(row, layout) if draw is None else draw(row))
                count += 1
        if index < len(rows):
            self.call_later(self._draw_ahead_from, rows, index, layout, draw)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines of `crop`, with the rows' drawing key (`drawn_key`) asked once for all of
        them: asked for each line, the width (a walk up to the screen), the style and the theme
        cost more than finding the line's row drawn (a call redraws the recent calls' lines)."""
        self._follow_drawn_key()
        self._key_followed = True
        try:
            return super().render_lines(crop)
        finally:
            self._key_followed = False
            self._blank = None

    def render_line(self, y: int) -> Strip:
        """Line `y`: its row's line, drawn once and kept."""
        if not self._key_followed:
            self._follow_drawn_key()
        if y < len(self._line_keys):
            row, index = self._line_keys[y]
            strips = self._drawn.get(row)
            if strips is None:
                strips = self._draw(row)
                self._drawn.set(row, strips)
            if index < len(strips):
                return strips[index]
        blank = self._blank
        if blank is None:
            blank = Strip.blank(self.size.width, self.visual_style.rich_style)
            if self._key_followed:
                self._blank = blank
        return blank

    def _follow_drawn_key(self) -> None:
        """Keep the rows drawn with what they depend on now (`drawn_key`): those drawn ahead
        for it, else none."""
        drawn_with = self.drawn_key(self._row_layout)
        if drawn_with != self._drawn_with:
            if drawn_with == self._drawn_ahead_with:
                # The rows drawn ahead for this layout (`drawn_for`) become those on screen.
                self._drawn, self._drawn_ahead = self._drawn_ahead, self._drawn
                self._drawn_ahead_with = self._drawn_with
            else:
                self._drawn.clear()
            self._drawn_with = drawn_with

    def notify_style_update(self) -> None:
        # A new theme or freshness changes the colours the rows were drawn with.
        self._drawn_with = self._drawn_ahead_with = None
        super().notify_style_update()


__all__ = [
    "MAX_DRAWN_ROWS",
    "UNKNOWN",
    "LineKey",
    "LinePanel",
    "Panel",
    "PanelText",
    "Shown",
    "freshness_note",
]

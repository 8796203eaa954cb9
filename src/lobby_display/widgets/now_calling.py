"""The "now calling" area: the ticket just called, in big letters, and the counter to go to.

Several calls of the same moment share the space (a grid of cards, sized so the labels stay as
large as they can). A new call or a recall is highlighted in a strong colour for the configured
time, then stays on, steady, until the next call.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ClassVar, Final

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.reactive import reactive
from textual.strip import Strip

from lobby_display import strings
from lobby_display.graphics.pictures import PictureMaker
from lobby_display.graphics.raster import fitted_size
from lobby_display.graphics.terminal import Graphics
from lobby_display.views import CallView, HealthView, NowCalling
from lobby_display.widgets.big_label import BigLabel
from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.panel import Panel, Shown
from lobby_display.widgets.repaint import RepaintedContainer, RepaintsAtOnce
from lobby_display.widgets.sized import sized_in_one_layout

#: Lines of cards kept drawn (`_Line.render_lines`): a card's counter and recall lines, in and
#: out of the highlight, for the cards of a burst of calls and a few more.
MAX_DRAWN_LINES: Final = 64
_LINES: Final[DrawnCache[object, list[Strip]]] = DrawnCache(MAX_DRAWN_LINES)

#: Most cards drawn at once (the board never highlights more calls than this together).
MAX_CARDS = 6

#: How long the calls stay at a size a wider label needed after the last such label: they
#: shrink at once for a wider label, and grow back only after this long without one.
SIZE_MEMORY: Final = timedelta(minutes=10)
#: Card sizes whose size is remembered (one per number of cards and columns; a resize adds more).
MAX_KEPT_SIZES: Final = 16


@dataclass(frozen=True, slots=True)
class CallCardText:
    """What one card says, in the locale on screen."""

    label: str
    counter: str
    """"Please go to Desk 3" ("" when the counter is not known)."""
    counter_name: str
    """"Desk 3" alone: shown instead of the sentence when the sentence does not fit a line."""
    recall: str
    """"Called again" for a recall, else ""."""
    highlighted: bool


def call_card_text(view: CallView, highlighted: bool, shown: Shown) -> CallCardText:
    """The words of the card of one call."""
    counter = shown.name(view.call.counter_names)
    return CallCardText(
        label=view.call.label,
        counter=shown.text.text(strings.GO_TO_COUNTER, counter=counter) if counter else "",
        counter_name=counter,
        recall=shown.text.text(strings.RECALLED) if view.call.is_recall else "",
        highlighted=highlighted,
    )


class _Line(RepaintsAtOnce):
    """A line of literal text that changes only when its text does.

    A new text redraws the line alone; the screen is laid out again only when the line appears,
    goes, or wraps differently (a layout redraws every card, several milliseconds a call). A
    line that `keeps_place` stays, blank, while it has no text: a card's recall mark comes and
    goes with the calls moving from card to card, and must not lay the screen out each time.
    """

    DEFAULT_CSS = """
    _Line {
        width: 100%;
        height: auto;
        min-height: 1;
    }
    """

    virtual_size = sized_in_one_layout()

    def __init__(self, classes: str, *, keeps_place: bool = False) -> None:
        super().__init__(classes=classes)
        self._text = ""
        self._keeps_place = keeps_place
        self.display = keeps_place

    def set_text(self, text: str) -> None:
        old = self._text
        if text == old:
            return
        self._text = text
        if not self._keeps_place:
            self.display = bool(text)
        width = self.content_size.width
        wraps = width <= 0 or cell_len(text) > width or cell_len(old) > width
        self.refresh(layout=wraps)

    def render(self) -> Content:
        """The text, literally."""
        return Content(self._text)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines Textual draws for this text in this box and these colours, shared by
        every card's line: a call moves each text to the next card, at the same size, and
        drawing it again cost a call's frame a quarter of its time (this host: 2.9 of 12.5 ms,
        eight lines)."""
        key = (
            self._text,
            self.region.size,
            crop,
            self.visual_style,
            self.background_colors,
            self.classes,
        )
        lines = _LINES.get(key)
        if lines is None:
            lines = super().render_lines(crop)
            _LINES.set(key, lines)
        return lines

    @property
    def text(self) -> str:
        """The text shown."""
        return self._text


class CallCard(Vertical, RepaintsAtOnce):
    """One called ticket: its label (big), the counter to go to, and "called again" if so."""

    DEFAULT_CSS = """
    CallCard {
        width: 1fr;
        height: 1fr;
        padding: 0 1;
    }
    CallCard > BigLabel {
        color: $accent;
    }
    CallCard > .counter {
        width: 100%;
        height: auto;
        text-align: center;
        text-style: bold;
    }
    CallCard > .recall {
        width: 100%;
        height: auto;
        text-align: center;
        text-style: italic;
    }
    CallCard > .call-card--highlight {
        background: $warning;
        color: $background;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"call-card--highlight"}
    """`call-card--highlight`: the card's background and its words' colour while highlighted."""

    highlighted: reactive[bool] = reactive(False)
    """True while the call is new (or recalled): the card stands out."""
    virtual_size = sized_in_one_layout()

    def __init__(self) -> None:
        super().__init__()
        self.big = BigLabel()
        # The label box (`_label_box`) leaves both lines their place: they never move the label.
        self.counter = _Line("counter", keeps_place=True)
        self.recall = _Line("recall", keeps_place=True)
        self._text: CallCardText | None = None

    def compose(self) -> ComposeResult:
        # The recall mark under the label and the counter at the card's foot: without a recall
        # its blank line parts the label from the counter.
        yield self.big
        yield self.recall
        yield self.counter

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def watch_highlighted(self, highlighted: bool) -> None:
        self._colour(highlighted)

    def _theme_changed(self, _theme: object) -> None:
        if self.highlighted:
            self._colour(True)

    def _colour(self, highlighted: bool) -> None:
        # Set inline, from the component class: a CSS class on the card made Textual match the
        # whole stylesheet again for the card and its three parts, at each highlight and at its
        # end (2.6 ms, against 0.3 ms inline, on this project's benchmark machine: 5 % of a
        # quiet day's CPU with 30 queues). The colours still come from the stylesheet and its
        # theme, read again when the theme changes.
        background = color = None
        if highlighted:
            colours = self.get_component_styles("call-card--highlight")
            background, color = colours.background, colours.color
        self.styles.background = background
        for part in (self.big, self.recall, self.counter):
            part.styles.color = color

    def show(self, text: CallCardText) -> None:
        """Show one call."""
        if text == self._text:
            return
        self._text = text
        self.big.label = text.label
        self._fit_counter()
        self.recall.set_text(text.recall)
        self.highlighted = text.highlighted

    def on_resize(self) -> None:
        self._fit_counter()

    def _fit_counter(self) -> None:
        # A sentence broken over two lines reads badly from afar ("Please go to Desk" / "3"):
        # when it does not fit one line, the counter's name alone says what matters. A card
        # not laid out yet (shown for the first time) takes the name: the sentence, wrapped
        # in its first frame, drew its label smaller, then again at its size a frame later.
        text = self._text
        if text is None:
            return
        width = self.content_size.width
        fits = width > 0 and cell_len(text.counter) <= width
        self.counter.set_text(text.counter if fits else text.counter_name)

    @property
    def text(self) -> CallCardText | None:
        """What the card shows (None before its first call)."""
        return self._text


class NowCallingPanel(Panel):
    """The latest call(s), large; "No calls yet" before the first, "Not available" when the
    tickets feed has been down too long to trust."""

    DEFAULT_CSS = """
    NowCallingPanel {
        height: 1fr;
    }
    NowCallingPanel > #cards {
        layout: grid;
        grid-size: 1 1;
        grid-gutter: 1 2;
        height: 1fr;
    }
    NowCallingPanel > .message {
        width: 100%;
        height: 1fr;
        content-align: center middle;
        text-style: bold;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.cards = [CallCard() for _ in range(MAX_CARDS)]
        for card in self.cards:
            card.display = False
        self.message = _Line("message")
        self._grid = RepaintedContainer(*self.cards, id="cards")
        self._labels: tuple[str, ...] = ()
        self._row_height = -1
        self._label_cells = (0, 0)
        """The cells each card's label is drawn in, in the layout `_arrange` made last."""
        self._steady = SteadySize()
        self._last: tuple[NowCalling, HealthView, Shown] | None = None
        self.graphics = Graphics()
        """How the cards draw their labels (see `set_graphics`)."""

    def set_graphics(self, graphics: Graphics) -> None:
        """Draw every card's label the way `graphics` says (sixel or a mosaic, the cell size)."""
        self.graphics = graphics
        for card in self.cards:
            card.big.set_graphics(graphics)
        self._arrange()

    def set_picture_maker(self, pictures: PictureMaker | None) -> None:
        """Have the cards' pictures made ahead by `pictures` (None: drawn with the frame)."""
        for card in self.cards:
            card.big.pictures = pictures

    def compose(self) -> ComposeResult:
        yield self._grid
        yield self.message

    def show(self, now_calling: NowCalling, health: HealthView, shown: Shown) -> None:
        """Show the calls of `now_calling` (newest first), marked with their part's health."""
        self._last = (now_calling, health, shown)
        self.set_heading(shown.text.text(strings.NOW_CALLING))
        self.show_health(health, shown)
        calls = () if self.withdrawn else now_calling.calls[:MAX_CARDS]
        # On a small screen, only the newest calls that fit readably (the rest are listed in
        # the recent calls): a card squeezed to nothing would hide the call just made.
        width, height = self.content_size
        labels = tuple(view.call.label for view in calls)
        calls = calls[: cards_that_fit(labels, width, height - 1, self.graphics)]
        if self.withdrawn:
            self.message.set_text(shown.text.text(strings.NOT_AVAILABLE))
        elif not calls:
            self.message.set_text(shown.text.text(strings.NO_CALLS_YET))
        else:
            self.message.set_text("")
        self._grid.display = bool(calls)
        labels = tuple(view.call.label for view in calls)
        if labels != self._labels:
            self._labels = labels
            self._arrange()
            # A new call's picture is made on the other core while its frame is worded and laid
            # out, from here on (`BigLabel.ask_picture`), in the box of the cards' new layout.
            for card, label in zip(self.cards, labels, strict=False):
                card.big.ask_picture(label, self._label_cells)
        for index, card in enumerate(self.cards):
            if index < len(calls):
                view = calls[index]
                highlighted = now_calling.highlighted and view.highlighted(shown.now)
                card.show(call_card_text(view, highlighted, shown))
                card.display = True
            else:
                card.display = False

    def on_resize(self) -> None:
        if self._last is not None:
            self.show(*self._last)  # how many cards fit depends on the size
        self._arrange()

    def _arrange(self) -> None:
        """Share the space among the cards so the labels are drawn as large as they can be."""
        count = max(len(self._labels), 1)
        width, height = self.content_size
        columns = best_columns(self._labels, width, height - 1, self.graphics)
        rows = math.ceil(count / columns)
        # Every row as high as the others (the lines left over stay below): shared as fractions,
        # the newest call's row could get a line less and lose its big letters.
        row_height = (height - (rows - 1)) // rows if rows > 1 else 0
        styles = self._grid.styles
        if (
            styles.grid_size_columns != columns
            or styles.grid_size_rows != rows
            or self._row_height != row_height
        ):
            self._row_height = row_height
            styles.grid_size_columns = columns
            styles.grid_size_rows = rows
            styles.grid_rows = str(row_height) if row_height > 0 else "1fr"
        box = image_box(len(self._labels), columns, width, height - 1)
        # A single card fills the panel (its grid takes the message's line too).
        self._label_cells = box or _label_box(1, 1, width, height)
        shared = shared_size(self._labels, columns, width, height - 1, self.graphics)
        if self._last is not None:
            shared = self._steady.settle(shared, box, self._last[2].now)
        for card in self.cards:
            card.big.set_max_size(shared)
            card.big.set_image_box(box)

    @property
    def shown_cards(self) -> list[CallCard]:
        """The cards on screen, newest call first."""
        return [card for card in self.cards if card.display]


def _cell(count: int, columns: int, width: int, height: int) -> tuple[int, int]:
    """Width and height of one card when `count` cards take `columns` columns of the grid, which
    leaves a line between rows and two cells between columns; the card's own padding is off."""
    rows = math.ceil(count / columns)
    return (width - 2 * (columns - 1)) // columns - 2, (height - (rows - 1)) // rows


def _readable(labels: tuple[str, ...], columns: int, width: int, height: int) -> bool:
    """Each card has two lines (the label as text, the counter) and the label's width."""
    cell_width, cell_height = _cell(len(labels), columns, width, height)
    return cell_height >= 2 and cell_width >= max(cell_len(label) for label in labels)


def _label_box(count: int, columns: int, width: int, height: int) -> tuple[int, int]:
    """The cells a label is drawn in, in each of `count` cards in `columns` columns (see
    `_cell`): the card less its counter and recall lines."""
    card_width, card_height = _cell(count, columns, width, height)
    return card_width, card_height - 2


def _label_size(label: str, box: tuple[int, int], graphics: Graphics) -> int:
    """The font size (pixels) `label` is drawn at in a label box of `box` cells (width, height;
    see `_label_box`) for the cells of `graphics`; 0: not drawn."""
    box_width, box_height = box
    pixels_wide, pixels_high = graphics.cell
    return fitted_size(
        label, box_width * pixels_wide, box_height * pixels_high, graphics.cjk_locale
    )


def _drawn(
    labels: tuple[str, ...], columns: int, width: int, height: int, graphics: Graphics
) -> bool:
    """Each card's label box (the card less its counter and recall lines) is tall enough for a
    drawing (`Graphics.min_rows`) and every label fits it legibly (`Graphics.legible`)."""
    box = _label_box(len(labels), columns, width, height)
    if box[1] < graphics.min_rows:
        return False
    return all(graphics.legible(_label_size(label, box, graphics)) for label in labels)


# Asked at every change of the calls with the same few labels and sizes: measured once.
@functools.lru_cache(maxsize=64)
def cards_that_fit(labels: tuple[str, ...], width: int, height: int, graphics: Graphics) -> int:
    """How many of `labels` (newest first) get a card in `width` x `height`: as many as can each
    have their label drawn (see `_drawn`), so the call just made is never left as plain text;
    where not even one can, as many as can each be read as text (see `_readable`); at least
    one. Before the panel has a size (0 x 0), all of them."""
    if width <= 0 or height <= 0:
        return len(labels)
    for count in range(len(labels), 0, -1):
        shown = labels[:count]
        if any(_drawn(shown, columns, width, height, graphics) for columns in range(1, count + 1)):
            return count
    for count in range(len(labels), 1, -1):
        shown = labels[:count]
        if any(_readable(shown, columns, width, height) for columns in range(1, count + 1)):
            return count
    return min(1, len(labels))


def shared_size(
    labels: tuple[str, ...], columns: int, width: int, height: int, graphics: Graphics
) -> int:
    """The font size (pixels) at which all of `labels` fit their cards in `columns` columns of
    `width` x `height`, so the calls of one moment are drawn alike (a "C7" beside a "D0042" is
    not twice its size); 0 (each as large as it fits) for a single call."""
    if len(labels) <= 1 or width <= 0 or height <= 0:
        return 0
    box = _label_box(len(labels), columns, width, height)
    sizes = [_label_size(label, box, graphics) for label in labels]
    return steady_size(min((size for size in sizes if size), default=0))


def image_box(count: int, columns: int, width: int, height: int) -> tuple[int, int] | None:
    """The cells each of `count` labels is drawn in (the box `shared_size` fits them to), the
    same in every card (None for a single call: as large as its card)."""
    if count <= 1 or width <= 0 or height <= 0:
        return None
    return _label_box(count, columns, width, height)


#: The font sizes calls shown together are drawn at: each about 8 % above the one below.
SIZE_STEPS: Final = tuple(sorted({round(8 * 1.08**step) for step in range(64)}))


def steady_size(size: int) -> int:
    """`size` down to the step below it (`SIZE_STEPS`): as calls come and go, the smallest
    fitting size moves by a few pixels with each label's width; on a step the labels stay as
    they are (no size jitter from call to call, and their pictures are drawn once)."""
    return max((step for step in SIZE_STEPS if step <= size), default=size)


@dataclass(slots=True)
class SteadySize:
    """The size the calls shown together are drawn at, kept while a label recently needed it.

    A place mixes labels of several widths ("K035", "AB-048"): at the size the labels of the
    moment fit, every card would shrink when a wide one came and grow when it left six calls
    later, all at once (from across the room the board seems to jump), and each time every
    card's picture would be drawn and sent anew in the frame of the call that caused it. So
    the size falls at once for a wider label and rises only after `SIZE_MEMORY` without one,
    for each size of card (the cards are larger when fewer calls share the space).
    """

    kept: dict[tuple[int, int], tuple[int, datetime]] = field(default_factory=dict)
    """By label box (cells): the size drawn at in it, and until when it is kept."""

    def settle(self, fitting: int, box: tuple[int, int] | None, now: datetime) -> int:
        """The size to draw at in `box` at `now`, given the size the labels of the moment fit
        (`shared_size`; 0 and a box of None for a single call, as large as it fits)."""
        if box is None or not fitting:
            return fitting
        kept = self.kept.pop(box, None)
        if kept is not None:
            size, until = kept
            # A clock set back would otherwise keep a small size for as long as it went back.
            if until - SIZE_MEMORY <= now < until and size < fitting:
                self.kept[box] = kept
                return size
        # Smaller, needed again, or the first in this box: kept from now on.
        self.kept[box] = (fitting, now + SIZE_MEMORY)
        while len(self.kept) > MAX_KEPT_SIZES:
            del self.kept[next(iter(self.kept))]  # the box set longest ago
        return fitting


@functools.lru_cache(maxsize=64)
def best_columns(labels: tuple[str, ...], width: int, height: int, graphics: Graphics) -> int:
    """How many columns of cards draw the longest of `labels` largest in `width` x `height`.

    Each card keeps two cells of padding and two lines for the counter and the recall mark; the
    label's size is the font size it is drawn at in the rest, for the cells of `graphics`.
    At the same size, a layout where every card stays readable (see `_readable`) wins; at a
    full tie, fewer columns (cards stacked), which leaves the counter names more room.
    """
    count = len(labels)
    if count <= 1 or width <= 0 or height <= 0:
        return 1
    longest = max(labels, key=len)
    best, best_score = 1, (-1, False)
    for columns in range(1, count + 1):
        size = _label_size(longest, _label_box(count, columns, width, height), graphics)
        score = (size, _readable(labels, columns, width, height))
        if score > best_score:
            best, best_score = columns, score
    return best


__all__ = [
    "MAX_CARDS",
    "CallCard",
    "CallCardText",
    "NowCallingPanel",
    "SteadySize",
    "best_columns",
    "cards_that_fit",
    "shared_size",
]

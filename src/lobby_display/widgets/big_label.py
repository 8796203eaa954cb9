"""A ticket label drawn large from a real typeface, filling its box: a sixel image or a mosaic.

Rasterised by `graphics.raster` in the card's colours: sixel laid over blank cells where the
terminal shows it, else (and in screenshots) a sub-cell mosaic; plain bold text when it cannot
be drawn. Why: docs/architecture.md (the screen).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Final

from rich.control import Control
from rich.segment import ControlType, Segment
from textual.app import RenderResult
from textual.color import Color
from textual.content import Content
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.visual import Visual, visualize

from lobby_display.graphics import sixel
from lobby_display.graphics.mosaic import mosaic
from lobby_display.graphics.pictures import PictureKey, PictureMaker, picture_body
from lobby_display.graphics.raster import drawable, fitted_size
from lobby_display.graphics.terminal import Graphics
from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.repaint import RepaintsAtOnce
from lobby_display.widgets.sized import sized_in_one_layout


class BigLabel(RepaintsAtOnce):
    """A ticket label as large as the widget, in the widget's colours."""

    DEFAULT_CSS = """
    BigLabel {
        width: 1fr;
        height: 1fr;
        content-align: center middle;
        text-style: bold;
    }
    """

    label: reactive[str] = reactive("")
    """The text shown (a ticket label such as `K017`); drawn literally, never as markup."""
    virtual_size = sized_in_one_layout()

    def __init__(
        self,
        label: str = "",
        *,
        graphics: Graphics | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(BigLabel.label, label)
        self.graphics = graphics if graphics is not None else Graphics()
        """How the label is drawn (sixel or which mosaic, the cell size); see `set_graphics`."""
        self._partial: Region | None = None
        self._rendering: tuple[Size, list[Strip]] | None = None
        """For a render of the drawing under way (no image): the widget's size and the lines
        drawn at it, found once by `render_lines` (asking per line cost more than drawing the
        lines: the size is a walk up to the screen)."""
        self.image_box: tuple[int, int] | None = None
        """The largest box (cells) the image is drawn in; see `set_image_box`."""
        self.max_size = 0
        """The largest font size (pixels) the label may be drawn at; 0: as large as it fits.
        Labels shown together share one size (see `set_max_size`)."""
        self.pictures: PictureMaker | None = None
        """Where pictures asked for ahead are made (`ask_picture`); None: always drawn here."""

    def set_image_box(self, box: tuple[int, int] | None) -> None:
        """Draw the image no larger than `box` cells (width, height), centred in the widget.

        Labels shown together get the same box: cards of a grid differ by a cell where the
        width does not divide evenly, and a label that moves from card to card would otherwise
        be drawn and encoded again for each width. None: the widget's own size.
        """
        if box != self.image_box:
            self.image_box = box
            self.refresh()

    def set_max_size(self, size: int) -> None:
        """Draw the label no larger than `size` pixels (0: as large as the box allows)."""
        if size != self.max_size:
            self.max_size = size
            self.refresh()

    def set_graphics(self, graphics: Graphics) -> None:
        """Draw the label the way `graphics` says from the next frame on."""
        if graphics != self.graphics:
            self.graphics = graphics
            self.refresh()

    @property
    def mosaic_rows(self) -> list[str] | None:
        """The mosaic rows drawn for the current size, or None when plain text is shown."""
        width, height = self.size
        graphics = replace(self.graphics, sixel=False)
        if not graphics.legible(self._drawn_size(graphics)):
            return None
        return mosaic(
            self.label,
            width,
            height,
            graphics.mosaic,
            graphics.cell,
            graphics.cjk_locale,
            self.max_size,
        )

    @property
    def shows_image(self) -> bool:
        """Whether the label is sent as a sixel image over blank cells (not in screenshots)."""
        return self.graphics.sixel and not _screenshot and self._sixel() is not None

    def _drawn_size(
        self, graphics: Graphics, box: tuple[int, int] | None = None, label: str | None = None
    ) -> int:
        """The font size (pixels) the label (or `label`) is drawn at in `box` (cells; the
        widget's size by default) for `graphics`' cells."""
        width, height = self.size if box is None else box
        if height < graphics.min_rows:
            return 0
        cell_width, cell_height = graphics.cell
        size = fitted_size(
            self.label if label is None else label,
            width * cell_width,
            height * cell_height,
            graphics.cjk_locale,
        )
        return min(size, self.max_size) if self.max_size else size

    def render(self) -> RenderResult:
        """Blank cells under the image; else the mosaic when the label can be drawn at this
        size; else the text itself."""
        as_image = self.shows_image
        return self._content(as_image, None if as_image else self.mosaic_rows)

    def _content(self, as_image: bool, rows: list[str] | None) -> Content:
        """What `render` shows, given the mosaic's `rows` (None: not drawn as one)."""
        if as_image:
            return Content("")
        if rows is None:
            # Content(...) keeps "[bold]" and the like literal: a label is data, not markup.
            return Content(self.label)
        return Content("\n".join(rows))

    def render_line(self, y: int) -> Strip:
        """Line `y` of the label as drawn at this size and in these colours."""
        if self._rendering is None:
            size = self.size
            return self._line(self._lines(self.shows_image, size), y, size)
        size, lines = self._rendering
        return self._line(lines, y, size)

    def _line(self, lines: list[Strip], y: int, size: Size) -> Strip:
        """Line `y` of `lines` (drawn at `size`), or a blank line past them."""
        if y < len(lines):
            return lines[y]
        return Strip.blank(size.width, self.visual_style.rich_style)

    def _lines(self, as_image: bool, size: Size | None = None) -> list[Strip]:
        """The lines of the cells under the image (`as_image`, blank) or of the drawing itself,
        at `size` (the widget's by default: asking for it walks up to the screen).

        Drawn lines are shared by every big label: during a burst of calls each label moves
        from card to card at the same size, and drawing it costs more than the rest of a frame.
        """
        width, height = self.size if size is None else size
        style = self.visual_style
        # The cells under an image are blank whatever the label: one drawing for every label.
        key = (
            (width, height, style)
            if as_image
            else (self.label, width, height, style, self.graphics, self.max_size)
        )
        lines = _DRAWN.get(key)
        if lines is None:
            rows = None if as_image else self.mosaic_rows
            if rows is not None:
                # A mosaic fills its box exactly, a line a row in the label's style: what
                # Textual draws of it, without laying its text out again (images off, 8 % of
                # the frames' time at 10 events/s went there).
                rich_style = style.rich_style
                lines = [Strip([Segment(row, rich_style)]) for row in rows]
            else:
                visual = visualize(self, self._content(as_image, rows), markup=False)
                lines = Visual.to_strips(self, visual, width, height, style)
            _DRAWN.set(key, lines)
        return lines

    def _drawing(self, crop: Region, size: Size | None = None) -> list[Strip]:
        """The lines of `crop` with the label drawn in the cells (no image), past the lines
        Textual keeps (those are blank under an image), at `size` (the widget's by default)."""
        size = self.size if size is None else size
        lines = self._lines(False, size)
        return [self._line(lines, y, size).crop(crop.x, crop.right) for y in crop.line_range]

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines of `crop`; with sixel, the image follows the box's last line.

        The image is sent only when the whole box is drawn in this frame: cells drawn over part
        of it would cut holes the image does not cover. A partial redraw draws the label in the
        cells (never a blank card) and asks once for a whole one.
        """
        if _screenshot:
            return self._drawing(crop)
        # The widget's size once for the whole render: asking for it walks up to the screen.
        size = self.size
        image = self._sixel(size) if self.graphics.sixel else None
        if image is None:
            self._rendering = (size, self._lines(False, size))
            try:
                return super().render_lines(crop)
            finally:
                self._rendering = None
        return self._render_lines(crop, image, size)

    def _render_lines(self, crop: Region, image: str, size: Size) -> list[Strip]:
        width, height = size
        if crop != Region(0, 0, width, height):
            # Asked once per partial crop: a card clipped by its container (a layout that
            # does not fit) is drawn with the same crop every frame and would refresh forever.
            if crop != self._partial:
                self._partial = crop
                self.refresh()
            return self._drawing(crop, size)
        self._partial = None
        # The cells under the image straight from the shared drawing: they are blank, in the
        # widget's own style (a big label has no border, padding or tint), so Textual's styles
        # pass over every line of every card of every call adds nothing but its cost.
        lines = self._lines(True, size)
        strips = [self._line(lines, y, size) for y in range(height)]
        if strips:
            last = strips[-1]
            x, y = self.content_region.offset
            box_width, box_height = self._box(size)
            x += (width - box_width) // 2
            y += (height - box_height) // 2
            strips[-1] = Strip(
                [
                    *last,
                    Control.move_to(x, y).segment,
                    Segment(image, None, ((ControlType.CURSOR_FORWARD, 0),)),
                    Control.move_to(x + width, y + height - 1).segment,
                ],
                last.cell_length,
            )
        return strips

    def _box(self, size: Size | None = None) -> tuple[int, int]:
        """The cells the image is drawn in: the widget's (or `size`), within `image_box`."""
        width, height = self.size if size is None else size
        if self.image_box is None:
            return width, height
        return min(width, self.image_box[0]), min(height, self.image_box[1])

    def _sixel(self, size: Size | None = None) -> str | None:
        """The label as a sixel image of the box's pixels in the widget's colours, or None
        (`size`: the widget's, when known)."""
        width, height = self._box(size)
        graphics = self.graphics
        _, _, background, foreground = self.colors
        key = (self.label, width, height, background, foreground, graphics, self.max_size)
        # Looked up before the label is sized: each card asks every frame it is drawn in, and
        # sizing a label that is already drawn cost more than finding its picture.
        image = _IMAGES.get(key)
        if image is None:
            image = self._encode(width, height, background, foreground) or _NO_IMAGE
            _IMAGES.set(key, image)
        return image or None

    def _encode(self, width: int, height: int, background: Color, foreground: Color) -> str:
        """The sixel image of the label in a box of `width` x `height` cells ("" when it is
        not drawn as one: illegible at this size, or no font for it)."""
        graphics = self.graphics
        if not graphics.legible(self._drawn_size(graphics, (width, height))):
            return _NO_IMAGE
        key = self._picture_key(width, height)
        body = self._body(key)
        if body is None:
            return _NO_IMAGE
        return (sixel.header((key[1], key[2]), _rgb(background), _rgb(foreground)) + body).decode(
            "ascii"
        )

    def _picture_key(self, width: int, height: int, label: str | None = None) -> PictureKey:
        """The picture of the label (or `label`) in a box of `width` x `height` cells."""
        graphics = self.graphics
        cell_width, cell_height = graphics.cell
        return (
            self.label if label is None else label,
            width * cell_width,
            height * cell_height,
            graphics.cjk_locale,
            self.max_size,
        )

    def _body(self, key: PictureKey) -> bytes | None:
        """`key`'s picture without its colours: made before (in any colours), made ahead
        (`ask_picture`), or drawn now."""
        body = _BODIES.get(key)
        if body is None:
            try:
                if self.pictures is None:
                    raise LookupError(key)
                body = self.pictures.take(key)
            except LookupError:
                body = picture_body(key)
            body = body or _NO_BODY
            _BODIES.set(key, body)
        return body or None

    def ask_picture(self, label: str, box: tuple[int, int]) -> None:
        """Have the picture of `label`, the label this widget is about to show, made ahead in
        `box` (cells: the box the panel lays its cards out for), on the maker's core
        (`pictures`), when it will be drawn as one and is not made yet. Asked as soon as a
        call's card knows its label and box, taken when the card is drawn (`_body`); a card
        drawn in another box than foreseen draws its picture here."""
        graphics = self.graphics
        if self.pictures is None or not graphics.sixel or _screenshot:
            return
        width, height = box
        if width <= 0 or height <= 0 or not drawable(label):
            return
        if not graphics.legible(self._drawn_size(graphics, box, label)):
            return
        key = self._picture_key(width, height, label)
        if _BODIES.get(key) is None:
            self.pictures.ask(key)


@contextlib.contextmanager
def for_screenshot() -> Iterator[None]:
    """Within it, big labels draw their mosaic instead of sending an image: an SVG export
    (`lobby-display screenshot`) records cells, not the terminal's pictures."""
    global _screenshot
    _screenshot = True
    try:
        yield
    finally:
        _screenshot = False


_screenshot = False
#: What `_IMAGES` keeps for a label not drawn as a picture in its box (a cache miss is None).
_NO_IMAGE: Final = ""
_NO_BODY: Final = b""


def _rgb(color: Color) -> tuple[int, int, int]:
    return color.r, color.g, color.b


#: How many drawings and images are kept, the least recently used going first: a label moves
#: through six cards of two or three sizes, highlighted then not, while the next ones come.
_MAX_DRAWN: Final = 96
#: Lines of big labels already drawn, by label, size, style and graphics (`render_line`).
_DRAWN: Final[DrawnCache[object, list[Strip]]] = DrawnCache(_MAX_DRAWN)
#: Sixel images already encoded, by label, size, colours and graphics (`_sixel`); `_NO_IMAGE`
#: for a label not drawn as one.
_IMAGES: Final[DrawnCache[object, str]] = DrawnCache(_MAX_DRAWN)
#: The same pictures without their colours (`sixel.body`), by `PictureKey`; `_NO_BODY` for a
#: label not drawn in that box. A highlight ending colours a picture anew: only its palette.
_BODIES: Final[DrawnCache[PictureKey, bytes]] = DrawnCache(_MAX_DRAWN)

__all__ = ["BigLabel", "for_screenshot"]

"""Widgets whose refreshes reach their screen together, told by the app, without a message each."""

from __future__ import annotations

from typing import Any, Self
from weakref import WeakKeyDictionary

from textual.containers import Container, Horizontal, Vertical
from textual.dom import NoScreen
from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget


class RepaintsAtOnce(Widget):
    """A widget whose refresh is told to its screen by the app, with the other widgets' refreshes
    of the same turn of the app, not through the widget's own message queue.

    Textual (8.2.8) tells a screen of a refresh in two hops: `refresh` prompts the widget's own
    message queue; when the widget's task next runs, it posts an `Update` (or `Layout`) message
    to the screen. A call changes a dozen widgets (six cards' labels and counter lines, the
    recent calls), so its frame waited for a dozen tasks to run: 3.1 ms of a 34 ms call on this
    project's benchmark machine. Here `refresh` sets what Textual's sets, and one callback
    queued for the app (`tell_screen`) tells the screen of all of them, in the order they were
    refreshed, as their tasks did.

    Every widget a call changes must be one, the containers too (`RepaintedVertical`...): a
    refresh still on Textual's path reaches the screen after the others, which may compose
    without it (a second frame, and a second layout when the cards' number changes).
    """

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        screen = None if recompose else self._screen_to_tell()
        if screen is None:
            return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        # `Widget.refresh`, but for the prompt of the widget's own message queue.
        if layout and not self._layout_required:
            self._layout_required = True
            self._layout_updates += 1
        self._layout_cache.clear()
        if repaint:
            self._set_dirty(*regions)
            self.clear_cached_dimensions()
            self._rich_style_cache.clear()
            self._repaint_required = True
        waiting = _WAITING.setdefault(screen, {})
        if not waiting and not screen.app.call_later(tell_screen, screen):
            # The app takes no more messages (it is closing): Textual's own path.
            return super().refresh(*regions, repaint=repaint, layout=layout)
        waiting[self] = None
        return self

    def _screen_to_tell(self) -> Screen[Any] | None:
        """The screen the widget is mounted on, or None when it is not (yet, or any more)."""
        if not self._is_mounted or self._parent is None or self._closing:
            return None
        try:
            return self.screen
        except NoScreen:
            return None


class RepaintedContainer(Container, RepaintsAtOnce):
    """A `Container` told to its screen with the widgets in it (see `RepaintsAtOnce`): its
    layout, when the cards' number changes, comes in the same frame as theirs."""


class RepaintedHorizontal(Horizontal, RepaintsAtOnce):
    """A `Horizontal` told to its screen with the widgets in it (see `RepaintsAtOnce`)."""


class RepaintedVertical(Vertical, RepaintsAtOnce):
    """A `Vertical` told to its screen with the widgets in it (see `RepaintsAtOnce`)."""


def tell_screen(screen: Screen[Any]) -> None:
    """Tell `screen` of every widget on it refreshed since the last time, in the order they were
    refreshed: a repaint of a widget on screen goes straight into the screen's dirty widgets
    (what `Screen._on_update` does with the message), anything else as Textual's own message
    (`Widget._check_refresh`: a layout, a widget not laid out yet or removed since)."""
    told = False
    for widget in _WAITING.pop(screen, {}):
        if (
            widget._parent is None
            or widget._closing
            or widget._layout_required
            or widget._refresh_styles_required
            or widget._scroll_required
            # A widget the screen has not laid out yet, marked dirty before the layout that
            # places it, had the compositor arrange the screen anew at once: the layout then
            # found nothing resized, and the cards never heard their sizes.
            or widget not in screen._compositor.visible_widgets
        ):
            widget._check_refresh()
            continue
        if widget._repaint_required:
            widget._repaint_required = False
            if widget.display:
                screen._dirty_widgets.add(widget)
                told = True
    if told:
        screen.check_idle()


#: Widgets refreshed and not told to their screen yet, by screen, in the order they were
#: refreshed.
_WAITING: WeakKeyDictionary[Screen[Any], dict[RepaintsAtOnce, None]] = WeakKeyDictionary()

__all__ = [
    "RepaintedContainer",
    "RepaintedHorizontal",
    "RepaintedVertical",
    "RepaintsAtOnce",
    "tell_screen",
]

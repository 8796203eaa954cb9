"""Widgets sized in one layout: a card whose size changed does not lay the screen out again."""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


def sized_in_one_layout() -> Reactive[Size]:
    """A `virtual_size` for a widget that never scrolls, declared in its class.

    Textual (8.2.8) gives each widget a layout resized its new virtual size through a reactive
    that asks for another layout of the whole screen. For a widget that scrolls, that second
    layout places its scroll bars; for one that never scrolls it changes nothing, and costs a
    frame (4 to 10 ms on a small PC) after every call that changes the number of cards.
    """
    return Reactive(Size(0, 0), layout=False)


__all__ = ["sized_in_one_layout"]

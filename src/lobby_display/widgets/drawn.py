"""Drawings kept and let go: a cache of the least recently used drawings, and strips kept out of
reference cycles, so that nothing the screen drops waits for Python's full collections (pauses
of 20 to 140 ms on a small PC, in the middle of a burst of calls)."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterable, KeysView, Sequence
from typing import Any, Final, Generic, TypeVar

from rich.style import Style
from textual.strip import Strip

KeyT = TypeVar("KeyT", bound=Hashable)
ValueT = TypeVar("ValueT")


class DrawnCache(Generic[KeyT, ValueT]):
    """At most `maxsize` drawings by key, the least recently used dropped first.

    Textual's `LRUCache` (8.2.8) links its entries in a ring: `clear()` leaves the ring, with
    every drawing in it, to the cycle collector (a locale rotation clears a panel's rows). An
    `OrderedDict` frees what it drops at once. Making one keeps Textual's strips out of
    reference cycles from then on (`free_strips_promptly`): a widget's drawings kept in a
    module's cache outlive the app that drew them, and a strip drawn before any screen had
    done so would be left to the cycle collector whenever it is dropped.
    """

    __slots__ = ("__weakref__", "_items", "hits", "maxsize")

    def __init__(self, maxsize: int) -> None:
        free_strips_promptly()
        _ALIVE.add(self)
        self._items: OrderedDict[KeyT, ValueT] = OrderedDict()
        self.maxsize = maxsize
        """The most drawings kept."""
        self.hits = 0
        """How many drawings were asked for and found."""

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> KeysView[KeyT]:
        """The keys of the drawings kept."""
        return self._items.keys()

    def get(self, key: KeyT) -> ValueT | None:
        """The drawing kept for `key` (now the most recently used), or None."""
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
            self.hits += 1
        return value

    def set(self, key: KeyT, value: ValueT) -> None:
        """Keep `value` for `key`, dropping the least recently used drawing beyond `maxsize`."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.maxsize:
            self._items.popitem(last=False)

    def discard(self, key: KeyT) -> None:
        """Drop the drawing of `key`, if kept."""
        self._items.pop(key, None)

    def clear(self) -> None:
        """Drop every drawing."""
        self._items.clear()


_ALIVE: Final[weakref.WeakSet[DrawnCache[Any, Any]]] = weakref.WeakSet()


def alive_caches() -> list[DrawnCache[Any, Any]]:
    """Every drawing cache alive: what they hold is bounded by their sizes, and rises and falls
    with what the screen shows (a memory count that looks for leaks leaves it out)."""
    return list(_ALIVE)


def free_strips_promptly() -> None:
    """Keep Textual's strips out of reference cycles, so each is freed when the screen lets it
    go rather than by the cycle collector.

    A strip divided at its own length (`divide`), or cropped and extended to it
    (`crop_extend`), keeps itself in its own cache (Textual 8.2.8): the compositor does both to
    most lines of every frame, and a busy screen left 10,000 objects a second to collect. The
    answer is the same strip; only its caching of itself is skipped.
    """
    if getattr(Strip.divide, "_frees_promptly", False):
        return
    divide, crop_extend = Strip.divide, Strip.crop_extend

    def divide_whole(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        # Called for most lines of every frame: the usual answer without building a list.
        cuts = cuts if isinstance(cuts, list) else list(cuts)
        length = self.cell_length
        if cuts and cuts[0] == length and (len(cuts) == 1 or cuts[1] > length):
            return [self]  # Textual drops the cuts past the end
        return divide(self, cuts)

    def crop_extend_whole(self: Strip, start: int, end: int, style: Style | None) -> Strip:
        if start <= 0 and end == self.cell_length:
            return self
        return crop_extend(self, start, end, style)

    divide_whole._frees_promptly = True  # type: ignore[attr-defined]
    Strip.divide = divide_whole  # type: ignore[method-assign]
    Strip.crop_extend = crop_extend_whole  # type: ignore[method-assign]

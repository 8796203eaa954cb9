"""Garbage collections between frames: Python's cyclic collector run by the screen in a quiet
moment after a frame, not by the interpreter inside one (a rotation's frame held a young and a
full collection back to back; why: docs/architecture.md). `QuietCollector` keeps the
interpreter's rule of which generation is due and leaves the moment to the screen.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Final

#: Objects made (net) beyond which the young generation is collected even while calls keep
#: coming, so that a long rush never lets it grow without bound: 20 of the interpreter's own
#: thresholds, a young collection of about a millisecond on a small PC.
RUSH_LIMIT: Final = 20


@dataclass
class QuietCollector:
    """Which generation is due for a collection, and running it when the screen allows.

    `due(counts)` reads the collector's counts (`gc.get_count()`) the way the interpreter does
    (the oldest generation whose count passed its threshold); `pressing(counts)` says whether
    the young generation grew so much that it may not wait for a quiet moment. Pure: the counts
    are passed in. `collect()` runs what is due, `take_over()` and `hand_back()` switch the
    interpreter's own collections off and on again.
    """

    thresholds: tuple[int, int, int] = field(default_factory=lambda: _thresholds())
    """The interpreter's thresholds (`gc.get_threshold()`), one per generation."""
    collections: int = 0
    """Collections run so far (by `collect`)."""
    _took_over: bool = field(default=False, init=False)

    def due(self, counts: tuple[int, int, int]) -> int | None:
        """The generation to collect now (0, 1 or 2), or None when none is due (never when the
        first threshold is 0: that switches the interpreter's collections off)."""
        if self.thresholds[0] <= 0:
            return None
        for generation in (2, 1, 0):
            if counts[generation] > self.thresholds[generation]:
                return generation
        return None

    def pressing(self, counts: tuple[int, int, int]) -> bool:
        """The young generation may not wait any longer for a quiet moment."""
        return self.thresholds[0] > 0 and counts[0] > RUSH_LIMIT * self.thresholds[0]

    def collect(self) -> int | None:
        """Collect the generation due, if any; the generation collected."""
        generation = self.due(gc.get_count())
        if generation is not None:
            gc.collect(generation)
            self.collections += 1
        return generation

    def take_over(self) -> None:
        """Switch the interpreter's automatic collections off: `collect` runs them from now."""
        if gc.isenabled():
            gc.disable()
            self._took_over = True

    def hand_back(self) -> None:
        """Switch the interpreter's automatic collections on again, if `take_over` did."""
        if self._took_over:
            gc.enable()
            self._took_over = False

    @property
    def in_charge(self) -> bool:
        """The screen runs the collections (`take_over` switched the interpreter's off)."""
        return self._took_over


def _thresholds() -> tuple[int, int, int]:
    first, second, third = gc.get_threshold()
    return first, second, third


__all__ = ["RUSH_LIMIT", "QuietCollector"]

"""A widget's background colours kept until the styles they come from change, not worked out
again for every widget of every frame (Textual's `DOMNode.background_colors`, pinned 8.2.8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from textual.color import Color
from textual.dom import DOMNode

#: Where a node keeps its colours, with the styles' counts they were worked out from.
_KEPT: Final = "_lobby_background_colors"


def keep_background_colors() -> None:
    """Keep each node's background colours until its styles or an ancestor's change.

    Textual works them out from every ancestor's background, tint and opacity each time it
    draws a widget (`StylesCache.render_widget`), with colour arithmetic at each level; the
    cards' lines key their drawings on them too. A call's frame asks about forty times: 2 ms
    of its 14 ms on this project's benchmark host (10 events/s, images on). A node's styles
    count their changes (`RenderStyles._cache_key`, which Textual keeps its own `visual_style`
    by): the colours are kept with the counts of the node and of each ancestor, and worked out
    again when one of them moved. The answer is the same; only the arithmetic is skipped.
    """
    work_out: Callable[[DOMNode], tuple[Color, Color]] | None = vars(DOMNode)[
        "background_colors"
    ].fget
    if work_out is None or getattr(work_out, "_keeps", False):
        return

    def background_colors(self: DOMNode) -> tuple[Color, Color]:
        # The nodes themselves are not kept (a child would hold its parents): their identities
        # and counts are, on the node, which goes with them.
        counts = tuple((id(node), node.styles._cache_key) for node in self.ancestors_with_self)
        kept: tuple[object, tuple[Color, Color]] | None = getattr(self, _KEPT, None)
        if kept is not None and kept[0] == counts:
            return kept[1]
        colors = work_out(self)
        setattr(self, _KEPT, (counts, colors))
        return colors

    background_colors._keeps = True  # type: ignore[attr-defined]
    background_colors.__doc__ = work_out.__doc__
    DOMNode.background_colors = property(background_colors)  # type: ignore[assignment,method-assign]


__all__ = ["keep_background_colors"]

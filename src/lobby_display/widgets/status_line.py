"""The status line at the bottom: is the screen live, reconnecting, or out of date, in words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Final, Literal

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive

from lobby_display import strings
from lobby_display.updates import FeedStatus
from lobby_display.views import Freshness, HealthView, Part
from lobby_display.widgets.panel import Shown
from lobby_display.widgets.repaint import RepaintsAtOnce

Level = Literal["live", "warning", "error"]

#: How each part is named when the parts differ ("Queues: Reconnecting…").
_PART_NAMES: Final = {
    Part.CALLS: strings.RECENT_CALLS,
    Part.QUEUES: strings.QUEUES,
    Part.COUNTERS: strings.COUNTERS,
}


def part_words(health: HealthView, shown: Shown) -> str:
    """How one part stands, in words ("Live", "Reconnecting (attempt 3)", "Out of date since…")."""
    text = shown.text
    if health.status is FeedStatus.REFUSED:
        return text.text(strings.CREDENTIALS_REFUSED)
    match health.freshness:
        case Freshness.LIVE:
            return text.text(strings.LIVE)
        case Freshness.RECONNECTING:
            if health.status is FeedStatus.CONNECTING:
                return text.text(strings.CONNECTING)
            if health.attempt > 0:
                return text.text(strings.RECONNECTING_ATTEMPT, n=health.attempt)
            return text.text(strings.RECONNECTING)
        case _:
            since = health.down_since or shown.now
            return text.text(strings.OUT_OF_DATE_SINCE, time=shown.moment(since))


def status_words(parts: Mapping[Part, HealthView], shown: Shown) -> tuple[str, Level]:
    """The whole screen's state in words, and how worrying it is.

    One phrase when every part stands the same ("Live"); else each part that is not live,
    named ("Queues: Reconnecting (attempt 2) · Counters: Out of date since 14:05").
    """
    if not parts:
        return shown.text.text(strings.CONNECTING), "warning"
    words = {part: part_words(health, shown) for part, health in parts.items()}
    level: Level = "live"
    for health in parts.values():
        if health.status is FeedStatus.REFUSED or health.freshness in (
            Freshness.STALE,
            Freshness.WITHDRAWN,
        ):
            level = "error"
        elif health.freshness is Freshness.RECONNECTING and level == "live":
            level = "warning"
    if len(set(words.values())) == 1:
        return next(iter(words.values())), level
    named = [
        shown.text.text(
            strings.PART_STATE, part=shown.text.text(_PART_NAMES[part]), state=words[part]
        )
        for part, health in parts.items()
        if health.freshness is not Freshness.LIVE or health.status is FeedStatus.REFUSED
    ]
    return " · ".join(named), level


class StatusLine(RepaintsAtOnce):
    """One line: the screen's freshness in words (left) and a banner such as the demo's (right)."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    StatusLine.-live {
        color: $success;
    }
    StatusLine.-warning {
        color: $warning;
        text-style: bold;
    }
    StatusLine.-error {
        background: $error;
        color: $background;
        text-style: bold;
    }
    StatusLine > .status-line--banner {
        color: $accent;
        text-style: bold;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"status-line--banner"}

    words: reactive[str] = reactive("")
    """The screen's state in words."""
    level: reactive[Level] = reactive("live")
    """How worrying the state is: live, warning (reconnecting) or error (out of date)."""
    banner: reactive[str] = reactive("")
    """Text on the right ("" for none)."""

    def show(self, parts: Mapping[Part, HealthView], shown: Shown, banner: str = "") -> None:
        """Say how fresh the screen's parts are at `shown.now`."""
        self.words, self.level = status_words(parts, shown)
        self.banner = banner

    def watch_level(self, old: Level, new: Level) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")

    def on_mount(self) -> None:
        self.add_class(f"-{self.level}")

    def render(self) -> RenderableType:
        """The words on the left, the banner on the right."""
        grid = Table.grid(expand=True, padding=(0, 2))
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        style = self.get_component_rich_style("status-line--banner", partial=True)
        grid.add_row(Text(self.words), Text(self.banner, style=style))
        return grid


__all__ = ["Level", "StatusLine", "part_words", "status_words"]

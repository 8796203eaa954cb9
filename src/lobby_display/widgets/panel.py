"""What every part of the board shares: the locale on screen, and a framed panel that says how
fresh its numbers are (reconnecting, out of date since 14:05, not available)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from lobby_display import messages
from lobby_display.i18n import LocaleText
from lobby_display.models import pick_name
from lobby_display.updates import FeedStatus
from lobby_display.views import Freshness, HealthView

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
                return shown.text.text(messages.CONNECTING)
            return shown.text.text(messages.RECONNECTING)
        case Freshness.STALE | Freshness.WITHDRAWN:
            since = health.down_since or shown.now
            return shown.text.text(messages.OUT_OF_DATE_SINCE, time=shown.moment(since))
    return ""


_FRESHNESS_CLASSES = {
    Freshness.LIVE: "-live",
    Freshness.RECONNECTING: "-reconnecting",
    Freshness.STALE: "-stale",
    Freshness.WITHDRAWN: "-withdrawn",
}


class Panel(Widget):
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
            self.border_title = Content(heading)

    def show_health(self, health: HealthView, shown: Shown) -> None:
        """Mark the panel with its part's freshness, in words in the bottom border."""
        self.freshness = health.freshness
        note = freshness_note(health, shown)
        if note != self._note:
            self._note = note
            self.border_subtitle = Content(note) if note else None

    @property
    def note(self) -> str:
        """The freshness words shown in the bottom border ("" while live)."""
        return self._note


__all__ = ["UNKNOWN", "Panel", "Shown", "freshness_note"]

"""Text in the locale on screen: gettext catalogs, Babel formatting, and the locale rotation.

`LocaleText` translates the screen's strings and formats numbers, times, dates and delays in the
place's time zone, all written for the kiosk's terminal; `LocaleRotation` says which locale is
on screen. Pure. Babel's quirks handled here: docs/architecture.md.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Final, Literal, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel import Locale, UnknownLocaleError
from babel.dates import (
    DateTimePattern,
    format_datetime,
    format_timedelta,
    match_skeleton,
    tokenize_pattern,
    untokenize_pattern,
)
from babel.numbers import format_decimal
from babel.support import NullTranslations, Translations

from lobby_display import strings
from lobby_display.strings import PluralMessage
from lobby_display.terminal_text import for_terminal

log = logging.getLogger(__name__)

#: Where the compiled catalogs live: `<LOCALE_DIR>/<locale>/LC_MESSAGES/<DOMAIN>.mo`.
LOCALE_DIR: Final = Path(__file__).parent / "locales"
#: The gettext domain of every catalog.
DOMAIN: Final = "lobby_display"
#: A first availability closer than this is said as a delay ("in 55 min"), later as a time.
SOON: Final = timedelta(minutes=60)
#: A first availability closer than this many calendar days is said with its weekday.
WEEK_DAYS: Final = 7
#: Years of the Buddhist era ahead of the Gregorian years (Thai dates: 2026 is B.E. 2569).
BUDDHIST_ERA_OFFSET: Final = 543
_BUDDHIST_ERA_NAME: Final = "พ.ศ."

#: How clock times are written: "24h" (14:05) or "12h" (2:05 PM).
ClockStyle = Literal["24h", "12h"]


@lru_cache(maxsize=64)
def load_catalog(locale: str, directory: Path = LOCALE_DIR) -> NullTranslations:
    """The compiled catalog of `locale` in `directory`.

    A missing catalog gives a `NullTranslations`, whose every message is its English source:
    the screen stays readable in a locale nobody has translated yet.
    """
    catalog = Translations.load(str(directory), [locale], DOMAIN)
    if not isinstance(catalog, Translations):
        log.info("no %s catalog for %s: showing the English source strings", DOMAIN, locale)
    return catalog


def parse_timezone(value: tzinfo | str | None) -> tzinfo:
    """A time zone from a name ("Europe/Paris"), a tzinfo, or None (UTC)."""
    if value is None or value == "":
        return ZoneInfo("UTC")
    if isinstance(value, tzinfo):
        return value
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {value!r} (use a name like Europe/Paris)") from None


class LocaleText:
    """Translations and formats of one locale, in one time zone, with one clock style.

    Every method returns plain text (no markup), ready to be rendered literally, and written
    for the kiosk's terminal (`terminal_text.for_terminal`).
    """

    def __init__(
        self,
        locale: str,
        timezone: tzinfo | str | None = None,
        clock: ClockStyle = "24h",
        *,
        directory: Path = LOCALE_DIR,
    ) -> None:
        try:
            self.babel_locale: Final = Locale.parse(locale)
        except (UnknownLocaleError, ValueError):
            raise ValueError(f"unknown locale {locale!r}") from None
        self.locale: Final = locale
        self.tz: Final = parse_timezone(timezone)
        self.clock_style: Final[ClockStyle] = clock
        self.catalog: Final = load_catalog(locale, directory)
        self._buddhist = self.babel_locale.language == "th"
        # CLDR's abbreviated Korean day periods are "AM"/"PM"; Korean signs say 오전/오후.
        self._wide_day_period = self.babel_locale.language == "ko"
        # Babel takes tens of microseconds per number or time, and a board of 30 queues asks
        # for hundreds of the same ones at each redraw: remember what was formatted.
        self._numbers: dict[float, str] = {}
        self._patterns: dict[tuple[str, datetime], str] = {}
        self._delays: dict[int, str] = {}

    def __repr__(self) -> str:
        return f"LocaleText({self.locale!r}, {self.tz!s}, {self.clock_style!r})"

    # --- messages ------------------------------------------------------------------------------

    def gettext(self, message: str) -> str:
        """The translation of `message` (its source text when untranslated)."""
        return for_terminal(self.catalog.gettext(message))

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """The translation of the form of a plural message that suits the count `n`."""
        return for_terminal(self.catalog.ngettext(singular, plural, n))

    def text(self, message: str, /, **values: object) -> str:
        """Translate `message` and fill its named placeholders: `text(OPENS, when="14:00")`.

        Integers among `values` are formatted as numbers of the locale.
        """
        return _fill(self.gettext(message), message, self._values(values))

    def plural(self, message: PluralMessage, n: int, /, **values: object) -> str:
        """Translate a plural message for the count `n`, which fills `{n}` as a number."""
        template = self.ngettext(message.singular, message.plural, n)
        source = message.singular if n == 1 else message.plural
        return _fill(template, source, self._values({**values, "n": n}))

    def _values(self, values: Mapping[str, object]) -> dict[str, object]:
        return {
            key: self.number(value)
            if isinstance(value, int | float) and not isinstance(value, bool)
            else value
            for key, value in values.items()
        }

    # --- numbers, times, dates -----------------------------------------------------------------

    def number(self, value: float) -> str:
        """A number with the locale's digit grouping (French: U+202F between thousands)."""
        text = self._numbers.get(value)
        if text is None:
            text = for_terminal(format_decimal(value, locale=self.babel_locale))
            _remember(self._numbers, value, text)
        return text

    def local(self, moment: datetime) -> datetime:
        """`moment` in the place's time zone (a naive moment is taken as UTC)."""
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=ZoneInfo("UTC"))
        return moment.astimezone(self.tz)

    def clock(self, moment: datetime) -> str:
        """The clock time of `moment`: "14:05", or "2:05 PM" (the locale's way) with 12h."""
        return self._skeleton("Hm" if self.clock_style == "24h" else "hm", moment)

    def header_date(self, moment: datetime) -> str:
        """The full date for the screen's header: weekday, day, month and year.

        Thai dates are in the Buddhist era ("วันอาทิตย์ที่ 22 พฤศจิกายน พ.ศ. 2569").
        """
        pattern = self.babel_locale.date_formats["full"].pattern
        return self._pattern(pattern, moment)

    def weekday_time(self, moment: datetime) -> str:
        """Short weekday and clock time: "Tue 09:05", "mar. 09:05", "週二 09:05"."""
        return self._skeleton("EHm" if self.clock_style == "24h" else "Ehm", moment)

    def date_time(self, moment: datetime, *, with_year: bool = False) -> str:
        """Day, short month and clock time: "Nov 24, 09:05" (with the year if asked)."""
        date_text = self._skeleton("yMMMd" if with_year else "MMMd", moment)
        glue = self.babel_locale.datetime_formats["short"]
        return for_terminal(str(glue)).replace("{1}", date_text).replace("{0}", self.clock(moment))

    def hours(self, start: datetime, end: datetime) -> str:
        """An opening-hours range: "09:00–12:30"."""
        return f"{self.clock(start)}–{self.clock(end)}"

    def in_minutes(self, minutes: int) -> str:
        """A short delay ahead: "in 5 min.", "dans 5 min", "5分钟后" (never rounded to hours)."""
        # Remembered too: a locale rotation words every queue's next slot again, and this was a
        # quarter of that (cProfile, 30 queues).
        text = self._delays.get(minutes)
        if text is None:
            text = for_terminal(
                format_timedelta(
                    timedelta(minutes=minutes),
                    granularity="minute",
                    threshold=1,
                    add_direction=True,
                    format="short",
                    locale=self.babel_locale,
                )
            )
            _remember(self._delays, minutes, text)
        return text

    # --- "when" ----------------------------------------------------------------------------------

    def when(self, moment: datetime, now: datetime) -> str:
        """When `moment` comes, seen at `now`, in the fewest words that stay exact.

        "now" when it is due or past, a delay under an hour ("in 55 min"), the clock time later
        today, the weekday and time within the week, else the date and time.
        """
        delta = moment - now
        if delta <= timedelta(0):
            return self.text(strings.NOW)
        # A slot 30 s ahead reads "in 1 min": round up, never down to "now".
        minutes = math.ceil(delta.total_seconds() / 60)
        if minutes < SOON.total_seconds() / 60:
            return self.in_minutes(minutes)
        local_moment, local_now = self.local(moment), self.local(now)
        days = (local_moment.date() - local_now.date()).days
        if days == 0:
            return self.clock(moment)
        if days < WEEK_DAYS:
            return self.weekday_time(moment)
        return self.date_time(moment, with_year=local_moment.year != local_now.year)

    def next_slot(self, moment: datetime | None, now: datetime) -> str:
        """The wording of a queue's first availability; "no slot available" for None."""
        if moment is None:
            return self.text(strings.NO_SLOT)
        return self.when(moment, now)

    # --- helpers ---------------------------------------------------------------------------------

    def _skeleton(self, skeleton: str, moment: datetime) -> str:
        skeletons = self.babel_locale.datetime_skeletons
        key = skeleton if skeleton in skeletons else match_skeleton(skeleton, skeletons)
        found = skeletons.get(key) if key else None
        pattern = found.pattern if isinstance(found, DateTimePattern) else str(found or "")
        if not pattern:
            # No CLDR pattern near the skeleton: the skeleton is itself a valid pattern.
            pattern = skeleton
        return self._pattern(pattern, moment)

    def _pattern(self, pattern: str, moment: datetime) -> str:
        key = (pattern, moment)
        text = self._patterns.get(key)
        if text is not None:
            return text
        local = self.local(moment)
        if self._buddhist:
            pattern = buddhist_pattern(pattern, local.year)
        if self._wide_day_period:
            pattern = wide_day_period_pattern(pattern)
        text = for_terminal(
            format_datetime(local, pattern, tzinfo=self.tz, locale=self.babel_locale)
        )
        _remember(self._patterns, key, text)
        return text


_Key = TypeVar("_Key")
#: Most texts a `LocaleText` remembers (of numbers, and of date-times); then it starts afresh.
_REMEMBERED: Final = 4096


def _remember(cache: dict[_Key, str], key: _Key, text: str) -> None:
    if len(cache) >= _REMEMBERED:
        cache.clear()
    cache[key] = text


def buddhist_pattern(pattern: str, year: int) -> str:
    """Rewrite a CLDR date pattern so it shows `year` in the Buddhist era.

    Babel formats only the Gregorian calendar, so the year fields become the literal B.E. year
    and the era field "พ.ศ." ("ค.ศ. 2026" becomes "พ.ศ. 2569").
    """
    buddhist_year = str(year + BUDDHIST_ERA_OFFSET)
    tokens: list[tuple[str, str | tuple[str, int]]] = []
    for kind, value in tokenize_pattern(pattern):
        if kind == "field" and isinstance(value, tuple):
            letter, width = value
            if letter in ("y", "Y", "u"):
                tokens.append(("chars", buddhist_year[-2:] if width == 2 else buddhist_year))
                continue
            if letter == "G":
                tokens.append(("chars", _BUDDHIST_ERA_NAME))
                continue
        tokens.append((kind, value))
    return str(untokenize_pattern(tokens))


def wide_day_period_pattern(pattern: str) -> str:
    """Rewrite a CLDR pattern so its AM/PM field uses the wide names (Korean "오후", not "PM")."""
    tokens = [
        ("field", ("a", 4))
        if kind == "field" and isinstance(value, tuple) and value[0] == "a"
        else (kind, value)
        for kind, value in tokenize_pattern(pattern)
    ]
    return str(untokenize_pattern(tokens))


def _fill(template: str, source: str, values: Mapping[str, object]) -> str:
    """Fill named placeholders; a broken translation falls back to the source string."""
    if not values:
        return template
    try:
        return template.format_map(values)
    except (KeyError, IndexError, ValueError, AttributeError) as error:
        log.warning(
            "translation %r does not fit its values (%s): using the source", template, error
        )
    try:
        return source.format_map(values)
    except (KeyError, IndexError, ValueError, AttributeError):
        return source


class LocaleRotation:
    """Which of the place's locales is on screen at a moment: each stays `period_seconds`.

    Pure: give it a clock reading (monotonic seconds, say) and it answers; it keeps no state.
    Duplicates are dropped so the screen never "changes" to the same locale.
    """

    def __init__(self, locales: Sequence[str], period_seconds: float, start: float = 0.0) -> None:
        unique = tuple(dict.fromkeys(locales))
        if not unique:
            raise ValueError("at least one locale is needed")
        if not period_seconds > 0 or math.isinf(period_seconds):
            raise ValueError("the rotation period must be a positive number of seconds")
        self.locales: Final = unique
        self.period: Final = float(period_seconds)
        self.start: Final = float(start)

    def _slot(self, now: float) -> int:
        return math.floor((now - self.start) / self.period)

    def index(self, now: float) -> int:
        """The position in `locales` of the locale on screen at `now`."""
        return self._slot(now) % len(self.locales)

    def current(self, now: float) -> str:
        """The locale on screen at `now`."""
        return self.locales[self.index(now)]

    def next_turn(self, now: float) -> float:
        """When the turn after the one at `now` begins (same clock as `now`)."""
        return self.start + (self._slot(now) + 1) * self.period


__all__ = [
    "BUDDHIST_ERA_OFFSET",
    "DOMAIN",
    "LOCALE_DIR",
    "SOON",
    "ClockStyle",
    "LocaleRotation",
    "LocaleText",
    "buddhist_pattern",
    "load_catalog",
    "parse_timezone",
    "wide_day_period_pattern",
]

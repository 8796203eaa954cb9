"""The language layer: translated messages, Babel formats per place, "when" wording, rotation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from rich.cells import cell_len

from lobby_display import strings
from lobby_display.i18n import LocaleRotation, LocaleText, buddhist_pattern, load_catalog
from lobby_display.models import LOCALES

PARIS = ZoneInfo("Europe/Paris")
# Sunday 22 November 2026, 10:00 in Paris.
NOW = datetime(2026, 11, 22, 10, 0, tzinfo=PARIS)


def plain(text: str) -> str:
    """Babel puts narrow and no-break spaces in times and numbers; compare with plain spaces."""
    return text.replace("\u202f", " ").replace("\xa0", " ")


# --- clock time ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("locale", "clock_24h", "clock_12h"),
    [
        ("en_US", "14:05", "2:05 PM"),
        ("zh_TW", "14:05", "下午2:05"),
        # CLDR says "PM 2:05"; Korean signs say 오후 (afternoon).
        ("ko_KR", "14:05", "오후 2:05"),
        ("fr_FR", "14:05", "2:05 PM"),
        ("ja_JP", "14:05", "午後2:05"),
    ],
)
def test_clock_follows_the_places_choice_of_24_or_12_hours(
    locale: str, clock_24h: str, clock_12h: str
) -> None:
    moment = datetime(2026, 11, 22, 14, 5, tzinfo=PARIS)
    assert LocaleText(locale, PARIS, "24h").clock(moment) == clock_24h
    assert plain(LocaleText(locale, PARIS, "12h").clock(moment)) == clock_12h


def test_clock_is_in_the_places_time_zone() -> None:
    moment = datetime(2026, 11, 22, 5, 5, tzinfo=UTC)
    assert LocaleText("ja_JP", "Asia/Tokyo").clock(moment) == "14:05"
    assert LocaleText("de_DE", "Europe/Paris").clock(moment) == "06:05"
    # Japanese writes the hour without a leading zero.
    assert LocaleText("ja_JP", "Europe/Paris").clock(moment) == "6:05"
    assert LocaleText("en_US").clock(moment) == "05:05", "no time zone given: UTC"


def test_unknown_time_zone_or_locale_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="Mars/Olympus"):
        LocaleText("en_US", "Mars/Olympus")
    with pytest.raises(ValueError, match="xx_YY"):
        LocaleText("xx_YY")


# --- numbers and dates ---------------------------------------------------------------------------


def test_french_numbers_group_thousands_with_a_narrow_no_break_space() -> None:
    assert LocaleText("fr_FR").number(1234567) == "1\u202f234\u202f567"
    assert LocaleText("en_US").number(1234567) == "1,234,567"
    assert LocaleText("de_DE").number(1234567) == "1.234.567"


def test_header_date_names_weekday_day_month_and_year() -> None:
    assert LocaleText("fr_FR", PARIS).header_date(NOW) == "dimanche 22 novembre 2026"
    assert LocaleText("en_US", PARIS).header_date(NOW) == "Sunday, November 22, 2026"
    assert LocaleText("de_DE", PARIS).header_date(NOW) == "Sonntag, 22. November 2026"
    assert LocaleText("ja_JP", PARIS).header_date(NOW) == "2026年11月22日日曜日"


def test_thai_dates_are_in_the_buddhist_era() -> None:
    thai = LocaleText("th_TH", "Asia/Bangkok")
    header = thai.header_date(NOW)
    assert header == "วันอาทิตย์ที่ 22 พฤศจิกายน พ.ศ. 2569"
    assert "2026" not in header
    assert "ค.ศ." not in header
    # A slot more than a year away shows its year, also in the Buddhist era.
    far = thai.when(NOW + timedelta(days=400), NOW)
    assert "2570" in far
    assert "2027" not in far


def test_buddhist_pattern_rewrites_year_and_era_fields_only() -> None:
    assert buddhist_pattern("d MMMM G y", 2026) == "d MMMM พ.ศ. 2569"
    assert buddhist_pattern("dd/MM/yy", 2026) == "dd/MM/69"
    assert buddhist_pattern("HH:mm", 2026) == "HH:mm"


# --- when is the next free slot ------------------------------------------------------------------

NOW_WORDS = {
    "fr_FR": "maintenant",
    "en_US": "now",
    "es_ES": "ahora",
    "de_DE": "sofort",
    "zh_CN": "立即",
    "zh_TW": "立即",
    "ja_JP": "今すぐ",
    "ko_KR": "즉시",
    "th_TH": "ทันที",
}


@pytest.mark.parametrize("locale", LOCALES)
def test_a_slot_that_is_due_or_past_reads_now(locale: str) -> None:
    text = LocaleText(locale, PARIS)
    assert text.next_slot(NOW, NOW) == NOW_WORDS[locale]
    assert text.next_slot(NOW - timedelta(minutes=3), NOW) == NOW_WORDS[locale]


@pytest.mark.parametrize(
    ("locale", "five", "fifty_five"),
    [
        ("en_US", "in 5 min.", "in 55 min."),
        ("fr_FR", "dans 5 min", "dans 55 min"),
        ("de_DE", "in 5 Min.", "in 55 Min."),
        ("es_ES", "dentro de 5 min", "dentro de 55 min"),
        ("zh_CN", "5分钟后", "55分钟后"),
        ("ko_KR", "5분 후", "55분 후"),
        ("th_TH", "ใน 5 นาที", "ใน 55 นาที"),
    ],
)
def test_a_slot_within_the_hour_reads_as_minutes_never_rounded_to_an_hour(
    locale: str, five: str, fifty_five: str
) -> None:
    text = LocaleText(locale, PARIS)
    assert plain(text.next_slot(NOW + timedelta(minutes=5), NOW)) == five
    assert plain(text.next_slot(NOW + timedelta(minutes=55), NOW)) == fifty_five
    # Worded again (remembered): each delay keeps its own words.
    assert plain(text.next_slot(NOW + timedelta(minutes=5), NOW)) == five
    assert plain(text.next_slot(NOW + timedelta(minutes=55), NOW)) == fifty_five


def test_minutes_are_rounded_up_and_an_hour_away_reads_as_a_time() -> None:
    text = LocaleText("en_US", PARIS)
    assert text.next_slot(NOW + timedelta(seconds=20), NOW) == "in 1 min."
    assert text.next_slot(NOW + timedelta(minutes=59, seconds=1), NOW) == "10:59"
    assert text.next_slot(NOW + timedelta(minutes=58, seconds=1), NOW) == "in 59 min."


def test_a_slot_later_today_reads_as_its_clock_time() -> None:
    later = NOW.replace(hour=14, minute=30)
    assert LocaleText("fr_FR", PARIS).next_slot(later, NOW) == "14:30"
    assert plain(LocaleText("en_US", PARIS, "12h").next_slot(later, NOW)) == "2:30 PM"


def test_a_slot_within_the_week_reads_with_its_weekday() -> None:
    tomorrow = NOW + timedelta(days=1)
    assert LocaleText("en_US", PARIS).next_slot(tomorrow, NOW) == "Mon 10:00"
    assert LocaleText("fr_FR", PARIS).next_slot(tomorrow, NOW) == "lun. 10:00"
    assert LocaleText("zh_TW", PARIS).next_slot(tomorrow, NOW) == "週一 10:00"
    assert LocaleText("en_US", PARIS).next_slot(NOW + timedelta(days=6), NOW) == "Sat 10:00"


def test_a_slot_beyond_a_week_reads_with_its_date() -> None:
    assert LocaleText("en_US", PARIS).next_slot(NOW + timedelta(days=10), NOW) == "Dec 2, 10:00"
    assert LocaleText("fr_FR", PARIS).next_slot(NOW + timedelta(days=10), NOW) == "2 déc. 10:00"


def test_the_day_boundary_is_the_places_midnight() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    late = datetime(2026, 11, 22, 23, 0, tzinfo=tokyo)
    after_midnight = datetime(2026, 11, 23, 0, 30, tzinfo=tokyo)
    # 90 minutes away, but tomorrow in Tokyo: the weekday says so.
    assert LocaleText("en_US", tokyo).next_slot(after_midnight, late) == "Mon 00:30"
    # The same moments seen from Paris (15:00 and 16:30) are the same day.
    assert LocaleText("en_US", PARIS).next_slot(after_midnight, late) == "16:30"


@pytest.mark.parametrize("locale", LOCALES)
def test_no_slot_has_its_own_words(locale: str) -> None:
    text = LocaleText(locale, PARIS)
    words = text.next_slot(None, NOW)
    assert words
    if locale != "en_US":
        assert words != "no slot available"


# --- messages ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("locale", "now_calling", "counter"),
    [
        ("fr_FR", "Appel en cours", "Guichet"),
        ("en_US", "Now calling", "Counter"),
        ("es_ES", "Llamando", "Ventanilla"),
        ("de_DE", "Aufruf", "Schalter"),
        ("zh_CN", "正在叫号", "窗口"),
        ("zh_TW", "叫號中", "櫃檯"),
        ("ja_JP", "お呼び出し中", "窓口"),
        ("ko_KR", "호출 중", "창구"),
        # SARA AM written decomposed for the kiosk's terminal (U+0E4D U+0E32, same width).
        ("th_TH", "ก\u0e4d\u0e32ลังเรียกคิว", "ช่องบริการ"),
    ],
)
def test_headings_are_translated(locale: str, now_calling: str, counter: str) -> None:
    text = LocaleText(locale)
    assert text.text(strings.NOW_CALLING) == now_calling
    assert text.text(strings.COUNTER) == counter


@pytest.mark.parametrize(
    ("locale", "counts"),
    [
        ("en_US", {0: "0 people", 1: "1 person", 2: "2 people"}),
        # French: zero takes the singular.
        ("fr_FR", {0: "0 personne", 1: "1 personne", 2: "2 personnes"}),
        ("de_DE", {0: "0 Personen", 1: "1 Person", 2: "2 Personen"}),
        ("es_ES", {1: "1 persona", 3: "3 personas"}),
        # No plural forms: one form for every count.
        ("ja_JP", {1: "1名", 3: "3名"}),
        ("ko_KR", {1: "1명", 3: "3명"}),
        ("th_TH", {1: "1 คน", 3: "3 คน"}),
    ],
)
def test_people_counts_take_the_languages_plural_form(locale: str, counts: dict[int, str]) -> None:
    text = LocaleText(locale)
    for n, expected in counts.items():
        assert text.plural(strings.PEOPLE, n) == expected


def test_plural_counts_are_formatted_as_numbers_of_the_locale() -> None:
    assert LocaleText("fr_FR").plural(strings.TICKETS, 1500) == "1\u202f500 tickets"
    assert LocaleText("en_US").plural(strings.TICKETS, 1500) == "1,500 tickets"
    assert LocaleText("en_US").plural(strings.TICKETS, 1) == "1 ticket"


def test_named_placeholders_are_filled_and_values_stay_literal() -> None:
    text = LocaleText("de_DE", PARIS)
    assert text.text(strings.OPENS, when="14:00") == "Öffnet: 14:00"
    assert text.text(strings.RECONNECTING_ATTEMPT, n=3) == "Verbinde neu (Versuch 3)"
    # A counter name from the network is inserted as it is, never interpreted.
    hostile = "{n} [bold]Desk{0}[/bold]"
    assert text.text(strings.GO_TO_COUNTER, counter=hostile) == f"Bitte zu {hostile}"


def test_a_missing_catalog_falls_back_to_english_with_local_formats(tmp_path: Path) -> None:
    text = LocaleText("fr_FR", PARIS, directory=tmp_path)
    assert text.text(strings.NOW_CALLING) == "Now calling"
    assert text.plural(strings.PEOPLE, 1) == "1 person"
    assert text.plural(strings.PEOPLE, 2000) == "2\u202f000 people"
    assert text.next_slot(NOW, NOW) == "now"
    assert plain(text.next_slot(NOW + timedelta(minutes=5), NOW)) == "dans 5 min"


def test_a_translation_with_a_wrong_placeholder_falls_back_to_the_source(tmp_path: Path) -> None:
    catalog = Catalog(locale="de_DE", domain="lobby_display")
    catalog.add(strings.OPENS, "Öffnet: {wann}")
    catalog.add(strings.NOW_CALLING, "Aufruf")
    folder = tmp_path / "de_DE" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    buffer = BytesIO()
    write_mo(buffer, catalog)
    (folder / "lobby_display.mo").write_bytes(buffer.getvalue())

    text = LocaleText("de_DE", directory=tmp_path)
    assert text.text(strings.NOW_CALLING) == "Aufruf"
    assert text.text(strings.OPENS, when="14:00") == "Opens 14:00"


# --- written for the kiosk's terminal ------------------------------------------------------------


def _every_message() -> list[str | strings.PluralMessage]:
    return [
        value
        for name, value in vars(strings).items()
        if name.isupper() and isinstance(value, str | strings.PluralMessage)
    ]


def test_no_thai_catalog_string_reaches_the_screen_with_sara_am() -> None:
    # foot draws U+0E33 as a mark over the letter before it and an empty cell.
    text = LocaleText("th_TH")
    catalog = load_catalog("th_TH")
    written = 0
    for message in _every_message():
        if isinstance(message, strings.PluralMessage):
            pairs = [
                (
                    text.ngettext(message.singular, message.plural, n),
                    catalog.ngettext(message.singular, message.plural, n),
                )
                for n in (1, 2)
            ]
        else:
            pairs = [(text.gettext(message), catalog.gettext(message))]
        for shown, translated in pairs:
            assert "\u0e33" not in shown
            assert cell_len(shown) == cell_len(translated)
            written += "\u0e33" in translated
    assert written >= 5, "the Thai catalog has words with SARA AM (กำลัง, ทำการ, จำลอง...)"
    assert text.text(strings.DEMO) == "การสาธิต: ข้อมูลจ\u0e4d\u0e32ลอง"


def test_a_thai_babel_date_with_sara_am_is_written_decomposed() -> None:
    # CLDR's Thai evening ("ค่ำ", the flexible day period B) is Babel text with SARA AM.
    text = LocaleText("th_TH", "Asia/Bangkok")
    evening = datetime(2026, 11, 22, 13, 5, tzinfo=UTC)  # 20:05 in Bangkok
    assert text._pattern("h:mm B", evening) == "8:05 ค\u0e4d\u0e48\u0e32"
    # What the screen writes today: the Buddhist-era date, the clock, a delay.
    for shown in (
        text.header_date(evening),
        text.clock(evening),
        text.weekday_time(evening),
        text.date_time(evening, with_year=True),
        text.when(evening + timedelta(minutes=5), evening),
    ):
        assert "\u0e33" not in shown
    assert text.header_date(evening) == "วันอาทิตย์ที่ 22 พฤศจิกายน พ.ศ. 2569"


# --- rotation ------------------------------------------------------------------------------------


def test_rotation_shows_each_locale_for_its_period_in_turn() -> None:
    rotation = LocaleRotation(["fr_FR", "en_US", "de_DE"], period_seconds=12)
    assert rotation.current(0) == "fr_FR"
    assert rotation.current(11.99) == "fr_FR"
    assert rotation.current(12) == "en_US"
    assert rotation.current(24) == "de_DE"
    assert rotation.current(36) == "fr_FR"
    assert rotation.current(1_000_000 * 36 + 13) == "en_US"


def test_rotation_counts_its_periods_from_its_start() -> None:
    rotation = LocaleRotation(["fr_FR", "en_US"], period_seconds=10, start=100)
    assert rotation.current(100) == "fr_FR"
    assert rotation.current(109.5) == "fr_FR"
    assert rotation.current(110) == "en_US"
    # Before the start (a clock reading from before the screen came up) it still answers.
    assert rotation.current(95) == "en_US"
    # The next turn, whose rows the screen words ahead of it.
    assert rotation.next_turn(100) == 110
    assert rotation.next_turn(109.5) == 110
    assert rotation.current(rotation.next_turn(109.5)) == "en_US"
    assert rotation.next_turn(95) == 100


def test_a_single_locale_never_changes() -> None:
    rotation = LocaleRotation(["ja_JP"], period_seconds=12)
    assert rotation.current(1e9) == "ja_JP"
    assert rotation.current(5) == "ja_JP"


def test_rotation_skips_duplicates_and_refuses_nonsense() -> None:
    rotation = LocaleRotation(["fr_FR", "fr_FR", "en_US"], period_seconds=5)
    assert rotation.locales == ("fr_FR", "en_US")
    assert rotation.current(5) == "en_US"
    with pytest.raises(ValueError, match="locale"):
        LocaleRotation([], period_seconds=5)
    with pytest.raises(ValueError, match="period"):
        LocaleRotation(["fr_FR"], period_seconds=0)

"""What the voice says: labels spelled so they are understood, one natural sentence per locale."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lobby_display.models import LOCALES, clean_text
from lobby_display.sound.chime import write_chime
from lobby_display.sound.speech import (
    VOICE_CANDIDATES,
    SoundCache,
    compose,
    korean_direction,
    parse_voice_list,
    pick_voices,
    spell_label,
)
from lobby_display.updates import Call


def call(label: str = "K017", names: dict[str, str] | None = None) -> Call:
    return Call(
        ticket_id="T1",
        label=label,
        queue_id="Q1",
        endpoint_id="E3",
        counter_names={"en_US": "Counter 3"} if names is None else names,
        called_at=datetime(2026, 11, 22, 9, 0, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("label", "spoken"),
    [
        ("K017", "K 0 1 7"),
        ("k017", "K 0 1 7"),
        ("A-017", "A, 0 1 7"),  # the dash is a pause, not the word "dash"
        ("AB.12", "A B, 1 2"),
        ("-K 01-", "K, 0 1"),
        ("Ｋ０１７", "K 0 1 7"),  # full-width forms
        ("๑๗", "1 7"),  # Thai digits
        ("17", "1 7"),
    ],
)
def test_labels_are_spelled_letter_by_letter_and_digit_by_digit(label: str, spoken: str) -> None:
    assert spell_label(label)[1] == spoken


def test_letters_are_marked_as_letters_so_a_is_not_read_as_the_article() -> None:
    ssml, _ = spell_label("A-017")
    assert ssml == ('<say-as interpret-as="characters">A</say-as> <break time="300ms"/> 0 1 7')


@pytest.mark.parametrize(
    ("locale", "counter", "sentence"),
    [
        ("fr_FR", "Guichet 3", "Ticket K 0 1 7, Guichet 3"),
        ("en_US", "Counter 3", "Ticket K 0 1 7, please go to Counter 3"),
        ("es_ES", "Ventanilla 3", "Número K 0 1 7, diríjase a Ventanilla 3"),
        ("de_DE", "Schalter 3", "Nummer K 0 1 7, bitte zu Schalter 3"),
        ("zh_CN", "3号窗口", "请 K 0 1 7 号 到 3号窗口"),
        ("zh_TW", "3號窗口", "請 K 0 1 7 號 到 3號窗口"),
        ("ja_JP", "まどぐち 3", "K 0 1 7 ばん の おきゃくさま、まどぐち 3 へ おこしください"),
        ("ko_KR", "3번 창구", "K 0 1 7번 고객님, 3번 창구로 오십시오"),
        ("th_TH", "ช่อง 3", "หมายเลข K 0 1 7, ช่อง 3"),
    ],
)
def test_each_locale_has_its_own_sentence_with_the_counter_name_in_that_locale(
    locale: str, counter: str, sentence: str
) -> None:
    names = {"en_US": "Counter 3", locale: counter}
    spoken = compose(call(names=names), locale)
    assert spoken.text == sentence
    assert spoken.ssml.startswith("<speak>") and spoken.ssml.endswith("</speak>")


def test_every_locale_of_the_service_has_a_sentence_and_a_voice_to_try() -> None:
    for locale in LOCALES:
        assert VOICE_CANDIDATES[locale]
        assert "K 0 1 7" in compose(call(), locale).text


def test_a_counter_named_only_in_another_language_is_still_said() -> None:
    assert compose(call(names={"fr_FR": "Guichet 3"}), "en_US").text == (
        "Ticket K 0 1 7, please go to Guichet 3"
    )


def test_without_a_counter_name_the_sentence_still_reads_naturally() -> None:
    assert compose(call(names={}), "en_US").text == "Ticket K 0 1 7, please"
    assert compose(call(names={}), "de_DE").text == "Nummer K 0 1 7, bitte"


def test_a_japanese_counter_in_kanji_keeps_only_what_the_voice_can_read() -> None:
    # The Japanese voice says "Chinese letter" for every kanji; better to drop them.
    text = compose(call(names={"ja_JP": "3番窓口"}), "ja_JP").text
    assert text == "K 0 1 7 ばん の おきゃくさま、3 へ おこしください"
    text = compose(call(names={"ja_JP": "窓口"}), "ja_JP").text
    assert text == "K 0 1 7 ばん の おきゃくさま、おこしください"


def test_a_thai_counter_is_spoken_with_sara_am_as_the_service_wrote_it() -> None:
    # Names are stored decomposed for the screen (clean_text); espeak-ng would read the lone
    # NIKHAHIT out as "Thai letter ...", so the sentence has SARA AM composed again.
    names = {"th_TH": clean_text("ห้องทำบัตร 3")}
    assert "\u0e33" not in names["th_TH"]
    spoken = compose(call(names=names), "th_TH")
    assert spoken.text == "หมายเลข K 0 1 7, ห้องทำบัตร 3"
    assert "ห้องทำบัตร 3" in spoken.ssml


def test_markup_in_a_counter_name_is_text_not_ssml() -> None:
    spoken = compose(call(names={"en_US": '<audio src="x"/> & Desk'}), "en_US")
    assert '&lt;audio src="x"/&gt; &amp; Desk' in spoken.ssml
    assert "<audio" not in spoken.ssml


@pytest.mark.parametrize(
    ("word", "particle"),
    [
        ("창구", "로"),
        ("3번 창구", "로"),
        ("창구 3", "으로"),
        ("창구 1", "로"),
        ("창구 6", "으로"),
        ("상담실", "로"),
        ("접수처", "로"),
        ("창구 M", "으로"),
        ("창구 A", "로"),
        ("민원실", "로"),
        ("본관", "으로"),
    ],
)
def test_korean_sentences_take_the_right_particle(word: str, particle: str) -> None:
    assert korean_direction(word) == particle


LISTING = """\
Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  af              --/M      Afrikaans          gmw/af
 5  cmn             --/M      Chinese_(Mandarin,_latin_as_English) sit/cmn
 5  cmn-latn-pinyin --/M      Chinese_(Mandarin,_latin_as_Pinyin) sit/cmn-Latn-pinyin
 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
 5  fr-fr           --/M      French_(France)    roa/fr               (fr 5)
 3  es-es           --/F      spanish-mbrola-3   mb/mb-es3            (es 3)
"""


def test_the_voice_list_of_espeak_ng_is_read_without_mbrola_voices() -> None:
    assert parse_voice_list(LISTING) == {"af", "cmn", "cmn-latn-pinyin", "en-us", "fr-fr"}


def test_each_locale_gets_its_best_voice_and_locales_without_one_are_named() -> None:
    chosen, missing = pick_voices(["zh_TW", "fr_FR", "es_ES"], parse_voice_list(LISTING))
    assert chosen == {"zh_TW": "cmn-latn-pinyin", "fr_FR": "fr-fr"}
    assert missing == ["es_ES"]
    chosen, _ = pick_voices(["zh_CN"], {"cmn"})
    assert chosen == {"zh_CN": "cmn"}


def test_the_cache_names_a_sound_by_everything_that_shapes_it(tmp_path: Path) -> None:
    cache = SoundCache(tmp_path)
    assert cache.path_for("en-us", 150, "Ticket A") == cache.path_for("en-us", 150, "Ticket A")
    assert cache.path_for("en-us", 150, "Ticket A") != cache.path_for("en-us", 160, "Ticket A")
    assert cache.path_for("en-us", 150, "Ticket A") != cache.path_for("fr-fr", 150, "Ticket A")
    assert not cache.hit(cache.path_for("never said"))


def test_the_cache_stays_within_its_size_by_removing_the_least_recently_used(
    tmp_path: Path,
) -> None:
    paths = [write_chime(tmp_path / f"{name}.wav", 100) for name in ("old", "used", "new")]
    size = paths[0].stat().st_size
    for age, path in zip((300, 200, 100), paths, strict=True):
        os.utime(path, (1_000_000 - age, 1_000_000 - age))
    cache = SoundCache(tmp_path, max_bytes=2 * size)
    assert cache.hit(paths[1])  # "used" was just played again: it is now the most recent
    cache.trim()
    assert [path.name for path in sorted(tmp_path.glob("*.wav"))] == ["new.wav", "used.wav"]

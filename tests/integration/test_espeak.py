"""The real espeak-ng: every locale gets a voice, sentences become valid WAV files, once each."""

from __future__ import annotations

import array
import asyncio
import shutil
import stat
import sys
import wave
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lobby_display.announce import Announcer
from lobby_display.config import SoundSettings
from lobby_display.models import LOCALES
from lobby_display.sound.chime import wav_seconds
from lobby_display.sound.speech import Espeak, SoundCache, compose, pick_voices
from lobby_display.updates import Call
from tests.helpers.needs import needs

ESPEAK = shutil.which("espeak-ng")
pytestmark = needs("espeak-ng", "espeak-ng")

NAMES = {
    "fr_FR": "Guichet 3",
    "en_US": "Counter 3",
    "es_ES": "Ventanilla 3",
    "de_DE": "Schalter 3",
    "zh_CN": "3号窗口",
    "zh_TW": "3號窗口",
    "ja_JP": "まどぐち 3",
    "ko_KR": "3번 창구",
    "th_TH": "ช่อง 3",
}


def call(label: str = "K017") -> Call:
    return Call(f"id-{label}", label, "Q1", "E3", NAMES, datetime(2026, 11, 22, 9, 0, tzinfo=UTC))


def espeak(tmp_path: Path) -> Espeak:
    assert ESPEAK is not None
    return Espeak(ESPEAK, SoundCache(tmp_path / "cache"), rate=150, volume=100)


def assert_speech(path: Path) -> None:
    """A valid, non-empty, audible 16-bit PCM WAV file."""
    assert path.read_bytes()[:4] == b"RIFF" and path.read_bytes()[8:12] == b"WAVE"
    with wave.open(str(path), "rb") as reader:
        assert reader.getsampwidth() == 2 and reader.getnchannels() == 1
        samples: array.array[int] = array.array("h")
        samples.frombytes(reader.readframes(reader.getnframes()))
    assert 0.5 < (wav_seconds(path) or 0) < 15
    assert max(abs(sample) for sample in samples) > 1_000  # speech, not silence


async def test_every_locale_of_the_service_has_an_espeak_ng_voice(tmp_path: Path) -> None:
    chosen, missing = pick_voices(list(LOCALES), await espeak(tmp_path).voices())
    assert missing == []
    assert chosen["zh_CN"] == "cmn-latn-pinyin"


async def test_a_sentence_is_rendered_to_a_valid_wav_in_every_locale(tmp_path: Path) -> None:
    engine = espeak(tmp_path)
    chosen, _ = pick_voices(list(LOCALES), await engine.voices())
    for locale, voice in chosen.items():
        assert_speech(await engine.render(voice, compose(call(), locale)))


async def test_a_sentence_said_before_costs_no_second_rendering(tmp_path: Path) -> None:
    engine = espeak(tmp_path)
    first = await engine.render("en-us", compose(call(), "en_US"))
    made = first.stat().st_mtime_ns
    engine.executable = str(tmp_path / "no-espeak-here")  # a second run would fail
    again = await engine.render("en-us", compose(call(), "en_US"))
    assert again == first and again.stat().st_mtime_ns >= made
    assert_speech(again)
    with pytest.raises(Exception, match="cannot start"):
        await engine.render("en-us", compose(call("K018"), "en_US"))
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == [first.name]


async def test_the_announcer_plays_chime_then_each_locale_with_the_real_voice(
    tmp_path: Path,
) -> None:
    log = tmp_path / "played.log"
    recorder = tmp_path / "recorder"
    recorder.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(log)!r}, 'a').write(sys.argv[-1] + '\\n')\n"
    )
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    announcer = Announcer(
        SoundSettings(enabled=True, player=str(recorder), voice_locales=["fr_FR", "en_US"]),
        voice_locales=["fr_FR", "en_US"],
        cache_dir=tmp_path / "cache",
    )
    await announcer.start()
    assert announcer.voices == {"fr_FR": "fr-fr", "en_US": "en-us"}
    announcer.submit(call())
    announcer.submit(call("K018"))
    await asyncio.wait_for(announcer.idle(), 30)
    await announcer.stop()
    files = [Path(line) for line in log.read_text().splitlines()]
    assert len(files) == 6
    assert files[0].name == files[3].name == "chime-100.wav"
    for speech in (files[1], files[2], files[4], files[5]):
        assert_speech(speech)
    assert len({files[1], files[2], files[4], files[5]}) == 4

"""The announcement queue, heard through a fake player that records what would be played.

What a visitor would notice: calls heard in the order they were made, never two at once, a
recall of a waiting ticket heard once with its latest counter, nothing twice, silence in quiet
hours, and a screen that keeps highlighting in step whatever the sound does.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lobby_display.announce import Announcer
from lobby_display.config import SoundSettings, settings_from_dict
from lobby_display.sound.player import PlaybackError
from lobby_display.sound.process import ToolError
from lobby_display.sound.speech import Sentence
from lobby_display.updates import Call

VOICE_ROOT = Path("/voice")
ALL_VOICES = {"fr-fr", "en-us", "es", "de", "cmn-latn-pinyin", "ja", "ko"}  # no Thai voice
WAIT = 5.0


def call(label: str, counter: str = "Desk 1", *, recall: int = 0, announce: bool = True) -> Call:
    return Call(
        ticket_id=f"id-{label}",
        label=label,
        queue_id="Q1",
        endpoint_id="E1",
        counter_names={"en_US": counter, "fr_FR": counter.replace("Desk", "Guichet")},
        called_at=datetime(2026, 11, 22, 9, 0, tzinfo=UTC),
        recall=recall,
        announce=announce,
    )


class FakeVoice:
    """A text-to-speech engine that 'renders' a sentence to a path naming the voice and text."""

    def __init__(
        self, available: set[str] = ALL_VOICES, failing: frozenset[str] | set[str] = frozenset()
    ) -> None:
        self.available = available
        self.failing = failing
        self.rendered: list[str] = []

    async def voices(self) -> set[str]:
        return set(self.available)

    async def render(self, voice: str, sentence: Sentence) -> Path:
        if voice in self.failing:
            raise ToolError(f"espeak-ng -v {voice}: exit status 1: voice data damaged")
        self.rendered.append(sentence.text)
        return VOICE_ROOT / voice / sentence.text


class FakePlayer:
    """Records each sound as it starts; can hold a sound until released, or fail."""

    def __init__(self, events: list[str], *, hold: bool = False, fail: bool = False) -> None:
        self.events = events
        self.release = asyncio.Event()
        if not hold:
            self.release.set()
        self.fail = fail
        self.attempts = 0
        self.playing = 0
        self.most_at_once = 0
        self.started = asyncio.Event()

    async def play(self, path: Path) -> None:
        self.attempts += 1
        if self.fail:
            raise PlaybackError("no audio player works")
        self.playing += 1
        self.most_at_once = max(self.most_at_once, self.playing)
        self.events.append(describe(path))
        self.started.set()
        try:
            await self.release.wait()
            await asyncio.sleep(0)  # let anything that wants to interleave try to
        finally:
            self.playing -= 1


def describe(path: Path) -> str:
    if path.parent.parent == VOICE_ROOT:
        return f"{path.parent.name}: {path.name}"
    assert path.name.startswith("chime") and path.is_file()
    return "chime"


class Clock:
    def __init__(self, hour: int = 12, minute: int = 0) -> None:
        self.set(hour, minute)

    def set(self, hour: int, minute: int) -> None:
        self.now = datetime(2026, 11, 22, hour, minute, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def make(
    tmp_path: Path,
    events: list[str],
    *,
    player: FakePlayer | None = None,
    voice: FakeVoice | None = None,
    locales: tuple[str, ...] = ("en_US",),
    clock: Clock | None = None,
    **sound: Any,
) -> Announcer:
    def show(shown: Call) -> None:
        events.append(f"show {shown.label}" + (f" (recall {shown.recall})" if shown.recall else ""))

    return Announcer(
        SoundSettings(**{"enabled": True, **sound}),
        voice_locales=locales,
        cache_dir=tmp_path / "sound-cache",
        on_playing=show,
        player=player if player is not None else FakePlayer(events),
        synthesizer=voice if voice is not None else FakeVoice(),
        clock=clock,
    )


async def settle(announcer: Announcer) -> None:
    await asyncio.wait_for(announcer.idle(), WAIT)


async def test_a_burst_of_calls_is_heard_in_order_each_after_its_highlight(tmp_path: Path) -> None:
    events: list[str] = []
    announcer = make(tmp_path, events)
    await announcer.start()
    for label in ("K017", "K018", "B002"):
        announcer.submit(call(label))
    await settle(announcer)
    await announcer.stop()
    assert events == [
        "show K017",
        "chime",
        "en-us: Ticket K 0 1 7, please go to Desk 1",
        "show K018",
        "chime",
        "en-us: Ticket K 0 1 8, please go to Desk 1",
        "show B002",
        "chime",
        "en-us: Ticket B 0 0 2, please go to Desk 1",
    ]


async def test_announcements_never_overlap_even_when_calls_arrive_mid_sentence(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    player = FakePlayer(events, hold=True)
    announcer = make(tmp_path, events, player=player, locales=("fr_FR", "en_US"))
    await announcer.start()
    announcer.submit(call("A1"))
    await asyncio.wait_for(player.started.wait(), WAIT)
    # The chime of A1 is still sounding: these wait their turn instead of cutting in.
    announcer.submit(call("A2"))
    announcer.submit(call("A3"))
    assert [waiting.label for waiting in announcer.waiting] == ["A2", "A3"]
    assert events == ["show A1", "chime"]
    player.release.set()
    await settle(announcer)
    await announcer.stop()
    assert player.most_at_once == 1
    assert events[:4] == [
        "show A1",
        "chime",
        "fr-fr: Ticket A 1, Guichet 1",
        "en-us: Ticket A 1, please go to Desk 1",
    ]
    assert [event for event in events if event.startswith("show")] == [
        "show A1",
        "show A2",
        "show A3",
    ]
    assert len(events) == 12


async def test_a_recall_of_a_waiting_ticket_is_heard_once_with_its_latest_counter(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    player = FakePlayer(events, hold=True)
    announcer = make(tmp_path, events, player=player, mode="voice")
    await announcer.start()
    announcer.submit(call("A1"))
    await asyncio.wait_for(player.started.wait(), WAIT)
    announcer.submit(call("A2", "Desk 2"))
    announcer.submit(call("A3", "Desk 3"))
    announcer.submit(call("A2", "Desk 5", recall=1))
    assert [(w.label, w.recall) for w in announcer.waiting] == [("A2", 1), ("A3", 0)]
    player.release.set()
    await settle(announcer)
    await announcer.stop()
    assert events == [
        "show A1",
        "en-us: Ticket A 1, please go to Desk 1",
        "show A2 (recall 1)",
        "en-us: Ticket A 2, please go to Desk 5",
        "show A3",
        "en-us: Ticket A 3, please go to Desk 3",
    ]


async def test_a_recall_of_the_ticket_being_announced_is_heard_again_after_it(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    player = FakePlayer(events, hold=True)
    announcer = make(tmp_path, events, player=player, mode="voice")
    await announcer.start()
    announcer.submit(call("A1"))
    await asyncio.wait_for(player.started.wait(), WAIT)
    announcer.submit(call("A1", recall=1))
    player.release.set()
    await settle(announcer)
    await announcer.stop()
    assert events == [
        "show A1",
        "en-us: Ticket A 1, please go to Desk 1",
        "show A1 (recall 1)",
        "en-us: Ticket A 1, please go to Desk 1",
    ]


async def test_the_same_call_handed_on_twice_is_announced_once(tmp_path: Path) -> None:
    events: list[str] = []
    announcer = make(tmp_path, events, mode="chime")
    await announcer.start()
    announcer.submit(call("A1"))
    announcer.submit(call("A1"))  # waiting: a duplicate
    await settle(announcer)
    announcer.submit(call("A1"))  # already heard (a feed snapshot after a reconnect, say)
    await settle(announcer)
    assert events == ["show A1", "chime"]
    announcer.submit(call("A1", recall=1))
    await settle(announcer)
    await announcer.stop()
    assert events == ["show A1", "chime", "show A1 (recall 1)", "chime"]


async def test_an_older_recall_arriving_late_does_not_replace_a_newer_one(tmp_path: Path) -> None:
    events: list[str] = []
    player = FakePlayer(events, hold=True)
    announcer = make(tmp_path, events, player=player, mode="chime")
    await announcer.start()
    announcer.submit(call("A1"))
    await asyncio.wait_for(player.started.wait(), WAIT)
    announcer.submit(call("A2", recall=2))
    announcer.submit(call("A2", recall=1))
    assert [(w.label, w.recall) for w in announcer.waiting] == [("A2", 2)]
    player.release.set()
    await settle(announcer)
    await announcer.stop()


async def test_calls_not_to_be_announced_are_neither_played_nor_highlighted(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    announcer = make(tmp_path, events)
    await announcer.start()
    announcer.submit(call("OLD1", announce=False))
    announcer.submit(call("NEW1"))
    await settle(announcer)
    await announcer.stop()
    assert [event for event in events if "OLD1" in event or "O L D" in event] == []
    assert events[0] == "show NEW1"


async def test_a_full_queue_drops_the_oldest_sound_but_still_shows_that_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    player = FakePlayer(events, hold=True)
    announcer = make(tmp_path, events, player=player, mode="chime", max_queue=2)
    await announcer.start()
    announcer.submit(call("A1"))
    await asyncio.wait_for(player.started.wait(), WAIT)
    with caplog.at_level(logging.WARNING, logger="lobby_display.announce"):
        for label in ("A2", "A3", "A4", "A5"):
            announcer.submit(call(label))
    player.release.set()
    await settle(announcer)
    await announcer.stop()
    assert events == [
        "show A1",
        "chime",
        "show A2",  # dropped from the sound, still handed on in its turn
        "show A3",
        "show A4",
        "chime",
        "show A5",
        "chime",
    ]
    dropped = [r.getMessage() for r in caplog.records if "shown without sound" in r.getMessage()]
    assert len(dropped) == 2
    assert "ticket A2" in dropped[0] and "max_queue 2" in dropped[0]
    assert "ticket A3" in dropped[1]


async def test_with_sound_off_a_burst_is_shown_in_order_without_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    announcer = make(tmp_path, events, enabled=False, max_queue=2)
    await announcer.start()
    with caplog.at_level(logging.WARNING, logger="lobby_display.announce"):
        for number in range(20):
            announcer.submit(call(f"B{number}"))
        await settle(announcer)
    await announcer.stop()
    assert events == [f"show B{number}" for number in range(20)]
    assert not [r for r in caplog.records if "without sound" in r.getMessage()]


@pytest.mark.parametrize(
    ("hour", "minute", "quiet"),
    [(21, 59, False), (22, 0, True), (23, 30, True), (0, 15, True), (6, 59, True), (7, 0, False)],
)
async def test_quiet_hours_across_midnight_silence_the_sound_but_not_the_screen(
    tmp_path: Path, hour: int, minute: int, quiet: bool
) -> None:
    events: list[str] = []
    clock = Clock(hour, minute)
    announcer = make(tmp_path, events, clock=clock, mode="chime", quiet_hours="22:00-07:00")
    await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == (["show A1"] if quiet else ["show A1", "chime"])


@pytest.mark.parametrize(
    ("hour", "minute", "quiet"), [(11, 59, False), (12, 0, True), (13, 29, True), (13, 30, False)]
)
async def test_quiet_hours_within_one_day(
    tmp_path: Path, hour: int, minute: int, quiet: bool
) -> None:
    events: list[str] = []
    clock = Clock(hour, minute)
    announcer = make(tmp_path, events, clock=clock, mode="chime", quiet_hours="12:00-13:30")
    await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == (["show A1"] if quiet else ["show A1", "chime"])


async def test_sound_comes_back_when_quiet_hours_end(tmp_path: Path) -> None:
    events: list[str] = []
    clock = Clock(6, 50)
    announcer = make(tmp_path, events, clock=clock, mode="chime", quiet_hours="22:00-07:00")
    await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    clock.set(7, 5)
    announcer.submit(call("A2"))
    await settle(announcer)
    await announcer.stop()
    assert events == ["show A1", "show A2", "chime"]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"mode": "both"}, ["show A1", "chime", "en-us: Ticket A 1, please go to Desk 1"]),
        ({"mode": "chime"}, ["show A1", "chime"]),
        ({"mode": "voice"}, ["show A1", "en-us: Ticket A 1, please go to Desk 1"]),
        ({"mode": "silent"}, ["show A1"]),
        ({"enabled": False}, ["show A1"]),
    ],
)
async def test_each_mode_plays_what_it_says(
    tmp_path: Path, settings: dict[str, Any], expected: list[str]
) -> None:
    events: list[str] = []
    announcer = make(tmp_path, events, **settings)
    await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == expected


async def test_several_voice_locales_speak_in_sequence_and_missing_voices_are_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    with caplog.at_level(logging.WARNING, logger="lobby_display.announce"):
        announcer = make(tmp_path, events, locales=("fr_FR", "th_TH", "en_US"), mode="voice")
        await announcer.start()
    announcer.submit(call("A1"))
    announcer.submit(call("A2"))
    await settle(announcer)
    await announcer.stop()
    assert events == [
        "show A1",
        "fr-fr: Ticket A 1, Guichet 1",
        "en-us: Ticket A 1, please go to Desk 1",
        "show A2",
        "fr-fr: Ticket A 2, Guichet 1",
        "en-us: Ticket A 2, please go to Desk 1",
    ]
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == ["sound: no espeak-ng voice for th_TH; those locales are not spoken"]
    assert announcer.voices == {"fr_FR": "fr-fr", "en_US": "en-us"}


async def test_a_failing_player_is_logged_once_and_not_retried_while_the_screen_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    player = FakePlayer(events, fail=True)
    announcer = make(tmp_path, events, player=player)
    await announcer.start()
    with caplog.at_level(logging.WARNING):
        for label in ("A1", "A2", "A3"):
            announcer.submit(call(label))
        await settle(announcer)
    await announcer.stop()
    assert events == ["show A1", "show A2", "show A3"]
    assert player.attempts == 1
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "sound is off until restart" in lines[0]
    assert not announcer.audible


async def test_a_voice_that_fails_is_dropped_and_the_other_sounds_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    voice = FakeVoice(failing={"fr-fr"})
    announcer = make(tmp_path, events, voice=voice, locales=("fr_FR", "en_US"))
    await announcer.start()
    with caplog.at_level(logging.WARNING):
        announcer.submit(call("A1"))
        announcer.submit(call("A2"))
        await settle(announcer)
    await announcer.stop()
    assert events == [
        "show A1",
        "chime",
        "en-us: Ticket A 1, please go to Desk 1",
        "show A2",
        "chime",
        "en-us: Ticket A 2, please go to Desk 1",
    ]
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "sound: espeak-ng -v fr-fr: exit status 1: voice data damaged; "
        "fr_FR is not spoken until restart"
    ]


async def test_no_player_on_the_machine_is_one_log_line_and_a_working_screen(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    announcer = Announcer(
        SoundSettings(enabled=True),
        voice_locales=["en_US"],
        cache_dir=tmp_path / "cache",
        on_playing=lambda shown: events.append(f"show {shown.label}"),
        which=lambda name: None,
    )
    with caplog.at_level(logging.WARNING):
        await announcer.start()
        announcer.submit(call("A1"))
        announcer.submit(call("A2"))
        await settle(announcer)
    await announcer.stop()
    assert events == ["show A1", "show A2"]
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1
    assert "no audio player found (looked for pw-play, paplay, aplay" in lines[0]
    assert announcer.describe() == "off (no working audio player)"


async def test_without_espeak_ng_the_chime_alone_is_heard(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    announcer = Announcer(
        SoundSettings(enabled=True),
        voice_locales=["en_US"],
        cache_dir=tmp_path / "cache",
        on_playing=lambda shown: events.append(f"show {shown.label}"),
        player=FakePlayer(events),
        which=lambda name: None,
    )
    with caplog.at_level(logging.WARNING):
        await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == ["show A1", "chime"]
    lines = [record.getMessage() for record in caplog.records]
    assert lines == ["sound: espeak-ng not found (apt-get install espeak-ng); calls are not spoken"]


async def test_an_unreadable_chime_file_falls_back_to_the_built_in_chime(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "chime.wav"
    broken.write_bytes(b"not a wav")
    events: list[str] = []
    with caplog.at_level(logging.WARNING):
        announcer = make(tmp_path, events, mode="chime", chime_file=broken)
        await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == ["show A1", "chime"]
    assert "is not a readable WAV file; the built-in chime is used" in caplog.text


async def test_an_async_highlight_hook_finishes_before_the_sound_starts(tmp_path: Path) -> None:
    events: list[str] = []

    async def highlight(shown: Call) -> None:
        events.append(f"highlight {shown.label} begins")
        await asyncio.sleep(0)
        events.append(f"highlight {shown.label} done")

    announcer = Announcer(
        SoundSettings(enabled=True, mode="chime"),
        voice_locales=["en_US"],
        cache_dir=tmp_path / "cache",
        on_playing=highlight,
        player=FakePlayer(events),
        synthesizer=FakeVoice(),
    )
    await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == ["highlight A1 begins", "highlight A1 done", "chime"]


async def test_a_failing_highlight_hook_does_not_stop_the_announcements(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []

    def highlight(shown: Call) -> None:
        if shown.label == "A1":
            raise RuntimeError("widget gone")
        events.append(f"show {shown.label}")

    announcer = Announcer(
        SoundSettings(enabled=True, mode="chime"),
        voice_locales=["en_US"],
        cache_dir=tmp_path / "cache",
        on_playing=highlight,
        player=FakePlayer(events),
        synthesizer=FakeVoice(),
    )
    await announcer.start()
    announcer.submit(call("A1"))
    announcer.submit(call("A2"))
    await settle(announcer)
    await announcer.stop()
    assert events == ["chime", "show A2", "chime"]
    assert "on_playing failed for ticket A1" in caplog.text


async def test_stop_cuts_the_sound_playing_and_drops_what_waits(tmp_path: Path) -> None:
    events: list[str] = []
    player = FakePlayer(events, hold=True)
    announcer = make(tmp_path, events, player=player)
    await announcer.start()
    announcer.submit(call("A1"))
    announcer.submit(call("A2"))
    await asyncio.wait_for(player.started.wait(), WAIT)
    await asyncio.wait_for(announcer.stop(), WAIT)
    assert player.playing == 0
    assert announcer.waiting == ()
    announcer.submit(call("A3"))  # after stop: ignored, no error
    assert events == ["show A1", "chime"]


async def test_from_settings_speaks_the_first_display_locale_and_caches_in_the_state_directory(
    tmp_path: Path,
) -> None:
    settings = settings_from_dict(
        {
            "service": {"display_url": "https://display.example.net", "api_key": "k"},
            "place": {"id": "P1"},
            "display": {"locales": ["de_DE", "en_US"], "timezone": "Europe/Berlin"},
            "state": {"directory": str(tmp_path / "state")},
            "sound": {"enabled": True},
        },
        environ={},
    )
    events: list[str] = []
    announcer = Announcer.from_settings(
        settings, player=FakePlayer(events), synthesizer=FakeVoice()
    )
    await announcer.start()
    announcer.submit(call("A1"))
    await settle(announcer)
    await announcer.stop()
    assert events == ["chime", "de: Nummer A 1, bitte zu Desk 1"]
    assert (tmp_path / "state" / "sound-cache" / "chime-100.wav").is_file()

"""Players run as real child processes (small scripts standing in for pw-play, paplay, aplay).

A kiosk without an audio device must log once and carry on: a failing player is dropped, the
next one is tried, a hung one is killed, and nothing is started again for every call.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lobby_display.announce import Announcer
from lobby_display.announce import main as announce_main
from lobby_display.config import SoundSettings
from lobby_display.sound import player as player_module
from lobby_display.sound.chime import wav_seconds, write_chime
from lobby_display.sound.player import CommandPlayer, PlaybackError, PlayerChain, find_players
from lobby_display.sound.process import ToolError
from lobby_display.updates import Call

SCRIPT = """\
#!{python}
import os, sys, time
from pathlib import Path
with Path({log!r}).open("a") as log:
    log.write({name!r} + " " + str(os.getpid()) + " " + sys.argv[-1] + "\\n")
if {stderr!r}:
    sys.stderr.write("some noise\\n" + {stderr!r} + "\\n")
time.sleep({sleep})
sys.exit({code})
"""


def fake_player(
    directory: Path, name: str, *, code: int = 0, stderr: str = "", sleep: float = 0
) -> Path:
    """An executable that logs each file it is asked to play to `directory/played.log`."""
    path = directory / name
    path.write_text(
        SCRIPT.format(
            python=sys.executable,
            log=str(directory / "played.log"),
            name=name,
            stderr=stderr,
            sleep=sleep,
            code=code,
        )
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def played(directory: Path) -> list[tuple[str, str]]:
    """(player, file name) for each run logged by the fake players."""
    log = directory / "played.log"
    if not log.exists():
        return []
    return [(line.split()[0], Path(line.split()[2]).name) for line in log.read_text().splitlines()]


def test_the_known_players_are_found_best_first() -> None:
    found = {"aplay": "/usr/bin/aplay", "pw-play": "/usr/bin/pw-play"}
    players, problem = find_players("", found.get)
    assert problem == ""
    assert [p.argv for p in players] == [("/usr/bin/pw-play",), ("/usr/bin/aplay", "-q")]


def test_a_configured_player_command_is_used_alone_with_its_options() -> None:
    players, problem = find_players("aplay -q -D 'plughw:1,0'", {"aplay": "/usr/bin/aplay"}.get)
    assert problem == ""
    assert [p.argv for p in players] == [("/usr/bin/aplay", "-q", "-D", "plughw:1,0")]


def test_a_missing_player_is_explained() -> None:
    players, problem = find_players("mpv --no-video", lambda name: None)
    assert players == []
    assert problem == "the configured player 'mpv' is not found"
    _, problem = find_players("", lambda name: None)
    assert "no audio player found (looked for pw-play, paplay, aplay" in problem


async def test_a_failing_player_is_dropped_with_its_reason_and_the_next_one_plays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chime = write_chime(tmp_path / "chime.wav", 100)
    broken = fake_player(tmp_path, "pw-play", code=1, stderr="Connection refused")
    working = fake_player(tmp_path, "aplay")
    chain = PlayerChain([CommandPlayer([str(broken)]), CommandPlayer([str(working)])])
    with caplog.at_level(logging.WARNING):
        await chain.play(chime)
        await chain.play(chime)
    assert played(tmp_path) == [
        ("pw-play", "chime.wav"),
        ("aplay", "chime.wav"),
        ("aplay", "chime.wav"),  # pw-play is not tried a second time
    ]
    (line,) = [record.getMessage() for record in caplog.records]
    assert "pw-play failed (exit status 1: Connection refused)" in line
    assert "trying aplay" in line
    assert chain.names == ["aplay"]


async def test_when_every_player_fails_sound_is_given_up_after_one_try_each(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chime = write_chime(tmp_path / "chime.wav", 100)
    chain = PlayerChain(
        [
            CommandPlayer([str(fake_player(tmp_path, "paplay", code=1))]),
            CommandPlayer([str(fake_player(tmp_path, "aplay", code=1, stderr="no soundcards"))]),
            CommandPlayer([str(tmp_path / "deleted-player")]),
        ]
    )
    with caplog.at_level(logging.WARNING), pytest.raises(PlaybackError):
        await chain.play(chime)
    with pytest.raises(PlaybackError):
        await chain.play(chime)
    assert played(tmp_path) == [("paplay", "chime.wav"), ("aplay", "chime.wav")]
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 3
    assert "cannot start" in lines[2] and "no player left" in lines[2]


async def test_a_hung_player_is_killed_after_the_length_of_the_sound_and_a_margin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Time enough for the player to start and log its pid on a loaded machine.
    monkeypatch.setattr(player_module, "PLAY_MARGIN_SECONDS", 2.0)
    chime = write_chime(tmp_path / "chime.wav", 100)
    hung = CommandPlayer([str(fake_player(tmp_path, "aplay", sleep=3600))])
    began = time.monotonic()
    with pytest.raises(ToolError, match="did not finish within"):
        await hung.play(chime)
    # Killed, not waited for: an hour of sleep is cut short (a generous bound, not a speed).
    assert time.monotonic() - began < (wav_seconds(chime) or 0) + 120
    pid = int((tmp_path / "played.log").read_text().split()[1])
    assert not Path(f"/proc/{pid}").exists()


async def test_the_announcer_plays_through_the_configured_command_and_stop_kills_it(
    tmp_path: Path,
) -> None:
    recorder = fake_player(tmp_path, "recorder", sleep=30)
    shown: list[str] = []
    announcer = Announcer(
        SoundSettings(enabled=True, mode="chime", player=f"{recorder} --quiet"),
        voice_locales=["en_US"],
        cache_dir=tmp_path / "cache",
        on_playing=lambda call: shown.append(call.label),
    )
    await announcer.start()
    assert "played with recorder" in announcer.describe()
    announcer.submit(Call("T1", "A1", "Q1", None, {}, datetime(2026, 11, 22, 9, 0, tzinfo=UTC)))
    log = tmp_path / "played.log"
    async with asyncio.timeout(10):
        # Until the player's line is whole: its file exists a moment before the line is in it
        # (a CI run read it empty).
        while not (log.exists() and log.read_text().endswith("\n")):
            await asyncio.sleep(0.02)  # polling for a condition, bounded by the timeout
    await asyncio.wait_for(announcer.stop(), 5)
    assert shown == ["A1"]
    name, pid, path = log.read_text().split()
    assert name == "recorder" and Path(path).name == "chime-100.wav"
    assert wav_seconds(Path(path))
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)


def write_config(tmp_path: Path, player: str) -> Path:
    config = tmp_path / "screen.toml"
    config.write_text(
        f"""
[service]
display_url = "https://display.example.net"
api_key = "k"
[place]
id = "P1"
[state]
directory = "{tmp_path / "state"}"
[sound]
mode = "chime"
player = "{player}"
quiet_hours = "00:00-23:59"
"""
    )
    config.chmod(0o600)  # as a file holding service.api_key must be
    return config


def test_the_installer_can_try_the_sound_even_while_it_is_disabled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = fake_player(tmp_path, "recorder")
    status = announce_main(["--config", str(write_config(tmp_path, str(recorder)))])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "played with recorder" in out and out.rstrip().endswith("played")
    assert played(tmp_path) == [("recorder", "chime-100.wav")]


def test_trying_the_sound_without_a_working_player_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = fake_player(tmp_path, "aplay", code=1, stderr="no soundcards found")
    status = announce_main(["--config", str(write_config(tmp_path, str(broken)))])
    assert status == 1
    assert "nothing could be played" in capsys.readouterr().out

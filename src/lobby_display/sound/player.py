"""Playing a WAV file with whatever the machine has: pw-play, paplay or aplay (or a set command).

A player that fails is dropped for good (until the display restarts or reloads its settings)
with one log line, and the next one is tried: a kiosk without an audio device logs once and
carries on, instead of starting a failing process for every call.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Protocol

from lobby_display.sound.chime import wav_seconds
from lobby_display.sound.process import ToolError, run_tool

log = logging.getLogger(__name__)

#: Players looked for, best first, with the options they need (PipeWire, PulseAudio, ALSA).
KNOWN_PLAYERS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("pw-play", ()),
    ("paplay", ()),
    ("aplay", ("-q",)),
)
#: Seconds a player may take beyond the length of the sound (starting up, draining).
PLAY_MARGIN_SECONDS: Final = 10.0

Which = Callable[[str], str | None]


class PlaybackError(Exception):
    """No working player is left: sound is off until the settings are reloaded."""


class Player(Protocol):
    """What the announcer needs to make a sound."""

    async def play(self, path: Path) -> None:
        """Play the WAV file at `path` to its end; raises PlaybackError when sound is gone."""
        ...


class CommandPlayer:
    """One player program, run once per sound with the file as its last argument."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = tuple(argv)

    @property
    def name(self) -> str:
        """The program's name, for log lines."""
        return Path(self.argv[0]).name

    async def play(self, path: Path) -> None:
        """Play `path`; raises ToolError when the program fails or overruns."""
        seconds = await asyncio.to_thread(wav_seconds, path) or 30.0
        finished = await run_tool([*self.argv, str(path)], seconds + PLAY_MARGIN_SECONDS)
        if finished.returncode != 0:
            raise ToolError(f"{self.name} failed ({finished.reason()})")


class PlayerChain:
    """The players found on the machine, tried in turn; one that fails is not tried again."""

    def __init__(self, players: Sequence[CommandPlayer]) -> None:
        self.players = list(players)

    @property
    def names(self) -> list[str]:
        """The players still in use, best first."""
        return [player.name for player in self.players]

    async def play(self, path: Path) -> None:
        """Play `path` with the first player that works; PlaybackError when none does."""
        while self.players:
            player = self.players[0]
            try:
                await player.play(path)
                return
            except ToolError as error:
                self.players.pop(0)
                after = f"trying {self.players[0].name}" if self.players else "no player left"
                log.warning(
                    "sound: %s; %s not used again until restart, %s", error, player.name, after
                )
        raise PlaybackError("no audio player works")


def find_players(configured: str, which: Which) -> tuple[list[CommandPlayer], str]:
    """The players to use: the configured command, else those found among `KNOWN_PLAYERS`.

    Returns the players and, when there are none, why (for one log line).
    """
    if configured:
        argv = shlex.split(configured)
        found = which(argv[0])
        if found is None:
            return [], f"the configured player {argv[0]!r} is not found"
        return [CommandPlayer([found, *argv[1:]])], ""
    players = [
        CommandPlayer([found, *options])
        for name, options in KNOWN_PLAYERS
        if (found := which(name)) is not None
    ]
    if not players:
        names = ", ".join(name for name, _ in KNOWN_PLAYERS)
        return [], (
            f"no audio player found (looked for {names}; "
            "install pipewire-bin, pulseaudio-utils or alsa-utils)"
        )
    return players, ""

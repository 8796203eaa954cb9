"""Calls announced aloud, one after the other: a chime, then a sentence in each voice locale.

`Announcer.submit(call)` queues a call (`updates.Call`) for one worker that plays them in order;
`on_playing(call)` fires when its sound starts (or would have), so the screen's highlight keeps
in step. Why it is so: docs/architecture.md (the kiosk and the process).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import shutil
import tempfile
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

from lobby_display.config import Settings, SoundSettings
from lobby_display.files import FileRefused, private_directory
from lobby_display.sound.chime import scaled_copy, wav_seconds, write_chime
from lobby_display.sound.player import PlaybackError, Player, PlayerChain, Which, find_players
from lobby_display.sound.process import ToolError
from lobby_display.sound.speech import Espeak, SoundCache, Synthesizer, compose, pick_voices
from lobby_display.updates import Call, Clock

log = logging.getLogger(__name__)

#: What `on_playing` may be: a plain function or a coroutine function.
OnPlaying = Callable[[Call], Awaitable[None] | None]

#: Entries kept at most, counting those that lost their sound to `max_queue`: a bound on memory
#: even under a flood of calls (silent entries are handed over at once when their turn comes).
MAX_ENTRIES: Final = 200
#: Calls remembered to refuse a second announcement of the same call (ticket and recall number).
REMEMBERED_CALLS: Final = 512
#: Name of the cache directory under the state directory.
CACHE_DIRECTORY: Final = "sound-cache"


@dataclass(slots=True)
class _Entry:
    """A call waiting its turn; `audible` is False once the queue bound took its sound away."""

    call: Call
    audible: bool = True


class Announcer:
    """The one announcement queue of a screen.

    Build it with `Announcer.from_settings(settings, on_playing=...)`, `await start()` once the
    event loop runs, `submit(call)` for each call the board hands on, and `await stop()` at exit.
    """

    def __init__(
        self,
        sound: SoundSettings,
        *,
        voice_locales: Sequence[str],
        cache_dir: Path,
        on_playing: OnPlaying | None = None,
        player: Player | None = None,
        synthesizer: Synthesizer | None = None,
        which: Which = shutil.which,
        clock: Clock | None = None,
    ) -> None:
        """Set up without starting anything; `player` and `synthesizer` replace the ones found
        on the machine (pw-play/paplay/aplay and espeak-ng, looked up with `which`)."""
        self.sound = sound
        self.voice_locales = list(dict.fromkeys(voice_locales))
        self.cache_dir = cache_dir
        self.on_playing = on_playing
        self._given_player = player
        self._given_synthesizer = synthesizer
        self._which = which
        self._clock: Clock = clock or (lambda: datetime.now().astimezone())
        self._player: Player | None = None
        self._synthesizer: Synthesizer | None = None
        self._chime: Path | None = None
        self._voices: dict[str, str] = {}
        self._entries: deque[_Entry] = deque()
        self._known: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None
        self._stopped = False

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        on_playing: OnPlaying | None = None,
        player: Player | None = None,
        synthesizer: Synthesizer | None = None,
        which: Which = shutil.which,
    ) -> Announcer:
        """An announcer for these settings: voice locales default to the first display locale,
        the cache lives in the state directory, quiet hours follow the display's time zone."""
        sound = settings.sound
        clock: Clock | None = None
        if settings.display.timezone:
            from zoneinfo import ZoneInfo

            zone = ZoneInfo(settings.display.timezone)
            clock = lambda: datetime.now(zone)  # noqa: E731
        return cls(
            sound,
            voice_locales=sound.voice_locales or settings.display.locales[:1],
            cache_dir=settings.state_directory() / CACHE_DIRECTORY,
            on_playing=on_playing,
            player=player,
            synthesizer=synthesizer,
            which=which,
            clock=clock,
        )

    # --- what the app calls -------------------------------------------------------------------

    @property
    def audible(self) -> bool:
        """True when the settings ask for sound and something can still be played."""
        if not self.sound.enabled or self.sound.mode == "silent" or self._player is None:
            return False
        return self._chime is not None or bool(self._voices)

    @property
    def waiting(self) -> tuple[Call, ...]:
        """The calls waiting their turn, in order (not the one playing now)."""
        return tuple(entry.call for entry in self._entries)

    @property
    def voices(self) -> dict[str, str]:
        """The espeak-ng voice used for each spoken locale (locales without one are left out)."""
        return dict(self._voices)

    async def start(self) -> None:
        """Find the tools, prepare the chime, and start the worker. Never raises for a missing
        tool: each problem is one log line and the screen goes on."""
        if self._worker is not None:
            return
        if self.sound.enabled and self.sound.mode != "silent":
            await self._prepare()
        log.info("sound: %s", self.describe())
        self._worker = asyncio.create_task(self._work(), name="announcer")

    async def stop(self) -> None:
        """Stop the worker; a sound playing is cut, calls still waiting are dropped."""
        self._stopped = True
        self._entries.clear()
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                if (task := asyncio.current_task()) is not None and task.cancelling():
                    raise
            self._worker = None
        self._idle.set()

    def submit(self, call: Call) -> None:
        """Queue `call` for announcement (returns at once; call it from the event loop).

        Ignored: calls with `announce=False`, and a call (ticket and recall number) already
        announced or waiting. A recall of a ticket that is still waiting replaces that entry in
        its place. When more than `max_queue` wait, the oldest waiting loses its sound (it is
        still handed to `on_playing` in its turn) with a log line.
        """
        if not call.announce or self._stopped:
            return
        key = (call.ticket_id, call.recall)
        if key in self._known:
            log.debug("sound: ticket %s (recall %d) already announced", call.label, call.recall)
            return
        self._remember(key)
        for entry in self._entries:
            if entry.call.ticket_id == call.ticket_id:
                if call.recall > entry.call.recall:
                    entry.call = call
                    log.debug("sound: recall of ticket %s merged with its waiting turn", call.label)
                return
        self._entries.append(_Entry(call))
        self._bound()
        self._idle.clear()
        self._wake.set()

    async def idle(self) -> None:
        """Wait until nothing is waiting and nothing is playing."""
        await self._idle.wait()

    def describe(self) -> str:
        """What the sound does, in one line (for the log and `lobby-display check`)."""
        if not self.sound.enabled:
            return "off (sound.enabled = false)"
        if self.sound.mode == "silent":
            return "off (sound.mode = silent)"
        if self._player is None:
            return "off (no working audio player)"
        parts = []
        if self._chime is not None:
            parts.append(f"chime {self._chime.name}")
        if self._voices:
            spoken = ", ".join(f"{locale} ({voice})" for locale, voice in self._voices.items())
            parts.append(f"voice in {spoken}")
        if not parts:
            return "off (neither a chime nor a voice is available)"
        player = self._player
        names = ", ".join(player.names) if isinstance(player, PlayerChain) else "given player"
        quiet = f", quiet {self.sound.quiet_hours}" if self.sound.quiet_hours else ""
        return f"{' and '.join(parts)}; played with {names}; volume {self.sound.volume}{quiet}"

    # --- set-up -------------------------------------------------------------------------------

    async def _prepare(self) -> None:
        cache = await asyncio.to_thread(self._cache_directory)
        if self._given_player is not None:
            self._player = self._given_player
        else:
            players, problem = find_players(self.sound.player, self._which)
            if problem:
                log.warning("sound: %s; calls are shown but not heard", problem)
            else:
                self._player = PlayerChain(players)
        if self._player is None:
            return
        if self.sound.mode in ("both", "chime"):
            self._chime = await asyncio.to_thread(self._prepare_chime, cache)
        if self.sound.mode in ("both", "voice"):
            await self._prepare_voices(cache)

    def _cache_directory(self) -> Path:
        """The cache directory, or a temporary one when it cannot be made (read-only state)."""
        try:
            # For the display's user only: the players play whatever WAV files are there.
            return private_directory(self.cache_dir)
        except OSError as error:
            fallback = Path(tempfile.mkdtemp(prefix="lobby-display-sound-"))
            log.warning(
                "sound: cannot use %s (%s); sounds are cached in %s until restart",
                self.cache_dir,
                error.reason if isinstance(error, FileRefused) else error.strerror or error,
                fallback,
            )
            return fallback

    def _prepare_chime(self, cache: Path) -> Path | None:
        volume = self.sound.volume
        custom = self.sound.chime_file
        if custom is not None:
            if wav_seconds(custom) is None:
                log.warning(
                    "sound: chime_file %s is not a readable WAV file; the built-in chime is used",
                    custom,
                )
            elif volume >= 100:
                return custom
            else:
                target = cache / f"chime-custom-{volume}.wav"
                try:
                    scaled_copy(custom, target, volume)
                    return target
                except (OSError, ValueError) as error:
                    log.info("sound: chime_file played at its own volume (%s)", error)
                    return custom
        path = cache / f"chime-{volume}.wav"
        try:
            return path if wav_seconds(path) is not None else write_chime(path, volume)
        except OSError as error:
            log.warning("sound: cannot write the chime to %s (%s); no chime", path, error)
            return None

    async def _prepare_voices(self, cache: Path) -> None:
        synthesizer = self._given_synthesizer
        if synthesizer is None:
            executable = self._which("espeak-ng")
            if executable is None:
                log.warning(
                    "sound: espeak-ng not found (apt-get install espeak-ng); calls are not spoken"
                )
                return
            synthesizer = Espeak(
                executable,
                SoundCache(cache),
                rate=self.sound.voice_rate,
                volume=self.sound.volume,
            )
        try:
            available = await synthesizer.voices()
        except ToolError as error:
            log.warning("sound: cannot list the voices (%s); calls are not spoken", error)
            return
        self._voices, missing = pick_voices(self.voice_locales, available)
        if missing:
            log.warning(
                "sound: no espeak-ng voice for %s; those locales are not spoken",
                ", ".join(missing),
            )
        self._synthesizer = synthesizer

    # --- the queue ----------------------------------------------------------------------------

    def _remember(self, key: tuple[str, int]) -> None:
        self._known[key] = None
        while len(self._known) > REMEMBERED_CALLS:
            self._known.popitem(last=False)

    def _bound(self) -> None:
        # With sound off nothing waits for a player: a burst is handed over at once, unlogged.
        audible = [entry for entry in self._entries if entry.audible] if self.audible else []
        if len(audible) > self.sound.max_queue:
            oldest = audible[0]
            oldest.audible = False
            log.warning(
                "sound: %d announcements waiting (max_queue %d); ticket %s is shown without sound",
                len(audible),
                self.sound.max_queue,
                oldest.call.label,
            )
        while len(self._entries) > MAX_ENTRIES:
            dropped = self._entries.popleft()
            log.warning("sound: too many calls at once; ticket %s dropped", dropped.call.label)

    async def _work(self) -> None:
        while True:
            if not self._entries:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            entry = self._entries.popleft()
            try:
                if entry.audible and self._in_quiet_hours():
                    log.debug("sound: quiet hours; ticket %s shown only", entry.call.label)
                    entry.audible = False
                if entry.audible and self.audible:
                    await self._announce(entry.call)
                else:
                    await self._hand_over(entry.call)
            except asyncio.CancelledError:
                raise
            except Exception:
                # A bug here must not silence every later call nor stop the screen.
                log.exception("sound: announcing ticket %s failed", entry.call.label)

    def _in_quiet_hours(self) -> bool:
        window = self.sound.quiet_window()
        if window is None:
            return False
        now = self._clock()
        minute = now.hour * 60 + now.minute
        start, end = window
        if start < end:
            return start <= minute < end
        return minute >= start or minute < end

    async def _announce(self, call: Call) -> None:
        # Render first, so the chime and the sentences follow each other without a gap.
        sounds = [self._chime] if self._chime is not None else []
        sounds += await self._sentences(call)
        await self._hand_over(call)
        for path in sounds:
            if self._player is None:
                break
            try:
                await self._player.play(path)
            except (PlaybackError, ToolError) as error:
                log.warning("sound: %s; sound is off until restart, calls are still shown", error)
                self._player = None

    async def _sentences(self, call: Call) -> list[Path]:
        paths: list[Path] = []
        if self._synthesizer is None:
            return paths
        for locale, voice in list(self._voices.items()):
            try:
                paths.append(await self._synthesizer.render(voice, compose(call, locale)))
            except ToolError as error:
                log.warning("sound: %s; %s is not spoken until restart", error, locale)
                del self._voices[locale]
        return paths

    async def _hand_over(self, call: Call) -> None:
        if self.on_playing is None:
            return
        try:
            result = self.on_playing(call)
            if inspect.isawaitable(result):
                await result
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("sound: on_playing failed for ticket %s", call.label)


async def try_sound(settings: Settings, label: str, counter: str) -> int:
    """Play one announcement as configured, whatever `enabled` and the quiet hours say.

    For the installer: `python -m lobby_display.announce --config FILE`. Returns an exit status:
    0 when something was played, 1 when nothing could be.
    """
    sound = settings.sound.model_copy(update={"enabled": True, "quiet_hours": ""})
    announcer = Announcer.from_settings(settings.model_copy(update={"sound": sound}))
    await announcer.start()
    print(f"sound: {announcer.describe()}")
    audible = announcer.audible
    if audible:
        names = {locale: counter for locale in announcer.voice_locales}
        announcer.submit(Call("try", label, "", None, names, datetime.now().astimezone()))
        await announcer.idle()
        audible = announcer.audible  # False when the player failed while playing
    await announcer.stop()
    print("played" if audible else "nothing could be played: see the lines above")
    return 0 if audible else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of `python -m lobby_display.announce`: try the sound of a screen."""
    import argparse

    from lobby_display.config import ConfigError, load_config

    parser = argparse.ArgumentParser(
        prog="python -m lobby_display.announce",
        description="Play one announcement with a screen's [sound] settings (even if disabled).",
    )
    parser.add_argument("--config", required=True, help="the screen's TOML file")
    parser.add_argument("--label", default="A017", help="ticket label to announce (A017)")
    parser.add_argument("--counter", default="1", help="counter name to announce (1)")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        settings = load_config(options.config)
    except ConfigError as error:
        print(error)
        return 2
    return asyncio.run(try_sound(settings, options.label, options.counter))


__all__ = ["CACHE_DIRECTORY", "Announcer", "OnPlaying", "try_sound"]

if __name__ == "__main__":
    raise SystemExit(main())

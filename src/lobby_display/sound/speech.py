"""The spoken sentence: spelling a ticket label, a sentence per locale, espeak-ng and its cache.

Sentences are SSML (espeak-ng `-m`), so a letter is read as a letter ("A" as "ay", never as the
English article) while digits are read one by one. Rendered WAV files are cached on disk under a
hash of everything that shapes the sound, so a label/counter pair said once costs nothing again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import tempfile
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol
from xml.sax.saxutils import escape

from lobby_display.files import make_directories
from lobby_display.models import pick_name
from lobby_display.sound.chime import wav_seconds
from lobby_display.sound.process import ToolError, run_tool
from lobby_display.terminal_text import for_speech
from lobby_display.updates import Call

log = logging.getLogger(__name__)

#: espeak-ng voices for each locale, best first (checked against `espeak-ng --voices`, 1.51).
#: Mandarin is `cmn-latn-pinyin`: Debian's `cmn` voice reads its own pinyin as English words.
#: Taiwan's zh_TW is Mandarin too (Cantonese `yue` would be Hong Kong's).
VOICE_CANDIDATES: Final[Mapping[str, tuple[str, ...]]] = {
    "fr_FR": ("fr-fr", "fr"),
    "en_US": ("en-us", "en"),
    "es_ES": ("es",),
    "de_DE": ("de",),
    "zh_CN": ("cmn-latn-pinyin", "cmn"),
    "zh_TW": ("cmn-latn-pinyin", "cmn"),
    "ja_JP": ("ja",),
    "ko_KR": ("ko",),
    "th_TH": ("th",),
}

# Each locale's sentence with a counter name, and without one (a ticket whose endpoint is not
# known). `{label}` is the spelled label, `{counter}` the counter's name in that locale. No full
# stop after `{counter}`: German reads "Schalter 3." as "Schalter dritte".
# The Japanese voice reads kana only (kanji come out as "Chinese letter"), hence kana text.
_SENTENCES: Final[Mapping[str, tuple[str, str]]] = {
    "fr_FR": ("Ticket {label}, {counter}", "Ticket {label}"),
    "en_US": ("Ticket {label}, please go to {counter}", "Ticket {label}, please"),
    "es_ES": ("Número {label}, diríjase a {counter}", "Número {label}, por favor"),
    "de_DE": ("Nummer {label}, bitte zu {counter}", "Nummer {label}, bitte"),
    "zh_CN": ("请 {label} 号 到 {counter}", "请 {label} 号 办理"),
    "zh_TW": ("請 {label} 號 到 {counter}", "請 {label} 號 辦理"),
    "ja_JP": (
        "{label} ばん の おきゃくさま、{counter} へ おこしください",
        "{label} ばん の おきゃくさま、おこしください",
    ),
    "ko_KR": ("{label}번 고객님, {counter}{particle} 오십시오", "{label}번 고객님, 오십시오"),
    "th_TH": ("หมายเลข {label}, {counter}", "หมายเลข {label}"),
}

_PAUSE_SSML: Final = '<break time="300ms"/>'
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]+")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One announcement in one locale: SSML for espeak-ng and the same words as plain text."""

    locale: str
    ssml: str
    text: str


def spell_label(label: str) -> tuple[str, str]:
    """Spell a ticket label so it is understood: (SSML, plain text).

    Letters are read as letters and digits one by one ("K017" -> "K 0 1 7"); anything else (a
    dash, a dot) becomes a short pause instead of being read out ("A-017" -> "A, 0 1 7").
    Full-width and other-script digits are read as digits.
    """
    # Words of the spelling: ("letters", "AB"), ("word", "0"), or ("pause", "").
    words: list[tuple[str, str]] = []
    for char in unicodedata.normalize("NFKC", label):
        digit = unicodedata.decimal(char, None)
        if char.isascii() and char.isalpha():
            if words and words[-1][0] == "letters":
                words[-1] = ("letters", words[-1][1] + char.upper())
            else:
                words.append(("letters", char.upper()))
        elif digit is not None:
            words.append(("word", str(digit)))
        elif char.isalnum():
            words.append(("word", char))
        elif words and words[-1][0] != "pause":
            words.append(("pause", ""))
    if words and words[-1][0] == "pause":
        words.pop()
    ssml: list[str] = []
    text: list[str] = []
    for kind, value in words:
        if kind == "pause":
            ssml.append(_PAUSE_SSML)
            text[-1] += ","
        elif kind == "letters":
            ssml.append(f'<say-as interpret-as="characters">{value}</say-as>')
            text.append(" ".join(value))
        else:
            ssml.append(escape(value))
            text.append(value)
    return " ".join(ssml), " ".join(text)


def spoken_counter(name: str, locale: str) -> str:
    """The counter's name as the locale's voice can say it ("" when nothing sayable is left).

    Names arrive written for the screen (`clean_text`: Thai SARA AM decomposed); espeak-ng reads
    a lone NIKHAHIT out as "Thai letter ...", so SARA AM is composed again.
    """
    name = for_speech(name)
    if locale == "ja_JP":
        name = _HAN.sub(" ", name)
    name = " ".join(name.split())
    return name if any(char.isalnum() for char in name) else ""


def korean_direction(word: str) -> str:
    """The particle "to" after `word`: 로 after a vowel or ㄹ, 으로 after another consonant."""
    last = word.rstrip(" .")[-1:] or "."
    if "\uac00" <= last <= "\ud7a3":
        final = (ord(last) - 0xAC00) % 28
        return "로" if final in (0, 8) else "으로"
    # Digits are read in Sino-Korean: 영 삼 육 end in a consonant other than ㄹ.
    if last.isdigit():
        return "으로" if last in "036" else "로"
    # Latin letters are read in English: M (엠) and N (엔) end in a consonant.
    return "으로" if last.upper() in "MN" else "로"


def compose(call: Call, locale: str) -> Sentence:
    """The sentence announcing `call` in `locale`, e.g. "Ticket K 0 1 7, please go to Desk 3"."""
    label_ssml, label_text = spell_label(call.label)
    counter = spoken_counter(pick_name(call.counter_names, locale), locale)
    with_counter, without_counter = _SENTENCES.get(locale, _SENTENCES["en_US"])
    template = with_counter if counter else without_counter
    particle = korean_direction(counter) if counter else ""
    ssml = template.format(label=label_ssml, counter=escape(counter), particle=particle)
    text = template.format(label=label_text, counter=counter, particle=particle)
    return Sentence(locale, f"<speak>{ssml}</speak>", text)


class Synthesizer(Protocol):
    """What the announcer needs from a text-to-speech engine."""

    async def voices(self) -> set[str]:
        """Names of the voices this engine has (lower case)."""
        ...

    async def render(self, voice: str, sentence: Sentence) -> Path:
        """A WAV file saying `sentence` with `voice`; raises ToolError when it cannot."""
        ...


def pick_voices(locales: list[str], available: set[str]) -> tuple[dict[str, str], list[str]]:
    """Match each locale to a voice: ({locale: voice}, [locales without a voice])."""
    chosen: dict[str, str] = {}
    missing: list[str] = []
    for locale in locales:
        voice = next((v for v in VOICE_CANDIDATES.get(locale, ()) if v in available), None)
        if voice is None:
            missing.append(locale)
        else:
            chosen[locale] = voice
    return chosen, missing


def parse_voice_list(listing: str) -> set[str]:
    """The voice names in the output of `espeak-ng --voices` (MBROLA voices left out).

    Lines read `Pty Language Age/Gender VoiceName File Other...`; the Language column is what
    `-v` takes.
    """
    names: set[str] = set()
    for line in listing.splitlines()[1:]:
        columns = line.split()
        if len(columns) >= 5 and columns[0].isdigit() and not columns[4].startswith("mb/"):
            names.add(columns[1].lower())
    return names


class SoundCache:
    """A directory of rendered WAV files named by a hash, bounded in size (oldest used go first)."""

    def __init__(self, directory: Path, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.directory = directory
        self.max_bytes = max_bytes

    def path_for(self, *parts: object) -> Path:
        """Where the sound shaped by `parts` is (or will be) kept."""
        digest = hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:32]
        return self.directory / f"{digest}.wav"

    def hit(self, path: Path) -> bool:
        """True when `path` holds a usable WAV; marks it as recently used."""
        if wav_seconds(path) is None:
            return False
        with contextlib.suppress(OSError):
            os.utime(path)
        return True

    def new_file(self) -> Path:
        """A new empty file in the cache directory, for a tool to write into."""
        make_directories(self.directory)
        handle, name = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".wav")
        os.close(handle)
        return Path(name)

    def store(self, written: Path, path: Path) -> None:
        """Keep the WAV file `written` as `path`; ToolError when it holds no sound."""
        if wav_seconds(written) is None:
            raise ToolError("the voice wrote no sound")
        os.replace(written, path)
        self.trim()

    def trim(self) -> None:
        """Remove the least recently used files until the cache fits in `max_bytes`."""
        try:
            entries = [
                (stat.st_mtime, stat.st_size, path)
                for path in self.directory.glob("*.wav")
                if (stat := path.stat())
            ]
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size


#: Version of the way sentences are rendered: bump it to invalidate every cached file.
_RENDER_VERSION: Final = 1


class Espeak:
    """espeak-ng rendering sentences to cached WAV files."""

    def __init__(
        self,
        executable: str,
        cache: SoundCache,
        *,
        rate: int = 150,
        volume: int = 100,
        time_limit: float = 15.0,
    ) -> None:
        self.executable = executable
        self.cache = cache
        self.rate = rate
        self.volume = volume
        self.time_limit = time_limit

    async def voices(self) -> set[str]:
        """The installed voices, from `espeak-ng --voices`."""
        finished = await run_tool([self.executable, "--voices"], self.time_limit, capture=True)
        if finished.returncode != 0:
            raise ToolError(f"espeak-ng --voices: {finished.reason()}")
        return parse_voice_list(finished.stdout.decode("utf-8", "replace"))

    async def render(self, voice: str, sentence: Sentence) -> Path:
        """The WAV file of `sentence` said by `voice`, from the cache when it was said before."""
        path = self.cache.path_for(_RENDER_VERSION, voice, self.rate, self.volume, sentence.ssml)
        # File work goes to a thread: the event loop also draws the screen.
        if await asyncio.to_thread(self.cache.hit, path):
            return path
        temporary = await asyncio.to_thread(self.cache.new_file)
        try:
            # espeak-ng's amplitude runs 0-200 around a default of 100: volume 100 is that default.
            argv = [self.executable, "-m", "-v", voice, "-s", str(self.rate)]
            argv += ["-a", str(self.volume), "-w", str(temporary), sentence.ssml]
            finished = await run_tool(argv, self.time_limit)
            if finished.returncode != 0:
                raise ToolError(f"espeak-ng -v {voice}: {finished.reason()}")
            await asyncio.to_thread(self.cache.store, temporary, path)
        finally:
            await asyncio.to_thread(temporary.unlink, missing_ok=True)
        return path

"""The chime: a two-tone WAV made by the program itself, and the WAV helpers around it."""

from __future__ import annotations

import array
import math
import os
import sys
import tempfile
import wave
from pathlib import Path
from typing import Final

from lobby_display.files import make_directories

#: Samples per second of the chime (espeak-ng renders at the same rate).
SAMPLE_RATE: Final = 22050
#: The two tones, high then low (E5, C5: the familiar "ding-dong" of public address systems).
TONES: Final = ((659.25, 0.42), (523.25, 0.62))
#: Peak level at volume 100, as a fraction of full scale: loud enough, with no clipping.
PEAK: Final = 0.6


def chime_samples(volume: int) -> array.array[int]:
    """The chime as signed 16-bit mono samples, scaled by `volume` (0 to 100)."""
    level = PEAK * max(0, min(volume, 100)) / 100 * 32767
    samples: array.array[int] = array.array("h")
    for frequency, seconds in TONES:
        count = int(SAMPLE_RATE * seconds)
        attack = int(SAMPLE_RATE * 0.008)
        for index in range(count):
            t = index / SAMPLE_RATE
            # A soft attack avoids a click; the exponential decay makes it ring like a bell; a
            # little of the second harmonic makes it carry over a noisy room.
            envelope = min(1.0, index / attack) * math.exp(-4.0 * t / seconds)
            wave_value = math.sin(2 * math.pi * frequency * t) + 0.25 * math.sin(
                4 * math.pi * frequency * t
            )
            samples.append(int(level * envelope * wave_value / 1.25))
    return samples


def write_chime(path: Path, volume: int) -> Path:
    """Write the built-in chime at `volume` to `path` (atomically) and return `path`."""
    write_wav(path, chime_samples(volume), SAMPLE_RATE)
    return path


def write_wav(path: Path, samples: array.array[int], rate: int, channels: int = 1) -> None:
    """Write signed 16-bit samples to a WAV file, atomically (a reader never sees half a file)."""
    make_directories(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".wav")
    try:
        with os.fdopen(handle, "wb") as raw, wave.open(raw, "wb") as out:
            out.setnchannels(channels)
            out.setsampwidth(2)
            out.setframerate(rate)
            if sys.byteorder == "big":
                samples = array.array("h", samples)
                samples.byteswap()
            out.writeframes(samples.tobytes())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def scaled_copy(source: Path, target: Path, volume: int) -> None:
    """Copy the WAV file `source` to `target` with its loudness scaled by `volume` (0 to 100).

    Only 16-bit PCM is scaled; other sample formats raise ValueError (the caller then plays the
    file as it is). Raises OSError or wave.Error for a file that cannot be read as WAV.
    """
    with wave.open(str(source), "rb") as reader:
        if reader.getsampwidth() != 2 or reader.getcomptype() != "NONE":
            raise ValueError("only 16-bit PCM WAV files can be scaled")
        channels, rate = reader.getnchannels(), reader.getframerate()
        frames = reader.readframes(reader.getnframes())
    samples: array.array[int] = array.array("h")
    samples.frombytes(frames[: len(frames) // 2 * 2])
    if sys.byteorder == "big":
        samples.byteswap()
    factor = max(0, min(volume, 100)) / 100
    scaled = array.array("h", (int(sample * factor) for sample in samples))
    write_wav(target, scaled, rate, channels)


def wav_seconds(path: Path) -> float | None:
    """How long the WAV file at `path` plays, or None when it is not a readable, non-empty WAV."""
    try:
        with wave.open(str(path), "rb") as reader:
            frames, rate = reader.getnframes(), reader.getframerate()
    except (OSError, wave.Error, EOFError):
        return None
    if frames <= 0 or rate <= 0:
        return None
    return frames / rate

"""The chime the program makes itself: a valid two-tone WAV, as loud as configured."""

from __future__ import annotations

import array
import itertools
import wave
from pathlib import Path

import pytest

from lobby_display.sound.chime import (
    SAMPLE_RATE,
    TONES,
    chime_samples,
    scaled_copy,
    wav_seconds,
    write_chime,
    write_wav,
)


def read_samples(path: Path) -> tuple[wave._wave_params, array.array[int]]:
    with wave.open(str(path), "rb") as reader:
        params = reader.getparams()
        samples: array.array[int] = array.array("h")
        samples.frombytes(reader.readframes(params.nframes))
    return params, samples


def crossings_per_second(samples: array.array[int]) -> float:
    signs = [sample > 0 for sample in samples if sample != 0]
    changes = sum(1 for a, b in itertools.pairwise(signs) if a != b)
    return changes / (len(samples) / SAMPLE_RATE)


def test_the_chime_is_a_valid_mono_16_bit_wav_of_about_a_second(tmp_path: Path) -> None:
    path = write_chime(tmp_path / "chime.wav", 100)
    params, samples = read_samples(path)
    assert (params.nchannels, params.sampwidth, params.framerate) == (1, 2, SAMPLE_RATE)
    assert 0.8 < (wav_seconds(path) or 0) < 1.5
    assert max(abs(sample) for sample in samples) > 10_000
    assert max(abs(sample) for sample in samples) < 32_767  # no clipping


def test_the_chime_has_two_tones_high_then_low(tmp_path: Path) -> None:
    _, samples = read_samples(write_chime(tmp_path / "chime.wav", 100))
    first = int(TONES[0][1] * SAMPLE_RATE)
    # A pure tone of f Hz crosses zero 2f times a second (the added harmonic adds no crossing).
    high = crossings_per_second(samples[: first // 2])
    low = crossings_per_second(samples[first : first + first // 2])
    assert high == pytest.approx(2 * TONES[0][0], rel=0.03)
    assert low == pytest.approx(2 * TONES[1][0], rel=0.03)


def test_volume_scales_the_chime() -> None:
    loud = max(abs(sample) for sample in chime_samples(100))
    half = max(abs(sample) for sample in chime_samples(50))
    assert half == pytest.approx(loud / 2, rel=0.01)
    assert max(abs(sample) for sample in chime_samples(0)) == 0


def test_a_custom_chime_is_copied_at_the_configured_volume(tmp_path: Path) -> None:
    source = tmp_path / "custom.wav"
    write_wav(source, array.array("h", [20_000, -20_000] * 100), 44_100, channels=2)
    scaled_copy(source, tmp_path / "quiet.wav", 25)
    params, samples = read_samples(tmp_path / "quiet.wav")
    assert (params.nchannels, params.framerate) == (2, 44_100)
    assert set(samples) == {5_000, -5_000}


def test_a_custom_chime_in_another_sample_format_is_not_scaled(tmp_path: Path) -> None:
    source = tmp_path / "8bit.wav"
    with wave.open(str(source), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(1)
        writer.setframerate(8000)
        writer.writeframes(bytes([128, 200, 56]) * 100)
    with pytest.raises(ValueError, match="16-bit"):
        scaled_copy(source, tmp_path / "out.wav", 50)


def test_files_that_are_not_wav_or_are_empty_have_no_length(tmp_path: Path) -> None:
    (tmp_path / "text.wav").write_text("hello")
    write_wav(tmp_path / "empty.wav", array.array("h"), SAMPLE_RATE)
    assert wav_seconds(tmp_path / "text.wav") is None
    assert wav_seconds(tmp_path / "empty.wav") is None
    assert wav_seconds(tmp_path / "missing.wav") is None

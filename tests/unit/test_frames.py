"""The pace of frames: a lone update drawn at once, a burst drawn in frames spaced by the UI's
load, never further apart than `SLOWEST` (a call held back longer would look missed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lobby_display.frames import (
    BUSY,
    COMPOSE_FPS,
    FASTEST,
    SLOWEST,
    FramePacer,
    compose_promptly,
)


def test_the_first_frame_and_a_frame_after_a_quiet_spell_are_drawn_at_once() -> None:
    pacer = FramePacer()
    assert pacer.delay(100.0) == 0.0
    pacer.drawn(100.0, cpu=1.0)
    assert pacer.delay(100.0 + 5.0) == 0.0


def test_a_frame_right_after_another_waits_for_the_rest_of_the_interval() -> None:
    pacer = FramePacer()
    pacer.drawn(100.0, cpu=1.0)
    assert pacer.delay(100.005) == pytest.approx(FASTEST - 0.005)


def busy_frames(pacer: FramePacer, share: float, count: int, start: float = 100.0) -> float:
    """Draw `count` frames, each as soon as allowed, the UI working `share` of the time."""
    now, cpu = start, 0.0
    for _ in range(count):
        pacer.drawn(now, cpu)
        step = pacer.interval
        now += step
        cpu += share * step
    return now


def test_a_busy_ui_spaces_frames_out_up_to_the_slowest_interval() -> None:
    pacer = FramePacer()
    busy_frames(pacer, share=0.9, count=60)
    assert pacer.interval == pytest.approx(SLOWEST)
    assert pacer.load > BUSY
    assert not pacer.keeps_up


def test_a_lightly_loaded_ui_keeps_sixty_frames_a_second() -> None:
    pacer = FramePacer()
    busy_frames(pacer, share=0.2, count=60)
    assert pacer.interval == pytest.approx(FASTEST)
    assert pacer.rate == pytest.approx(60)
    assert pacer.keeps_up


def test_the_interval_comes_back_to_sixty_hertz_when_the_burst_ends() -> None:
    pacer = FramePacer()
    now = busy_frames(pacer, share=0.9, count=60)
    assert pacer.interval > FASTEST
    busy_frames(pacer, share=0.05, count=60, start=now)
    assert pacer.interval == pytest.approx(FASTEST)


def test_a_quiet_spell_forgets_the_load_of_the_last_burst() -> None:
    pacer = FramePacer()
    now = busy_frames(pacer, share=1.0, count=30)
    pacer.drawn(now + 10.0, cpu=1000.0)  # 10 s later, whatever the CPU clock says
    assert pacer.load == 0.0


def test_textual_composes_a_drawn_frame_promptly_unless_told_otherwise() -> None:
    # At Textual's own 60 Hz a frame drawn just after a composition waits up to 16 ms more.
    environ: dict[str, str] = {}
    compose_promptly(environ)
    assert environ == {"TEXTUAL_FPS": str(COMPOSE_FPS)}
    assert COMPOSE_FPS >= 4 * 60
    told = {"TEXTUAL_FPS": "30"}
    compose_promptly(told)
    assert told == {"TEXTUAL_FPS": "30"}


def test_the_display_runs_with_textuals_compose_rate_raised() -> None:
    # The entry point runs first (here a check of a config that is not there), the screen's
    # code is imported after it, as in `run` and `demo`.
    code = (
        "import lobby_display.cli as cli\n"
        "cli.main(['check', '--config', '/nonexistent/lobby.toml'])\n"
        "import textual.constants as c; print(c.MAX_FPS)"
    )
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.strip() == str(COMPOSE_FPS)

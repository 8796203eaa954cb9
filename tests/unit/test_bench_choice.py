"""Which benchmarks a run makes: a played host (`--issue-host`, `--slow-host`) runs only those
with sections of its own, so that its figures never replace this host's in docs/benchmarks.md;
and a played host whose speed moved during the run is judged only where the move could not
have helped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench import harness
from bench.__main__ import (
    BENCHMARKS,
    ISSUE_HOST_LABEL,
    ISSUE_HOST_MS,
    PLAYED,
    chosen_benchmarks,
    verdict,
)
from bench.slow_host import SlowHost

ROOT = Path(__file__).resolve().parents[2]


def test_this_host_runs_every_benchmark_and_a_played_host_its_own() -> None:
    assert chosen_benchmarks("", played=False) == list(BENCHMARKS)
    assert chosen_benchmarks("", played=True) == list(PLAYED) == ["latency", "idle"]
    assert chosen_benchmarks(" idle , latency", played=True) == ["idle", "latency"]


@pytest.mark.parametrize(
    ("only", "played", "named"),
    [
        ("latency,start,day", True, "start, day: no section for a played host"),
        ("latency,speed", False, "unknown benchmark: speed"),
    ],
)
def test_what_cannot_be_run_is_named(only: str, played: bool, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        chosen_benchmarks(only, played=played)


def test_the_command_refuses_before_playing_the_host() -> None:
    # Refused before the host is played (a cgroup, root): the error alone, at once.
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--issue-host", "--only", "start"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "start: no section for a played host" in result.stderr
    assert "host played" not in result.stdout


def test_a_played_host_whose_speed_moved_is_judged_only_where_the_move_could_not_help(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Other work on the machine moves its speed during a run: a played host whose calibration
    reads more than 10 % over by the end was a slower host than the one named, and one 10 %
    under a faster one. A miss on the slower host, or a target met on the faster one, may come
    from the move and is not judged; a target met on the slower host (harsher) or missed on
    the faster one (kinder) stands. This host's rows are judged as they are."""
    host = SlowHost(ISSUE_HOST_MS, label=ISSUE_HOST_LABEL, measured_ms=24.2)
    monkeypatch.setattr(harness, "played_host", host)
    played_row = "Event to screen (issue 16's host)"
    host.end_ms = 25.9  # within 10 %
    assert verdict(played_row, False) == "**no**"
    assert verdict(played_row, True) == "yes"
    host.end_ms = 23.0  # within 10 %
    assert verdict(played_row, True) == "yes"
    host.end_ms = 32.2
    assert verdict(played_row, False) == "not judged (the played host read 32.2 ms by the end)"
    assert verdict(played_row, True) == (
        "yes (on a slower host: the played host read 32.2 ms by the end)"
    )
    host.end_ms = 19.9
    assert verdict(played_row, True) == "not judged (the played host read 19.9 ms by the end)"
    assert verdict(played_row, False) == (
        "**no** (on a faster host: the played host read 19.9 ms by the end)"
    )
    assert verdict("Event to screen", False) == "**no**"
    assert verdict("Event to screen", True) == "yes"

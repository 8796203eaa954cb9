"""`lobby-display check`'s clock line against the simulator (operations.md): FAIL when the machine's
clock is more than 60 s off the service's (its Date header), or before 2024 (never
synchronised), with the fix; exit code 1.

The machine's clock cannot be moved by a test: the clock the checks read (`datetime.now`) is
shifted instead, the service's Date header staying the real time.
"""

from __future__ import annotations

import importlib
import os
import re
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

import pytest

from lobby_display import auth
from lobby_display.simulator import SimulatorServer
from tests.integration.test_ops_check import line, run_check, status

#: The module (`lobby_display.ops.check` is also the name of its function, in ops/__init__).
checks = importlib.import_module("lobby_display.ops.check")


def shifted_clock(offset: timedelta) -> type[datetime]:
    """A `datetime` whose `now()` is the real time plus `offset` (everything else as usual)."""

    class Shifted(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> Shifted:
            moment = datetime.now(tz) + offset
            return cls.fromtimestamp(moment.timestamp(), tz)

    return Shifted


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
        monkeypatch.delenv(name)


@pytest.mark.parametrize(("seconds", "way"), [(120, "ahead of"), (-90, "behind")])
def test_a_clock_more_than_a_minute_off_fails(
    simulator: SimulatorServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    seconds: int,
    way: str,
) -> None:
    monkeypatch.setattr(checks, "datetime", shifted_clock(timedelta(seconds=seconds)))
    config = simulator.write_config(tmp_path)
    code, report = run_check(capsys, config)
    assert code == 1, report
    assert status(report, "clock") == "FAIL", report
    said = line(report, "clock")
    off = re.search(rf"is (\d+) s {way} the service's clock", said)
    assert off and int(off.group(1)) > 60, said
    assert "timedatectl set-ntp true" in said
    # The rest was reached: only the clock is wrong.
    assert status(report, "place") == "ok"


def test_a_clock_within_a_minute_passes(
    simulator: SimulatorServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check above can pass: 30 s off is within the limit."""
    monkeypatch.setattr(checks, "datetime", shifted_clock(timedelta(seconds=30)))
    config = simulator.write_config(tmp_path)
    code, report = run_check(capsys, config)
    assert status(report, "clock") == "ok", report
    assert code == 0, report


def test_a_clock_before_2024_fails_and_signs_nothing(
    simulator: SimulatorServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A machine without a battery-backed clock, never synchronised: 1 January 2023.
    offset = datetime(2023, 1, 1, 0, 5, tzinfo=UTC) - datetime.now(UTC)
    monkeypatch.setattr(checks, "datetime", shifted_clock(offset))
    monkeypatch.setattr(auth, "datetime", shifted_clock(offset))
    config = simulator.write_config(tmp_path)
    issued = simulator.status()["apiKeys"]["issued"]
    code, report = run_check(capsys, config)
    assert code == 1, report
    assert status(report, "clock") == "FAIL", report
    said = line(report, "clock")
    assert "2023-01-01" in said and "not synchronised" in said
    assert "timedatectl set-ntp true" in said
    assert status(report, "API key") == "FAIL"
    assert status(report, "service") == "skip"
    assert simulator.status()["apiKeys"]["issued"] == issued, "no key asked for"

"""The played slow host (`bench/slow_host.py`): a share of a core in short periods, so that the
programs under test are slowed evenly, as on a slower core, not stopped for tens of
milliseconds at a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench import slow_host
from bench.harness import cpu_seconds, memory
from bench.slow_host import SlowHost, quota_of


@pytest.mark.parametrize("share", [0.2, 0.5, 0.71, 0.82, 0.99])
def test_a_share_of_a_core_comes_in_periods_of_a_few_milliseconds(share: float) -> None:
    quota, period = quota_of(share)
    assert quota / period == pytest.approx(share, abs=0.002)
    assert period - quota < 5000, "the programs would stop for 5 ms or longer at a time"


def test_a_full_core_is_not_limited() -> None:
    quota, period = quota_of(1.0)
    assert quota == period


def test_the_search_keeps_short_periods_after_a_slow_first_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """This host read slower than the played one at first (other work on the machine), so the
    first try is a full core; the next tries, under a share, must not keep its long period."""
    monkeypatch.setattr(slow_host, "_hierarchy", lambda: None)
    monkeypatch.setattr(slow_host, "_measure", lambda group, repeats, loops: 30.5)
    readings = iter([18.0, 24.1])

    def read(host: SlowHost, repeats: int, loops: int) -> float:
        return next(readings)

    monkeypatch.setattr(SlowHost, "_read", read)
    host = SlowHost(24.0).calibrate()
    assert host.measured_ms == 24.1
    assert host.share < 1
    assert host.period_us <= 5000, (host.quota_us, host.period_us)


#: A child that burns 0.6 s of CPU, holds 30 MB, and ends with its input.
CHILD = """
import sys, time
end = time.process_time() + 0.6
while time.process_time() < end:
    pass
held = bytearray(30 << 20)
print("busy done", flush=True)
sys.stdin.read()
"""
#: A parent that starts the child, says its PID, and passes its end on.
PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, sys.argv[1]], stdin=subprocess.PIPE, stdout=sys.stdout)
print(child.pid, flush=True)
sys.stdin.read()
child.communicate(b"")
"""


def test_the_benchmarks_count_the_processes_a_program_started(tmp_path: Path) -> None:
    """The picture maker's CPU and memory are the display's: a benchmark that read the display's
    process alone would credit it with the work moved to its child."""
    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "parent.py").write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "parent.py"), str(tmp_path / "child.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert slow_host.descendants(parent.pid) == [child]
        assert parent.stdout.readline() == b"busy done\n"
        assert cpu_seconds(parent.pid) >= 0.6, "the child's CPU is counted with its parent's"
        assert memory(child)[0] >= 30 * 2**20
        assert memory(parent.pid)[0] >= memory(child)[0] + 2**20, "with the parent's own"
    finally:
        parent.communicate(b"", timeout=20)
    assert slow_host.descendants(parent.pid) == []

"""A slower host played on this one: the programs under test get the share of a core that makes
the calibration workload take as long as it does on the slower host.

A small PC behind a TV is slower than the machines the benchmarks usually run on, and it is
where the display must be fast (issue 16 names a host on which `sum(range(10**6))` takes
48 ms). `SlowHost(48)` finds the CPU quota of a cgroup (the kernel's CPU bandwidth control, v1
or v2) under which `harness.host_speed` reads 48 ms, and every program a benchmark starts on a
pty then runs in a cgroup of its own with that quota. This is an emulation, not the small PC:
the quota is enforced in periods of a few milliseconds (a program runs at full speed, then
waits), memory and caches are this machine's, and only the programs under test are slowed
(the simulator and the pty reader keep this machine's speed, so the measuring instruments do
not slow down with what they measure).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

#: cgroup v2 (a unified hierarchy with the cpu controller) or v1 (a `cpu` hierarchy).
_V2_ROOT = Path("/sys/fs/cgroup")
_V1_ROOT = Path("/sys/fs/cgroup/cpu")
#: The kernel refuses quotas under 1 ms; the period is as short as that allows, so that a
#: program waits at most a few milliseconds for its next share.
_MIN_QUOTA_US = 1000
#: A calibration within this share of the target is close enough.
_TOLERANCE = 0.04

_CALIBRATE = (
    "from bench.harness import host_speed; import sys; "
    "sys.stdout.write(repr(host_speed(int(sys.argv[1]), int(sys.argv[2]))))"
)


class SlowHostError(RuntimeError):
    """The slower host cannot be played here (no writable cgroup with a cpu controller)."""


def _hierarchy() -> tuple[Path, bool]:
    """The directory under which groups are made, and whether it is cgroup v2."""
    controllers = _V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return _V2_ROOT, True
    if (_V1_ROOT / "cpu.cfs_quota_us").exists():
        return _V1_ROOT, False
    raise SlowHostError(
        "no cgroup with a cpu controller under /sys/fs/cgroup: the slower host cannot be "
        "played here (run as root on a Linux host with CPU bandwidth control)"
    )


@dataclass
class CpuGroup:
    """One cgroup with a CPU quota; a program joins it with `join` (from its `preexec_fn`)."""

    path: Path
    v2: bool

    def join(self) -> None:
        """Move the calling process into the group (in a child, before it runs the program)."""
        (self.path / "cgroup.procs").write_text("0")

    def remove(self) -> None:
        """Remove the group once its programs ended (a group with programs in it stays)."""
        with contextlib.suppress(OSError):
            self.path.rmdir()


@dataclass
class SlowHost:
    """The host to play: `calibration_ms` is what `harness.host_speed` reads there."""

    calibration_ms: float
    quota_us: int = 0
    period_us: int = 0
    measured_ms: float = 0.0
    """What `host_speed` read in a group with the quota found (after `calibrate`)."""
    this_host_ms: float = 0.0
    """What `host_speed` read on this host, without a quota."""

    @property
    def share(self) -> float:
        """The share of one core the programs under test get."""
        return self.quota_us / self.period_us if self.period_us else 1.0

    def calibrate(self, repeats: int = 15, loops: int = 10) -> SlowHost:
        """Find the quota under which the calibration reads `calibration_ms` (a few tries)."""
        _hierarchy()
        self.this_host_ms = _measure(None, repeats, loops)
        share = min(1.0, self.this_host_ms / self.calibration_ms)
        self.period_us = max(5000, int(_MIN_QUOTA_US / share) + 1) if share < 1 else 100_000
        for _ in range(5):
            self.quota_us = max(_MIN_QUOTA_US, round(self.period_us * share))
            group = self.group()
            try:
                self.measured_ms = _measure(group, repeats, loops)
            finally:
                group.remove()
            error = self.measured_ms / self.calibration_ms
            if abs(error - 1) <= _TOLERANCE:
                break
            share = min(1.0, share * error)
        return self

    def group(self) -> CpuGroup:
        """A new group with this host's quota (remove it when its program ended)."""
        root, v2 = _hierarchy()
        path = root / f"lobby-bench-{uuid.uuid4().hex[:8]}"
        path.mkdir()
        if v2:
            (path / "cpu.max").write_text(f"{self.quota_us} {self.period_us}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(self.period_us))
            (path / "cpu.cfs_quota_us").write_text(str(self.quota_us))
        return CpuGroup(path, v2)

    def describe(self) -> str:
        """One line for the document: what was played and how."""
        return (
            f"this host ({self.this_host_ms:.1f} ms) playing a host of "
            f"{self.calibration_ms:.0f} ms:"
            f" the programs under test get {100 * self.share:.0f} % of a core (CPU quota "
            f"{self.quota_us / 1000:.2f} ms every {self.period_us / 1000:.0f} ms), under which the "
            f"calibration read {self.measured_ms:.1f} ms"
        )


def _measure(group: CpuGroup | None, repeats: int, loops: int) -> float:
    """`host_speed` in a fresh interpreter, in `group` (None: no quota)."""
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-c", _CALIBRATE, str(repeats), str(loops)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=group.join if group is not None else None,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    return float(result.stdout)

"""A slower host played on this one: the programs under test run on `cores` slow cores, each the
share of one of this host's cores that makes the calibration workload as slow as there.

`SlowHost(48)` finds the CPU quota (cgroup CPU bandwidth control) under which
`harness.host_speed` reads 48 ms, issue 16's small PC. That PC has two cores, so a program
under test gets a group with two such shares, and each of its threads a group of its own with
one share (cgroup v1, where threads move alone): one thread never runs faster than a slow core,
and the UI thread and Textual's writer still run side by side. Where threads cannot move alone
(cgroup v2 here), all threads share one slow core, a harsher host. Only the programs under test
are slowed: the simulator and the pty reader keep this machine's speed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

#: cgroup v2 (a unified hierarchy with the cpu controller) or v1 (a `cpu` hierarchy).
_V2_ROOT = Path("/sys/fs/cgroup")
_V1_ROOT = Path("/sys/fs/cgroup/cpu")
#: The kernel refuses quotas under 1 ms; the period is as short as that allows, so that a
#: program waits at most a few milliseconds for its next share.
_MIN_QUOTA_US = 1000
#: A calibration within this share of the target is close enough.
_TOLERANCE = 0.04
#: The closest try further than this from the target is no played host: other work on the
#: machine moved its speed while the quota was sought (a run once played issue 16's 24 ms host
#: at a full core, where the calibration read 20 ms).
_PLAYABLE = 0.10

_CALIBRATE = (
    "from bench.harness import host_speed; import sys; "
    "sys.stdout.write(repr(host_speed(int(sys.argv[1]), int(sys.argv[2]))))"
)


class SlowHostError(RuntimeError):
    """The slower host cannot be played here (no writable cgroup with a cpu controller, or a
    machine too busy to find its quota)."""


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
    """A cgroup with the quota of the host's cores; a program joins it with `join` (from its
    `preexec_fn`), and `spread` gives each of its threads a slow core of its own."""

    path: Path
    v2: bool
    core_quota_us: int = 0
    """One slow core's quota per period for each thread (0: the threads share the group's)."""
    period_us: int = 0
    _threads: dict[int, Path] = field(default_factory=dict)

    def join(self) -> None:
        """Move the calling process into the group (in a child, before it runs the program):
        into its first thread's core when threads get cores of their own."""
        if self.core_quota_us:
            (self._thread_group(os.getpid()) / "tasks").write_text("0")
        else:
            (self.path / "cgroup.procs").write_text("0")

    def spread(self, pid: int) -> int:
        """Give each thread of `pid` and of the processes it started (the picture maker) not
        seen yet a slow core of its own; return how many were moved. A new thread or process
        starts in its creator's group and shares its core until then; all of them together
        never get more than the group's cores."""
        if not self.core_quota_us:
            return 0
        moved = 0
        for process in (pid, *descendants(pid)):
            with contextlib.suppress(OSError):
                for entry in os.scandir(f"/proc/{process}/task"):
                    tid = int(entry.name)
                    if tid in self._threads or tid == pid:
                        continue
                    with contextlib.suppress(OSError):
                        (self._thread_group(tid) / "tasks").write_text(str(tid))
                        moved += 1
        return moved

    def _thread_group(self, tid: int) -> Path:
        path = self.path / f"thread-{tid}"
        path.mkdir(exist_ok=True)
        (path / "cpu.cfs_period_us").write_text(str(self.period_us))
        (path / "cpu.cfs_quota_us").write_text(str(self.core_quota_us))
        self._threads[tid] = path
        return path

    def remove(self) -> None:
        """Remove the group once its programs ended (a group with programs in it stays)."""
        # The first thread's group was made in the child (join): found by name, not in _threads.
        for path in self.path.glob("thread-*"):
            with contextlib.suppress(OSError):
                path.rmdir()
        with contextlib.suppress(OSError):
            self.path.rmdir()


def descendants(pid: int) -> list[int]:
    """The processes `pid` started that still run, and theirs (/proc/PID/task/*/children)."""
    found: list[int] = []
    parents = [pid]
    while parents:
        parent = parents.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            with contextlib.suppress(OSError):
                children = Path(f"/proc/{parent}/task/{task}/children").read_text().split()
                found.extend(int(child) for child in children)
                parents.extend(int(child) for child in children)
    return found


def quota_of(share: float) -> tuple[int, int]:
    """The quota and period (µs) that give `share` of a core. The period is as short as the
    kernel's 1 ms least quota allows: a program waits at most a few milliseconds for its next
    share, as on a slower core. A quota is sought again with the share only: its period set by
    a first reading of a full core (this host slower than the one played, for a moment) gave a
    played host 71 ms every 100 ms, which stopped the display for 29 ms at a time."""
    if share >= 1:
        return 100_000, 100_000
    period = max(5000, int(_MIN_QUOTA_US / share) + 1)
    return max(_MIN_QUOTA_US, round(period * share)), period


@dataclass
class SlowHost:
    """The host to play: `calibration_ms` is what `harness.host_speed` reads there."""

    calibration_ms: float
    cores: int = 2
    """The played host's cores (issue 16's host has two, like this one)."""
    label: str = ""
    """What the played host is, for the document ("": a host of `calibration_ms`)."""
    quota_us: int = 0
    period_us: int = 0
    measured_ms: float = 0.0
    """What `host_speed` read in a group with the quota found (after `calibrate`)."""
    this_host_ms: float = 0.0
    """What `host_speed` read on this host, without a quota."""
    end_ms: float | None = None
    """What `host_speed` read under the same quota at the end of the run (`read_again`)."""

    @property
    def share(self) -> float:
        """The share of one core the programs under test get."""
        return self.quota_us / self.period_us if self.period_us else 1.0

    def calibrate(self, repeats: int = 15, loops: int = 10) -> SlowHost:
        """Find the quota under which the calibration reads `calibration_ms` (a few tries)."""
        _hierarchy()
        self.this_host_ms = _measure(None, repeats, loops)
        share = min(1.0, self.this_host_ms / self.calibration_ms)
        tries: list[tuple[float, int, int, float]] = []
        for _ in range(5):
            self.quota_us, self.period_us = quota_of(share)
            self.measured_ms = self._read(repeats, loops)
            error = self.measured_ms / self.calibration_ms
            tries.append((abs(error - 1), self.quota_us, self.period_us, self.measured_ms))
            if abs(error - 1) <= _TOLERANCE:
                break
            share = min(1.0, share * error)
        # Other work on the machine moves the reading: the quota that came closest, not the
        # last one tried (which once left the host unplayed, at a full core).
        error, self.quota_us, self.period_us, self.measured_ms = min(tries)
        if error > _PLAYABLE:
            readings = ", ".join(f"{ms:.1f} ms" for *_, ms in tries)
            raise SlowHostError(
                f"a host of {self.calibration_ms:.0f} ms could not be played: the calibration "
                f"read {readings} under the quotas tried (this host {self.this_host_ms:.1f} ms); "
                "other work on the machine moves its speed, run again when it is quieter"
            )
        return self

    def read_again(self, repeats: int = 15, loops: int = 10) -> float:
        """Read the calibration again under the quota found (`end_ms`): a machine that other
        work slowed during the run played a slower host than it says by its end."""
        self.end_ms = self._read(repeats, loops)
        return self.end_ms

    def _read(self, repeats: int, loops: int) -> float:
        """`host_speed` under the current quota, in a group of its own."""
        group = self.group()
        try:
            return _measure(group, repeats, loops)
        finally:
            group.remove()

    @property
    def slowed(self) -> bool:
        """The calibration read at the end is more than 10 % over the one the run played: the
        figures are of a slower host than the one named, by the end. A target missed there is
        not judged; one met there is met (a slower host is harsher)."""
        return self.end_ms is not None and self.end_ms > self.measured_ms * (1 + _PLAYABLE)

    @property
    def sped_up(self) -> bool:
        """The calibration read at the end is more than 10 % under the one the run played: the
        figures are of a faster host than the one named, by the end. A target met there is not
        judged; one missed there is missed."""
        return self.end_ms is not None and self.end_ms < self.measured_ms * (1 - _PLAYABLE)

    @property
    def threads_spread(self) -> bool:
        """Whether each thread gets a slow core of its own (cgroup v1), or all share one."""
        return self.cores > 1 and not _hierarchy()[1]

    def group(self) -> CpuGroup:
        """A new group with this host's quota (remove it when its program ended)."""
        root, v2 = _hierarchy()
        path = root / f"lobby-bench-{uuid.uuid4().hex[:8]}"
        path.mkdir()
        if v2:
            (path / "cpu.max").write_text(f"{self.quota_us} {self.period_us}")
            return CpuGroup(path, v2)
        cores = self.cores if self.threads_spread else 1
        (path / "cpu.cfs_period_us").write_text(str(self.period_us))
        (path / "cpu.cfs_quota_us").write_text(str(self.quota_us * cores))
        if cores == 1:
            return CpuGroup(path, v2)
        return CpuGroup(path, v2, core_quota_us=self.quota_us, period_us=self.period_us)

    def describe(self) -> str:
        """One line for the document: what was played and how."""
        cores = (
            f"{self.cores} cores of {100 * self.share:.0f} % of one of this host's, one thread "
            "at most on each"
            if self.threads_spread
            else f"{100 * self.share:.0f} % of a core for all their threads"
        )
        played = self.label or f"a host of {self.calibration_ms:.0f} ms"
        return (
            f"this host ({self.this_host_ms:.1f} ms) playing {played}:"
            f" the programs under test get {cores} (CPU quota "
            f"{self.quota_us / 1000:.2f} ms every {self.period_us / 1000:.0f} ms), under which the "
            f"calibration read {self.measured_ms:.1f} ms"
            + ("" if self.end_ms is None else f" ({self.end_ms:.1f} ms at the end of the run)")
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

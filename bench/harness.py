"""What the benchmarks share: programs on a pty, their CPU and memory, the simulator, statistics.

Every benchmark runs the real display (`python -m lobby_display run --config FILE`) on its own
pseudo-terminal against the simulator on 127.0.0.1, often next to a bare Textual app showing a
clock (`bench/bare_clock.py`) on a pty of the same size. The terminal side is read by a thread
that timestamps each chunk with `time.perf_counter()` as it arrives, and strips escape sequences
so that the text on screen can be searched. The terminal side also plays the kiosk's terminal
(`FOOT`, foot 1.13 as the TV runs it): the pty has foot's pixel size and the reader answers the
questions foot answers, so the display shows ticket labels as sixel images, as on the TV.
"""

from __future__ import annotations

import codecs
import fcntl
import importlib.metadata
import math
import os
import platform
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time
import timeit
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bare_clock import BARE_MARK as BARE_MARK
from bench.slow_host import CpuGroup, SlowHost, descendants
from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.simulator.names import COMPANY_NAME
from tests.helpers.kiosk_install import KIOSK_INSTALL

#: The repository (the bench package's parent): programs run from here.
ROOT = Path(__file__).resolve().parent.parent
#: The screen every benchmark draws on: a 1080p TV in a terminal gives about this.
ROWS, COLUMNS = 50, 160
#: Complete escape sequences (DCS such as a sixel image, CSI, OSC, two-byte ESC x) and lone C0
#: controls other than RS (which stands for the end of a synchronised frame, `FRAME_END`).
_ESCAPES = re.compile(
    rb"\x1bP[^\x1b]*\x1b\\|\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    rb"|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1d\x1f]"
)
#: A sequence cut at the end of a chunk (kept for the next chunk).
_CUT = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|P[^\x1b]*\x1b?)?$")
#: A sixel image (DCS ... q ... ST), counted as it goes by.
_SIXEL = re.compile(rb"\x1bP[0-9;]*q[^\x1b]*\x1b\\")
#: The end of a synchronised frame (Textual brackets every frame where the terminal says it can;
#: foot shows the frame when it ends).
_SYNC_END = b"\x1b[?2026l"
#: What stands for `_SYNC_END` in the text given to watchers.
FRAME_END = "\x1e"

#: How much of the text written is kept for `Terminal.wait_for` (a few full screens).
TEXT_KEPT = 256 * 1024

Watcher = Callable[[float, str], None]

#: The slower host the programs under test play (`python -m bench --slow-host MS`), or None:
#: every `Terminal` started while it is set runs its program in a group with its CPU quota.
played_host: SlowHost | None = None


_calibration: float | None = None


def calibration_ms() -> float:
    """The host's calibration (`host_speed`, the played host's when one is played), taken once
    per run: what latencies are divided by to compare hosts."""
    global _calibration
    if played_host is not None:
        return played_host.measured_ms
    if _calibration is None:
        _calibration = host_speed()
    return _calibration


def set_calibration(value: float) -> None:
    """Use `value` as this host's calibration (the one `python -m bench` took at its start)."""
    global _calibration
    _calibration = value


def core_share() -> float:
    """The share of a core the programs under test get (1 unless a slower host is played):
    CPU measured here divided by it is CPU in units of the played host's core."""
    return played_host.share if played_host is not None else 1.0


#: The questions a terminal is asked (DA1, the synchronised-output mode, window and cell sizes).
_QUERY = re.compile(rb"\x1b\[(?:0?c|\?2026\$p|1[46]t)")


@dataclass(frozen=True)
class Emulation:
    """The terminal the reader side plays: its TERM, its cell size in pixels (in the pty's window
    size, as foot sets it) and its answers to the questions a program may ask (`answer`)."""

    name: str
    term: str | None
    """TERM for the program (None: the environment's)."""
    cell: tuple[int, int] | None
    """A cell's width and height in pixels (None: the pty's pixel size is left at 0)."""
    device_attributes: bytes | None
    """The answer to DA1 (None: no answer to anything, like a terminal that never answers)."""

    def answer(self, query: bytes, rows: int, columns: int) -> bytes:
        """What the terminal writes back for `query` (a `_QUERY` match); b"": nothing."""
        if self.device_attributes is None:
            return b""
        if query.endswith(b"c"):
            return self.device_attributes
        if query == b"\x1b[?2026$p":
            return b"\x1b[?2026;2$y"  # synchronised output: known, currently reset
        if self.cell is None:
            return b""
        width, height = self.cell
        if query == b"\x1b[16t":
            return b"\x1b[6;%d;%dt" % (height, width)
        return b"\x1b[4;%d;%dt" % (rows * height, columns * width)


#: foot 1.13.1 with `systemd/foot.ini` (pixelsize=30) on the TV: 18 x 36-pixel cells. Its
#: answers as checked in foot on this machine (`kiosk-shot`): DA1 `ESC [ ? 62;4;22 c` (4: sixel),
#: mode 2026 reported, CSI 16 t `ESC [ 6;36;18 t`.
FOOT = Emulation("foot", "foot", (18, 36), b"\x1b[?62;4;22c")
#: A terminal that answers nothing and gives no pixel size (what the benchmarks played before).
SILENT = Emulation("silent", None, None, None)


def quiet_environment(**extra: str) -> dict[str, str]:
    """The environment of a program under test: no animations, no colour overrides, no config."""
    # PYTHONDONTWRITEBYTECODE goes too: an installed kiosk has its bytecode (pip compiles it),
    # and without it every start would compile the program again (about 0.1 s).
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("LOBBY_DISPLAY_")
        and name
        not in (
            "NO_COLOR",
            "CREDENTIALS_DIRECTORY",
            "NOTIFY_SOCKET",
            "WATCHDOG_USEC",
            "PYTHONDONTWRITEBYTECODE",
        )
    }
    env.update(TERM="xterm-256color", COLORTERM="truecolor", TEXTUAL_ANIMATIONS="none")
    env.update(extra)
    return env


class Terminal:
    """A program on its own pseudo-terminal; its output is kept as timestamped chunks.

    `watch(at, text)` is called from the reader thread for every chunk, with the moment it was
    read (`perf_counter`) and its text with the escape sequences replaced by NUL (so words of
    different cells never join) and the end of each synchronised frame by `FRAME_END`.
    `started_at` is the `perf_counter` just before the process was started. The reader answers
    the program's questions as `emulation` does, and counts the sixel images written (`images`,
    `image_bytes`).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        rows: int = ROWS,
        columns: int = COLUMNS,
        watch: Watcher | None = None,
        emulation: Emulation = FOOT,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env if env is not None else quiet_environment())
        self.emulation = emulation
        if emulation.term is not None:
            self.env["TERM"] = emulation.term
        self.rows = rows
        self.columns = columns
        self.watch = watch
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.bytes_read = 0
        self.images = 0
        self.image_bytes = 0
        self._query_tail = b""
        self._master = -1
        self._text = ""
        self._carry = b""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._lock = threading.Condition()
        self._eof = False
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None
        self._group: CpuGroup | None = None

    @property
    def pid(self) -> int:
        """The program's process id."""
        assert self.process is not None
        return self.process.pid

    def start(self) -> Terminal:
        """Start the program on a fresh pty of `rows` x `columns`."""
        master, slave = os.openpty()
        width, height = self.emulation.cell or (0, 0)
        winsize = struct.pack(
            "HHHH", self.rows, self.columns, self.columns * width, self.rows * height
        )
        fcntl.ioctl(master, termios.TIOCSWINSZ, winsize)
        self._master = master
        group = self._group = played_host.group() if played_host is not None else None

        def prepare() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            if group is not None:
                group.join()

        self.started_at = time.perf_counter()
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=self.env,
                cwd=ROOT,
                start_new_session=True,
                preexec_fn=prepare,
            )
        finally:
            os.close(slave)
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()
        if group is not None and group.core_quota_us:
            threading.Thread(target=self._spread, args=(group,), name="cores", daemon=True).start()
        return self

    def _spread(self, group: CpuGroup) -> None:
        """Give every new thread of the program a slow core of its own (see `slow_host`)."""
        while not self._stop.wait(0.02):
            group.spread(self.pid)

    def __enter__(self) -> Terminal:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _read(self) -> None:
        while not self._stop.is_set():
            if not select.select([self._master], [], [], 0.05)[0]:
                continue
            try:
                chunk = os.read(self._master, 1 << 16)
            except OSError:
                chunk = b""
            at = time.perf_counter()
            if not chunk:
                break
            self._answer(chunk)
            text = self._strip(chunk)
            with self._lock:
                self.bytes_read += len(chunk)
                self._text = (self._text + text)[-TEXT_KEPT:]
                self._lock.notify_all()
            if self.watch is not None:
                self.watch(at, text)
        with self._lock:
            self._eof = True
            self._lock.notify_all()

    def _answer(self, chunk: bytes) -> None:
        """Answer the questions in `chunk` (one cut at the previous chunk's end included)."""
        window = self._query_tail + chunk
        for match in _QUERY.finditer(window):
            if match.end() > len(self._query_tail):  # not answered with the previous chunk
                answer = self.emulation.answer(match.group(0), self.rows, self.columns)
                if answer:
                    os.write(self._master, answer)
        self._query_tail = window[-16:]

    def _strip(self, chunk: bytes) -> str:
        data = self._carry + chunk
        cut = _CUT.search(data)
        if cut is not None:
            data, self._carry = data[: cut.start()], data[cut.start() :]
        else:
            self._carry = b""
        if b"\x1bP" in data:
            for image in _SIXEL.finditer(data):
                self.images += 1
                self.image_bytes += image.end() - image.start()
        data = data.replace(_SYNC_END, b"\x1e")
        return self._decoder.decode(_ESCAPES.sub(b"\x00", data))

    def text(self) -> str:
        """The last `TEXT_KEPT` characters written, escape sequences replaced by NUL."""
        with self._lock:
            return self._text

    def wait_for(self, found: Callable[[str], bool], timeout: float) -> float:
        """Wait until `found(text so far)`; return the `perf_counter` when it became true."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                text = self._text
                if found(text):
                    return time.perf_counter()
                remaining = deadline - time.monotonic()
                if self._eof or remaining <= 0:
                    raise RuntimeError(
                        f"{self.argv[-1]!r}: the screen never got there; it ended with "
                        f"{text[-400:]!r}"
                    )
                self._lock.wait(min(remaining, 0.5))

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM, then SIGKILL if needed; release the pty. Returns the exit code."""
        code = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            code = self.process.returncode
        self._stop.set()
        if self._reader is not None:
            self._reader.join(5)
        if self._master >= 0:
            os.close(self._master)
            self._master = -1
        if self._group is not None:
            self._group.remove()
            self._group = None
        return code


# --- the two programs --------------------------------------------------------------------------


def display_argv(config: Path) -> list[str]:
    """The kiosk display, as the systemd unit starts it, in an interpreter that looks like a
    kiosk's install: this venv's simulator extra (uvicorn and the click it brings, which httpx
    then loads with pygments) cannot be imported, as on the TV's PC."""
    run = "from lobby_display.cli import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", KIOSK_INSTALL + run, "run", "--config", str(config)]


def bare_argv() -> list[str]:
    """The bare Textual app showing a clock (`bench/bare_clock.py`)."""
    return [sys.executable, "-m", "bench.bare_clock"]


#: What the display's status line says once every feed is live.
LIVE_MARK = re.compile(r"(?<![A-Za-z])Live(?![a-z])")


# --- CPU and memory of a process ---------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of the process and its children so far, in seconds
    (/proc/PID/stat): the display's own and that of the processes it runs (the picture maker,
    a sound player), running or ended."""
    total = 0
    for one in (pid, *descendants(pid)):
        try:
            text = Path(f"/proc/{one}/stat").read_text()
        except OSError:
            continue  # ended meanwhile: its time is its parent's children's time
        fields = text[text.rindex(")") + 2 :].split()
        total += sum(int(field) for field in fields[11:15])  # utime, stime, cutime, cstime
    return total / _TICK


def memory(pid: int) -> tuple[int, int]:
    """(RSS, peak RSS) of the process and the processes it started that still run (the picture
    maker), in bytes (/proc/PID/status VmRSS and VmHWM, summed)."""
    rss = peak = 0
    for one in (pid, *descendants(pid)):
        try:
            lines = Path(f"/proc/{one}/status").read_text().splitlines()
        except OSError:
            continue
        values = {}
        for line in lines:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) * 1024
        rss += values.get("VmRSS", 0)
        peak += values.get("VmHWM", 0)
    return rss, peak


# --- the simulator -----------------------------------------------------------------------------

_ACCOUNT: ServiceAccount | None = None


def account() -> ServiceAccount:
    """One service account for every simulator of the run (RSA key generation is slow)."""
    global _ACCOUNT
    if _ACCOUNT is None:
        _ACCOUNT = ServiceAccount.generate(COMPANY_NAME)
    return _ACCOUNT


@contextmanager
def simulated_place(**options: Any) -> Iterator[SimulatorServer]:
    """A simulator on 127.0.0.1 (see `SimulatorServer` for the options)."""
    with SimulatorServer(account=account(), **options) as sim:
        yield sim


def display_config(
    sim: SimulatorServer, folder: Path, state: Path | None = None, **display: Any
) -> Path:
    """A config for the display of `sim`, in English, logging to a file in `folder`; its state
    directory is `folder/state` unless `state` names another (a display run before)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = {"file": str(folder / "display.log")}
    if state is None:
        return sim.write_config(folder, locales=["en_US"], display=display, log=log)
    return sim.write_config(
        folder, locales=["en_US"], display=display, log=log, state={"directory": str(state)}
    )


@dataclass
class Publications:
    """When the simulator published each ticket call (first time per label), and how much."""

    calls: dict[str, float] = field(default_factory=dict)
    ticket_events: int = 0
    created: int = 0
    events: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def record_publications(sim: SimulatorServer) -> Publications:
    """Wrap the simulator's `publish` to note the moment each call (state 200) goes out.

    The moment is taken just before the simulator hands the event to its feeds, so the delay
    measured from it includes the simulator's own writing.
    """
    seen = Publications()

    def install(simulator: Any) -> None:
        original = simulator.publish

        def publish(events: list[Any]) -> None:
            at = time.perf_counter()
            with seen.lock:
                seen.events += len(events)
                for event in events:
                    if event.feed != "tickets":
                        continue
                    seen.ticket_events += 1
                    if event.action == "CREATE":
                        seen.created += 1
                    elif event.data.get("state") == 200:
                        seen.calls.setdefault(str(event.data.get("label")), at)
            original(events)

        simulator.publish = publish

    sim.call(install)
    return seen


# --- numbers -----------------------------------------------------------------------------------


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0..1) percentile of `values`, by the nearest-rank method."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    """(median, min, max)."""
    if not values:
        return math.nan, math.nan, math.nan
    return statistics.median(values), min(values), max(values)


def mib(value: float) -> str:
    """Bytes as MiB with one decimal."""
    return f"{value / 1024 / 1024:.1f} MiB"


def host_speed(repeats: int = 15, loops: int = 10) -> float:
    """`python3 -m timeit "sum(range(10**6))"` as a median: ms per loop, the median of
    `repeats` repeats of `loops` loops (timeit prints the best; the median shows the load)."""
    times = timeit.repeat("sum(range(10**6))", number=loops, repeat=repeats)
    return statistics.median(times) / loops * 1000


def machine() -> dict[str, str]:
    """The machine and the software the numbers were measured with."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    total = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": str(os.cpu_count()),
        "memory": f"{total / 1024**3:.1f} GiB",
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "textual": importlib.metadata.version("textual"),
        "rich": importlib.metadata.version("rich"),
        "load": f"{os.getloadavg()[0]:.2f}",
        "commit": _commit(),
    }


def _commit() -> str:
    """The commit the code under test comes from, and whether the tree differs from it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "src"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"commit {commit}" + (", src/ with uncommitted changes" if changed else "")


def sleep_until(deadline: float) -> None:
    """Sleep until `time.monotonic()` reaches `deadline`."""
    remaining = deadline - time.monotonic()
    if remaining > 0:
        time.sleep(remaining)


class Marks:
    """Notes the moment each pattern first appears in what a program writes (a `Terminal.watch`).

    Patterns are searched in each chunk together with the end of the previous one, so a mark
    cut between two chunks is still found.
    """

    def __init__(self, **patterns: re.Pattern[str] | str) -> None:
        self.patterns = {
            name: re.compile(re.escape(pattern)) if isinstance(pattern, str) else pattern
            for name, pattern in patterns.items()
        }
        self.first: dict[str, float] = {}
        self._carry = ""
        self._done = threading.Event()

    def __call__(self, at: float, text: str) -> None:
        window = self._carry + text
        self._carry = text[-64:]
        for name, pattern in self.patterns.items():
            if name not in self.first and pattern.search(window):
                self.first[name] = at
        if len(self.first) == len(self.patterns):
            self._done.set()

    def wait(self, timeout: float) -> dict[str, float]:
        """Wait until every pattern was seen; the moments, by name."""
        if not self._done.wait(timeout):
            missing = sorted(set(self.patterns) - set(self.first))
            raise RuntimeError(f"never shown within {timeout:.0f} s: {', '.join(missing)}")
        return dict(self.first)

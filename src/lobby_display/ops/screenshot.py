"""`lobby-display screenshot`: what the screen shows now, as SVG or PNG, for remote support.

A running display is asked for its own screen (SIGUSR1; the display's half is in `process.py`);
otherwise the saved board, brought up to date by the live feeds, is rendered headless.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from lobby_display.board import BoardSettings
from lobby_display.children import child_environment
from lobby_display.config import Settings
from lobby_display.files import FileRefused, read_regular, write_atomically
from lobby_display.ops.common import client_for, quiet_logs
from lobby_display.process import PID_FILE_NAME, SCREENSHOT_NAME
from lobby_display.source import feeds_source
from lobby_display.state import BoardStore
from lobby_display.updates import Feed, FeedHealth, FeedStatus, Update

#: Where the systemd units keep their runtime directories (`RuntimeDirectory=lobby-display/%i`,
#: the instance being the config file's name without `.toml`).
UNIT_RUNTIME_ROOT: Final = Path("/run/lobby-display")
#: Terminal size of a headless rendering, in cells (a 1080p TV in foot shows about this).
DEFAULT_SIZE: Final = (160, 45)
#: Seconds a running display has to write its screenshot.
SIGNAL_WAIT_SECONDS: Final = 5.0
#: Seconds a headless rendering waits for the feeds to be live.
HEADLESS_WAIT_SECONDS: Final = 10.0
#: Output formats, by file suffix.
FORMATS: Final = (".svg", ".png")
#: Largest screenshot a running display's file may hold (a 4K screen's SVG is a few MB).
MAX_SCREENSHOT_BYTES: Final = 64 * 1024 * 1024


# --- the command -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunningDisplay:
    """A display process found through its PID file."""

    pid: int
    directory: Path

    @property
    def screenshot(self) -> Path:
        """The file it writes on SIGUSR1."""
        return self.directory / SCREENSHOT_NAME


def screenshot(
    settings: Settings,
    output: Path,
    *,
    size: tuple[int, int] = DEFAULT_SIZE,
    environ: Mapping[str, str] | None = None,
    signal_wait: float = SIGNAL_WAIT_SECONDS,
    headless_wait: float = HEADLESS_WAIT_SECONDS,
) -> int:
    """Save the screen to `output` (.svg or .png). Returns 0 when saved, 1 when not, 2 for a
    file name that is neither."""
    env = os.environ if environ is None else environ
    suffix = output.suffix.lower()
    if suffix not in FORMATS:
        _say(f"--output must end in .svg or .png, not {output.name!r}")
        return 2
    if suffix == ".png" and shutil.which("rsvg-convert") is None:
        _say(
            "PNG needs rsvg-convert, which is missing: apt-get install librsvg2-bin "
            "(or ask for FILE.svg)"
        )
        return 1
    svg: str | None = None
    origin = ""
    running = find_running_display(settings, env)
    if running is not None:
        svg = ask_running_display(running, signal_wait)
        origin = f"the running display (PID {running.pid})"
    if svg is None:
        with quiet_logs():
            svg, origin = asyncio.run(render_headless(settings, size, headless_wait))
    try:
        save(svg, output)
    except (OSError, subprocess.SubprocessError) as error:
        _say(f"cannot write {output}: {error}")
        return 1
    print(f"lobby-display screenshot: wrote {output}, from {origin}")
    return 0


def find_running_display(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> RunningDisplay | None:
    """The display of this config that is running now and can take a screenshot, if any.

    Its PID file is looked for in `$RUNTIME_DIRECTORY`, then in the runtime directory the
    units give the instance named like the config file (`/run/lobby-display/hall/` for
    `hall.toml`). The process must still be a lobby-display and catch SIGUSR1: a process that
    does not (an older version, or a PID reused by another program) would be killed by it.
    """
    env = os.environ if environ is None else environ
    directories = [Path(part) for part in env.get("RUNTIME_DIRECTORY", "").split(":") if part]
    if settings.source is not None:
        directories.append(UNIT_RUNTIME_ROOT / settings.source.stem)
    for directory in directories:
        try:
            pid = int((directory / PID_FILE_NAME).read_text(encoding="ascii").strip())
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if pid <= 1 or pid == os.getpid():
            continue
        if not _is_lobby_display(pid):
            _say(f"{directory / PID_FILE_NAME} names PID {pid}, which is no running display")
            continue
        if not catches_signal(pid, signal.SIGUSR1):
            _say(
                f"the display (PID {pid}) does not take screenshots on request (an older "
                "version?): rendering one here instead"
            )
            continue
        return RunningDisplay(pid, directory)
    return None


def ask_running_display(display: RunningDisplay, wait: float) -> str | None:
    """Send SIGUSR1 and wait (at most `wait` s) for a new screenshot; None when none came.

    The file is read only if it is a regular file (not a link) owned by the display's user:
    this command often runs as root, and the runtime directory is the display's to write.
    """
    target = display.screenshot
    before = _identity(target)
    try:
        owner = os.stat(f"/proc/{display.pid}").st_uid
    except OSError:
        return None
    try:
        os.kill(display.pid, signal.SIGUSR1)
    except ProcessLookupError:
        return None
    except PermissionError:
        _say(
            f"cannot signal the display (PID {display.pid}): run as its user (lobby-display) "
            "or root; rendering one here instead"
        )
        return None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        now = _identity(target)
        if now is not None and now != before:
            try:
                read = read_regular(
                    target,
                    limit=MAX_SCREENSHOT_BYTES,
                    what="a screenshot",
                    follow_links=False,
                    owners={owner},
                )
                return read.data.decode("utf-8")
            except FileRefused as refused:
                _say(f"{refused}; rendering one here instead")
                return None
            except (OSError, UnicodeDecodeError):
                pass
        time.sleep(0.05)
    _say(
        f"the display (PID {display.pid}) wrote no screenshot in {wait:g} s (see its log); "
        "rendering one here instead"
    )
    return None


async def render_headless(
    settings: Settings, size: tuple[int, int], wait: float
) -> tuple[str, str]:
    """Render the screen here: the saved board, then the live feeds for up to `wait` seconds.

    Returns the SVG and a few words on what it shows.
    """
    from lobby_display.app import LobbyApp

    now = datetime.now(UTC)
    board = BoardStore(settings.state_directory(), settings.place.id).load(
        BoardSettings.from_settings(settings), now
    )
    saved = "the saved board" if board is not None else "no saved board"
    watch = LiveWatch()
    # The screen's own source, with a client that leaves the display's key cache alone.
    source = feeds_source(settings, client_factory=client_for, see=watch.see)
    app = LobbyApp(settings, source, board=board)
    async with app.run_test(headless=True, size=size) as pilot:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(watch.settled.wait(), wait)
        await pilot.pause()
        await pilot.pause()
        svg = app.export_screenshot()
    if watch.all_live:
        return svg, "the live feeds, rendered here"
    late = ", ".join(feed.value for feed in Feed if feed not in watch.live)
    problem = f" ({watch.error})" if watch.error else ""
    return svg, f"{saved}, rendered here; not live: {late}{problem}"


class LiveWatch:
    """Follows the feeds' health: `settled` is set once every feed is live at the same time, or
    every feed is refused (nothing will change for a while)."""

    def __init__(self) -> None:
        self.status: dict[Feed, FeedStatus] = {}
        self.settled = asyncio.Event()
        self.error = ""
        """The last error a feed reported (already free of secrets)."""

    @property
    def live(self) -> set[Feed]:
        """The feeds live now."""
        return {feed for feed, status in self.status.items() if status is FeedStatus.LIVE}

    @property
    def all_live(self) -> bool:
        """True when every feed is live."""
        return self.live == set(Feed)

    def see(self, update: Update) -> None:
        """Take note of one update."""
        if not isinstance(update, FeedHealth):
            return
        self.status[update.feed] = update.status
        if update.status is not FeedStatus.LIVE:
            self.error = update.error or self.error
        statuses = [self.status.get(feed) for feed in Feed]
        if self.all_live or all(status is FeedStatus.REFUSED for status in statuses):
            self.settled.set()


def for_rsvg(svg: str) -> str:
    """Textual's SVG adjusted for rsvg-convert, which ignores `textLength`.

    Without a real monospace font first (Fira Code is seldom installed, and the fallback is
    proportional) and without kept spaces, columns drift; with DejaVu Sans Mono and the CJK
    and Thai fonts the kiosk uses, the PNG lines up as the terminal does.
    """
    return (
        svg.replace('font-family: "Fira Code";', 'font-family: "DejaVu Sans Mono";')
        .replace(
            "font-family: Fira Code, monospace;",
            'font-family: "DejaVu Sans Mono", "Noto Sans Mono CJK JP", "Tlwg Mono", monospace;',
        )
        .replace("&#160;", " ")
        .replace("<svg ", '<svg xml:space="preserve" ', 1)
    )


def save(svg: str, output: Path) -> None:
    """Write `svg` to `output`, converted to PNG by rsvg-convert when the name ends in .png.

    The file is readable by its owner only (a screen can show names and tickets), replaced
    atomically: a link at `output` is replaced, never written through.
    """
    if output.suffix.lower() != ".png":
        write_atomically(output, svg, private_parent=False)
        return
    converter = shutil.which("rsvg-convert")
    if converter is None:
        raise OSError("rsvg-convert is missing (apt-get install librsvg2-bin)")
    with tempfile.TemporaryDirectory(prefix="lobby-display-screenshot-") as scratch:
        source = Path(scratch) / SCREENSHOT_NAME
        source.write_text(for_rsvg(svg), encoding="utf-8")
        done = subprocess.run(  # noqa: S603 - a fixed program, our own file names
            [converter, "--format", "png", str(source)],
            capture_output=True,
            timeout=120,
            check=False,
            env=child_environment(),
        )
    if done.returncode != 0:
        problem = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise OSError(f"rsvg-convert failed: {problem}")
    write_atomically(output, done.stdout, private_parent=False)


def catches_signal(pid: int, number: int) -> bool:
    """True when process `pid` has a handler for signal `number` (its `SigCgt` mask says so)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            try:
                mask = int(line.split(":", 1)[1].strip(), 16)
            except ValueError:
                return False
            return bool(mask >> (number - 1) & 1)
    return False


def _is_lobby_display(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"lobby-display" in command or b"lobby_display" in command


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns


def _say(message: str) -> None:
    print(f"lobby-display screenshot: {message}", file=sys.stderr)

"""Run a program under a pseudo-terminal and check it leaves the terminal as it found it.

    with TerminalProgram([sys.executable, "-c", APP]) as program:
        program.wait_for(b"board ready")
        program.send_signal(signal.SIGTERM)
        run = program.wait()
    assert_terminal_restored(run)

The program gets the pty as standard input, output and error and as its controlling terminal
(so closing the terminal sends it SIGHUP, as a dying terminal emulator would). Its output is
read continuously in a thread, so a program that draws a lot never blocks on a full pty.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Sequences a full-screen program must write on the way out.
LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"
SHOW_CURSOR = b"\x1b[?25h"
ENTER_ALTERNATE_SCREEN = b"\x1b[?1049h"
HIDE_CURSOR = b"\x1b[?25l"


@dataclass(frozen=True)
class TerminalRun:
    """What happened to the terminal while a program ran on it."""

    output: bytes
    """Everything the program wrote to the terminal."""
    returncode: int
    """Exit code, or minus the signal number that killed it (as `subprocess` reports)."""
    attributes_before: list[Any]
    """termios attributes before the program started."""
    attributes_after: list[Any]
    """termios attributes after it exited."""


class TerminalProgram:
    """A command running on its own pseudo-terminal (rows x columns), for tests."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        rows: int = 24,
        columns: int = 80,
        *,
        controlling: bool = True,
    ) -> None:
        self.argv = list(argv)
        self.controlling = controlling
        """The pty is the program's controlling terminal (closing it sends SIGHUP); False for a
        program started apart from its terminal (nohup, setsid), which gets no signal."""
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("TERM", "xterm-256color")
        self.rows = rows
        self.columns = columns
        self.master = -1
        self.process: subprocess.Popen[bytes] | None = None
        self.attributes_before: list[Any] = []
        self._output = bytearray()
        self._changed = threading.Condition()
        self._eof = False
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None

    def __enter__(self) -> TerminalProgram:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the program on a fresh pty."""
        master, slave = os.openpty()
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.columns, 0, 0))
        self.master = master
        self.attributes_before = termios.tcgetattr(master)
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=self.env,
                start_new_session=True,
                # The pty becomes the controlling terminal, as under a terminal emulator.
                preexec_fn=(lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
                if self.controlling
                else None,
            )
        finally:
            os.close(slave)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            # A short select, so `hang_up` can stop this thread before closing the descriptor.
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: every slave end is closed, the program is gone
                chunk = b""
            with self._changed:
                if not chunk:
                    self._eof = True
                    self._changed.notify_all()
                    return
                self._output += chunk
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    @property
    def output(self) -> bytes:
        """What the program has written so far."""
        with self._changed:
            return bytes(self._output)

    def wait_for(self, marker: bytes, timeout: float = 30.0) -> bytes:
        """Wait until the output contains `marker`; return the output so far."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while marker not in self._output:
                remaining = deadline - time.monotonic()
                if self._eof or remaining <= 0:
                    tail = bytes(self._output[-2000:])
                    raise AssertionError(f"{marker!r} never appeared; output ended with {tail!r}")
                self._changed.wait(remaining)
            return bytes(self._output)

    def write(self, data: bytes) -> None:
        """Type `data` on the terminal."""
        os.write(self.master, data)

    def send_signal(self, number: int) -> None:
        """Send a signal to the program."""
        assert self.process is not None
        self.process.send_signal(number)

    def stop_reading(self) -> None:
        """Stop reading the program's output, as a frozen terminal does: once the pty's buffer is
        full, the program's writes block."""
        self._stop_reading()

    def hang_up(self) -> None:
        """Close the terminal, as a terminal emulator that dies does (the program gets SIGHUP)."""
        self._stop_reading()
        os.close(self.master)
        self.master = -1

    def _stop_reading(self) -> None:
        self._stop.set()
        if self._reader is not None:
            self._reader.join()

    def wait(self, timeout: float = 30.0) -> TerminalRun:
        """Wait for the program to exit and for its last output; describe the terminal then."""
        assert self.process is not None
        try:
            returncode = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"still running {timeout} s later; output ended with {self.output[-2000:]!r}"
            ) from None
        if self.master >= 0 and self._reader is not None:
            self._reader.join(timeout)  # ends at EIO, once the last output is read
            attributes_after = termios.tcgetattr(self.master)
        else:
            attributes_after = []
        return TerminalRun(self.output, returncode, self.attributes_before, attributes_after)

    def close(self) -> None:
        """Kill the program if it still runs and release the pty."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.master >= 0:
            self._stop_reading()
            os.close(self.master)
            self.master = -1


_FIELD_NAMES = ("iflag", "oflag", "cflag", "lflag", "ispeed", "ospeed", "control characters")


def assert_terminal_restored(run: TerminalRun, *, full_screen: bool = True) -> None:
    """The program exited with 0 and left the terminal as it found it.

    termios attributes (echo, canonical mode, control characters) are back to what they were;
    a full-screen program left the alternate screen after it last entered it, and the cursor is
    visible (the last cursor sequence shows it).
    """
    assert run.returncode == 0, (
        f"exit code {run.returncode}; output ended with {run.output[-2000:]!r}"
    )
    if run.attributes_after:
        changed = [
            name
            for name, before, after in zip(
                _FIELD_NAMES, run.attributes_before, run.attributes_after, strict=True
            )
            if before != after
        ]
        assert not changed, f"termios attributes not restored: {', '.join(changed)}"
    if full_screen:
        entered = run.output.rfind(ENTER_ALTERNATE_SCREEN)
        assert entered >= 0, "the program never entered the alternate screen"
        assert run.output.rfind(LEAVE_ALTERNATE_SCREEN) > entered, (
            "the alternate screen was not left"
        )
        assert run.output.rfind(SHOW_CURSOR) > run.output.rfind(HIDE_CURSOR), (
            "the cursor was left hidden"
        )


__all__ = ["TerminalProgram", "TerminalRun", "assert_terminal_restored"]

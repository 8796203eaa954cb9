"""Running a sound tool (espeak-ng, a player) as a child process: no shell, a time limit."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from lobby_display.children import child_environment
from lobby_display.models import clean_text


@dataclass(frozen=True, slots=True)
class Finished:
    """How a child process ended."""

    returncode: int
    stdout: bytes
    stderr: bytes

    def reason(self) -> str:
        """One line saying why it failed: its exit status and the last line it wrote."""
        lines = [line for line in self.stderr.decode("utf-8", "replace").splitlines() if line]
        said = f": {clean_text(lines[-1], 160)}" if lines else ""
        return f"exit status {self.returncode}{said}"


class ToolError(Exception):
    """A tool that could not be started, failed, or overran its time limit."""


async def run_tool(argv: Sequence[str], time_limit: float, *, capture: bool = False) -> Finished:
    """Run `argv` to its end within `time_limit` seconds.

    Raises `ToolError` when the program cannot be started or overruns (it is then killed). When
    the caller is cancelled (the announcer stops), the child is killed too: a sound never
    outlives the display.
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=child_environment(),
        )
    except OSError as error:
        raise ToolError(f"cannot start {argv[0]}: {error.strerror or error}") from None
    try:
        async with asyncio.timeout(time_limit):
            stdout, stderr = await process.communicate()
    except TimeoutError:
        await _kill(process)
        raise ToolError(f"{argv[0]} did not finish within {time_limit:g} s") from None
    except asyncio.CancelledError:
        await _kill(process)
        raise
    return Finished(process.returncode or 0, stdout or b"", stderr or b"")


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    # Reap it so no zombie is left; shielded so a second cancellation cannot skip the wait.
    with contextlib.suppress(Exception):
        await asyncio.shield(process.wait())

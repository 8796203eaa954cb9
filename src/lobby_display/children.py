"""The environment a child process gets, and whether a child can run beside the screen.

Third-party children (players, espeak-ng, the signing program, fc-list, rsvg-convert) get none
of the display's settings (`LOBBY_DISPLAY_*`: the key) nor systemd's variables for the display
alone; the feeds' process, the display's own, keeps the settings and the credentials."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

#: Variables of these prefixes configure the display (`LOBBY_DISPLAY_SERVICE__API_KEY`...).
PRIVATE_PREFIXES: Final = ("LOBBY_DISPLAY_",)
#: systemd's variables for the service's own process: a child could notify (READY=1,
#: WATCHDOG=1) in its place, or look for the credentials.
PRIVATE_NAMES: Final = frozenset(
    {
        "NOTIFY_SOCKET",
        "WATCHDOG_PID",
        "WATCHDOG_USEC",
        "CREDENTIALS_DIRECTORY",
        "LISTEN_FDS",
        "LISTEN_FDNAMES",
        "LISTEN_PID",
    }
)


#: systemd's variables that are the service's process's alone, even for a process of this
#: program's own: only the screen's process notifies systemd and gets the sockets.
SERVICE_NAMES: Final = frozenset(
    {"NOTIFY_SOCKET", "WATCHDOG_PID", "WATCHDOG_USEC", "LISTEN_FDS", "LISTEN_FDNAMES", "LISTEN_PID"}
)


def child_environment(
    environ: Mapping[str, str] | None = None, *, ours: bool = False
) -> dict[str, str]:
    """`environ` (this process's environment by default) fit for a child process.

    `ours`: the child is this program's own (the feeds' process), which reads the settings'
    credentials (`$CREDENTIALS_DIRECTORY`) and state (`$STATE_DIRECTORY`) as the display does: it
    keeps everything but systemd's notification, watchdog and socket variables.
    """
    env = os.environ if environ is None else environ
    if ours:
        return {name: value for name, value in env.items() if name not in SERVICE_NAMES}
    return {
        name: value
        for name, value in env.items()
        if name not in PRIVATE_NAMES and not name.startswith(PRIVATE_PREFIXES)
    }


def two_cores() -> bool:
    """Whether this process may run on two cores or more (else a child process only takes
    turns with the screen for the one core)."""
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


__all__ = ["PRIVATE_NAMES", "PRIVATE_PREFIXES", "SERVICE_NAMES", "child_environment", "two_cores"]

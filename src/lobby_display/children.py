"""The environment a child process gets (players, espeak-ng, the signing program, fc-list,
rsvg-convert): this process's own, without the display's settings (`LOBBY_DISPLAY_*`, which
may hold the API key) and without systemd's notification, watchdog and credentials variables,
which are for the display alone."""

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


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (this process's environment by default) fit for a child process."""
    env = os.environ if environ is None else environ
    return {
        name: value
        for name, value in env.items()
        if name not in PRIVATE_NAMES and not name.startswith(PRIVATE_PREFIXES)
    }


__all__ = ["PRIVATE_NAMES", "PRIVATE_PREFIXES", "child_environment"]

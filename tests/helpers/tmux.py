"""tmux sessions for end-to-end tests, each on a tmux server of its own."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Mapping

#: The terminal every session gets (the demo's layout is checked at this size).
COLUMNS, ROWS = 160, 45


def tmux(session: str, *args: str, check: bool = True) -> str:
    """A tmux command on `session`'s own server (`-L`): a test's server never races another
    test's ending one ("server exited unexpectedly" when the default server was shutting down)."""
    return subprocess.run(
        ["tmux", "-L", session, *args], check=check, capture_output=True, text=True, timeout=10
    ).stdout


def start_session(prefix: str, command: str, env: Mapping[str, str]) -> str:
    """Run `command` in a new detached session of COLUMNS x ROWS; return its name."""
    session = f"{prefix}-{uuid.uuid4().hex[:8]}"
    size = ["-x", str(COLUMNS), "-y", str(ROWS)]
    subprocess.run(
        ["tmux", "-L", session, "new-session", "-d", "-s", session, *size, command],
        check=True,
        env=dict(env),
        timeout=10,
    )
    return session


def screen(session: str, check: bool = True) -> str:
    """What the session's pane shows (without `check`, "" once the session is gone)."""
    return tmux(session, "capture-pane", "-p", "-t", session, check=check)

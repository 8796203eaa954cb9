"""What `lobby-display run` loads: only what the kiosk needs, so it starts sooner and smaller.

Imports are process-wide, so each check runs in a fresh interpreter and reads its `sys.modules`.
The kiosk's checks run as a kiosk is installed: without the simulator extra (`KIOSK_INSTALL`).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.kiosk_install import KIOSK_INSTALL

#: Never needed by the kiosk, at start or later: the simulator and its web server, the other
#: commands (the screenshot's display half is `process`), httpx's command line.
NEVER = (
    "starlette",
    "uvicorn",
    "click",
    "pygments",
    "lobby_display.simulator",
    "lobby_display.demo",
    "lobby_display.ops",
)
#: Loaded later: the screen's code (on a helper thread while the feeds start), sound once the
#: screen is up. (cryptography and PyJWT never load in the kiosk: it signs its developer tokens
#: in a program of its own.)
LATER = (
    "textual",
    "babel",
    "lobby_display.app",
    "lobby_display.widgets",
    "lobby_display.announce",
    "cryptography",
    "jwt",
)


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def loaded(modules: set[str], package: str) -> bool:
    return any(name == package or name.startswith(f"{package}.") for name in modules)


def test_the_kiosk_loads_no_other_command_nor_signing_code() -> None:
    modules = modules_after(f"{KIOSK_INSTALL}\nimport lobby_display.cli, lobby_display.kiosk")
    assert "lobby_display.kiosk" in modules and "httpx" in modules
    assert "lobby_display.process" in modules, "the kiosk answers signals from the start"
    assert [name for name in (*NEVER, *LATER) if loaded(modules, name)] == []


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("check", "lobby_display.ops.check"),
        ("discover", "lobby_display.ops.discover"),
        ("screenshot", "lobby_display.ops.screenshot"),
    ],
)
def test_the_ops_package_gives_each_command_when_asked_for(name: str, module: str) -> None:
    modules = modules_after(
        f"from lobby_display.ops import {name}\n"
        f"assert callable({name}) and {name}.__module__ == {module!r}, {name}"
    )
    others = {"lobby_display.ops.check", "lobby_display.ops.discover"} - {module}
    assert module in modules
    assert not others & modules

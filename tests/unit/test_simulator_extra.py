"""The simulator is an extra: a kiosk's install brings no web server, and `demo` and `simulate`
without it say in one line how to install it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import distribution

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.helpers.kiosk_install import KIOSK_INSTALL, SIMULATOR_ONLY

INSTALL_HINT = "pip install 'lobby-display[simulator]'"


def installed_with(project: str, extras: frozenset[str] = frozenset()) -> set[str]:
    """The distributions pip installs for `project[extras]`, read from this venv's metadata."""
    found: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(canonicalize_name(project), extras)]
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        for line in distribution(name).requires or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is not None and not any(
                marker.evaluate({"extra": extra}) for extra in (wanted or {""})
            ):
                continue
            needed = canonicalize_name(requirement.name)
            found.add(needed)
            todo.append((needed, frozenset(requirement.extras)))
    return found


def test_a_kiosk_install_brings_no_web_server() -> None:
    kiosk = installed_with("lobby-display")
    assert "textual" in kiosk and "httpx" in kiosk
    assert sorted(kiosk & set(SIMULATOR_ONLY)) == []
    with_simulator = installed_with("lobby-display", frozenset({"simulator"}))
    assert {"starlette", "uvicorn"} <= with_simulator


@pytest.mark.parametrize("command", [["demo"], ["simulate", "--port", "0"]])
def test_demo_and_simulate_without_the_simulator_say_how_to_install_it(
    command: list[str],
) -> None:
    code = f"{KIOSK_INSTALL}\nfrom lobby_display.cli import main\nsys.exit(main({command!r}))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"lobby-display {command[0]}: the simulator is not installed")
    assert INSTALL_HINT in lines[0]


def test_demo_and_simulate_with_the_simulator_get_past_the_check() -> None:
    """The check itself imports the simulator when it is there (the tests' venv has it)."""
    code = (
        "from lobby_display.cli import simulator_installed\n"
        "import sys\n"
        "assert simulator_installed('demo')\n"
        "assert 'uvicorn' in sys.modules and 'starlette' in sys.modules"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""

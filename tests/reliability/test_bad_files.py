"""Malformed configuration and credentials files, through the real command (`python -m
lobby_display run/check` in a process of its own): a clear message naming what is wrong, the
documented exit code, and never a traceback.

- A bad configuration: `run` and `check` both exit 2 with the file and the problem named.
- Bad credentials: `check` exits 1 with the credentials line failing; `run` keeps the screen up
  and says on it that the credentials were refused (a kiosk never dies of a config mistake it
  can report), then leaves cleanly on SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lobby_display.simulator import ServiceAccount, SimulatorServer
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored

GOOD = """\
[service]
display_url = "http://127.0.0.1:9"
api_key = "a-fixed-key-for-the-test"

[place]
id = "PLACE"

[display]
locales = ["en_US"]
"""


def environment() -> dict[str, str]:
    """The caller's environment without anything that configures the display."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("LOBBY_DISPLAY_")
        and name not in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "NOTIFY_SOCKET")
    }
    return {**env, "TEXTUAL_ANIMATIONS": "none", "TERM": "xterm-256color"}


def lobby_display(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real command; its exit code and what it printed."""
    return subprocess.run(
        [sys.executable, "-m", "lobby_display", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(),
        stdin=subprocess.DEVNULL,
        check=False,
    )


def good_with(old: str, new: str) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "config.toml"
        assert old in GOOD
        path.write_text(GOOD.replace(old, new), encoding="utf-8")
        path.chmod(0o600)  # as a file holding service.api_key must be
        return path

    return write


def raw(content: bytes) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "config.toml"
        path.write_bytes(content)
        return path

    return write


def missing(folder: Path) -> Path:
    return folder / "nowhere.toml"


def directory(folder: Path) -> Path:
    path = folder / "config.toml"
    path.mkdir()
    return path


COMMANDS = ("run", "check")
#: (what is wrong, how to write it, words the message must contain)
BAD_CONFIGS: list[tuple[str, Callable[[Path], Path], tuple[str, ...]]] = [
    ("a TOML syntax error", good_with("[place]", "[place"), ("config.toml",)),
    ("no place id", good_with('id = "PLACE"\n', ""), ("place", "id")),
    (
        "a number that is text",
        good_with('locales = ["en_US"]', 'locales = ["en_US"]\nrotation_seconds = "fast"'),
        ("rotation_seconds",),
    ),
    ("an unknown locale", good_with('["en_US"]', '["xx_XX"]'), ("locales", "xx_XX")),
    ("a misspelt key", good_with("[display]", "[display]\nrotaton_seconds = 5"), ("rotaton",)),
    ("an address that is not one", good_with("http://127.0.0.1:9", "not a url"), ("display_url",)),
    ("a file that does not exist", missing, ("nowhere.toml",)),
    ("a directory", directory, ("config.toml",)),
    ("bytes that are not UTF-8", raw(b'[service]\ndisplay_url = "\xff\xfe"\n'), ("config.toml",)),
    ("an empty file", raw(b""), ("service",)),
]


@pytest.mark.parametrize(
    ("problem", "write", "words"), BAD_CONFIGS, ids=[case[0] for case in BAD_CONFIGS]
)
def test_a_bad_config_is_named_with_exit_2_and_no_traceback(
    tmp_path: Path, problem: str, write: Callable[[Path], Path], words: tuple[str, ...]
) -> None:
    config = write(tmp_path)
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda name: lobby_display(name, "--config", str(config)), COMMANDS))
    for command, result in zip(COMMANDS, runs, strict=True):
        said = result.stdout + result.stderr
        assert result.returncode == 2, f"{command} with {problem}: exit {result.returncode}\n{said}"
        assert "Traceback" not in said, f"{command} with {problem} printed a traceback:\n{said}"
        for word in words:
            assert word in result.stderr, f"{command} with {problem}: {word!r} not in\n{said}"


# --- credentials --------------------------------------------------------------------------------


@pytest.fixture
def place(account: ServiceAccount) -> Iterator[SimulatorServer]:
    with SimulatorServer(seed=5, speed=0.001, account=account) as sim:
        yield sim


def not_json(path: Path) -> None:
    path.write_text("this is not JSON", encoding="utf-8")


def no_private_key(path: Path) -> None:
    account = json.loads(path.read_text(encoding="utf-8"))
    del account["private_key"]
    path.write_text(json.dumps(account), encoding="utf-8")


def garbage_key(path: Path) -> None:
    account = json.loads(path.read_text(encoding="utf-8"))
    account["private_key"] = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"
    path.write_text(json.dumps(account), encoding="utf-8")


def open_to_others(path: Path) -> None:
    path.chmod(0o644)


def gone(path: Path) -> None:
    path.unlink()


BAD_CREDENTIALS: list[tuple[str, Callable[[Path], None]]] = [
    ("not JSON", not_json),
    ("no private key", no_private_key),
    ("a private key that is not one", garbage_key),
    ("readable by others", open_to_others),
    ("missing", gone),
]


def credentials_config(sim: SimulatorServer, folder: Path, spoil: Callable[[Path], None]) -> Path:
    config = sim.write_config(folder, locales=["en_US"], log={"file": str(folder / "log")})
    spoil(folder / "service-account.json")
    return config


@pytest.mark.parametrize(
    ("problem", "spoil"), BAD_CREDENTIALS, ids=[case[0] for case in BAD_CREDENTIALS]
)
def test_check_names_bad_credentials_with_exit_1(
    place: SimulatorServer, tmp_path: Path, problem: str, spoil: Callable[[Path], None]
) -> None:
    config = credentials_config(place, tmp_path, spoil)
    result = lobby_display("check", "--config", str(config), "--feed-timeout", "3")
    said = result.stdout + result.stderr
    assert result.returncode == 1, f"credentials {problem}: exit {result.returncode}\n{said}"
    assert "Traceback" not in said, said
    failing = [line for line in said.splitlines() if "FAIL" in line and "credentials" in line]
    assert failing, f"credentials {problem}: no failing credentials line in\n{said}"
    assert "service-account.json" in said, said


@pytest.mark.parametrize(
    ("problem", "spoil"),
    [BAD_CREDENTIALS[0], BAD_CREDENTIALS[2]],
    ids=[BAD_CREDENTIALS[0][0], BAD_CREDENTIALS[2][0]],
)
def test_run_keeps_the_screen_up_and_says_the_credentials_were_refused(
    place: SimulatorServer, tmp_path: Path, problem: str, spoil: Callable[[Path], None]
) -> None:
    config = credentials_config(place, tmp_path, spoil)
    argv = [sys.executable, "-m", "lobby_display", "run", "--config", str(config)]
    with TerminalProgram(argv, env=environment(), rows=40, columns=140) as screen:
        screen.wait_for(b"The service refused our credentials", timeout=60)
        assert screen.process is not None and screen.process.poll() is None
        screen.send_signal(signal.SIGTERM)
        run = screen.wait(timeout=30)
    assert_terminal_restored(run)
    assert b"Traceback" not in run.output

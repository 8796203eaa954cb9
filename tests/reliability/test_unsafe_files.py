"""Files that are not what they should be: a FIFO, a device, a huge file, a link, another user's
file, a directory others may write to. Each is refused at once with a message naming it (never
a hang, never read through a link); what the display writes is for its user only.

Tests run as root: another user's part is played by `nobody` (uid 65534).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from lobby_display.announce import Announcer
from lobby_display.auth import (
    KEY_CACHE_NAME,
    CredentialsError,
    ServiceApiKeys,
    load_service_account,
)
from lobby_display.board import Board, BoardSettings
from lobby_display.config import ConfigError, load_config, settings_from_dict
from lobby_display.process import PID_FILE_NAME
from lobby_display.service import setup_logging
from lobby_display.state import STATE_FILE, BoardStore

T = TypeVar("T")

#: The other user (Debian's `nobody`); a numeric id works without a passwd entry too.
OTHER_UID = 65534
#: Tests of what root does with another user's files (root alone can set them up; CI is root).
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="sets up another user's files: root only")
#: A refusal comes at once; a hang is what these tests catch.
QUICK = 5.0

CONFIG = """\
[service]
display_url = "http://127.0.0.1:9"
{service}

[place]
id = "PLACE"

[display]
locales = ["en_US"]
"""


def environment(**extra: str) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("LOBBY_DISPLAY_")
        and name
        not in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "NOTIFY_SOCKET")
    }
    return {**env, "TEXTUAL_ANIMATIONS": "none", "TERM": "xterm-256color", **extra}


def lobby_display(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command; fails the test if it is still running after 30 s (a hang)."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "lobby_display", *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=environment(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"lobby-display {' '.join(args)} hung")


def within(seconds: float, work: Callable[[], T], release: Callable[[], None]) -> T:
    """`work()`'s result if it comes within `seconds`; else `release()` unblocks it and the
    test fails."""
    result: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        release()
        thread.join(5)
        pytest.fail(f"still blocked after {seconds:g} s")
    if errors:
        raise errors[0]
    return result[0]


def fifo(path: Path) -> Path:
    os.mkfifo(path, 0o600)
    return path


def release_fifo(path: Path) -> Callable[[], None]:
    """Open the FIFO's other end, so a reader blocked on it goes on (and sees it empty)."""

    def release() -> None:
        descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(descriptor)

    return release


def write_config(folder: Path, service: str, mode: int = 0o600) -> Path:
    path = folder / "screen.toml"
    path.write_text(CONFIG.format(service=service), encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which files are made 0644 unless asked otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- FIFOs, devices, huge files ------------------------------------------------------------


def test_check_refuses_a_fifo_as_credentials_file_at_once(tmp_path: Path) -> None:
    credentials = fifo(tmp_path / "service-account.json")
    config = write_config(tmp_path, f'credentials = "{credentials}"\ncompany = "Example Company"')
    done = lobby_display("check", "--config", str(config))  # a hang fails it (its timeout)
    assert done.returncode == 1, done.stdout + done.stderr
    assert str(credentials) in done.stdout
    assert "named pipe (FIFO)" in done.stdout
    assert "must name the JSON file itself" in done.stdout  # the fix
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_fifo_as_config_file_is_refused_with_exit_2(tmp_path: Path, command: str) -> None:
    config = fifo(tmp_path / "screen.toml")
    done = lobby_display(command, "--config", str(config))
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(config) in done.stderr + done.stdout
    assert "named pipe (FIFO)" in done.stderr + done.stdout


def test_a_huge_config_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "screen.toml"
    with config.open("wb") as stream:
        stream.truncate(200 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(ConfigError) as caught:
        within(QUICK, lambda: load_config(config, environ={}), lambda: None)
    assert "larger than" in caught.value.problems[0]


def test_a_device_or_huge_file_as_credentials_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "service-account.json"
    with huge.open("wb") as stream:
        stream.truncate(500 * 1024 * 1024)
    huge.chmod(0o600)
    with pytest.raises(CredentialsError, match="larger than") as caught:
        within(QUICK, lambda: load_service_account(huge), lambda: None)
    assert str(huge) in str(caught.value)
    with pytest.raises(CredentialsError, match="character device"):
        load_service_account("/dev/zero")


def test_a_fifo_as_the_saved_board_is_refused_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = fifo(tmp_path / STATE_FILE)
    store = BoardStore(tmp_path, "P1")
    now = datetime.now(UTC)
    loaded = within(QUICK, lambda: store.load(BoardSettings(), now), release_fifo(path))
    assert loaded is None
    assert str(path) in caplog.text and "named pipe (FIFO)" in caplog.text


def test_a_fifo_as_the_key_cache_is_refused_and_a_key_is_asked_for(
    tmp_path: Path, service_account_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    cache = fifo(state / KEY_CACHE_NAME)

    def service(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"apiKey": "issued-key-0123456789"})

    async def get_key() -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as http:
            keys = ServiceApiKeys(
                load_service_account(service_account_file),
                display_url="http://127.0.0.1:9",
                company="Example Company",
                http=http,
                cache_file=cache,
                refresh_after=timedelta(hours=20),
            )
            return await keys.get()

    key = within(QUICK, lambda: asyncio.run(get_key()), release_fifo(cache))
    assert key == "issued-key-0123456789"
    assert str(cache) in caplog.text and "named pipe (FIFO)" in caplog.text


# --- links and owners -----------------------------------------------------------------------


def saved_board(directory: Path) -> Path:
    """A valid saved board of place P1 in `directory`."""
    BoardStore(directory, "P1").save(Board(BoardSettings()), datetime.now(UTC), force=True)
    return directory / STATE_FILE


def test_a_saved_board_that_is_a_link_is_not_followed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    target = saved_board(elsewhere)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / STATE_FILE).symlink_to(target)
    assert BoardStore(state, "P1").load(BoardSettings(), datetime.now(UTC)) is None
    assert "symbolic link" in caplog.text


@as_root
def test_a_saved_board_owned_by_another_user_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = saved_board(tmp_path)
    assert BoardStore(tmp_path, "P1").load(BoardSettings(), datetime.now(UTC)) is not None
    os.chown(path, OTHER_UID, OTHER_UID)
    assert BoardStore(tmp_path, "P1").load(BoardSettings(), datetime.now(UTC)) is None
    assert str(path) in caplog.text and "owned by" in caplog.text


#: A display as another user would fake it: it catches SIGUSR1 (so `screenshot` asks it) and
#: answers with a link to a file only root may read, hoping root's command copies it.
FAKE_DISPLAY = """
import os, signal, sys, time  # lobby_display
runtime, secret = sys.argv[1], sys.argv[2]
def answer(*_):
    os.symlink(secret, os.path.join(runtime, "link"))
    os.rename(os.path.join(runtime, "link"), os.path.join(runtime, "screenshot.svg"))
signal.signal(signal.SIGUSR1, answer)
with open(os.path.join(runtime, "app.pid"), "w") as f:
    f.write(str(os.getpid()))
print("ready", flush=True)
time.sleep(120)
"""


@as_root
def test_screenshot_as_root_never_copies_a_file_the_display_links_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lobby_display.cli import main

    secret = tmp_path / "root-only.txt"
    secret.write_text("<svg>ROOT-ONLY-SECRET</svg>")
    secret.chmod(0o600)
    runtime = Path(tempfile.mkdtemp(prefix="lobby-shot-"))
    os.chown(runtime, OTHER_UID, OTHER_UID)
    runtime.chmod(0o755)
    config = write_config(tmp_path, 'api_key = "a-fixed-key-for-the-test"')
    display = subprocess.Popen(
        # The system's Python: the other user may not reach the test's venv.
        ["/usr/bin/python3", "-c", FAKE_DISPLAY, str(runtime), str(secret)],
        user=OTHER_UID,
        group=OTHER_UID,
        stdout=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert display.stdout is not None and display.stdout.readline().strip() == "ready"
        assert (runtime / PID_FILE_NAME).exists()
        for name in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CREDENTIALS_DIRECTORY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("RUNTIME_DIRECTORY", str(runtime))
        monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
        output = tmp_path / "support.svg"
        main(["screenshot", "--config", str(config), "--output", str(output)])
        said = capsys.readouterr()
        assert (runtime / "screenshot.svg").is_symlink(), "the fake display never answered"
        assert not output.exists() or "ROOT-ONLY-SECRET" not in output.read_text()
        assert "symbolic link" in said.err
    finally:
        display.send_signal(signal.SIGKILL)
        display.wait()
        for leftover in runtime.iterdir():
            leftover.unlink()
        runtime.rmdir()


# --- directories others may write to ---------------------------------------------------------


def test_a_state_directory_others_may_write_to_is_refused_with_the_fix(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o777)
    store = BoardStore(state, "P1")
    assert not store.save(Board(BoardSettings()), datetime.now(UTC), force=True)
    assert not (state / STATE_FILE).exists()
    assert "writable by group or others" in caplog.text
    assert f"chmod 700 {state}" in caplog.text

    config = write_config(
        tmp_path, f'api_key = "a-fixed-key-for-the-test"\n\n[state]\ndirectory = "{state}"'
    )
    done = lobby_display("check", "--config", str(config))
    state_line = next(line for line in done.stdout.splitlines() if " state " in line)
    assert "FAIL" in state_line and "writable by group or others" in done.stdout
    assert f"chmod 700 {state}" in done.stdout


# --- what the display writes: its user's only ----------------------------------------------


@pytest.mark.usefixtures("umask_022")
def test_directories_made_are_0700_and_files_written_0600(tmp_path: Path) -> None:
    state = tmp_path / "new" / "state"
    store = BoardStore(state, "P1")
    assert store.save(Board(BoardSettings()), datetime.now(UTC), force=True)
    assert mode_of(state) == 0o700 and mode_of(state.parent) == 0o700
    assert mode_of(state / STATE_FILE) == 0o600

    log_file = tmp_path / "logs" / "deep" / "display.log"
    settings = settings_from_dict(
        {
            "service": {"display_url": "http://127.0.0.1:9", "api_key": "k-0123456789"},
            "place": {"id": "P1"},
            "log": {"file": str(log_file)},
        },
        environ={},
    )
    try:
        setup_logging(settings)
        logging.getLogger("lobby_display.test").warning("a line")
    finally:
        for handler in logging.getLogger().handlers[:]:
            if getattr(handler, "_lobby_display_handler", False):
                handler.close()
                logging.getLogger().removeHandler(handler)
    assert mode_of(log_file.parent) == 0o700 and mode_of(log_file.parent.parent) == 0o700
    assert mode_of(log_file) == 0o600

    cache = tmp_path / "sound" / "sound-cache"
    announcer: Any = Announcer.from_settings(settings)
    announcer.cache_dir = cache
    assert announcer._cache_directory() == cache
    assert mode_of(cache) == 0o700 and mode_of(cache.parent) == 0o700


@pytest.mark.usefixtures("umask_022")
def test_a_screenshot_is_written_for_its_owner_only(tmp_path: Path) -> None:
    from lobby_display.ops.screenshot import save

    output = tmp_path / "shots" / "now.svg"
    save("<svg></svg>", output)
    assert mode_of(output) == 0o600
    # A link put where the output goes is replaced, not written through.
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    link = tmp_path / "link.svg"
    link.symlink_to(victim)
    save("<svg></svg>", link)
    assert victim.read_text() == "untouched" and not link.is_symlink()


# --- a config that holds the key --------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_config_holding_api_key_must_be_private_like_the_credentials(
    tmp_path: Path, mode: int
) -> None:
    config = write_config(tmp_path, 'api_key = "a-fixed-key-for-the-test"', mode=mode)
    with pytest.raises(ConfigError) as caught:
        load_config(config, environ={})
    message = str(caught.value)
    assert f"chmod 600 {config}" in message and f"{mode:04o}" in message
    assert "a-fixed-key-for-the-test" not in message
    done = lobby_display("check", "--config", str(config))
    assert done.returncode == 2 and f"chmod 600 {config}" in done.stderr + done.stdout
    config.chmod(0o600)
    assert load_config(config, environ={}).service.api_key is not None


def test_a_config_without_a_key_may_stay_readable(tmp_path: Path) -> None:
    config = write_config(tmp_path, 'credentials = "/nowhere.json"\ncompany = "C"', mode=0o644)
    assert load_config(config, environ={}).place.id == "PLACE"

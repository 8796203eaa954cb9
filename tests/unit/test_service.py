"""systemd integration: notifications on a real datagram socket, watchdog, status, logs."""

from __future__ import annotations

import io
import logging
import os
import socket
import struct
import time
import uuid
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from lobby_display.config import Settings, settings_from_dict
from lobby_display.redaction import register_secret
from lobby_display.service import (
    Notifier,
    journal_datagram,
    setup_logging,
    status_text,
    watchdog_period,
)
from lobby_display.updates import Feed, FeedHealth, FeedStatus

API_KEY = "k3y-VERY-secret-0123456789"


# --------------------------------------------------------------------------------------------
# A stand-in for systemd's notification socket (and journald's): a bound datagram socket.


class Listener:
    """A bound AF_UNIX datagram socket that collects what is sent to it."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(address)
        self.socket.settimeout(5)

    def receive(self) -> bytes:
        return self.socket.recv(1 << 20)

    def messages(self) -> list[str]:
        """Everything received so far, without waiting."""
        self.socket.setblocking(False)
        found = []
        try:
            while True:
                found.append(self.socket.recv(1 << 20).decode())
        except BlockingIOError:
            return found
        finally:
            self.socket.settimeout(5)

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Listener]:
    sock = Listener(str(tmp_path / "notify"))
    yield sock
    sock.close()


@pytest.fixture
def notifier(listener: Listener) -> Notifier:
    return Notifier({"NOTIFY_SOCKET": listener.address})


def test_ready_sends_ready_1(notifier: Notifier, listener: Listener) -> None:
    assert notifier.ready()
    assert listener.receive() == b"READY=1"


def test_ready_can_carry_the_first_status(notifier: Notifier, listener: Listener) -> None:
    notifier.ready("tickets connecting")
    assert listener.receive() == b"READY=1\nSTATUS=tickets connecting"


def test_watchdog_stopping_and_status(notifier: Notifier, listener: Listener) -> None:
    notifier.watchdog()
    notifier.status("tickets live")
    notifier.stopping()
    assert [listener.receive() for _ in range(3)] == [
        b"WATCHDOG=1",
        b"STATUS=tickets live",
        b"STOPPING=1",
    ]


def test_status_is_one_clean_line_without_secrets(notifier: Notifier, listener: Listener) -> None:
    # A newline would start a new assignment; an ESC would reach `systemctl status`'s terminal.
    notifier.status(f"queues reconnecting\nREADY=1 \x1b[2J https://x/v1/q?key={API_KEY}")
    text = listener.receive().decode()
    assert text.count("\n") == 0
    assert text.startswith("STATUS=queues reconnecting READY=1")
    assert "\x1b" not in text
    assert API_KEY not in text


def test_reloading_carries_the_monotonic_clock(notifier: Notifier, listener: Listener) -> None:
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    notifier.reloading()
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    lines = listener.receive().decode().split("\n")
    assert lines[0] == "RELOADING=1"
    key, _, value = lines[1].partition("=")
    assert key == "MONOTONIC_USEC"
    assert before <= int(value) <= after


def test_abstract_socket_address() -> None:
    name = f"lobby-display-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind("\0" + name)
        server.settimeout(5)
        notifier = Notifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.enabled
        assert notifier.ready()
        assert server.recv(4096) == b"READY=1"


def test_without_notify_socket_nothing_is_sent() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert not notifier.ready()
    assert not notifier.watchdog()


def test_unsupported_address_disables_notifications() -> None:
    assert not Notifier({"NOTIFY_SOCKET": "vsock:2:1234"}).enabled


def test_a_failed_send_never_raises_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    with caplog.at_level(logging.WARNING, logger="lobby_display.service"):
        assert not notifier.ready()
        assert not notifier.watchdog()
        assert not notifier.watchdog()
    warnings_logged = [r for r in caplog.records if "cannot notify systemd" in r.getMessage()]
    assert len(warnings_logged) == 1


def test_a_full_socket_does_not_block_the_ui(tmp_path: Path) -> None:
    """systemd busy (its queue full): the ping is dropped at once instead of stalling the loop."""
    listener = Listener(str(tmp_path / "busy"))
    try:
        notifier = Notifier({"NOTIFY_SOCKET": listener.address})
        # A blocking send would hang here (pytest-timeout ends it); dropped, it says so.
        results = [notifier.watchdog() for _ in range(2000)]
        assert results[0] and not results[-1]
    finally:
        listener.close()


# --------------------------------------------------------------------------------------------
# Watchdog period


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "me"}, None),
        ({}, None),
    ],
)
def test_watchdog_period(env: dict[str, str], expected: float | None) -> None:
    assert watchdog_period(env, pid=4242) == expected


def test_watchdog_period_defaults_to_this_process() -> None:
    env = {"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid())}
    assert watchdog_period(env) == 1.0


# --------------------------------------------------------------------------------------------
# STATUS= in words

NOW = datetime(2026, 11, 22, 14, 5, tzinfo=UTC)


def _health(feed: Feed, status: FeedStatus, at: datetime = NOW, **kwargs: Any) -> FeedHealth:
    return FeedHealth(feed=feed, status=status, at=at, **kwargs)


def test_status_text_names_each_feed_in_words() -> None:
    health = {
        Feed.TICKETS: _health(Feed.TICKETS, FeedStatus.LIVE),
        Feed.QUEUES: _health(Feed.QUEUES, FeedStatus.RECONNECTING, attempt=3),
        Feed.COUNTERS: _health(Feed.COUNTERS, FeedStatus.LIVE),
    }
    assert status_text(health) == "tickets live, queues reconnecting (attempt 3), counters live"


def test_status_text_before_any_report_and_when_refused() -> None:
    health = [
        _health(Feed.COUNTERS, FeedStatus.REFUSED),
        _health(Feed.TICKETS, FeedStatus.CONNECTING),
    ]
    assert status_text(health) == (
        "tickets connecting, queues starting, "
        "counters refused by the service (credentials rejected)"
    )


def test_status_text_uses_the_latest_report_and_masks_secrets() -> None:
    health = [
        _health(Feed.TICKETS, FeedStatus.LIVE, at=NOW - timedelta(seconds=10)),
        _health(
            Feed.TICKETS,
            FeedStatus.RECONNECTING,
            attempt=2,
            error=f"read timeout on https://d/v1/sse?key={API_KEY}",
        ),
    ]
    text = status_text(health)
    assert text.startswith("tickets reconnecting (attempt 2: read timeout on")
    assert API_KEY not in text


# --------------------------------------------------------------------------------------------
# Logging: never on the screen, never a secret


def _settings(tmp_path: Path, **log: object) -> Settings:
    return settings_from_dict(
        {
            "service": {"display_url": "https://display.example.net", "api_key": API_KEY},
            "place": {"id": "P1"},
            "state": {"directory": str(tmp_path / "state")},
            "log": log,
        },
        environ={},
    )


def _log_a_secret_twice() -> None:
    log = logging.getLogger("lobby_display.feeds")
    log.warning("GET https://display.example.net/v1/queues/states/sse?key=%s failed", API_KEY)
    request = httpx.Request("GET", f"https://display.example.net/v1/places?key={API_KEY}")
    try:
        raise httpx.ConnectError(f"cannot reach {request.url}", request=request)
    except httpx.ConnectError:
        log.exception("tickets feed down")


def test_log_file_never_holds_the_api_key(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "display.log"
    setup_logging(_settings(tmp_path, file=str(log_file)), environ={})
    _log_a_secret_twice()
    text = log_file.read_text()
    assert API_KEY not in text
    assert "key=***" in text
    assert "tickets feed down" in text
    assert "httpx.ConnectError" in text  # the traceback is kept, only the secret is masked


def test_a_registered_secret_is_masked_in_any_shape(tmp_path: Path) -> None:
    secret = f"plain-{uuid.uuid4().hex}"
    register_secret(secret)
    log_file = tmp_path / "display.log"
    setup_logging(_settings(tmp_path, file=str(log_file)), environ={})
    logging.getLogger("lobby_display.auth").info("new key %s cached", secret)
    assert secret not in log_file.read_text()


def _fields(datagram: bytes) -> dict[str, str]:
    """Parse a journald native-protocol datagram."""
    fields: dict[str, str] = {}
    rest = datagram
    while rest:
        line, _, tail = rest.partition(b"\n")
        if b"=" in line:
            key, _, value = line.partition(b"=")
            fields[key.decode()] = value.decode()
            rest = tail
        else:
            (size,) = struct.unpack("<Q", tail[:8])
            fields[line.decode()] = tail[8 : 8 + size].decode()
            rest = tail[8 + size + 1 :]
    return fields


def test_on_a_terminal_logs_go_to_the_journal_not_the_screen(tmp_path: Path) -> None:
    """Under both units standard error is the screen (Textual draws there)."""
    journal = Listener(str(tmp_path / "journal.socket"))
    master, slave = os.openpty()
    screen = os.fdopen(slave, "w")
    try:
        setup_logging(
            _settings(tmp_path), environ={}, stderr=screen, journal_socket=journal.address
        )
        _log_a_secret_twice()
        first, second = _fields(journal.receive()), _fields(journal.receive())
        os.set_blocking(master, False)
        with pytest.raises(BlockingIOError):
            os.read(master, 1024)  # nothing reached the screen
    finally:
        screen.close()
        os.close(master)
        journal.close()
    assert first["PRIORITY"] == "4"
    assert first["SYSLOG_IDENTIFIER"] == "lobby-display"
    assert first["MESSAGE"].startswith("lobby_display.feeds: GET https://display.example.net")
    assert second["PRIORITY"] == "3"
    assert "Traceback" in second["MESSAGE"]
    assert API_KEY not in first["MESSAGE"] + second["MESSAGE"]


def test_journal_stream_gets_priority_prefixes_and_no_timestamps(tmp_path: Path) -> None:
    stream_file = tmp_path / "stream"
    with stream_file.open("w") as stream:
        info = os.fstat(stream.fileno())
        env = {"JOURNAL_STREAM": f"{info.st_dev}:{info.st_ino}"}
        setup_logging(_settings(tmp_path), environ=env, stderr=stream)
        logging.getLogger("lobby_display.app").warning("screen up, network down")
        logging.getLogger("lobby_display.app").info("two\nlines")
    lines = stream_file.read_text().splitlines()
    assert lines == [
        "<4>lobby_display.app: screen up, network down",
        "<6>lobby_display.app: two",
        "<6>lines",
    ]


def test_plain_stderr_gets_timestamps(tmp_path: Path) -> None:
    stream = io.StringIO()
    setup_logging(_settings(tmp_path), environ={}, stderr=stream)
    logging.getLogger("lobby_display.app").warning("hello")
    line = stream.getvalue().strip()
    assert line.endswith("WARNING lobby_display.app: hello")
    assert line[:4].isdigit()


def test_terminal_without_journal_logs_to_the_state_directory(tmp_path: Path) -> None:
    master, slave = os.openpty()
    screen = os.fdopen(slave, "w")
    try:
        setup_logging(
            _settings(tmp_path),
            environ={},
            stderr=screen,
            journal_socket=str(tmp_path / "no-journal"),
        )
        logging.getLogger("lobby_display.app").warning("hello")
    finally:
        screen.close()
        os.close(master)
    assert "hello" in (tmp_path / "state" / "lobby-display.log").read_text()


def test_warnings_and_chatty_libraries_stay_off_the_screen(tmp_path: Path) -> None:
    log_file = tmp_path / "display.log"
    setup_logging(_settings(tmp_path, file=str(log_file)), environ={})
    logging.getLogger("httpx").info("HTTP Request: GET https://display.example.net/v1/places")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("something odd", UserWarning, stacklevel=1)
    text = log_file.read_text()
    assert "HTTP Request" not in text
    assert "something odd" in text


def test_setup_logging_twice_keeps_one_handler(tmp_path: Path) -> None:
    settings = _settings(tmp_path, file=str(tmp_path / "display.log"))
    first = setup_logging(settings, environ={})
    second = setup_logging(settings, environ={})
    root = logging.getLogger()
    assert second in root.handlers
    assert first not in root.handlers


def test_level_comes_from_the_config(tmp_path: Path) -> None:
    log_file = tmp_path / "display.log"
    setup_logging(_settings(tmp_path, file=str(log_file), level="WARNING"), environ={})
    logging.getLogger("lobby_display.app").info("not written")
    logging.getLogger("lobby_display.app").warning("written")
    text = log_file.read_text()
    assert "written" in text
    assert "not written" not in text


def test_journal_datagram_frames_multi_line_values() -> None:
    data = journal_datagram({"MESSAGE": "a\nb", "PRIORITY": "6"})
    assert data == b"MESSAGE\n" + struct.pack("<Q", 3) + b"a\nb\nPRIORITY=6\n"


def test_an_unwritable_log_file_falls_back_and_says_so(tmp_path: Path) -> None:
    """Under ProtectSystem=strict /var/log is read-only: the screen must still start."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    stream = io.StringIO()
    setup_logging(_settings(tmp_path, file=str(blocker / "display.log")), environ={}, stderr=stream)
    logging.getLogger("lobby_display.app").warning("still logging")
    text = stream.getvalue()
    assert "cannot write the log file" in text
    assert "still logging" in text

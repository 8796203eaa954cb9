"""Log lines hold no terminal control, whatever their source: a message, its arguments and a
traceback quoting the service's text are written with ESC, BEL, C1 and the other C0 controls
(but newline and tab) escaped, to a log file, to standard error and to the journal alike."""

from __future__ import annotations

import io
import logging
import os
import socket
import struct
from pathlib import Path

from lobby_display.config import Settings, settings_from_dict
from lobby_display.redaction import escape_controls
from lobby_display.service import setup_logging

#: Text as a hostile service sends it: OSC 52 (clipboard), a title, a clear screen, a bell,
#: a C1 CSI, DEL, NUL, a carriage return that would overwrite the line on a terminal.
HOSTILE = "\x1b]52;c;cHduZWQ=\x07Z\x1b]0;pwned\x1b\\\x1b[2J\x07\x9b2J\x7f\x00A\rB"
#: What must not be in a log: ESC, BEL, C1 controls, DEL, NUL, CR.
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\x7f", "\x00", "\r")


def _settings(tmp_path: Path, **log: object) -> Settings:
    return settings_from_dict(
        {
            "service": {"display_url": "https://display.example.net", "api_key": "k" * 20},
            "place": {"id": "P1"},
            "state": {"directory": str(tmp_path / "state")},
            "log": log,
        },
        environ={},
    )


def _log_hostile_text() -> None:
    log = logging.getLogger("lobby_display.feeds")
    log.warning("tickets feed: could not read tickets event %s/%s", HOSTILE, "X")
    log.warning(f"a message built with the text inside: {HOSTILE}")
    try:
        raise ValueError(HOSTILE)
    except ValueError:
        log.exception("unexpected error")


def _assert_clean(text: str) -> None:
    for control in FORBIDDEN:
        assert control not in text, f"{control!r} reached the log: {text!r}"
    assert "\\x1b]52;c;cHduZWQ=\\x07Z" in text  # escaped, still readable
    assert "Traceback" in text and "ValueError" in text


def test_the_log_file_escapes_every_control(tmp_path: Path) -> None:
    log_file = tmp_path / "display.log"
    setup_logging(_settings(tmp_path, file=str(log_file)), environ={})
    _log_hostile_text()
    _assert_clean(log_file.read_text(encoding="utf-8"))


def test_standard_error_and_the_journal_stream_escape_every_control(tmp_path: Path) -> None:
    stream = io.StringIO()
    setup_logging(_settings(tmp_path), environ={}, stderr=stream)
    _log_hostile_text()
    _assert_clean(stream.getvalue())


def test_the_journal_socket_escapes_every_control(tmp_path: Path) -> None:
    address = str(tmp_path / "journal.socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as journal:
        journal.bind(address)
        journal.settimeout(5)
        master, slave = os.openpty()
        screen = os.fdopen(slave, "w")
        try:
            setup_logging(_settings(tmp_path), environ={}, stderr=screen, journal_socket=address)
            _log_hostile_text()
            datagrams = [journal.recv(65536) for _ in range(3)]
        finally:
            screen.close()
            os.close(master)
    _assert_clean("\n".join(_message(datagram) for datagram in datagrams))


def _message(datagram: bytes) -> str:
    """The MESSAGE field of a journald native-protocol datagram."""
    rest = datagram
    while rest:
        line, _, tail = rest.partition(b"\n")
        if b"=" in line:
            name, _, value = line.partition(b"=")
            rest = tail
        else:  # a field with a newline: its name, its length (64 bits), its value
            name, size = line, struct.unpack("<Q", tail[:8])[0]
            value, rest = tail[8 : 8 + size], tail[8 + size + 1 :]
        if name == b"MESSAGE":
            return value.decode("utf-8")
    raise AssertionError(f"no MESSAGE in {datagram!r}")


def test_newlines_and_tabs_are_kept() -> None:
    assert escape_controls("a\tb\nc") == "a\tb\nc"
    assert escape_controls("\x1b[2J\x9b\x85") == "\\x1b[2J\\x9b\\x85"

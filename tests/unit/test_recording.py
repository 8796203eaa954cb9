"""The recording format: written and read back, tolerant of bad lines and of a file cut short,
free of secrets; the flight recorder's files bounded in time and in bytes."""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lobby_display.cli import main
from lobby_display.recording import (
    FileRecorder,
    FlightRecorder,
    Message,
    RecordingError,
    RecordingWriter,
    Start,
    flight_files,
    mask,
    read_recording,
    start_line,
)
from lobby_display.redaction import may_hold_secret, redact, register_secret
from lobby_display.updates import Feed
from tests.helpers.kiosk_install import KIOSK_INSTALL

T0 = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def start() -> Start:
    return start_line(
        place="P1",
        service_url="https://user:pass@display.example.net/v1?key=K",
        langs=["fr_FR"],
        at=T0,
    )


def test_a_recording_reads_back_in_order_with_its_arrival_times(tmp_path: Path) -> None:
    clock = Clock()
    recorder = FileRecorder(tmp_path / "r.jsonl.gz", start(), clock)
    recorder.message(Feed.TICKETS, '{"totalCount":0,"tickets":[]}', True)
    clock.advance(2.5)
    recorder.answer("places/P1/queues", {"langs": "fr_FR"}, {"Q1": {"queueId": "Q1"}})
    clock.advance(1)
    recorder.message(Feed.COUNTERS, "not json at all", False)
    recorder.close()

    recording = read_recording(tmp_path / "r.jsonl.gz")
    assert recording.start is not None and recording.start.place == "P1"
    assert recording.start.service == "https://display.example.net"
    kinds = [(line.kind, line.at - T0) for line in recording.lines]
    assert kinds == [
        ("message", timedelta(0)),
        ("answer", timedelta(seconds=2.5)),
        ("message", timedelta(seconds=3.5)),
    ]
    last = recording.lines[2]
    assert isinstance(last, Message) and last.data == "not json at all"
    assert recording.seconds == 3.5


def test_no_key_token_or_secret_field_is_written(tmp_path: Path) -> None:
    register_secret("s3cr3t-api-key-value")
    recorder = FileRecorder(tmp_path / "r.jsonl.gz", start())
    recorder.answer(
        "/queues/tickets/currents",
        {"key": "s3cr3t-api-key-value", "page": "2", "token": "tok-123456"},
        {"apiKey": "another-key", "tickets": [], "note": "s3cr3t-api-key-value"},
    )
    recorder.message(Feed.QUEUES, '{"echo": "s3cr3t-api-key-value"}', False)
    recorder.close()
    text = gzip.decompress((tmp_path / "r.jsonl.gz").read_bytes()).decode()
    for secret in ("s3cr3t-api-key-value", "another-key", "tok-123456", "user:pass", "key=K"):
        assert secret not in text
    answer = read_recording(tmp_path / "r.jsonl.gz").lines[0]
    assert answer.kind == "answer" and answer.query == {"page": "2"}


def test_bad_lines_are_skipped_and_named_by_their_number(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "r.jsonl.gz"
    good = Message(at=T0, feed=Feed.TICKETS, first=True, data="{}").model_dump_json()
    lines = [
        start().model_dump_json(),
        good,
        "{not json",
        json.dumps({"kind": "message", "at": "2026-11-24T09:00:01Z", "feed": "parking"}),
        good,
    ]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with caplog.at_level(logging.WARNING):
        recording = read_recording(path)
    assert len(recording.lines) == 2 and recording.skipped == 2
    messages = [record.getMessage() for record in caplog.records]
    assert any("line 3 skipped" in message for message in messages)
    assert any("line 4 skipped" in message and "feed" in message for message in messages)


def test_a_file_never_closed_keeps_what_was_flushed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cut.jsonl.gz"
    writer = RecordingWriter(path)
    writer.write(start())
    for second in range(3):
        writer.write(Message(at=T0 + timedelta(seconds=second), feed=Feed.QUEUES, data="{}"))
    writer.flush()  # and the power goes: no gzip trailer
    with caplog.at_level(logging.WARNING):
        recording = read_recording(path)
    assert len(recording.lines) == 3
    assert any("ends early" in record.getMessage() for record in caplog.records)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


def test_a_file_that_is_not_a_recording_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\nworld\n")
    with pytest.raises(RecordingError, match=r"notes\.txt"):
        read_recording(path)
    with pytest.raises(RecordingError, match=r"missing\.gz"):
        read_recording(tmp_path / "missing.gz")
    future = tmp_path / "future.jsonl"
    future.write_text(start().model_copy(update={"version": 99}).model_dump_json() + "\n")
    with pytest.raises(RecordingError, match="version 99"):
        read_recording(future)


def _flight_bytes(state: Path) -> int:
    """The flight files' bytes now (a file deleted while they are counted counts 0)."""
    total = 0
    for path in flight_files(state):
        with contextlib.suppress(FileNotFoundError):
            total += path.stat().st_size
    return total


@pytest.mark.parametrize("wait", [True, False], ids=["written-each-time", "thread-behind"])
def test_the_flight_recorder_stays_within_its_byte_cap(tmp_path: Path, wait: bool) -> None:
    clock = Clock()
    cap = 64_000
    flight = FlightRecorder(tmp_path, start(), minutes=30, max_bytes=cap, clock=clock)
    flight.follow(Feed.QUEUES, lambda: {"data": {"Q1": {"queueId": "Q1"}}})
    largest = 0
    for number in range(4000):
        clock.advance(0.2)
        # Random-looking data compresses badly: the cap is reached in minutes, not hours.
        flight.message(Feed.TICKETS, json.dumps({"n": number, "x": os.urandom(48).hex()}), False)
        if wait:
            flight.drain()  # the files as they are once its thread has written this message
        largest = max(largest, _flight_bytes(tmp_path))
    flight.close()
    largest = max(largest, _flight_bytes(tmp_path))
    assert largest <= cap
    assert len(flight_files(tmp_path)) >= 3, "no rotation happened"
    # The newest file holds the last message; older ones went to keep the cap.
    newest = read_recording(flight_files(tmp_path)[-1])
    assert json.loads(newest.lines[-1].data)["n"] == 3999  # type: ignore[union-attr]


def test_the_flight_recorder_keeps_its_minutes_and_each_file_replays_alone(
    tmp_path: Path,
) -> None:
    clock = Clock()
    flight = FlightRecorder(tmp_path, start(), minutes=10, clock=clock)
    flight.message(Feed.COUNTERS, '{"C1": {"counterId": "C1"}}', True)
    flight.follow(Feed.COUNTERS, lambda: {"C1": {"counterId": "C1", "value": "now"}})
    for _ in range(60 * 60 // 5):  # an hour, a message every 5 s
        clock.advance(5)
        flight.message(Feed.COUNTERS, '{"counterId": "C1"}', False)
    flight.close()
    files = flight_files(tmp_path)
    oldest = read_recording(files[0])
    assert oldest.start is not None
    # Kept: the last 10 minutes, and at most one file (10 / 6 minutes) more.
    assert T0 + timedelta(minutes=60 - 10 - 10 / 6) <= oldest.start.at
    assert oldest.start.at <= T0 + timedelta(minutes=50)
    checkpoint = oldest.lines[0]
    assert isinstance(checkpoint, Message) and checkpoint.first and checkpoint.checkpoint
    assert json.loads(checkpoint.data) == {"C1": {"counterId": "C1", "value": "now"}}
    whole = read_recording(tmp_path / "flight")
    assert whole.lines[-1].at == clock.now


def test_flight_files_lists_only_the_recorders_files_oldest_first(tmp_path: Path) -> None:
    assert flight_files(tmp_path) == []
    folder = tmp_path / "flight"
    folder.mkdir()
    for name in (
        "flight-20261124T090500.000000Z.jsonl.gz",
        "flight-20261124T090000.000000Z.jsonl.gz",
        "notes.txt",
        "flight-old.jsonl.gz",
    ):
        (folder / name).write_bytes(b"")
    assert [path.name for path in flight_files(tmp_path)] == [
        "flight-20261124T090000.000000Z.jsonl.gz",
        "flight-20261124T090500.000000Z.jsonl.gz",
    ]


def test_a_flight_recorder_that_cannot_write_does_not_stop_the_feeds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "flight"
    blocker.write_text("a file where the folder should be")
    flight = FlightRecorder(tmp_path, start(), minutes=5)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            flight.message(Feed.TICKETS, "{}", False)
    flight.close()
    warnings = [record for record in caplog.records if "flight recorder" in record.getMessage()]
    assert len(warnings) == 1


@pytest.mark.parametrize(
    "text",
    [
        "GET /v1/places?key=abcdef123456",
        '{"apiKey": "abcdef123456"}',
        "Authorization: Bearer abc.def.ghi",
        "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
        'jwtToken="abcdef123456"',
        "an echo of known-secret-value-42",
    ],
)
def test_the_quick_secret_test_never_lets_a_secret_through(text: str) -> None:
    register_secret("known-secret-value-42")
    assert may_hold_secret(text)
    assert mask(text) == redact(text) != text


def test_text_without_any_hint_is_left_alone_quickly() -> None:
    text = '{"ticketId": "T1", "label": "A031", "state": 200}'
    assert not may_hold_secret(text)
    assert mask(text) == text == redact(text)


def test_a_kiosk_install_records_and_says_how_to_get_replay() -> None:
    """`record` and the flight recorder need no simulator; `replay` says how to install it."""
    code = (
        f"{KIOSK_INSTALL}\n"
        "import lobby_display.ops.record, lobby_display.kiosk\n"
        "from lobby_display.cli import main\n"
        "sys.exit(main(['replay', 'day.jsonl.gz']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("lobby-display replay: the simulator is not installed")
    assert "pip install 'lobby-display[simulator]'" in done.stderr


def test_a_recording_that_cannot_be_written_stops_and_says_why(tmp_path: Path) -> None:
    failures: list[OSError] = []
    recorder = FileRecorder(tmp_path / "r.jsonl.gz", start(), on_failure=failures.append)
    recorder.message(Feed.TICKETS, "{}", True)

    def full(_line: object) -> int:
        raise OSError(28, "No space left on device")

    recorder.writer.write = full  # type: ignore[method-assign,assignment]  # the disk fills up
    recorder.message(Feed.TICKETS, "{}", False)
    recorder.message(Feed.TICKETS, "{}", False)
    assert [error.strerror for error in failures] == ["No space left on device"]
    assert recorder.counts["message"] == 1


def test_flight_files_from_a_clock_that_was_ahead_go(tmp_path: Path) -> None:
    folder = tmp_path / "flight"
    folder.mkdir()
    future = folder / "flight-20300101T000000.000000Z.jsonl.gz"
    future.write_bytes(b"")
    os.utime(future, (datetime(2030, 1, 1, tzinfo=UTC).timestamp(),) * 2)
    flight = FlightRecorder(tmp_path, start(), minutes=30, clock=Clock())
    flight.message(Feed.TICKETS, "{}", True)
    flight.close()
    assert future not in flight_files(tmp_path)
    assert len(flight_files(tmp_path)) == 1


def test_record_refuses_a_file_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "hall.toml"
    config.write_text(
        '[service]\ndisplay_url = "http://127.0.0.1:9"\napi_key = "k-123456"\n'
        f'[place]\nid = "P"\n[state]\ndirectory = "{tmp_path}"\n'
    )
    config.chmod(0o600)
    out = tmp_path / "no-such-folder" / "day.jsonl.gz"
    assert main(["record", "--config", str(config), "--out", str(out)]) == 1
    assert f"cannot write {out}" in capsys.readouterr().err


def test_a_flight_line_reaches_the_disk_without_waiting_for_the_next(tmp_path: Path) -> None:
    """A screen that loses power keeps what came more than a second before."""
    flight = FlightRecorder(tmp_path, start(), minutes=30)
    flight.message(Feed.COUNTERS, '{"C1": {"counterId": "C1"}}', True)
    flight.message(Feed.COUNTERS, '{"counterId": "C1", "last": true}', False)
    deadline = time.monotonic() + 10
    try:
        while True:
            files = flight_files(tmp_path)
            lines = read_recording(files[-1]).lines if files else []
            if any(isinstance(line, Message) and "last" in line.data for line in lines):
                break
            assert time.monotonic() < deadline, "the line never reached the disk"
            time.sleep(0.05)
    finally:
        flight.close()

"""`lobby-display status`: what it says of the screen's health file, and its exit code."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lobby_display.activity import Activity
from lobby_display.board import Board, BoardSettings
from lobby_display.config import Settings, settings_from_dict
from lobby_display.monitoring import Monitor
from lobby_display.ops.status import status
from lobby_display.updates import Feed, FeedHealth, FeedStatus


@pytest.fixture
def display_pid() -> Iterator[int]:
    """A process whose command line names lobby_display, standing for a running screen."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", "lobby_display"]
    )
    # Just after exec, /proc/PID/cmdline can still read empty: wait until it names us.
    deadline = time.monotonic() + 30
    while b"lobby_display" not in Path(f"/proc/{process.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the stand-in never started"
        time.sleep(0.01)
    yield process.pid
    process.kill()
    process.wait()


def settings(tmp_path: Path) -> Settings:
    return settings_from_dict(
        {
            "service": {"display_url": "http://127.0.0.1:1", "api_key": "k" * 20},
            "place": {"id": "P1"},
            "state": {"directory": str(tmp_path / "state")},
        },
        environ={},
    )


def write_health(
    tmp_path: Path, pid: int, statuses: dict[Feed, FeedStatus], written: datetime
) -> dict[str, str]:
    env = {"RUNTIME_DIRECTORY": str(tmp_path / "run")}
    (tmp_path / "run").mkdir(mode=0o700, exist_ok=True)
    activity = Activity()
    activity.last_message_at[Feed.TICKETS] = written - timedelta(seconds=2)
    activity.reconnections[Feed.QUEUES] = 3
    monitor = Monitor(settings(tmp_path), environ=env, activity=activity, clock=lambda: written)
    board = Board(BoardSettings(), started_at=written)
    for feed, feed_status in statuses.items():
        error = "" if feed_status is FeedStatus.LIVE else "cannot connect to the service"
        board.apply(FeedHealth(feed=feed, status=feed_status, at=written, error=error), written)
    health = monitor.health(board, written).model_copy(update={"pid": pid})
    monitor.write(health)
    return env


def run_status(tmp_path: Path, env: dict[str, str], as_json: bool) -> tuple[int, str]:
    out = io.StringIO()
    code = status(settings(tmp_path), as_json=as_json, environ=env, out=out)
    return code, out.getvalue()


def test_every_feed_live_exits_0(tmp_path: Path, display_pid: int) -> None:
    now = datetime.now(UTC)
    env = write_health(tmp_path, display_pid, dict.fromkeys(Feed, FeedStatus.LIVE), now)
    code, text = run_status(tmp_path, env, as_json=True)
    facts = json.loads(text)
    assert code == 0, text
    assert facts["running"] and facts["all_live"]
    assert facts["pid"] == display_pid
    assert facts["feeds"]["queues"]["reconnections"] == 3
    assert 0 <= facts["feeds"]["tickets"]["seconds_since_last_message"] < 60
    assert facts["feeds"]["counters"]["seconds_since_last_message"] is None


def test_a_feed_not_live_exits_1_and_says_why(tmp_path: Path, display_pid: int) -> None:
    statuses = {**dict.fromkeys(Feed, FeedStatus.LIVE), Feed.QUEUES: FeedStatus.RECONNECTING}
    env = write_health(tmp_path, display_pid, statuses, datetime.now(UTC))
    code, text = run_status(tmp_path, env, as_json=False)
    assert code == 1
    queues = next(line for line in text.splitlines() if line.strip().startswith("queues"))
    assert "reconnecting" in queues and "cannot connect to the service" in queues
    assert "3 reconnections" in queues


def test_a_screen_that_stopped_writing_is_not_running(tmp_path: Path, display_pid: int) -> None:
    old = datetime.now(UTC) - timedelta(minutes=5)
    env = write_health(tmp_path, display_pid, dict.fromkeys(Feed, FeedStatus.LIVE), old)
    code, text = run_status(tmp_path, env, as_json=True)
    facts = json.loads(text)
    assert code == 1 and not facts["running"]
    assert "has not written its health" in facts["problem"]


def test_a_screen_that_ended_is_not_running(tmp_path: Path) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(ended.stdout)
    env = write_health(tmp_path, pid, dict.fromkeys(Feed, FeedStatus.LIVE), datetime.now(UTC))
    code, text = run_status(tmp_path, env, as_json=False)
    assert code == 1
    assert "NOT RUNNING" in text and f"PID {pid}" in text


def test_no_health_file_says_where_it_looked(tmp_path: Path) -> None:
    env = {"RUNTIME_DIRECTORY": str(tmp_path / "run")}
    code, text = run_status(tmp_path, env, as_json=False)
    assert code == 1
    assert "no running display found" in text and str(tmp_path / "run") in text


def test_a_damaged_health_file_is_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "health.json").write_text("{not json")
    code, text = run_status(tmp_path, {"RUNTIME_DIRECTORY": str(run)}, as_json=True)
    assert code == 1
    assert "damaged" in json.loads(text)["problem"]

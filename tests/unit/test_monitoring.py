"""The kiosk's health as node-exporter's textfile collector and `lobby-display status` read it:
the Prometheus text format (parsed by prometheus_client's parser), the files written
atomically, a bad `[monitoring]` config named with its key."""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lobby_display import __version__
from lobby_display.activity import Activity
from lobby_display.board import Board, BoardSettings
from lobby_display.config import ConfigError, Settings, settings_from_dict
from lobby_display.monitoring import Health, Monitor, metrics_text
from lobby_display.updates import Feed, FeedHealth, FeedStatus

NOW = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def settings(tmp_path: Path, place: str = "P1", **monitoring: Any) -> Settings:
    return settings_from_dict(
        {
            "service": {"display_url": "http://127.0.0.1:1", "api_key": "k" * 20},
            "place": {"id": place},
            "state": {"directory": str(tmp_path / "state")},
            "monitoring": monitoring,
        },
        environ={},
    )


def board_with(statuses: dict[Feed, FeedStatus]) -> Board:
    board = Board(BoardSettings(), started_at=NOW - timedelta(minutes=5))
    for feed, status in statuses.items():
        error = "" if status is FeedStatus.LIVE else "cannot connect to the service"
        board.apply(FeedHealth(feed=feed, status=status, at=NOW, error=error), NOW)
    return board


def families(text: str) -> dict[str, Any]:
    return {family.name: family for family in text_string_to_metric_families(text)}


def samples(text: str, screen: str = "P1") -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Each sample's value by name and labels (the `screen` label, on every one, checked here
    and left out of the key)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = dict(sample.labels)
            assert labels.pop("screen") == screen, sample
            found[(sample.name, tuple(sorted(labels.items())))] = sample.value
    return found


def monitor_for(tmp_path: Path, **options: Any) -> tuple[Monitor, Activity]:
    activity = Activity()
    env = {"RUNTIME_DIRECTORY": str(tmp_path / "run")}
    (tmp_path / "run").mkdir(mode=0o700)
    monitor = Monitor(
        settings(tmp_path, **options), environ=env, activity=activity, clock=lambda: NOW
    )
    return monitor, activity


def test_the_textfile_parses_with_every_metric_and_its_type(tmp_path: Path) -> None:
    textfile = tmp_path / "collector" / "lobby_display.prom"
    textfile.parent.mkdir()
    monitor, activity = monitor_for(tmp_path, textfile=str(textfile))
    activity.last_message_at[Feed.TICKETS] = NOW - timedelta(seconds=3)
    activity.last_message_at[Feed.QUEUES] = NOW - timedelta(seconds=42)
    activity.reconnections[Feed.QUEUES] += 4
    activity.key_renewals = 2
    monitor.calls(3)
    monitor.calls(1)
    board = board_with(
        {
            Feed.TICKETS: FeedStatus.LIVE,
            Feed.QUEUES: FeedStatus.RECONNECTING,
            Feed.COUNTERS: FeedStatus.LIVE,
        }
    )
    monitor.write(monitor.health(board, NOW))

    text = textfile.read_text()
    kinds = {name: family.type for name, family in families(text).items()}
    assert kinds["lobby_display_feed_live"] == "gauge"
    assert kinds["lobby_display_feed_last_message_age_seconds"] == "gauge"
    assert kinds["lobby_display_feed_reconnections"] == "counter"
    assert kinds["lobby_display_api_key_renewals"] == "counter"
    assert kinds["lobby_display_calls_shown"] == "counter"
    assert kinds["lobby_display_start_time_seconds"] == "gauge"

    values = samples(text)
    assert values[("lobby_display_feed_live", (("feed", "tickets"),))] == 1
    assert values[("lobby_display_feed_live", (("feed", "queues"),))] == 0
    assert values[("lobby_display_feed_live", (("feed", "counters"),))] == 1
    assert values[("lobby_display_feed_last_message_age_seconds", (("feed", "tickets"),))] == 3
    assert values[("lobby_display_feed_last_message_age_seconds", (("feed", "queues"),))] == 42
    # Never a message on the counters feed: no age rather than a made-up one.
    assert ("lobby_display_feed_last_message_age_seconds", (("feed", "counters"),)) not in values
    assert values[("lobby_display_feed_reconnections_total", (("feed", "queues"),))] == 4
    assert values[("lobby_display_feed_reconnections_total", (("feed", "tickets"),))] == 0
    assert values[("lobby_display_api_key_renewals_total", ())] == 2
    assert values[("lobby_display_calls_shown_total", ())] == 4
    assert values[("lobby_display_start_time_seconds", ())] == NOW.timestamp()
    assert values[("lobby_display_info", (("place", "P1"), ("version", __version__)))] == 1


def test_label_values_are_escaped(tmp_path: Path) -> None:
    place = 'Hall "A"\\north\nwing'
    health = Health(
        version=__version__,
        place_id=place,
        pid=1,
        started_at=NOW,
        written_at=NOW,
        feeds={feed: {"status": FeedStatus.LIVE} for feed in Feed},
    )
    values = samples(metrics_text(health), screen=place)
    assert values[("lobby_display_info", (("place", place), ("version", __version__)))] == 1


def test_files_are_replaced_whole_and_readable_by_node_exporter(tmp_path: Path) -> None:
    textfile = tmp_path / "collector" / "lobby_display.prom"
    textfile.parent.mkdir()
    monitor, _ = monitor_for(tmp_path, textfile=str(textfile))
    board = board_with({feed: FeedStatus.LIVE for feed in Feed})
    for _ in range(3):
        monitor.write(monitor.health(board, NOW))
    assert os.listdir(textfile.parent) == ["lobby_display.prom"], "no temp file left behind"
    assert textfile.stat().st_mode & 0o777 == 0o644
    health_file = tmp_path / "run" / "health.json"
    assert health_file.stat().st_mode & 0o777 == 0o600
    written = json.loads(health_file.read_text())
    assert written["feeds"]["tickets"]["status"] == "live"
    assert written["place_id"] == "P1"


def test_a_missing_collector_directory_is_logged_once_and_the_health_still_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    textfile = tmp_path / "absent" / "lobby_display.prom"
    monitor, _ = monitor_for(tmp_path, textfile=str(textfile))
    board = board_with({feed: FeedStatus.LIVE for feed in Feed})
    with caplog.at_level(logging.WARNING, logger="lobby_display.monitoring"):
        monitor.write(monitor.health(board, NOW))
        monitor.write(monitor.health(board, NOW))
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1 and str(textfile) in warnings[0], warnings
    assert not textfile.parent.exists(), "the collector's directory is not made by the display"
    assert (tmp_path / "run" / "health.json").is_file()


async def test_tick_writes_at_most_every_few_seconds(tmp_path: Path) -> None:
    moments = [NOW]
    monitor, _ = monitor_for(tmp_path)
    monitor.clock = lambda: moments[-1]
    board = board_with({feed: FeedStatus.LIVE for feed in Feed})
    path = tmp_path / "run" / "health.json"

    async def tick_and_wait() -> None:
        monitor.tick(board)
        if monitor._writing is not None:
            await monitor._writing

    await tick_and_wait()
    first = json.loads(path.read_text())["written_at"]
    moments.append(NOW + timedelta(seconds=1))
    await tick_and_wait()
    assert json.loads(path.read_text())["written_at"] == first, "not again within the interval"
    moments.append(NOW + timedelta(seconds=6))
    await tick_and_wait()
    assert json.loads(path.read_text())["written_at"] != first


@pytest.mark.parametrize(
    ("value", "words"),
    [("/var/lib/node-exporter/lobby.txt", "must end in .prom"), ("lobby.prom", "absolute")],
)
def test_a_bad_textfile_is_named_with_its_key(tmp_path: Path, value: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, textfile=value)
    assert "monitoring.textfile" in str(caught.value)
    assert words in str(caught.value)

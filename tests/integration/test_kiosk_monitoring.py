"""The real `lobby-display run` against the simulator over 127.0.0.1, as monitoring sees it.

The metrics file node-exporter would read, parsed with prometheus_client's text parser (every
read of it must parse: it is replaced whole), follows the feeds: live with recent messages, a
call counted, a key renewed after the service revoked it, then a cut (every stream answered 503)
shows each feed not live with its reconnections. `lobby-display status` says the same, and
`lobby-display report` bundles the running screen's own screenshot and its flight recorder's
file, with no secret.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from lobby_display.auth import KEY_CACHE_NAME
from lobby_display.simulator import SimulatorServer
from tests.helpers.terminal import TerminalProgram

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))


def unzipped(data: bytes) -> bytes:
    """A gzip member's text, also of a file still being written (a flight file: no end yet)."""
    return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(data)


FEEDS = ("tickets", "queues", "counters")

Metrics = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def environment(tmp_path: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LOBBY_DISPLAY_", "WATCHDOG_", "NOTIFY_SOCKET"))
        and key not in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CREDENTIALS_DIRECTORY")
    }
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env.update(RUNTIME_DIRECTORY=str(runtime), TEXTUAL_ANIMATIONS="none")
    return env


def parse(text: str) -> Metrics:
    """Samples by name and labels (`screen` left out: checked to be the config's name)."""
    found: Metrics = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = dict(sample.labels)
            assert labels.pop("screen") == "config", sample
            found[(sample.name, tuple(sorted(labels.items())))] = sample.value
    return found


def feed(metrics: Metrics, name: str, which: str) -> float | None:
    return metrics.get((name, (("feed", which),)))


def metrics_until(path: Path, done: Callable[[Metrics], bool], what: str) -> Metrics:
    """The metrics file, read until `done` holds (a generous bound, then fail)."""
    deadline = time.monotonic() + 90
    text = ""
    while True:
        try:
            text = path.read_text()
        except FileNotFoundError:
            text = ""
        if text:
            metrics = parse(text)
            if done(metrics):
                return metrics
        assert time.monotonic() < deadline, f"never {what}; last file:\n{text}"
        time.sleep(0.3)


def all_live(metrics: Metrics) -> bool:
    return all(feed(metrics, "lobby_display_feed_live", name) == 1 for name in FEEDS) and all(
        feed(metrics, "lobby_display_feed_last_message_age_seconds", name) is not None
        for name in FEEDS
    )


def status(config: Path, env: dict[str, str]) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [PROGRAM, "status", "--config", str(config), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout)


def test_metrics_follow_the_feeds_live_then_cut(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path
) -> None:
    sim = start_simulator()
    textfile = tmp_path / "collector" / "lobby_display.prom"
    textfile.parent.mkdir()
    config = sim.write_config(
        tmp_path,
        locales=["en_US"],
        log={"file": str(tmp_path / "display.log")},
        monitoring={"textfile": str(textfile)},
    )
    env = environment(tmp_path)
    with TerminalProgram([PROGRAM, "run", "--config", str(config)], env, rows=45, columns=160) as (
        program
    ):
        started = time.time()
        live = metrics_until(textfile, all_live, "all three feeds live")
        assert live[("lobby_display_info", (("place", sim.place_id), ("version", "0.1.0")))] == 1
        assert abs(live[("lobby_display_start_time_seconds", ())] - started) < 60
        assert textfile.stat().st_mode & 0o777 == 0o644
        # The first key of a fresh screen is obtained, not renewed.
        assert live[("lobby_display_api_key_renewals_total", ())] == 0

        # A call made now is counted as shown.
        labels = sim.arrive(0, 1)
        sim.hold_calls(True)
        sim.call_tickets(labels)
        metrics_until(
            textfile,
            lambda m: m.get(("lobby_display_calls_shown_total", ()), 0) >= 1,
            "a call counted as shown",
        )

        code, facts = status(config, env)
        assert code == 0 and facts["running"] and facts["all_live"], facts

        # The support bundle of a running screen: its own screenshot, its health; no key.
        bundle = tmp_path / "report.tar.gz"
        done = subprocess.run(
            [PROGRAM, "report", "--config", str(config), "--out", str(bundle)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        cached_key = json.loads((tmp_path / "state" / KEY_CACHE_NAME).read_text())["apiKey"]
        with tarfile.open(bundle, "r:gz") as archive:
            texts = {}
            for member in archive.getmembers():
                data = archive.extractfile(member).read()  # type: ignore[union-attr]
                if member.name.endswith(".gz"):
                    data = unzipped(data)
                texts[member.name.split("/", 1)[1]] = data.decode("utf-8")
        for name, text in texts.items():
            assert cached_key not in text, f"{name} holds the API key"
        assert texts["screenshot.svg"].startswith("<svg"), "the running screen's screenshot"
        assert "screenshot.svg: what the screen" in texts["MANIFEST.txt"]
        assert json.loads(texts["health.json"])["place_id"] == sim.place_id
        assert "TERM=" in texts["versions.txt"], texts["versions.txt"]
        # The flight recorder's file (still being written), with the feeds' messages in it.
        flight = [name for name in texts if name.startswith("flight/")]
        assert flight, sorted(texts)
        assert any('"kind":"message"' in texts[name] for name in flight), flight

        # The service revokes every key: the streams, dropped, come back with a renewed one.
        sim.revoke_keys()
        sim.drop()
        metrics_until(
            textfile,
            lambda m: m.get(("lobby_display_api_key_renewals_total", ()), 0) >= 1 and all_live(m),
            "a key renewed and the feeds live again",
        )

        # The cut: every stream is dropped and every new one answered 503.
        sim.fail_next(count=1_000_000, status=503, target="sse")
        sim.drop()
        cut = metrics_until(
            textfile,
            lambda m: all(feed(m, "lobby_display_feed_live", name) == 0 for name in FEEDS),
            "every feed shown not live after the cut",
        )
        for name in FEEDS:
            reconnections = feed(cut, "lobby_display_feed_reconnections_total", name)
            assert reconnections is not None and reconnections >= 2, (name, reconnections)
        code, facts = status(config, env)
        assert code == 1 and facts["running"] and not facts["all_live"], facts
        feeds = facts["feeds"]
        assert isinstance(feeds, dict)
        assert all(feeds[name]["status"] == "reconnecting" for name in FEEDS), feeds
        assert all("503" in feeds[name]["error"] for name in FEEDS), feeds

        program.send_signal(signal.SIGTERM)
        assert program.wait(60).returncode == 0
    log = (tmp_path / "display.log").read_text()
    assert "Traceback" not in log
    assert "cannot write the health file" not in log

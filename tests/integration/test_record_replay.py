"""Record a place's feeds from the simulator over real HTTP, replay the recording, and see the
display end with the board the live display had; and no secret in a recording."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import signal
import subprocess
import sys
import time
import unicodedata
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from lobby_display.board import Board, BoardSettings
from lobby_display.cli import main
from lobby_display.client import DisplayClient, make_http
from lobby_display.config import Settings, load_config
from lobby_display.recording import (
    Answer,
    FileRecorder,
    Message,
    Recording,
    flight_files,
    flight_recorder,
    read_recording,
    start_line,
)
from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.simulator.replay import ReplayServer
from lobby_display.source import feeds_source
from lobby_display.updates import Feed, FeedStatus, Update
from tests.helpers.feeds_harness import FAST_TIMING, LOCALES, until
from tests.helpers.recording_harness import every_feed, record_until

#: A place with more current tickets than a first page holds (the display reads REST pages).
PLACE: dict[str, Any] = {"tickets": 130, "speed": 60.0, "heartbeat": 0.3, "retry_ms": 500}
#: Seconds between the scripted calls. The service's date-times are whole seconds: calls in the
#: same second are ordered as the display first saw them, live one by one, but all at once when
#: a slow replaying display's first snapshot already holds them (a loaded machine: the recall
#: listed last instead of first). Each call in its own second is newest-first either way.
CALLS_APART = 1.05


def board_facts(board: Board) -> dict[str, Any]:
    """What the screen shows: tickets, queue rows, counters, recent calls (label and counter)."""
    return {
        "tickets": {
            ticket_id: (ticket.state, ticket.label, ticket.queue.id, ticket.endpoint.id)
            for ticket_id, ticket in board.tickets.items()
        },
        "queues": {
            view.queue_id: (view.status, view.waiting_tickets, view.waiting_people)
            for view in board.queues()
        },
        "counters": {view.counter_id: view.value for view in board.counters()},
        "calls": [
            (view.call.label, view.call.endpoint_id, view.call.recall)
            for view in board.recent_calls()
        ],
    }


class Display:
    """A board fed by `feeds_source` (the kiosk's feeds) with the keys and tokens it sent."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.board = Board(BoardSettings.from_settings(settings))
        self.secrets: set[str] = set()

    def emit(self, update: Update) -> None:
        self.board.apply(update, datetime.now(UTC))

    def client(self, settings: Settings) -> DisplayClient:
        async def note(request: httpx.Request) -> None:
            if key := request.url.params.get("key"):
                self.secrets.add(key)
            if authorization := request.headers.get("authorization"):
                self.secrets.add(authorization.partition(" ")[2])

        http = make_http(settings)
        http.event_hooks["request"].append(note)
        return DisplayClient.from_settings(settings, http=http)

    def live(self) -> bool:
        health = self.board.health(datetime.now(UTC))
        return all(health[feed].status is FeedStatus.LIVE for feed in Feed)

    @contextlib.asynccontextmanager
    async def running(self, observer: Any = None) -> Any:
        source = feeds_source(
            self.settings, client_factory=self.client, timing=FAST_TIMING, observer=observer
        )
        task = asyncio.ensure_future(source(self.emit))
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def settings_of(config: Path) -> Settings:
    return load_config(config, environ={})


@pytest.fixture
def place(sim_account: ServiceAccount) -> Iterator[SimulatorServer]:
    with SimulatorServer(seed=11, account=sim_account, **PLACE) as sim:
        yield sim


async def record_live(sim: SimulatorServer, folder: Path, out: Path) -> tuple[Display, Any]:
    """Run a display of `sim` while recording into `out`, with scripted calls; its final board."""
    config = sim.write_config(folder / "live", locales=list(LOCALES))
    display = Display(settings_of(config))
    settings = display.settings
    recorder = FileRecorder(
        out,
        start_line(
            place=settings.place.id,
            service_url=settings.service.display_url,
            langs=settings.display.locales,
        ),
    )
    try:
        await live_day(sim, display, recorder, lambda: recorder.counts["message"] > 40)
    finally:
        recorder.close()
    return display, board_facts(display.board)


async def live_day(
    sim: SimulatorServer, display: Display, observer: Any, enough: Callable[[], bool]
) -> None:
    """The display's feeds, seen by `observer`, through calls, a recall, a reconnection and the
    place's own life, until `enough()` and the calls are shown."""
    async with display.running(observer):
        await until(display.live, 20, "the live display's feeds live")
        await asyncio.to_thread(sim.hold_calls, True)
        truth = await asyncio.to_thread(sim.truth)
        waiting = [ticket["label"] for ticket in truth["tickets"].values() if ticket["state"] < 200]
        called: list[dict[str, Any]] = []
        for label in waiting[:3]:
            called += await asyncio.to_thread(sim.call_tickets, [label])
            await asyncio.sleep(CALLS_APART)
        await asyncio.to_thread(sim.recall_tickets, [called[-1]["label"]])
        await asyncio.to_thread(sim.drop, "tickets")  # a reconnection, recorded too
        await until(enough, 30, "enough recorded")

        def shown() -> set[str]:
            return {view.call.label for view in display.board.recent_calls()}

        await until(lambda: set(waiting[:3]) <= shown(), 20, "the calls shown", explain=shown)
        await asyncio.sleep(1.0)  # more of the place's own life


async def test_a_replayed_recording_ends_with_the_board_the_live_display_had(
    place: SimulatorServer, tmp_path: Path
) -> None:
    out = tmp_path / "day.jsonl.gz"
    _, facts = await record_live(place, tmp_path, out)
    assert facts["calls"], "the live display showed no call"
    assert len(facts["tickets"]) > 50, "the live display read no REST page of tickets"
    recording = read_recording(out)
    assert recording.skipped == 0
    assert {line.feed for line in recording.lines if hasattr(line, "feed")} == set(Feed)

    await replay_to(recording, tmp_path / "replay", facts, speed=5.0)


async def test_a_screen_that_connects_late_still_sees_the_day_from_its_start(
    place: SimulatorServer, tmp_path: Path
) -> None:
    out = tmp_path / "day.jsonl.gz"
    _, facts = await record_live(place, tmp_path, out)
    recording = read_recording(out)

    async def no_screen_yet(replay: ReplayServer) -> None:
        # Longer than the whole day at 5 x: had the day started, the calls' tickets would be
        # done and gone from the snapshot the screen reads.
        await asyncio.sleep(recording.seconds / 5 + 0.5)
        waiting = replay.status()
        assert (waiting["waiting"], waiting["position"], waiting["ended"]) == (True, 0.0, False)

    await replay_to(recording, tmp_path / "replay", facts, speed=5.0, before=no_screen_yet)


async def test_messages_played_at_once_with_a_reconnection_reach_the_screen_first(
    place: SimulatorServer, tmp_path: Path
) -> None:
    """A loaded replay plays what fell due together; the recorded screen had the messages
    before it reconnected, so the replaying one must have them too (a CI run lost a call)."""
    out = tmp_path / "day.jsonl.gz"
    _, facts = await record_live(place, tmp_path, out)
    recording = read_recording(out)
    snapshots = [
        line
        for line in recording.lines
        if isinstance(line, Message) and line.feed is Feed.TICKETS and line.first
    ]
    assert len(snapshots) >= 2, "the live display did not reconnect its tickets feed"
    first, again = snapshots[0].at, snapshots[1].at
    burst = Recording(
        start=recording.start,
        lines=sorted(
            (
                line.model_copy(update={"at": again})
                if isinstance(line, Message)
                and line.feed is Feed.TICKETS
                and first < line.at < again
                else line
                for line in recording.lines
            ),
            key=lambda line: line.at,
        ),
    )
    calls = [line for line in burst.lines if line.at == again and isinstance(line, Message)]
    assert len(calls) > 4, "the calls are not played with the reconnection"
    await replay_to(burst, tmp_path / "replay", facts, speed=2.0)


def _difference(have: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """The parts that differ (for dicts, the first few ids that differ)."""
    found: dict[str, Any] = {}
    for part, wanted in want.items():
        if have[part] == wanted:
            continue
        if isinstance(wanted, dict):
            ids = sorted(
                key
                for key in wanted.keys() | have[part].keys()
                if have[part].get(key) != wanted.get(key)
            )
            found[part] = {key: (have[part].get(key), wanted.get(key)) for key in ids[:5]}
        else:
            found[part] = {"replay": have[part], "live": wanted}
    return found


async def test_a_recording_holds_no_key_token_or_private_key(
    place: SimulatorServer, tmp_path: Path
) -> None:
    out = tmp_path / "day.jsonl.gz"
    live, _ = await record_live(place, tmp_path, out)
    text = gzip.decompress(out.read_bytes()).decode()
    secrets = {secret for secret in live.secrets if len(secret) >= 8}
    assert secrets, "the display sent no key"
    assert not [secret for secret in secrets if secret in text]
    private = json.loads((tmp_path / "live" / "service-account.json").read_text())["private_key"]
    body = "".join(private.splitlines()[1:-1])
    assert body[:40] not in text and "PRIVATE KEY" not in text
    assert "key=" not in text and '"key"' not in text


def test_record_command_stops_after_its_minutes(
    place: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = place.write_config(tmp_path, locales=list(LOCALES))
    out = tmp_path / "short.jsonl.gz"
    code = main(["record", "--config", str(config), "--out", str(out), "--minutes", "0.02"])
    assert code == 0
    recording = read_recording(out)
    assert recording.start is not None and recording.start.place == place.place_id
    printed = capsys.readouterr().out
    assert str(out) in printed and "lobby-display replay" in printed


def test_record_command_writes_the_three_feeds_and_the_place_until_stopped(
    place: SimulatorServer, tmp_path: Path
) -> None:
    config = place.write_config(tmp_path, locales=list(LOCALES))
    out = tmp_path / "day.jsonl.gz"
    queues = f"/places/{place.place_id}/queues"

    def enough(recording: Recording) -> bool:
        answered = {line.path for line in recording.lines if isinstance(line, Answer)}
        return every_feed(recording) and queues in answered

    printed = record_until(config, out, enough)
    assert "Recorded" in printed
    assert enough(read_recording(out))  # closed whole at SIGTERM, and still all there
    gzip.decompress(out.read_bytes())


def test_replay_command_refuses_a_file_that_is_not_a_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    assert main(["replay", str(bad)]) == 1
    error = capsys.readouterr().err
    assert "notes.txt" in error


async def test_a_flight_recorder_file_alone_and_its_folder_replay_to_the_live_board(
    place: SimulatorServer, tmp_path: Path
) -> None:
    config = place.write_config(tmp_path / "live", locales=list(LOCALES))
    display = Display(settings_of(config))
    state = display.settings.state_directory()
    loop = asyncio.get_running_loop()
    began = loop.time()

    def fast() -> datetime:
        # Two recorded minutes a second: the 30 minutes' files (5 minutes each) turn quickly.
        return datetime(2026, 11, 24, 9, tzinfo=UTC) + timedelta(
            seconds=(loop.time() - began) * 120
        )

    flight = flight_recorder(display.settings, clock=fast)
    assert flight is not None
    try:
        await live_day(place, display, flight, lambda: len(flight_files(state)) >= 3)
    finally:
        flight.close()
    facts = board_facts(display.board)
    last = flight_files(state)[-1]
    recording = read_recording(last)
    checkpoints = {
        line.feed for line in recording.lines if isinstance(line, Message) and line.checkpoint
    }
    assert checkpoints == set(Feed), "a flight file starts with every live feed's records"

    # Recent calls made before the last file began are not in it: the rest must agree. The
    # whole folder (every file, checkpoints between them) holds the whole day.
    # At the recording's own pace (it was made at 120 recorded seconds a second): the day
    # starts at the display's first request, and its streams connect a little later; at 600 x
    # that little (0.1 s: a minute of the place) could miss the first calls being done.
    alone = ("tickets", "queues", "counters")
    await replay_to(recording, tmp_path / "alone", facts, alone, speed=120.0)
    await replay_to(read_recording(state / "flight"), tmp_path / "all", facts, speed=120.0)


async def replay_to(
    recording: Recording,
    folder: Path,
    facts: dict[str, Any],
    parts: tuple[str, ...] | None = None,
    speed: float = 5.0,
    before: Callable[[ReplayServer], Awaitable[None]] | None = None,
) -> None:
    """Replay `recording` at `speed` to a display (started after `before`, if given) until
    the replay ended and its board's `parts` (all: None) are `facts`'."""
    wanted = facts if parts is None else {part: facts[part] for part in parts}
    with ReplayServer(recording, speed=speed, heartbeat=0.3) as replay:
        if before is not None:
            await before(replay)
        replayed = Display(settings_of(replay.write_config(folder)))

        def shown() -> dict[str, Any]:
            return {part: board_facts(replayed.board)[part] for part in wanted}

        async with replayed.running():
            await until(
                lambda: replay.status()["ended"] and shown() == wanted,
                60,
                f"the board replayed from {folder.name} equal to the live one",
                explain=lambda: _difference(shown(), wanted),
            )


def test_the_kiosk_records_its_flight_unless_told_not_to(tmp_path: Path) -> None:
    config = tmp_path / "hall.toml"
    base = '[service]\ndisplay_url = "http://127.0.0.1:9"\napi_key = "k"\n[place]\nid = "P"\n'
    config.write_text(base + f'[state]\ndirectory = "{tmp_path}"\n')
    config.chmod(0o600)
    recorder = flight_recorder(settings_of(config))
    assert recorder is not None and recorder.directory == tmp_path / "flight"
    assert recorder.window == timedelta(minutes=30)
    config.write_text(base + f'[state]\ndirectory = "{tmp_path}"\nrecord_minutes = 0\n')
    assert flight_recorder(settings_of(config)) is None


def test_replay_command_prints_a_config_serves_it_and_loops(
    place: SimulatorServer, tmp_path: Path
) -> None:
    config = place.write_config(tmp_path / "place", locales=list(LOCALES))
    day = tmp_path / "day.jsonl.gz"
    record_until(config, day)
    place.stop()
    program = Path(sys.executable).with_name("lobby-display")
    command = [str(program), "replay", str(day), "--port", "0", "--speed", "20", "--loop"]
    command += ["--directory", str(tmp_path / "replay")]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as run:
        try:
            assert run.stdout is not None
            printed = [run.stdout.readline() for _ in range(8)]
            url = printed[0].split(" at ")[1].strip()
            assert url.startswith("http://127.0.0.1:")
            shown = settings_of(tmp_path / "replay" / "config.toml")
            assert shown.service.display_url == url
            assert shown.place.id == place.place_id
            assert any("lobby-display run --config" in line for line in printed)
            assert "The day starts when the first screen connects.\n" in printed
            # No screen yet: the day waits (at 20 x, a second would be 20 s of it).
            time.sleep(1.0)
            status = httpx.get(f"{url}/_replay/status", timeout=5).json()
            assert (status["waiting"], status["position"], status["played"]) == (True, 0.0, 0)
            httpx.get(f"{url}/v1/api_key", timeout=5)  # a screen's first request, refused or not
            deadline = time.monotonic() + 30
            while httpx.get(f"{url}/_replay/status", timeout=5).json()["rounds"] < 2:
                assert time.monotonic() < deadline, "the replay never went round twice"
                time.sleep(0.1)
        finally:
            run.send_signal(signal.SIGTERM)
            out, err = run.communicate(timeout=30)
    assert run.returncode == 0, err
    assert "Replay stopped." in out


def test_hostile_strings_of_a_recording_are_cleaned_when_replayed(
    sim_account: ServiceAccount, tmp_path: Path
) -> None:
    with SimulatorServer(seed=5, account=sim_account, hostile=True, **PLACE) as sim:
        config = sim.write_config(tmp_path / "place", locales=list(LOCALES))
        day = tmp_path / "day.jsonl.gz"
        record_until(config, day)
    recorded = gzip.decompress(day.read_bytes()).decode()
    assert "\\u001b" in recorded, "the recording keeps the service's strings as they came"

    def unclean(text: str) -> bool:
        return any(unicodedata.category(char) in ("Cc", "Cf") for char in text)

    async def replayed() -> list[str]:
        with ReplayServer(read_recording(day), speed=50.0, heartbeat=0.3) as replay:
            display = Display(settings_of(replay.write_config(tmp_path / "replay")))
            async with display.running():
                await until(lambda: display.live() and display.board.queues(), 30, "live")
                board = display.board
                texts = [ticket.label for ticket in board.tickets.values()]
                for view in board.queues():
                    texts += board.queue_names(view.queue_id).values()
                texts += board.place_names().values()
                return texts

    texts = asyncio.run(replayed())
    assert texts and not [text for text in texts if unclean(text)]

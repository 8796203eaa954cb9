"""A recording served as a display service: the feeds' messages again, at their pace or faster.

`lobby-display replay FILE` and `demo --replay FILE`: from the first screen's request, each
message when its time comes at `speed`; a connection gets the feed's latest snapshot then the
messages since; REST routes answer what the recorded display was answered (docs/operations.md).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import logging
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lobby_display.config import ConfigError
from lobby_display.recording import (
    Answer,
    Message,
    Recording,
    RecordingError,
    clean_query,
    read_recording,
)
from lobby_display.redaction import EscapingFormatter
from lobby_display.simulator import names
from lobby_display.simulator.auth import ApiKeys, AuthError, ServiceAccount, verify_developer_token
from lobby_display.simulator.background import BackgroundLoop
from lobby_display.simulator.files import CREDENTIALS_NAME, write_config
from lobby_display.simulator.routes import SSEResponse, dumps, error, int_param, list_param
from lobby_display.simulator.server import EmbeddedHttp, stop_signals
from lobby_display.simulator.sse import FeedHub, Subscriber, frame
from lobby_display.simulator.transport import ConnectionRegistry
from lobby_display.updates import Feed

log = logging.getLogger(__name__)

#: Seconds a connection waits for its feed's first snapshot before a 503 (start of a replay).
SNAPSHOT_WAIT: Final = 10.0
#: Seconds the end of the recording is served before `--loop` starts it again.
LOOP_PAUSE: Final = 10.0
#: The feeds' streaming routes (under /v1).
STREAMS: Final = {
    "/queues/tickets/currents/sse": Feed.TICKETS,
    "/queues/state/sse": Feed.QUEUES,
    "/counters/sse": Feed.COUNTERS,
}
_CURRENTS: Final = "/queues/tickets/currents"


@dataclass
class _FeedState:
    """A feed at the current point of the replay: its latest snapshot and the messages since."""

    first: str | None = None
    since: list[str] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class Replay:
    """A recording served over HTTP in the running asyncio loop (`async with Replay(...)`)."""

    def __init__(
        self,
        recording: Recording,
        *,
        speed: float = 1.0,
        loop: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        heartbeat: float = 15.0,
        account: ServiceAccount | None = None,
        start_now: bool = False,
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.recording = recording
        self.speed = speed
        self.loop = loop
        self.host, self.port = host, port
        self.url = ""
        began = recording.began
        self._lines = recording.lines
        self._offsets = [
            (line.at - began).total_seconds() if began is not None else 0.0 for line in self._lines
        ]
        self.duration = self._offsets[-1] if self._offsets else 0.0
        self._answers: dict[str, list[tuple[float, Answer]]] = {}
        for offset, line in zip(self._offsets, self._lines, strict=True):
            if isinstance(line, Answer):
                self._answers.setdefault(line.path, []).append((offset, line))
        self.account = account or ServiceAccount.generate(names.COMPANY_NAME)
        self.keys = ApiKeys()
        self.registry = ConnectionRegistry()
        self.hub = FeedHub(heartbeat=heartbeat, retry_ms=1000, registry=self.registry)
        self.feeds = {feed: _FeedState() for feed in Feed}
        self.played = 0
        """Lines played in this round."""
        self.rounds = 0
        """Times the recording was played to its end."""
        self._round_start: float | None = None
        """When this round began on the loop's clock; None until the day starts."""
        self._screen_came = asyncio.Event()
        """Set by a screen's first request: the recording's clock starts then (unless
        `start_now`), so a screen that starts slowly, or by hand later, sees the day from its
        beginning."""
        if start_now:
            self._screen_came.set()
        self._http = EmbeddedHttp("the replay")
        self._play_task: asyncio.Task[None] | None = None

    @property
    def place_id(self) -> str:
        """The recorded place's id."""
        start = self.recording.start
        return start.place if start is not None else "PLACE"

    @property
    def position(self) -> float:
        """Seconds into the recording now."""
        if self.rounds and not self.loop:
            return self.duration
        if self._round_start is None:
            return 0.0
        elapsed = asyncio.get_running_loop().time() - self._round_start
        return min(self.duration, elapsed * self.speed)

    # --- life --------------------------------------------------------------------------------

    async def start(self) -> Replay:
        """Bind, serve, and start playing."""
        self.port, self.url = await self._http.start(
            self._app(), self.registry, self.host, self.port
        )
        self._play_task = asyncio.create_task(self._play())
        return self

    async def stop(self) -> None:
        """End the streams, the playing and the server."""
        self.hub.close_all()
        if self._play_task is not None:
            self._play_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._play_task
        await self._http.stop()

    async def __aenter__(self) -> Replay:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _play(self) -> None:
        clock = asyncio.get_running_loop()
        await self._screen_came.wait()
        while True:
            self._round_start = began = clock.time()
            self.played = 0
            for offset, line in zip(self._offsets, self._lines, strict=True):
                wait = began + offset / self.speed - clock.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if isinstance(line, Message):
                    self._send(line)
                self.played += 1
            self.rounds += 1
            log.info("replay: the recording ended (%.0f s recorded)", self.duration)
            if not self.loop:
                return
            # The day's end stays on screen a while (a short recording at a high speed would
            # otherwise never let a screen settle), then every feed starts from the recording's
            # first snapshot again.
            await asyncio.sleep(LOOP_PAUSE)
            for state in self.feeds.values():
                state.first, state.since = None, []
                state.ready.clear()
            self.hub.order(None, "close")
            await asyncio.sleep(0)

    def _send(self, message: Message) -> None:
        feed = Feed(message.feed.value)
        state = self.feeds[feed]
        if message.first:
            had_first = state.first is not None
            state.first, state.since = message.data, []
            state.ready.set()
            if had_first and not message.checkpoint:
                # The recorded display reconnected here and read this snapshot: so do ours.
                self.hub.order(feed, "close")
            return
        if state.first is None:
            return  # a change before any snapshot: the first snapshot holds its effect
        state.since.append(message.data)
        self.hub.publish_raw(feed, message.data.encode())

    # --- what is answered ---------------------------------------------------------------------

    def answer_of(self, path: str, query: Mapping[str, str]) -> Answer | None:
        """The recorded answer of `path` with `query` at this point of the replay."""
        answers = self._answers.get(path)
        if not answers:
            return None
        wanted = clean_query(query)
        exact = [item for item in answers if item[1].query == wanted]
        chosen = exact or answers
        position = self.position
        index = bisect.bisect_right([offset for offset, _ in chosen], position)
        return chosen[index - 1][1] if index else chosen[0][1]

    def _whole_tickets(self) -> list[Any] | None:
        """The tickets of the latest snapshot when it holds them all (a checkpoint)."""
        first = self.feeds[Feed.TICKETS].first
        if first is None:
            return None
        try:
            page = json.loads(first)
        except ValueError:
            return None
        if not isinstance(page, dict) or not isinstance(page.get("tickets"), list):
            return None
        tickets: list[Any] = page["tickets"]
        total = page.get("totalCount")
        if isinstance(total, int) and total > len(tickets):
            return None
        return tickets

    def _first_message(self, feed: Feed, request: Request) -> bytes:
        first = self.feeds[feed].first
        assert first is not None
        if feed is Feed.TICKETS and (tickets := self._whole_tickets()) is not None:
            # A checkpoint holds every ticket: served as pages, as the service would.
            size = int_param(request, "pageSize", 20, 1, 50)
            return dumps(_page(tickets, 1, size))
        return first.encode()

    def status(self) -> dict[str, Any]:
        """Where the replay stands."""
        start = self.recording.start
        return {
            "url": self.url,
            "placeId": self.place_id,
            "recordedAt": start.at.isoformat() if start is not None else None,
            "speed": self.speed,
            "loop": self.loop,
            "waiting": not self._screen_came.is_set(),
            "duration": self.duration,
            "position": self.position,
            "lines": len(self._lines),
            "played": self.played,
            "rounds": self.rounds,
            "ended": self.rounds > 0 and not self.loop,
            "feeds": self.hub.counts(),
        }

    # --- HTTP --------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        async def api_key(request: Request) -> Response:
            self._screen_came.set()
            audiences = {self.url, f"{request.url.scheme}://{request.headers.get('host', '')}"}
            try:
                verify_developer_token(
                    request.headers.get("authorization"), self.account, audiences
                )
            except AuthError as refused:
                return error(401, refused.code, refused.description)
            return JSONResponse({"apiKey": self.keys.issue()})

        async def route(request: Request) -> Response:
            self._screen_came.set()
            try:
                self.keys.check(request.query_params.get("key"))
            except AuthError as refused:
                return error(401, refused.code, refused.description)
            path = "/" + request.path_params["path"].strip("/")
            feed = STREAMS.get(path)
            if feed is not None:
                return await stream(feed, request)
            query = dict(request.query_params)
            if path == _CURRENTS and (tickets := self._whole_tickets()) is not None:
                page = int_param(request, "page", 1, 1, None)
                size = int_param(request, "pageSize", 20, 1, 50)
                return JSONResponse(_page(tickets, page, size))
            answer = self.answer_of(path, query)
            if answer is None:
                return error(404, "NOT_RECORDED", f"the recording holds no answer of GET /v1{path}")
            return JSONResponse(answer.body)

        async def stream(feed: Feed, request: Request) -> Response:
            state = self.feeds[feed]
            if not state.ready.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(state.ready.wait(), SNAPSHOT_WAIT)
            if state.first is None or self.hub.closed:
                return error(503, "NOT_YET", f"the recording has no {feed} snapshot yet")
            ids = list_param(request, "countersId" if feed is Feed.COUNTERS else "queuesId")
            subscriber = Subscriber(feed, None if ids is None else frozenset(ids), None)
            # The messages since the snapshot follow it at once; later ones as they are played.
            for data in state.since:
                subscriber.push(frame(data.encode()))
            self.hub.subscribers[feed].add(subscriber)
            return SSEResponse(self, subscriber, self._first_message(feed, request))  # type: ignore[arg-type]

        async def replay_status(request: Request) -> Response:
            return JSONResponse(self.status())

        return Starlette(
            routes=[
                Route("/v1/api_key", api_key),
                Route("/v1/{path:path}", route),
                Route("/_replay/status", replay_status),
            ]
        )

    # --- files for a display -----------------------------------------------------------------

    def write_config(self, directory: Path | str, **sections: Mapping[str, Any]) -> Path:
        """Write a ready `config.toml` and the credentials it names into `directory`."""
        folder = Path(directory)
        credentials = self.account.write(folder / CREDENTIALS_NAME)
        start = self.recording.start
        place: dict[str, Any] = {}
        if start is not None and start.queues:
            place["queues"] = start.queues
        if start is not None and start.counters:
            place["counters"] = start.counters
        tables: dict[str, Mapping[str, Any]] = {"place": place} if place else {}
        tables.update(sections)
        return write_config(
            folder,
            url=self.url,
            company=self.account.company,
            place_id=self.place_id,
            credentials=credentials,
            locales=(start.langs or None) if start is not None else None,
            sections=tables,
        )


def _page(tickets: list[Any], page: int, size: int) -> dict[str, Any]:
    return {
        "totalCount": len(tickets),
        "page": page,
        "pageSize": size,
        "tickets": tickets[(page - 1) * size : page * size],
    }


class ReplayServer(BackgroundLoop):
    """A `Replay` in a background thread (`with ReplayServer(recording) as replay:`)."""

    service_name = "recording replay"

    def __init__(self, recording: Recording, **options: Any) -> None:
        super().__init__()
        self._recording = recording
        self._options = options
        self._replay: Replay | None = None

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[None]:
        replay = Replay(self._recording, **self._options)
        await replay.start()
        self._replay = replay
        try:
            yield
        finally:
            await replay.stop()

    @property
    def replay(self) -> Replay:
        """The replay itself (touch it only from its loop: prefer `status()`)."""
        if self._replay is None:
            raise RuntimeError("the replay is not running")
        return self._replay

    @property
    def url(self) -> str:
        """Base address of the service (without `/v1`)."""
        return self.replay.url

    def status(self) -> dict[str, Any]:
        """Where the replay stands."""
        replay, loop = self.replay, self._loop
        assert loop is not None

        async def read() -> dict[str, Any]:
            return replay.status()

        return asyncio.run_coroutine_threadsafe(read(), loop).result(30)

    def write_config(self, directory: Path | str, **sections: Mapping[str, Any]) -> Path:
        """Write a ready `config.toml` and credentials into `directory`."""
        return self.replay.write_config(directory, **sections)


# --- `lobby-display replay` -------------------------------------------------------------------


def replay_command(args: argparse.Namespace) -> int:
    """Serve the recording `args.file` until Ctrl-C or SIGTERM; the exit code."""
    _warnings_to_stderr()
    try:
        recording = read_recording(args.file)
    except RecordingError as problem:
        print(f"lobby-display replay: {problem}", file=sys.stderr)
        return 1
    if args.speed <= 0:
        print("lobby-display replay: --speed must be more than 0", file=sys.stderr)
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_serve(recording, args))
    return 0


async def _serve(recording: Recording, args: argparse.Namespace) -> int:
    replay = Replay(
        recording,
        speed=args.speed,
        loop=args.loop,
        host=args.host,
        port=args.port,
        start_now=args.start_now,
    )
    try:
        await replay.start()
    except OSError as error:
        print(
            f"lobby-display replay: cannot listen on {args.host}:{args.port}: {error.strerror}",
            file=sys.stderr,
        )
        return 1
    try:
        with stop_signals() as stop:
            folder = args.directory or Path(tempfile.mkdtemp(prefix="lobby-display-replay-"))
            try:
                config = replay.write_config(folder)
            except (OSError, ConfigError) as error:
                print(
                    f"lobby-display replay: cannot write a config into {folder}: {error}",
                    file=sys.stderr,
                )
                return 1
            start = recording.start
            when = start.at.isoformat(timespec="seconds") if start is not None else "unknown"
            print(f"Replaying {args.file} at {replay.url}")
            print(
                f"  place {replay.place_id}, recorded {when}, {recording.seconds:.0f} s, "
                f"{len(recording.lines)} lines, speed {replay.speed:g}"
                + (", looping" if replay.loop else "")
            )
            print(f"  config       {config}")
            print(f"  credentials  {folder / CREDENTIALS_NAME}  (private key, mode 0600)")
            print(f"  display:     lobby-display run --config {config}")
            print(f"  state:       {replay.url}/_replay/status")
            if not args.start_now:
                print("The day starts when the first screen connects.")
            print("Ctrl-C stops.", flush=True)
            await stop.wait()
    finally:
        await replay.stop()
    print("Replay stopped.", flush=True)
    return 0


def _warnings_to_stderr() -> None:
    """The reader's warnings (skipped lines) on standard error, without control characters."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EscapingFormatter("lobby-display replay: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)

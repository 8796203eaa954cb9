"""The simulator as a running service: the place on a clock, served over HTTP, with faults.

`Simulator` lives in an asyncio loop, `SimulatorServer` runs one in a thread of its own; both
serve on 127.0.0.1 and offer the same controls (faults, key rotation, bursts, `truth()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final, TypedDict, TypeVar, Unpack

import uvicorn

from lobby_display.simulator import names
from lobby_display.simulator.auth import DEFAULT_GRACE_SECONDS, ApiKeys, ServiceAccount
from lobby_display.simulator.background import BackgroundLoop
from lobby_display.simulator.dialect import Dialect
from lobby_display.simulator.faults import (
    HUGE_EVENT_BYTES,
    FailTarget,
    FaultState,
    huge_payload,
    malformed_payload,
    unknown_payload,
)
from lobby_display.simulator.files import CREDENTIALS_NAME, write_config
from lobby_display.simulator.model import Place, PlaceEvent, PlaceOptions
from lobby_display.simulator.routes import build_app, dumps
from lobby_display.simulator.sse import Encoder, FeedHub
from lobby_display.simulator.timefmt import iso_z
from lobby_display.simulator.transport import ConnectionRegistry
from lobby_display.updates import Feed

log = logging.getLogger(__name__)

#: `resource` and `actionCategory` of each feed's events.
ENVELOPES: Final = {
    Feed.TICKETS: ("ticket", "TICKET"),
    Feed.QUEUES: ("queueState", "QUEUE_STATE"),
    Feed.COUNTERS: ("counter", "COUNTER"),
}
#: Longest sleep of the clock between two steps of the place.
MAX_TICK: Final = 0.5
#: Most ticket events a burst makes at once before letting the feeds write.
BURST_BATCH: Final = 200
#: Faults reachable by name (the `/_sim/faults/{name}` route and `lobby-display simulate --fault`).
FAULTS: Final = (
    "drop",
    "reset",
    "close",
    "stall",
    "resume",
    "malformed",
    "unknown",
    "huge",
    "fail",
    "rotate-keys",
    "revoke-keys",
    "hostile",
    "burst",
    "stop-burst",
)

#: Controls that script the place (the `/_sim/{name}` routes; `lobby-display simulate --fault`
#: sends them too): call, recall and end tickets by label, hold or release the operators,
#: tickets arriving, a queue's capacity (full), pause, booking and operators (open).
CONTROLS: Final = (
    "call",
    "hold",
    "recall",
    "finish",
    "arrive",
    "capacity",
    "pause",
    "booking",
    "open",
)
#: Id field of each feed's records.
ID_FIELDS: Final = {Feed.TICKETS: "ticketId", Feed.QUEUES: "queueId", Feed.COUNTERS: "counterId"}

T = TypeVar("T")


class SimulatorOptions(TypedDict, total=False):
    """Keyword options of `Simulator` and `SimulatorServer`."""

    seed: int
    speed: float
    queues: int
    tickets: int | None
    timezone: str
    start: datetime | None
    heartbeat: float
    retry_ms: int | None
    key_grace: float
    hostile: bool
    account: ServiceAccount | None
    host: str
    port: int
    api_key: str | None
    dialect: Dialect


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the program that embeds it owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


@contextlib.contextmanager
def stop_signals() -> Iterator[asyncio.Event]:
    """An event set by SIGINT or SIGTERM while the block runs (a served command's Ctrl-C);
    Python's own handling of both comes back at its end."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        yield stop
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


class EmbeddedHttp:
    """An HTTP server (uvicorn) in the running loop on a socket of its own, for the simulator and
    the replay: `start` binds and waits until it serves, `stop` ends it quickly."""

    def __init__(self, what: str) -> None:
        self.what = what
        """What serves, for the error of a server that stops at start ("the simulator")."""
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(
        self, app: Any, registry: ConnectionRegistry, host: str, port: int, **options: Any
    ) -> tuple[int, str]:
        """Serve `app` on `host`:`port` (0: any free port); return the port and the URL."""
        sock = _bind(host, port)
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="off",
            http=registry.protocol_class(),
            ws="none",
            timeout_graceful_shutdown=2,
            **options,
        )
        self._server = server = _EmbeddedServer(config)
        self._task = task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                sock.close()
                task.result()
                raise RuntimeError(f"{self.what}'s HTTP server stopped at start")
            await asyncio.sleep(0.005)
        return port, _url(host, port)

    async def stop(self) -> None:
        """Stop serving: the requests under way get 3 s, then the server is forced to end."""
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 3)
        except TimeoutError:
            self._server.force_exit = True
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 2)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # With the protocol named, asyncio sets TCP_NODELAY on every connection: without it, a
    # small event written after another waits for the client's delayed ACK (about 40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _url(host: str, port: int) -> str:
    if host in ("0.0.0.0", ""):  # noqa: S104 - a name, not a bind
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _feed_param(params: Mapping[str, str], default: Feed | None = None) -> Feed | None:
    value = params.get("feed", "")
    if value in ("", "all"):
        return default
    try:
        return Feed(value)
    except ValueError:
        raise ValueError(f"feed must be one of {', '.join(Feed)} or all") from None


def _flag(params: Mapping[str, str], name: str) -> bool:
    """A yes/no parameter (default yes)."""
    return params.get(name, "true").lower() not in ("0", "false", "no", "off")


def _number(params: Mapping[str, str], name: str, default: float | None) -> float | None:
    value = params.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name} must be a number") from None


class Simulator:
    """The display service simulator, in the running asyncio loop.

    Build it, then `await start()` (or `async with`); every method is to be called from the
    loop it runs in. `url` is the base address (without `/v1`) once started.
    """

    def __init__(self, **options: Unpack[SimulatorOptions]) -> None:
        self.options = options
        self.place = Place(
            PlaceOptions(
                seed=options.get("seed", 1),
                speed=options.get("speed", 1.0),
                queues=options.get("queues", 5),
                tickets=options.get("tickets"),
                timezone=options.get("timezone", "Europe/Paris"),
                start=options.get("start"),
                dialect=options.get("dialect") or Dialect(),
            )
        )
        self.dialect = self.place.options.dialect
        self._sent: dict[tuple[Feed, str], dict[str, Any]] = {}
        """With a partial dialect: the last record sent of each ticket, queue state, counter
        (from the start: a client's first message is at least as new)."""
        if self.dialect.partial:
            self._remember_start()
        if options.get("hostile"):
            self.place.set_hostile(True)
        self.account = options.get("account") or ServiceAccount.generate(names.COMPANY_NAME)
        self.keys = ApiKeys(grace=options.get("key_grace", DEFAULT_GRACE_SECONDS))
        if fixed := options.get("api_key"):
            self.keys.add(fixed)
        self.faults = FaultState()
        self.registry = ConnectionRegistry()
        self.hub = FeedHub(
            heartbeat=options.get("heartbeat", 15.0),
            retry_ms=options.get("retry_ms", 3000),
            registry=self.registry,
        )
        self.app = build_app(self)
        self.host = options.get("host", "127.0.0.1")
        self.port = options.get("port", 0)
        self.url = ""
        self.burst_emitted = 0
        self._http = EmbeddedHttp("the simulator")
        self._clock_task: asyncio.Task[None] | None = None
        self._burst_task: asyncio.Task[None] | None = None

    # --- identity ----------------------------------------------------------------------------

    @property
    def company(self) -> str:
        """The company name (the developer token's `sub`)."""
        return self.account.company

    @property
    def company_id(self) -> str:
        """Id of the company."""
        return self.place.company_id

    @property
    def place_id(self) -> str:
        """Id of the simulated place."""
        return self.place.place_id

    @property
    def queue_ids(self) -> list[str]:
        """Ids of the queues (and of their counters), in order."""
        return list(self.place.queues)

    # --- life --------------------------------------------------------------------------------

    async def start(self) -> Simulator:
        """Bind, serve, and start the clock."""
        self.port, self.url = await self._http.start(
            self.app, self.registry, self.host, self.port, timeout_keep_alive=30
        )
        self._clock_task = asyncio.create_task(self._run_clock())
        return self

    async def stop(self) -> None:
        """End every stream, stop the clock and the server (quickly)."""
        self.stop_burst()
        self.hub.close_all()
        for task in (self._clock_task, self._burst_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._http.stop()

    async def __aenter__(self) -> Simulator:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _run_clock(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            due = self.place.next_due()
            wait = MAX_TICK if due is None else min(MAX_TICK, due)
            await asyncio.sleep(max(wait, 0.001))
            now = loop.time()
            try:
                self.publish(self.place.step(now - last))
            except Exception:
                # One bad action must not freeze the place: it is skipped and the clock goes on.
                log.exception("the simulated place failed a step")
            last = now

    # --- events ------------------------------------------------------------------------------

    def publish(self, events: list[PlaceEvent]) -> None:
        """Send the place's events to the feeds, written in the simulator's dialect."""
        dialect = self.dialect
        for event in events:
            data = self._partial(event) if dialect.partial else event.data
            self.hub.publish(event.feed, event.queue_id, _encoder(event, data, dialect))

    def _remember_start(self) -> None:
        place = self.place
        tickets = place.current_tickets()
        for ticket, record in zip(tickets, place.records.tickets(tickets), strict=True):
            self._sent[(Feed.TICKETS, ticket.ticket_id)] = record
        for queue_id, queue in place.queues.items():
            self._sent[(Feed.QUEUES, queue_id)] = place.records.queue_state(queue)
            self._sent[(Feed.COUNTERS, queue_id)] = place.records.counter(queue)

    def _partial(self, event: PlaceEvent) -> dict[str, Any]:
        """The fields of `event`'s record that changed since its last event (null for a field
        gone), with its id; the whole record the first time and for a new ticket."""
        key = (event.feed, event.key)
        before = self._sent.get(key)
        if event.action == "DELETE":
            self._sent.pop(key, None)
        else:
            self._sent[key] = event.data
        if before is None or event.action == "CREATE":
            return event.data
        changed = {
            name: value
            for name, value in event.data.items()
            if name not in before or before[name] != value
        }
        changed.update({name: None for name in before if name not in event.data})
        return {ID_FIELDS[event.feed]: event.key, **changed}

    # --- faults ------------------------------------------------------------------------------

    def drop(self, feed: Feed | str | None = None) -> int:
        """Cut the feed's connections mid-response (TCP FIN without the end of the HTTP body)."""
        return self.hub.order(feed, "drop")

    def reset(self, feed: Feed | str | None = None) -> int:
        """Abort the feed's connections with a TCP RST."""
        return self.hub.order(feed, "reset")

    def close(self, feed: Feed | str | None = None) -> int:
        """End the feed's streams cleanly (the HTTP response ends normally)."""
        return self.hub.order(feed, "close")

    def stall(self, feed: Feed | str | None = None, seconds: float | None = None) -> None:
        """Send nothing on the feed, not even heartbeats, for `seconds` or until `resume`."""
        self.hub.stall(feed, seconds)

    def resume(self, feed: Feed | str | None = None) -> None:
        """End a stall."""
        self.hub.resume(feed)

    def send_malformed(self, feed: Feed | str = Feed.TICKETS) -> int:
        """Send an event whose data is not valid JSON; returns its id."""
        return self.hub.publish_raw(Feed(feed), malformed_payload())

    def send_unknown(self, feed: Feed | str = Feed.TICKETS) -> int:
        """Send an event of a kind nobody knows (its own `event:` name, an odd envelope)."""
        return self.hub.publish_raw(Feed(feed), unknown_payload(), event="parkingMeter")

    def send_huge(self, feed: Feed | str = Feed.TICKETS, size: int = HUGE_EVENT_BYTES) -> int:
        """Send a valid update padded to about `size` bytes (2 MB by default)."""
        feed = Feed(feed)
        place = self.place
        queue = next(iter(place.queues.values()))
        if feed == Feed.TICKETS and place.tickets:
            record = place.records.ticket(next(iter(place.tickets.values())))
        elif feed == Feed.COUNTERS:
            record = place.records.counter(queue)
        else:
            record = place.records.queue_state(queue)
        resource, category = ENVELOPES[feed]
        return self.hub.publish_raw(feed, huge_payload(resource, category, record, size))

    def fail_next(self, count: int = 1, status: int = 503, target: FailTarget = "all") -> None:
        """Answer the next `count` requests (`target`: all, rest or sse) with HTTP `status`."""
        if target not in ("all", "rest", "sse"):
            raise ValueError("target must be all, rest or sse")
        if not 400 <= status <= 599:
            raise ValueError("status must be an HTTP error status (400 to 599)")
        self.faults.fail.remaining = count
        self.faults.fail.status = status
        self.faults.fail.target = target

    def issue_key(self) -> str:
        """A fresh valid API key (as `/api_key` would give)."""
        return self.keys.issue()

    def rotate_keys(self, grace: float | None = None) -> int:
        """Rotate: keys handed out so far stay valid `grace` seconds more (default: 24 h)."""
        return self.keys.rotate(grace)

    def revoke_keys(self) -> int:
        """Refuse every key handed out so far, at once (401)."""
        return self.keys.revoke()

    def set_hostile(self, on: bool = True) -> None:
        """Give names and labels hostile content (markup, escapes, bidi, NUL, floods, 100 KB)."""
        self.publish(self.place.set_hostile(on))

    def burst(self, rate: float, duration: float | None = None, count: int | None = None) -> None:
        """Emit ticket events at `rate` per second, for `duration` seconds or `count` events.

        The events are real changes of the place (arrivals, calls, tickets done); the queue
        state and counter changes they cause follow in batches. Replaces a running burst.
        """
        if rate <= 0:
            raise ValueError("rate must be positive")
        if duration is None and count is None:
            raise ValueError("give a duration or a count")
        self.stop_burst()
        self.burst_emitted = 0
        self._burst_task = asyncio.get_running_loop().create_task(
            self._run_burst(rate, duration, count)
        )

    def stop_burst(self) -> None:
        """Stop a running burst."""
        if self._burst_task is not None and not self._burst_task.done():
            self._burst_task.cancel()

    @property
    def burst_running(self) -> bool:
        """True while a burst runs."""
        return self._burst_task is not None and not self._burst_task.done()

    async def wait_burst(self) -> int:
        """Wait for the running burst to end; returns the ticket events it made."""
        if self._burst_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._burst_task)
        return self.burst_emitted

    async def _run_burst(self, rate: float, duration: float | None, count: int | None) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        while True:
            elapsed = loop.time() - start
            if duration is not None and elapsed >= duration:
                break
            if count is not None and self.burst_emitted >= count:
                break
            target = int(rate * elapsed) + 1
            if count is not None:
                target = min(target, count)
            due = target - self.burst_emitted
            if due > 0:
                # Small batches, with the writers given their turn in between: events go out
                # while the burst goes on instead of after it.
                events = self.place.burst(min(due, BURST_BATCH))
                self.publish(events)
                self.burst_emitted += sum(1 for event in events if event.feed is Feed.TICKETS)
                await asyncio.sleep(0)
            else:
                ahead = (self.burst_emitted + 1) / rate - elapsed
                await asyncio.sleep(min(0.005, max(ahead, 0.0005)))

    def apply_fault(self, name: str, params: Mapping[str, str]) -> object:
        """Apply a fault by name with text parameters (the admin route and the command line).

        Raises KeyError for an unknown name, ValueError for a bad parameter.
        """
        if name not in FAULTS:
            raise KeyError(name)
        feed = _feed_param(params)
        if name in ("drop", "reset", "close"):
            return {"connections": self.hub.order(feed, name)}  # type: ignore[arg-type]
        if name == "stall":
            self.stall(feed, _number(params, "seconds", None))
            return "stalled"
        if name == "resume":
            self.resume(feed)
            return "resumed"
        if name in ("malformed", "unknown", "huge"):
            one = feed or Feed.TICKETS
            if name == "malformed":
                return {"eventId": self.send_malformed(one)}
            if name == "unknown":
                return {"eventId": self.send_unknown(one)}
            size = int(_number(params, "size", HUGE_EVENT_BYTES) or 0)
            return {"eventId": self.send_huge(one, size)}
        if name == "fail":
            count = int(_number(params, "count", 1) or 0)
            status = int(_number(params, "status", 503) or 503)
            target = params.get("target", "all")
            if target not in ("all", "rest", "sse"):
                raise ValueError("target must be all, rest or sse")
            self.fail_next(count, status, target)  # type: ignore[arg-type]
            return {"count": count, "status": status, "target": target}
        if name == "rotate-keys":
            return {"rotated": self.rotate_keys(_number(params, "grace", None))}
        if name == "revoke-keys":
            return {"revoked": self.revoke_keys()}
        if name == "hostile":
            on = params.get("on", "true").lower() not in ("0", "false", "no", "off")
            self.set_hostile(on)
            return {"hostile": on}
        if name == "burst":
            rate = _number(params, "rate", 1000.0) or 1000.0
            duration = _number(params, "duration", None)
            limit = _number(params, "count", None)
            if duration is None and limit is None:
                duration = 10.0
            self.burst(rate, duration, None if limit is None else int(limit))
            return {"rate": rate, "duration": duration, "count": limit}
        self.stop_burst()
        return {"emitted": self.burst_emitted}

    # --- scripted calls -----------------------------------------------------------------------

    def hold_calls(self, on: bool = True) -> None:
        """Hold the operators (no call, recall or end of a call of their own) or release them."""
        self.place.hold_calls(on)

    def call_tickets(
        self, labels: Iterable[str], counters: Iterable[int | str] | None = None
    ) -> list[dict[str, Any]]:
        """Call tickets by label at the given counters (see `Place.call_tickets`), sending the
        events over the feeds as an operator's calls; returns the tickets called.
        """
        events = self.place.call_tickets(labels, counters)
        self.publish(events)
        return [
            {
                "label": event.data["label"],
                "ticketId": event.key,
                "queueId": event.queue_id,
                "endpointId": event.data["endpoint"]["id"],
            }
            for event in events
            if event.feed is Feed.TICKETS and event.data["state"] == 200
        ]

    def recall_tickets(self, labels: Iterable[str]) -> None:
        """Recall called tickets by label (see `Place.recall_tickets`)."""
        self.publish(self.place.recall_tickets(labels))

    def finish_tickets(self, labels: Iterable[str], state: int = 700) -> None:
        """End current tickets by label, done (700) or canceled (600)."""
        self.publish(self.place.finish_tickets(labels, state))

    def arrive(self, queue: int | str, count: int = 1) -> list[str]:
        """`count` walk-in tickets join a queue (id or index); returns their labels."""
        events = self.place.arrive(queue, count)
        self.publish(events)
        return [
            str(event.data["label"])
            for event in events
            if event.feed is Feed.TICKETS and event.action == "CREATE"
        ]

    def set_capacity(self, queue: int | str, capacity: int | None = None) -> None:
        """How many tickets a queue may hold waiting; None: those waiting now (it turns full)."""
        self.publish(self.place.set_capacity(queue, capacity))

    def set_pause(self, queue: int | str, on: bool = True) -> None:
        """Pause a queue (or resume it)."""
        self.publish(self.place.set_pause(queue, on))

    def set_booking(self, queue: int | str, open_: bool = True) -> None:
        """Close a queue's booking (or open it again)."""
        self.publish(self.place.set_booking(queue, open_))

    def set_open(self, queue: int | str, open_: bool = True) -> None:
        """Close every endpoint of a queue now (or open them within the opening hours)."""
        self.publish(self.place.set_open(queue, open_))

    def apply_control(
        self, name: str, params: Mapping[str, str], values: Mapping[str, list[str]]
    ) -> object:
        """Apply a control by name (see CONTROLS) with text parameters; `values` holds every
        value of a repeated parameter (`label=A031&label=B-12`, or `label=A031,B-12`).

        Raises KeyError for an unknown name, ValueError for a bad parameter.
        """
        if name not in CONTROLS:
            raise KeyError(name)
        if name == "hold":
            on = _flag(params, "on")
            self.hold_calls(on)
            return {"held": on}
        if name in ("arrive", "capacity", "pause", "booking", "open"):
            queue = params.get("queue", "0")
            if name == "arrive":
                count = int(_number(params, "count", 1) or 0)
                return {"arrived": self.arrive(queue, count)}
            if name == "capacity":
                capacity = _number(params, "capacity", None)
                self.set_capacity(queue, None if capacity is None else int(capacity))
                return {"capacity": self.place.queue_named(queue).capacity}
            if name == "pause":
                self.set_pause(queue, _flag(params, "on"))
            elif name == "booking":
                self.set_booking(queue, _flag(params, "open"))
            else:
                self.set_open(queue, _flag(params, "open"))
            return {"queue": self.place.queue_named(queue).queue_id}
        labels = [part for value in values.get("label", []) for part in value.split(",") if part]
        if not labels:
            raise ValueError("give at least one label (label=A031)")
        if name == "recall":
            self.recall_tickets(labels)
            return {"recalled": labels}
        if name == "finish":
            state = int(_number(params, "state", 700) or 700)
            self.finish_tickets(labels, state)
            return {"finished": labels, "state": state}
        counters = [part for value in values.get("counter", []) for part in value.split(",")]
        return {"called": self.call_tickets(labels, counters or None)}

    # --- what is true now --------------------------------------------------------------------

    def truth(self) -> dict[str, Any]:
        """Current tickets, queue states and counters by id, as the REST routes give them now.

        `eventIds` holds each feed's last event id: a client that has applied every event up
        to those ids should show exactly this.
        """
        place = self.place
        tickets = place.current_tickets()
        return {
            "at": iso_z(place.now),
            "eventIds": {feed.value: self.hub.last_id[feed] for feed in Feed},
            "tickets": dict(
                zip(
                    (ticket.ticket_id for ticket in tickets),
                    place.records.tickets(tickets),
                    strict=True,
                )
            ),
            "queueStates": {
                queue_id: place.records.queue_state(queue)
                for queue_id, queue in place.queues.items()
            },
            "counters": {
                queue_id: place.records.counter(queue) for queue_id, queue in place.queues.items()
            },
        }

    def status(self) -> dict[str, Any]:
        """What the simulator is doing: clock, feeds, keys, burst; and the faults it knows."""
        place = self.place
        return {
            "url": self.url,
            "placeId": place.place_id,
            "companyId": place.company_id,
            "company": self.company,
            "seed": place.options.seed,
            "speed": place.speed,
            "clock": iso_z(place.now),
            "queues": len(place.queues),
            "currentTickets": len(place.tickets),
            "hostile": place.hostile,
            "feeds": {
                feed.value: {
                    "connections": len(self.hub.subscribers[feed]),
                    "lastEventId": self.hub.last_id[feed],
                    "stalled": self.hub.is_stalled(feed),
                }
                for feed in Feed
            },
            "apiKeys": {"valid": self.keys.active, "issued": self.keys.issued},
            "burst": {"running": self.burst_running, "emitted": self.burst_emitted},
            "faults": list(FAULTS),
            "controls": list(CONTROLS),
            "callsHeld": place.calls_held,
        }

    # --- files for a display -----------------------------------------------------------------

    def write_credentials(self, directory: Path | str) -> Path:
        """Write the service-account JSON (mode 0600) into `directory`; returns its path."""
        return self.account.write(Path(directory) / CREDENTIALS_NAME)

    def write_config(
        self,
        directory: Path | str,
        *,
        url: str | None = None,
        api_key: str | None = None,
        locales: list[str] | tuple[str, ...] | None = None,
        **sections: Mapping[str, Any],
    ) -> Path:
        """Write a ready `config.toml` (and the credentials it names) into `directory`.

        `url` replaces the simulator's address (a fault proxy in front of it, say); `api_key`
        puts a fixed key in the config instead of credentials (the key is accepted from now
        on); `locales` sets display.locales; other keywords are tables merged into the file,
        e.g. `display={"rotation_seconds": 5}`.
        """
        folder = Path(directory)
        credentials = None
        if api_key is None:
            credentials = self.write_credentials(folder)
        else:
            self.keys.add(api_key)
        return write_config(
            folder,
            url=url or self.url,
            company=self.company,
            place_id=self.place_id,
            credentials=credentials,
            api_key=api_key,
            locales=locales,
            sections=sections,
        )


def _encoder(event: PlaceEvent, record: dict[str, Any], dialect: Dialect) -> Encoder:
    """How `event` (its `record`: whole or the changed fields) is written for a subscriber."""
    resource, category = ENVELOPES[event.feed]
    feed = event.feed

    def encode(langs: tuple[str, ...] | None) -> bytes:
        data = record
        if langs is not None and isinstance(data.get("name"), dict):
            data = {**data, "name": {k: v for k, v in data["name"].items() if k in langs}}
        if feed is Feed.TICKETS and dialect.ticket_map:
            data = {event.key: data}
        if (feed is Feed.TICKETS and not dialect.ticket_envelope) or (
            feed is Feed.COUNTERS and dialect.counter_map
        ):
            if feed is Feed.COUNTERS:
                data = {event.key: data}
            return dumps(data)
        return dumps(
            {
                "resource": resource,
                "actionCategory": category,
                "actionName": event.action,
                "data": data,
            }
        )

    return encode


class SimulatorServer(BackgroundLoop):
    """A `Simulator` running in a background thread with its own event loop.

    `with SimulatorServer(seed=1, speed=50) as sim:` starts it on 127.0.0.1 and a free port;
    every method may be called from any thread (it runs in the simulator's loop and waits).
    `stop()` ends the streams and releases the port.
    """

    service_name = "display simulator"

    def __init__(self, **options: Unpack[SimulatorOptions]) -> None:
        super().__init__()
        self._options = options
        self._sim: Simulator | None = None

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[None]:
        sim = Simulator(**self._options)
        await sim.start()
        self._sim = sim
        try:
            yield
        finally:
            await sim.stop()

    @property
    def simulator(self) -> Simulator:
        """The simulator itself (touch it only from its loop: prefer `call`)."""
        if self._sim is None:
            raise RuntimeError("the simulator is not running")
        return self._sim

    def call(self, action: Callable[[Simulator], T], timeout: float = 30) -> T:
        """Run `action(simulator)` in the simulator's loop and return its result."""
        sim = self.simulator
        loop = self._loop
        assert loop is not None

        async def run() -> T:
            return action(sim)

        return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout)

    # --- identity ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base address of the service (without `/v1`)."""
        return self.simulator.url

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self.simulator.port

    @property
    def company(self) -> str:
        """Company name (the developer token's `sub`)."""
        return self.simulator.company

    @property
    def company_id(self) -> str:
        """Id of the company."""
        return self.simulator.company_id

    @property
    def place_id(self) -> str:
        """Id of the simulated place."""
        return self.simulator.place_id

    @property
    def queue_ids(self) -> list[str]:
        """Ids of the queues (and counters), in order."""
        return self.simulator.queue_ids

    @property
    def account(self) -> ServiceAccount:
        """The service account the simulator trusts."""
        return self.simulator.account

    # --- controls (see Simulator) ------------------------------------------------------------

    def drop(self, feed: Feed | str | None = None) -> int:
        """Cut the feed's connections mid-response."""
        return self.call(lambda sim: sim.drop(feed))

    def reset(self, feed: Feed | str | None = None) -> int:
        """Abort the feed's connections with a TCP RST."""
        return self.call(lambda sim: sim.reset(feed))

    def close(self, feed: Feed | str | None = None) -> int:
        """End the feed's streams cleanly."""
        return self.call(lambda sim: sim.close(feed))

    def stall(self, feed: Feed | str | None = None, seconds: float | None = None) -> None:
        """Send nothing on the feed, heartbeats included, for `seconds` or until `resume`."""
        self.call(lambda sim: sim.stall(feed, seconds))

    def resume(self, feed: Feed | str | None = None) -> None:
        """End a stall."""
        self.call(lambda sim: sim.resume(feed))

    def send_malformed(self, feed: Feed | str = Feed.TICKETS) -> int:
        """Send an event with invalid JSON."""
        return self.call(lambda sim: sim.send_malformed(feed))

    def send_unknown(self, feed: Feed | str = Feed.TICKETS) -> int:
        """Send an event of an unknown kind."""
        return self.call(lambda sim: sim.send_unknown(feed))

    def send_huge(self, feed: Feed | str = Feed.TICKETS, size: int = HUGE_EVENT_BYTES) -> int:
        """Send a valid event padded to about `size` bytes."""
        return self.call(lambda sim: sim.send_huge(feed, size))

    def fail_next(self, count: int = 1, status: int = 503, target: FailTarget = "all") -> None:
        """Answer the next `count` requests with HTTP `status`."""
        self.call(lambda sim: sim.fail_next(count, status, target))

    def issue_key(self) -> str:
        """A fresh valid API key."""
        return self.call(lambda sim: sim.issue_key())

    def rotate_keys(self, grace: float | None = None) -> int:
        """Rotate keys; old ones stay valid for `grace` seconds."""
        return self.call(lambda sim: sim.rotate_keys(grace))

    def revoke_keys(self) -> int:
        """Refuse every key handed out so far."""
        return self.call(lambda sim: sim.revoke_keys())

    def set_hostile(self, on: bool = True) -> None:
        """Hostile names and labels from now on."""
        self.call(lambda sim: sim.set_hostile(on))

    def burst(self, rate: float, duration: float | None = None, count: int | None = None) -> None:
        """Emit ticket events at `rate` per second (returns at once)."""
        self.call(lambda sim: sim.burst(rate, duration, count))

    def stop_burst(self) -> None:
        """Stop a running burst."""
        self.call(lambda sim: sim.stop_burst())

    def wait_burst(self, timeout: float = 120) -> int:
        """Wait for the burst to end; returns the ticket events it made."""
        sim = self.simulator
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(sim.wait_burst(), self._loop).result(timeout)

    def hold_calls(self, on: bool = True) -> None:
        """Hold the operators (no calls of their own) or release them."""
        self.call(lambda sim: sim.hold_calls(on))

    def call_tickets(
        self, labels: Iterable[str], counters: Iterable[int | str] | None = None
    ) -> list[dict[str, Any]]:
        """Call tickets by label (at the given counters); returns the tickets called."""
        wanted, at = list(labels), None if counters is None else list(counters)
        return self.call(lambda sim: sim.call_tickets(wanted, at))

    def recall_tickets(self, labels: Iterable[str]) -> None:
        """Recall called tickets by label."""
        wanted = list(labels)
        self.call(lambda sim: sim.recall_tickets(wanted))

    def finish_tickets(self, labels: Iterable[str], state: int = 700) -> None:
        """End current tickets by label, done (700) or canceled (600)."""
        wanted = list(labels)
        self.call(lambda sim: sim.finish_tickets(wanted, state))

    def arrive(self, queue: int | str, count: int = 1) -> list[str]:
        """Walk-in tickets join a queue; returns their labels."""
        return self.call(lambda sim: sim.arrive(queue, count))

    def set_capacity(self, queue: int | str, capacity: int | None = None) -> None:
        """A queue's capacity; None: those waiting now (it turns full)."""
        self.call(lambda sim: sim.set_capacity(queue, capacity))

    def set_pause(self, queue: int | str, on: bool = True) -> None:
        """Pause a queue (or resume it)."""
        self.call(lambda sim: sim.set_pause(queue, on))

    def set_booking(self, queue: int | str, open_: bool = True) -> None:
        """Close a queue's booking (or open it again)."""
        self.call(lambda sim: sim.set_booking(queue, open_))

    def set_open(self, queue: int | str, open_: bool = True) -> None:
        """Close a queue's endpoints (or open them)."""
        self.call(lambda sim: sim.set_open(queue, open_))

    def truth(self) -> dict[str, Any]:
        """Current tickets, queue states and counters by id, as REST gives them now."""
        return self.call(lambda sim: sim.truth())

    def status(self) -> dict[str, Any]:
        """What the simulator is doing."""
        return self.call(lambda sim: sim.status())

    def write_credentials(self, directory: Path | str) -> Path:
        """Write the service-account JSON (0600) into `directory`."""
        return self.call(lambda sim: sim.write_credentials(directory))

    def write_config(
        self,
        directory: Path | str,
        *,
        url: str | None = None,
        api_key: str | None = None,
        locales: list[str] | tuple[str, ...] | None = None,
        **sections: Mapping[str, Any],
    ) -> Path:
        """Write a ready `config.toml` (and credentials) into `directory`; see Simulator."""
        return self.call(
            lambda sim: sim.write_config(
                directory, url=url, api_key=api_key, locales=locales, **sections
            )
        )

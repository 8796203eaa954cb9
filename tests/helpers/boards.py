"""Fixture boards for the screen's tests: a town hall with four queues, three counters and six
recent calls, named in the nine locales, built from records as the service sends them.

No tests here. Everything happens at fixed moments (`NOW` is Tuesday 24 November 2026, 14:05 in
Paris), so the screen's clock and dates are the same on every run.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

from lobby_display.app import AppHooks, LobbyApp
from lobby_display.board import Board, BoardSettings
from lobby_display.config import Settings, settings_from_dict
from lobby_display.models import Counter, Endpoint, Place, Queue, QueueState, Ticket, keyed
from lobby_display.updates import (
    Call,
    CountersSnapshot,
    Feed,
    FeedHealth,
    FeedStatus,
    QueueStatesSnapshot,
    ReferenceData,
    TicketChanged,
    TicketsSnapshot,
    Update,
)

#: The moment every screen test shows: Tuesday 24 November 2026, 14:05 in Paris.
NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)
PARIS_OFFSET = "+0100"


def at(seconds: float) -> datetime:
    """`seconds` after NOW (negative: before)."""
    return NOW + timedelta(seconds=seconds)


def local(day: int, hour: int, minute: int = 0) -> str:
    """A Paris wall-clock time of November 2026 in the display service's own shape."""
    return f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:00:00,0000{PARIS_OFFSET}"


def service_time(moment: datetime) -> str:
    """A UTC moment in the display service's own shape."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S:00,0000+0000")


PLACE_NAMES = {
    "fr_FR": "Mairie du 3e arrondissement",
    "en_US": "Town Hall, 3rd District",
    "es_ES": "Ayuntamiento del Distrito 3",
    "de_DE": "Rathaus Bezirk 3",
    "zh_CN": "第三区市政厅",
    "zh_TW": "第三區市政廳",
    "ja_JP": "第3区役所",
    "ko_KR": "제3구청",
    "th_TH": "สำนักงานเขต 3",
}

QUEUE_NAMES = {
    "q-pass": {
        "fr_FR": "Passeports et cartes d'identité",
        "en_US": "Passports and ID cards",
        "es_ES": "Pasaportes y DNI",
        "de_DE": "Reisepässe und Ausweise",
        "zh_CN": "护照和身份证",
        "zh_TW": "護照與身分證",
        "ja_JP": "パスポート・身分証明書",
        "ko_KR": "여권 및 신분증",
        "th_TH": "หนังสือเดินทางและบัตรประชาชน",
    },
    "q-civil": {
        "fr_FR": "État civil",
        "en_US": "Civil registry",
        "es_ES": "Registro civil",
        "de_DE": "Standesamt",
        "zh_CN": "户籍登记",
        "zh_TW": "戶政登記",
        "ja_JP": "戸籍・住民票",
        "ko_KR": "가족관계등록",
        "th_TH": "ทะเบียนราษฎร",
    },
    "q-residence": {
        "fr_FR": "Titres de séjour",
        "en_US": "Residence permits",
        "es_ES": "Permisos de residencia",
        "de_DE": "Aufenthaltstitel",
        "zh_CN": "居留许可",
        "zh_TW": "居留許可",
        "ja_JP": "在留許可",
        "ko_KR": "체류 허가",
        "th_TH": "ใบอนุญาตพำนัก",
    },
    "q-social": {
        "fr_FR": "Action sociale",
        "en_US": "Social services",
        "es_ES": "Servicios sociales",
        "de_DE": "Sozialamt",
        "zh_CN": "社会服务",
        "zh_TW": "社會服務",
        "ja_JP": "福祉相談",
        "ko_KR": "사회복지",
        "th_TH": "บริการสังคม",
    },
}

TYPE_NAMES = {
    "t-new": {
        "fr_FR": "Nouvelle demande",
        "en_US": "New application",
        "es_ES": "Nueva solicitud",
        "de_DE": "Neuantrag",
        "zh_CN": "新申请",
        "zh_TW": "新申請",
        "ja_JP": "新規申請",
        "ko_KR": "신규 신청",
        "th_TH": "ยื่นคำขอใหม่",
    },
    "t-collect": {
        "fr_FR": "Retrait",
        "en_US": "Collection",
        "es_ES": "Recogida",
        "de_DE": "Abholung",
        "zh_CN": "领取",
        "zh_TW": "領取",
        "ja_JP": "受け取り",
        "ko_KR": "수령",
        "th_TH": "รับเอกสาร",
    },
}

DESK_NAMES = {
    "fr_FR": "Guichet {n}",
    "en_US": "Desk {n}",
    "es_ES": "Ventanilla {n}",
    "de_DE": "Schalter {n}",
    "zh_CN": "{n}号窗口",
    "zh_TW": "{n}號櫃檯",
    "ja_JP": "{n}番窓口",
    "ko_KR": "{n}번 창구",
    "th_TH": "ช่องบริการ {n}",
}

COUNTER_NAMES = {
    "c-visitors": {
        "fr_FR": "Visiteurs aujourd'hui",
        "en_US": "Visitors today",
        "es_ES": "Visitantes hoy",
        "de_DE": "Besucher heute",
        "zh_CN": "今日访客",
        "zh_TW": "今日訪客",
        "ja_JP": "本日の来庁者",
        "ko_KR": "오늘 방문객",
        "th_TH": "ผู้มาติดต่อวันนี้",
    },
    "c-served": {
        "fr_FR": "Personnes reçues",
        "en_US": "People served",
        "es_ES": "Personas atendidas",
        "de_DE": "Bediente Personen",
        "zh_CN": "已办理人数",
        "zh_TW": "已辦理人數",
        "ja_JP": "対応済み",
        "ko_KR": "처리 완료",
        "th_TH": "ให้บริการแล้ว",
    },
    "c-year": {
        "fr_FR": "Tickets cette année",
        "en_US": "Tickets this year",
        "es_ES": "Turnos este año",
        "de_DE": "Tickets dieses Jahr",
        "zh_CN": "今年取号数",
        "zh_TW": "今年取號數",
        "ja_JP": "今年の発券数",
        "ko_KR": "올해 발권 수",
        "th_TH": "บัตรคิวปีนี้",
    },
}

#: The calls of the fixture, oldest first: (ticket id, label, queue, desk, seconds before NOW).
CALLS = (
    ("t-b041", "B041", "q-civil", 1, 43 * 60),
    ("t-a015", "A015", "q-pass", 3, 35 * 60),
    ("t-c003", "C003", "q-residence", 4, 24 * 60),
    ("t-a016", "A016", "q-pass", 2, 17 * 60),
    ("t-b042", "B042", "q-civil", 1, 13 * 60),
    ("t-a017", "A017", "q-pass", 3, 5),
)


def desk_names(number: int) -> dict[str, str]:
    """A desk's name in the nine locales."""
    return {locale: name.format(n=number) for locale, name in DESK_NAMES.items()}


def reference() -> ReferenceData:
    """The place, its queues (with appointment types), desks and counters, as REST gives them."""
    place = Place.model_validate(
        {
            "placeId": "P1",
            "name": PLACE_NAMES,
            "language": "fr",
            "timezone": "Europe/Paris",
        }
    )
    queues = keyed(
        Queue,
        {
            queue_id: {
                "name": names,
                "appointmentTypes": {
                    type_id: {"name": TYPE_NAMES[type_id]} for type_id in ("t-new", "t-collect")
                }
                if queue_id == "q-pass"
                else {},
            }
            for queue_id, names in QUEUE_NAMES.items()
        },
        "queue_id",
    )
    endpoints = keyed(
        Endpoint, {f"e{n}": {"name": desk_names(n)} for n in range(1, 5)}, "endpoint_id"
    )
    counters = keyed(
        Counter, {key: {"name": names} for key, names in COUNTER_NAMES.items()}, "counter_id"
    )
    return ReferenceData(place=place, queues=queues, endpoints=endpoints, counters=counters)


def queue_states() -> QueueStatesSnapshot:
    """Four queues: open, paused, full for the day, closed until tomorrow."""
    raw: dict[str, dict[str, Any]] = {
        "q-pass": {
            "bookingIsOpened": True,
            "queueIsOpened": True,
            "queueLength": {
                "queueTicketLength": 7,
                "queuePeopleLength": 9,
                "byAppointmentType": {
                    "t-new": {"queueTicketLength": 4, "queuePeopleLength": 5},
                    "t-collect": {"queueTicketLength": 3, "queuePeopleLength": 4},
                },
            },
            "allFirstAvailabilities": {
                "t-new": {"1": service_time(at(25 * 60)), "2": service_time(at(40 * 60))},
                "t-collect": {"1": local(24, 16, 10)},
            },
            "dayQueueTimeslot": [
                {"startTime": local(24, 8, 30), "endTime": local(24, 12, 0)},
                {"startTime": local(24, 13, 30), "endTime": local(24, 17, 0)},
            ],
        },
        "q-civil": {
            "bookingIsOpened": True,
            "queueIsOpened": True,
            "pause": True,
            "queueLength": {"queueTicketLength": 3, "queuePeopleLength": 3},
            "dayQueueTimeslot": [
                {"startTime": local(24, 9, 0), "endTime": local(24, 12, 30)},
                {"startTime": local(24, 14, 0), "endTime": local(24, 17, 30)},
            ],
        },
        "q-residence": {
            "bookingIsOpened": True,
            "queueIsOpened": True,
            "queueIsFullForTheDay": True,
            "queueLength": {"queueTicketLength": 12, "queuePeopleLength": 15},
            "allFirstAvailabilities": {"t-res": {"1": local(26, 9, 30)}},
            "dayQueueTimeslot": [{"startTime": local(24, 8, 30), "endTime": local(24, 16, 0)}],
        },
        "q-social": {
            "bookingIsOpened": False,
            "queueIsOpened": False,
            "queueLength": {"queueTicketLength": 0, "queuePeopleLength": 0},
            "nextQueueTimeslot": {"startTime": local(25, 8, 30), "endTime": local(25, 12, 0)},
        },
    }
    states = keyed(QueueState, raw, "queue_id")
    return QueueStatesSnapshot(states)


def counters(values: Mapping[str, float] | None = None) -> CountersSnapshot:
    """The counters feed's first message."""
    values = values or {"c-visitors": 128, "c-served": 97, "c-year": 12480}
    return CountersSnapshot(
        keyed(
            Counter,
            {
                key: {"name": COUNTER_NAMES[key], "infos": {"value": value}}
                for key, value in values.items()
            },
            "counter_id",
        )
    )


def ticket(
    ticket_id: str,
    label: str,
    queue_id: str,
    *,
    state: int = 0,
    desk: int | None = None,
    called_at: datetime | None = None,
    recalled_at: Iterable[datetime] = (),
    **extra: Any,
) -> Ticket:
    """A ticket record as the service sends it (the desk's name in French, as a ticket has it)."""
    recalls = list(recalled_at)
    record: dict[str, Any] = {
        "ticketId": ticket_id,
        "label": label,
        "queue": {"id": queue_id, "name": QUEUE_NAMES.get(queue_id, {}).get("fr_FR", "")},
        "state": state,
        "lang": "fr",
        "endpoint": {"id": f"e{desk}", "name": f"Guichet {desk}"} if desk else {},
        "timeline": {
            "calledAt": service_time(called_at) if called_at else None,
            "recalledAt": [service_time(moment) for moment in recalls],
        },
        "recalledCount": len(recalls),
    }
    record.update(extra)
    return Ticket.model_validate(record)


def call(ticket_id: str, label: str, queue_id: str, desk: int, moment: datetime) -> TicketChanged:
    """A ticket called to a desk at `moment`."""
    return TicketChanged(ticket(ticket_id, label, queue_id, state=200, desk=desk, called_at=moment))


def live(feed: Feed, moment: datetime) -> FeedHealth:
    """A feed's report that it is live."""
    return FeedHealth(feed, FeedStatus.LIVE, moment, last_message_at=moment)


def history(
    now: datetime = NOW, calls: Iterable[tuple[str, str, str, int, float]] = CALLS
) -> list[tuple[datetime, Update]]:
    """The updates of the morning, each with the moment it arrives: reference data, the three
    feeds' first messages, then the calls (each ticket done before the next call at its desk)."""
    start = now - timedelta(hours=1)
    updates: list[tuple[datetime, Update]] = [
        (start, reference()),
        (start, TicketsSnapshot(())),
        (start, queue_states()),
        (start, counters()),
    ]
    updates += [(start, live(feed, start)) for feed in Feed]
    for ticket_id, label, queue_id, desk, before in calls:
        moment = now - timedelta(seconds=before)
        updates.append((moment, call(ticket_id, label, queue_id, desk, moment)))
    return updates


def make_board(settings: Settings, now: datetime = NOW, **changes: Any) -> Board:
    """A board holding the fixture's morning, as seen at `now`."""
    board_settings = BoardSettings.from_settings(settings)
    board = Board(board_settings, started_at=now - timedelta(hours=1))
    for moment, update in history(now, **changes):
        board.apply(update, moment)
    return board


def make_settings(**display: Any) -> Settings:
    """Settings of a test screen; `display` keys over the defaults (Paris time, 24 h)."""
    values: dict[str, Any] = {"timezone": "Europe/Paris", "locales": ["en_US"]}
    values.update(display)
    return settings_from_dict(
        {
            "service": {"display_url": "http://127.0.0.1:9", "api_key": "test-key"},
            "place": {"id": "P1"},
            "display": values,
        },
        environ={},
    )


@dataclass
class Clock:
    """A clock the test moves by hand."""

    now: datetime = NOW

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


class Layouts:
    """Counts the layouts of `app`'s screen from now on (a layout redraws every widget)."""

    def __init__(self, app: App[Any]) -> None:
        self.count = 0
        refresh_layout = app.screen._refresh_layout

        def counted(*args: Any, **kwargs: Any) -> None:
            self.count += 1
            refresh_layout(*args, **kwargs)

        app.screen._refresh_layout = counted  # type: ignore[method-assign]


@dataclass
class Recorder:
    """Hooks that remember what the app told them."""

    ready: int = 0
    ticks: int = 0
    calls: list[list[Call]] = field(default_factory=list)
    health: int = 0

    def hooks(self) -> AppHooks:
        def on_ready() -> None:
            self.ready += 1

        def on_tick(app: LobbyApp) -> None:
            self.ticks += 1

        def on_health(board: Board, now: datetime) -> None:
            self.health += 1

        return AppHooks(
            ready=on_ready,
            tick=on_tick,
            calls=self.calls.append,
            health=on_health,
        )


def board_app(
    locales: Iterable[str] = ("en_US",),
    clock: Clock | None = None,
    board: Board | None = None,
    **display: Any,
) -> LobbyApp:
    """An app showing the fixture board at NOW, without a source."""
    clock = clock or Clock()
    settings = make_settings(locales=list(locales), **display)
    app = LobbyApp(settings, clock=clock, board=board or make_board(settings, clock.now))
    app.animation_level = "none"
    return app


def screen_lines(app: App[Any]) -> list[str]:
    """The text on the screen, line by line (what a viewer reads)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: App[Any]) -> str:
    """The text on the screen as one string."""
    return "\n".join(screen_lines(app))


def terminal_output(app: App[Any]) -> str:
    """What the app writes to the terminal to draw the whole screen (escape sequences included)."""
    return written(app, app.screen._compositor.render_full_update())


def written(app: App[Any], update: Any) -> str:
    """What the app writes to the terminal for a composed `update` (a frame, whole or in part;
    escape sequences included)."""
    width, height = app.size
    console = Console(
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        width=width,
        height=height,
        legacy_windows=False,
    )
    output: str = update.render_segments(console)
    return output


async def wait_for(pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Let the app process its messages until `predicate` holds (fails after `timeout` s: a
    generous bound, for a loaded machine; a test passes as soon as the condition holds)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the screen did not get there in time")
        await pilot.pause(0.01)


class FakeSource:
    """A source of updates the test drives: it emits what the test pushes, and fails or ends
    when the test pushes an exception or `END`."""

    END: Final = object()

    def __init__(self) -> None:
        self.runs = 0
        self._queue: asyncio.Queue[object] = asyncio.Queue()

    def push(self, *items: object) -> None:
        """Updates to emit (in order), or an exception to raise, or `END` to return."""
        for item in items:
            self._queue.put_nowait(item)

    async def __call__(self, emit: Callable[[Update], None]) -> None:
        self.runs += 1
        while True:
            item = await self._queue.get()
            if item is FakeSource.END:
                return
            if isinstance(item, Exception):
                raise item
            emit(item)  # type: ignore[arg-type]

"""Records of the display service: shapes from the spec, tolerance, and clean strings."""

from __future__ import annotations

import logging
import unicodedata
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from lobby_display.models import (
    MAX_COMBINING_RUN,
    MAX_LABEL_LENGTH,
    MAX_NAME_LENGTH,
    Counter,
    Endpoint,
    Envelope,
    Place,
    Queue,
    QueueState,
    ServiceError,
    Ticket,
    TicketPage,
    TicketState,
    Timeline,
    TimeSlot,
    _cleaned_characters,
    clean_text,
    keyed,
    parse_datetime,
    pick_name,
)

PARIS_WINTER = timezone(timedelta(hours=1))


def ticket_payload(**changes: object) -> dict[str, object]:
    """A ticket shaped like the table of booking-service-v2.md, every field present."""
    payload: dict[str, object] = {
        "ticketId": "T1",
        "label": "A042",
        "queue": {"id": "Q1", "name": "Accueil"},
        "place": {"id": "P1", "name": "Mairie"},
        "userId": "U1",
        "appointmentType": {"id": "AT1", "name": "Passeport"},
        "state": 200,
        "isAnAppointment": True,
        "groupSize": 3,
        "duration": 15,
        "ticketPosition": {
            "global": {"nbPeople": 7, "nbTickets": 4},
            "endpoint": {"nbPeople": 2, "nbTickets": 1},
        },
        "recalledCount": 1,
        "lang": "fr_FR",
        "timeline": {
            "bookedAt": "2026-11-22T08:00:00:00,0000+0100",
            "inToConfirmAt": None,
            "initialBookedFor": "2026-11-22T09:30:00:00,0000+0100",
            "estimatedFor": "2026-11-22T09:35:00:00,0000+0100",
            "alertedAt": "2026-11-22T09:20:00:00,0000+0100",
            "calledAt": "2026-11-22T09:31:00:00,0000+0100",
            "inProgressAt": None,
            "estimatedDoneAt": None,
            "onHoldAt": None,
            "noShowAt": None,
            "cancelledAt": None,
            "doneAt": None,
            "recalledAt": ["2026-11-22T09:33:00:00,0000+0100"],
        },
        "extraInfos": {"queueDistance": 12.5},
        "endpoint": {"id": "E3", "name": "Guichet 3"},
        "extendedAttributes": {"userPosition": {"lat": 45.7, "lng": 4.8}},
    }
    payload.update(changes)
    return payload


class TestDateTimes:
    def test_service_shape(self) -> None:
        moment = parse_datetime("2026-11-22T14:05:07:00,0000+0100")
        assert moment == datetime(2026, 11, 22, 14, 5, 7, tzinfo=PARIS_WINTER)
        assert moment.utcoffset() == timedelta(hours=1)

    def test_service_shape_with_negative_offset(self) -> None:
        moment = parse_datetime("2026-11-22T14:05:00:00,0000-0530")
        assert moment.utcoffset() == -timedelta(hours=5, minutes=30)

    def test_iso_with_milliseconds_and_z(self) -> None:
        moment = parse_datetime("2026-11-22T13:05:00.250Z")
        assert moment == datetime(2026, 11, 22, 13, 5, 0, 250_000, tzinfo=UTC)

    def test_iso_with_offset(self) -> None:
        assert parse_datetime("2026-11-22T14:05:00+01:00") == datetime(
            2026, 11, 22, 13, 5, tzinfo=UTC
        )

    def test_without_offset_is_utc(self) -> None:
        assert parse_datetime("2026-11-22T14:05:00") == datetime(2026, 11, 22, 14, 5, tzinfo=UTC)

    def test_epoch_milliseconds(self) -> None:
        assert parse_datetime(1_795_352_700_000) == datetime(2026, 11, 22, 13, 5, tzinfo=UTC)

    @pytest.mark.parametrize(
        "text", ["", "tomorrow", "2026-13-01T00:00:00Z", "2026-02-30T10:00:00Z", "22/11/2026"]
    )
    def test_garbage_is_refused(self, text: str) -> None:
        with pytest.raises(ValueError):
            parse_datetime(text)

    def test_garbage_in_a_timeline_is_missing(self, caplog: pytest.LogCaptureFixture) -> None:
        timeline = Timeline.model_validate(
            {
                "calledAt": "not a date \x1b[2J",
                "doneAt": 42.5,
                "bookedAt": "",
                "recalledAt": ["2026-11-22T09:33:00.000Z", "soon", None],
            }
        )
        assert timeline.called_at is None
        assert timeline.booked_at is None
        assert timeline.done_at == datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=42.5)
        assert timeline.recalled_at == [datetime(2026, 11, 22, 9, 33, tzinfo=UTC)]
        assert "unreadable date-time" in caplog.text
        assert "\x1b" not in caplog.text


class TestRecords:
    def test_place(self) -> None:
        place = Place.model_validate(
            {
                "placeId": "P1",
                "companyId": "C1",
                "name": {"fr_FR": "Mairie"},
                "address": "1 place de la Comédie",
                "city": "Lyon",
                "country": "France",
                "zip": "69001",
                "language": "fr_FR",
                "timezone": "Europe/Paris",
                "position": {"lat": 45.767, "lng": 4.836},
            }
        )
        assert place.city == "Lyon"
        assert place.position is not None and place.position.lat == 45.767

    def test_queue_with_appointment_types_keyed_by_id(self) -> None:
        queue = Queue.model_validate(
            {
                "queueId": "Q1",
                "placeId": "P1",
                "companyId": "C1",
                "name": {"fr_FR": "Accueil", "en_US": "Reception"},
                "language": "fr_FR",
                "timezone": "Europe/Paris",
                "state": {"pause": True},
                "position": {"lat": 1, "lng": 2},
                "appointmentTypes": {
                    "AT1": {"appointmentTypeId": "AT1", "name": {"fr_FR": "Passeport"}},
                    "AT2": {"name": {"fr_FR": "Carte d'identité"}},
                },
            }
        )
        assert queue.state is not None and queue.state.pause
        assert sorted(queue.appointment_types) == ["AT1", "AT2"]
        assert queue.appointment_types["AT2"].appointment_type_id == "AT2"

    def test_queue_with_appointment_types_as_a_list(self) -> None:
        queue = Queue.model_validate(
            {"queueId": "Q1", "appointmentTypes": [{"appointmentTypeId": 5, "name": "Visa"}]}
        )
        assert queue.appointment_types["5"].name == {"": "Visa"}

    def test_counter(self) -> None:
        counter = Counter.model_validate(
            {
                "counterId": "Q1",
                "placeId": "P1",
                "companyId": "C1",
                "name": {"fr_FR": "Entrées"},
                "language": "fr_FR",
                "timezone": "Europe/Paris",
                "infos": {"value": 17, "nextRestart": "2026-11-23T00:00:00:00,0000+0100"},
            }
        )
        assert counter.infos.value == 17
        assert counter.infos.next_restart == datetime(2026, 11, 23, tzinfo=PARIS_WINTER)

    def test_counter_with_empty_infos(self) -> None:
        counter = Counter.model_validate({"counterId": 3, "infos": {"value": None}})
        assert (counter.counter_id, counter.infos.value, counter.infos.next_restart) == (
            "3",
            0,
            None,
        )

    def test_endpoint(self) -> None:
        endpoint = Endpoint.model_validate(
            {"endpointId": "E1", "queueId": "Q1", "placeId": "P1", "name": {}, "state": 2}
        )
        assert endpoint.state == 2

    def test_time_slot(self) -> None:
        slot = TimeSlot.model_validate(
            {"startAt": "2026-11-22T09:00:00:00,0000+0100", "endAt": "2026-11-22T12:00:00.000Z"}
        )
        assert slot.end_at - slot.start_at == timedelta(hours=4)

    def test_envelope_and_error(self) -> None:
        envelope = Envelope.model_validate(
            {
                "resource": "QUEUE",
                "actionCategory": "ALL_QUEUE_STATE",
                "actionName": "ALL_DATA",
                "data": {"Q1": {}},
            }
        )
        assert envelope.data == {"Q1": {}}
        error = ServiceError.model_validate(
            {"error": "USER_ID_NOT_FOUND", "error_description": "no\x1b[31m user", "extra": 1}
        )
        assert (error.error, error.error_description, error.error_uri) == (
            "USER_ID_NOT_FOUND",
            "no[31m user",
            "",
        )


class TestQueueState:
    def payload(self, **changes: object) -> dict[str, object]:
        payload: dict[str, object] = {
            "queueId": "Q1",
            "bookingIsOpened": True,
            "queueIsOpened": True,
            "queueIsFull": False,
            "queueIsFullForTheDay": False,
            "queueIsFullForFifo": False,
            "queueIsFullForAppointment": True,
            "pause": False,
            "queueLength": {
                "queueTicketLength": 5,
                "queuePeopleLength": 8,
                "byAppointmentType": {"AT1": {"queueTicketLength": 2, "queuePeopleLength": 3}},
            },
            "allFirstAvailabilities": {
                "AT1": {"1": "2026-11-22T10:15:00.000Z", "2": "2026-11-22T11:00:00.000Z"}
            },
            "dayQueueTimeslot": [
                {"startTime": "2026-11-22T08:00:00.000Z", "endTime": "2026-11-22T11:30:00.000Z"}
            ],
            "nextQueueTimeslot": {
                "startTime": "2026-11-22T13:00:00.000Z",
                "endTime": "2026-11-22T16:00:00.000Z",
            },
        }
        payload.update(changes)
        return payload

    def test_every_field(self) -> None:
        state = QueueState.model_validate(self.payload())
        assert (
            state.booking_is_opened
            and state.queue_is_opened
            and state.queue_is_full_for_appointment
        )
        assert not state.queue_is_full
        assert (state.queue_length.queue_ticket_length, state.queue_length.queue_people_length) == (
            5,
            8,
        )
        assert state.queue_length.by_appointment_type["AT1"].queue_people_length == 3
        assert state.all_first_availabilities["AT1"][2] == datetime(2026, 11, 22, 11, tzinfo=UTC)
        assert state.day_queue_timeslot[0].end_time.hour == 11
        assert state.next_queue_timeslot is not None
        assert state.next_queue_timeslot.start_time.hour == 13

    def test_legacy_names(self) -> None:
        legacy = self.payload(opened=False, full=True)
        del legacy["bookingIsOpened"], legacy["queueIsFull"]
        state = QueueState.model_validate(legacy)
        assert (state.booking_is_opened, state.queue_is_full) == (False, True)

    def test_missing_fields(self) -> None:
        state = QueueState.model_validate({"queueId": "Q1"})
        assert state.booking_is_opened is None and state.pause is None
        assert state.queue_length.queue_ticket_length == 0
        assert state.all_first_availabilities == {}
        assert state.day_queue_timeslot == [] and state.next_queue_timeslot is None

    def test_unreadable_parts_are_dropped(self) -> None:
        state = QueueState.model_validate(
            self.payload(
                allFirstAvailabilities={"AT1": {"one": "2026-11-22T10:15:00.000Z", "3": "?"}},
                dayQueueTimeslot=[{"startTime": "later"}],
                nextQueueTimeslot={"startTime": "x", "endTime": "y"},
                queueLength=None,
            )
        )
        assert state.all_first_availabilities == {"AT1": {3: None}}
        assert state.day_queue_timeslot == [] and state.next_queue_timeslot is None
        assert state.queue_length.queue_people_length == 0


class TestTicket:
    def test_every_field(self) -> None:
        ticket = Ticket.model_validate(ticket_payload())
        assert ticket.label == "A042"
        assert ticket.state == TicketState.CALLED
        assert (ticket.queue.id, ticket.queue.name) == ("Q1", "Accueil")
        assert ticket.appointment_type.name == "Passeport"
        assert ticket.is_an_appointment and ticket.group_size == 3
        assert ticket.ticket_position.queue.nb_people == 7
        assert ticket.ticket_position.endpoint.nb_tickets == 1
        assert ticket.timeline.called_at == datetime(2026, 11, 22, 9, 31, tzinfo=PARIS_WINTER)
        assert ticket.timeline.in_progress_at is None
        assert len(ticket.timeline.recalled_at) == 1
        assert (ticket.endpoint.id, ticket.endpoint.name) == ("E3", "Guichet 3")
        assert ticket.extra_infos == {"queueDistance": 12.5}
        assert not ticket.is_finished

    def test_minimal(self) -> None:
        ticket = Ticket.model_validate({"ticketId": "T9"})
        assert ticket.state == TicketState.BOOKED
        assert ticket.endpoint.id is None and ticket.timeline.called_at is None

    def test_ids_as_numbers(self) -> None:
        ticket = Ticket.model_validate(
            ticket_payload(ticketId=1234, queue={"id": 7.0, "name": "A"}, endpoint={"id": 3})
        )
        assert (ticket.ticket_id, ticket.queue.id, ticket.endpoint.id) == ("1234", "7", "3")

    def test_no_endpoint_yet(self) -> None:
        ticket = Ticket.model_validate(ticket_payload(endpoint={"id": None, "name": ""}))
        assert ticket.endpoint.id is None

    def test_a_boolean_is_not_an_id(self) -> None:
        with pytest.raises(ValueError):
            Ticket.model_validate(ticket_payload(ticketId=True))

    def test_finished_states(self) -> None:
        assert Ticket.model_validate(ticket_payload(state=700)).is_finished
        assert Ticket.model_validate(ticket_payload(state=600)).is_finished
        assert not Ticket.model_validate(ticket_payload(state=300)).is_finished


class TestCollections:
    def test_page_with_a_list(self) -> None:
        page = TicketPage.model_validate(
            {
                "totalCount": 120,
                "page": 2,
                "pageSize": 50,
                "tickets": [ticket_payload(ticketId="A"), ticket_payload(ticketId="B")],
            }
        )
        assert (page.total_count, page.page, page.page_size) == (120, 2, 50)
        assert [t.ticket_id for t in page.tickets] == ["A", "B"]

    def test_page_with_tickets_keyed_by_id(self) -> None:
        payload = {"totalCount": 2, "tickets": {"A": ticket_payload(), "B": {"label": "B2"}}}
        del payload["tickets"]["A"]["ticketId"]  # type: ignore[index]
        page = TicketPage.model_validate(payload)
        assert [t.ticket_id for t in page.tickets] == ["A", "B"]

    def test_a_bad_entry_is_skipped(self, caplog: pytest.LogCaptureFixture) -> None:
        page = TicketPage.model_validate(
            {"tickets": [ticket_payload(ticketId="A"), {"label": "no id"}, "junk", None]}
        )
        assert [t.ticket_id for t in page.tickets] == ["A"]
        assert "skipped a Ticket entry" in caplog.text

    def test_keyed_object_fills_ids_from_keys(self) -> None:
        queues = keyed(Queue, {"Q1": {"name": {"fr_FR": "A"}}, "Q2": {"queueId": "Q2"}}, "queue_id")
        assert [queue.queue_id for queue in queues.values()] == ["Q1", "Q2"]

    def test_keyed_list(self) -> None:
        counters = keyed(Counter, [{"counterId": 1}, {"counterId": "2"}], "counter_id")
        assert list(counters) == ["1", "2"]

    def test_keyed_skips_entries_that_do_not_fit(self, caplog: pytest.LogCaptureFixture) -> None:
        endpoints = keyed(
            Endpoint, {"E1": {"state": "two"}, "E2": {"name": "ok"}, "E3": 5}, "endpoint_id"
        )
        assert list(endpoints) == ["E2"]
        assert caplog.text.count("skipped a Endpoint entry") == 2
        assert "two" not in caplog.text  # no input value is quoted in the log

    def test_keyed_refuses_a_scalar(self) -> None:
        with pytest.raises(ValueError, match="keyed by queueId"):
            keyed(Queue, "Q1", "queue_id")


HOSTILE = {
    "erase screen": ("Desk\x1b[2J 1", "Desk[2J 1"),
    "window title": ("\x1b]0;pwned\x07Desk", "]0;pwnedDesk"),
    "C1 CSI": ("Desk\x9b31m", "Desk31m"),
    "bidi override": ("\u202eksed\u202c", "ksed"),
    "bidi isolate": ("\u2066A\u2069", "A"),
    "zero width": ("De\u200bs\u200dk\ufeff", "Desk"),
    "NUL": ("De\x00sk", "Desk"),
    "line breaks": ("Desk\n\r\t 1\u2028\u2029", "Desk 1"),
    "decomposed accents": ("E\u0301tat civil", "État civil"),
    "markup": ("[bold]x[/]", "[bold]x[/]"),
    "link markup": ("[link='https://x']Desk[/]", "[link='https://x']Desk[/]"),
}


class TestCleanText:
    @pytest.mark.parametrize(("raw", "clean"), HOSTILE.values(), ids=HOSTILE.keys())
    def test_hostile_strings(self, raw: str, clean: str) -> None:
        assert clean_text(raw) == clean

    @pytest.mark.parametrize("raw", [raw for raw, _ in HOSTILE.values()])
    def test_no_control_or_format_character_survives(self, raw: str) -> None:
        cleaned = clean_text(raw)
        assert not [c for c in cleaned if unicodedata.category(c) in ("Cc", "Cf")]

    def test_huge_name_is_capped(self) -> None:
        cleaned = clean_text("x" * 100_000)
        assert len(cleaned) == MAX_NAME_LENGTH
        assert cleaned.endswith("…")

    def test_combining_flood_is_capped(self) -> None:
        cleaned = clean_text("Z" + "\u0301\u0302\u0303\u0304" * 50 + "ed")
        marks = [c for c in cleaned if unicodedata.combining(c)]
        assert len(marks) <= MAX_COMBINING_RUN
        assert cleaned.endswith("ed")

    def test_combining_marks_of_real_scripts_are_kept(self) -> None:
        # Thai: at most two marks per base (SARA AM is written decomposed, see the next test).
        assert clean_text("ที่ทำการ") == "ที่ท\u0e4d\u0e32การ"

    def test_thai_sara_am_is_written_decomposed_with_the_same_width(self) -> None:
        # foot draws U+0E33 as a mark over the letter before it and an empty cell.
        for name in ("ใบอนุญาตพำนัก", "ยื่นคำขอใหม่", "น้ำประปา", "ທະນາຄານຄຳ"):
            cleaned = clean_text(name)
            assert "\u0e33" not in cleaned and "\u0eb3" not in cleaned
            assert cell_len(cleaned) == cell_len(name)
            assert clean_text(cleaned) == cleaned
        assert clean_text("กำลัง") == "ก\u0e4d\u0e32ลัง"

    def test_a_service_name_with_sara_am_is_stored_decomposed(self) -> None:
        queue = Queue.model_validate(
            {"queueId": "q-res", "name": {"th_TH": "ใบอนุญาตพำนัก", "en_US": "Residence"}}
        )
        assert queue.name["th_TH"] == "ใบอนุญาตพ\u0e4d\u0e32นัก"
        assert queue.name["en_US"] == "Residence"
        ticket = Ticket.model_validate(ticket_payload(endpoint={"id": "E3", "name": "ห้องทำบัตร 3"}))
        assert ticket.endpoint is not None
        assert ticket.endpoint.name == "ห้องท\u0e4d\u0e32บัตร 3"

    def test_wide_scripts_are_kept(self) -> None:
        assert clean_text("受付窓口 3") == "受付窓口 3"

    def test_non_strings(self) -> None:
        assert (clean_text(None), clean_text(42), clean_text(1.5)) == ("", "42", "1.5")

    @given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=90))
    @settings(max_examples=300, deadline=None)
    def test_plain_ascii_is_cleaned_as_any_text(self, raw: str) -> None:
        # Printable ASCII takes a short cut: the same text as the character-by-character path.
        for cap in (8, MAX_NAME_LENGTH):
            slow = _cleaned_characters(raw)
            if len(slow) > cap:
                slow = slow[: cap - 1].rstrip() + "…"
            assert clean_text(raw, cap) == slow

    def test_through_the_records(self) -> None:
        hostile = "\x1b[2J\x9b\u202eA\u200b" + "B" * 100_000
        queue = Queue.model_validate({"queueId": "Q1", "name": {"fr_FR": hostile}})
        ticket = Ticket.model_validate(
            ticket_payload(label=hostile, endpoint={"id": "E1", "name": hostile})
        )
        place = Place.model_validate({"placeId": "P\x1b1", "city": hostile})
        for text, cap in (
            (queue.name["fr_FR"], MAX_NAME_LENGTH),
            (ticket.label, MAX_LABEL_LENGTH),
            (ticket.endpoint.name, MAX_NAME_LENGTH),
            (place.city, MAX_NAME_LENGTH),
        ):
            assert text.startswith("[2JAB")
            assert len(text) == cap
            assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text
        assert place.place_id == "P1"

    def test_names_keyed_by_locale_drop_empty_and_odd_entries(self) -> None:
        queue = Queue.model_validate(
            {"queueId": "Q", "name": {"fr_FR": "\u200b", "en_US": "Desk", "de_DE": {"x": 1}}}
        )
        assert queue.name == {"en_US": "Desk"}


NAMES = {"fr_FR": "Accueil", "zh_TW": "服務台", "en_US": "Reception", "": "Front"}


class TestPickName:
    def test_the_locale_itself(self) -> None:
        assert pick_name(NAMES, "fr_FR") == "Accueil"

    def test_same_language(self) -> None:
        assert pick_name(NAMES, "zh_CN") == "服務台"

    def test_fallback_locales_in_order(self) -> None:
        assert pick_name(NAMES, "de_DE", fallback=["ja_JP", "fr_FR"]) == "Accueil"

    def test_then_english(self) -> None:
        assert pick_name(NAMES, "de_DE", fallback=["ja_JP"]) == "Reception"

    def test_then_a_name_of_unknown_locale(self) -> None:
        assert pick_name({"": "Front", "ko_KR": "접수"}, "de_DE") == "Front"

    def test_then_anything(self) -> None:
        assert pick_name({"ko_KR": "접수"}, "de_DE") == "접수"

    def test_nothing(self) -> None:
        assert pick_name({}, "fr_FR") == ""


def test_warnings_go_to_the_models_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="lobby_display.models")
    keyed(Queue, [{"name": "no id"}], "queue_id")
    assert [record.name for record in caplog.records] == ["lobby_display.models"]

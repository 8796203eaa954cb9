"""Every string the service sends is cleaned at the boundary, its short codes too: the time zone
and language of a place, queue, counter or company, a ticket's `lang`, an event's action, and
the dictionary keys that end up in messages (appointment-type ids, validation locations)."""

from __future__ import annotations

import logging
import re

import pytest

from lobby_display.models import (
    Counter,
    Envelope,
    Place,
    Queue,
    QueueState,
    Ticket,
    keyed,
)

OSC52 = "\x1b]52;c;cHduZWQ=\x07"
TITLE = "\x1b]0;pwned\x1b\\"
CLEAR = "\x1b[2J\x1b[H\x07"
#: ESC, BEL and the C1 controls.
CONTROLS = re.compile("[\x1b\x07\x80-\x9f]")


def assert_clean(text: str) -> None:
    assert not CONTROLS.search(text), repr(text)


def test_time_zones_and_languages_are_cleaned() -> None:
    place = Place.model_validate(
        {"placeId": "P1", "timezone": OSC52 + "Europe/Paris", "language": TITLE + "fr_FR"}
    )
    assert place.timezone == "]52;c;cHduZWQ=Europe/Paris"
    assert place.language == "]0;pwned\\fr_FR"
    for record in (
        Queue.model_validate({"queueId": "Q1", "timezone": CLEAR + "UTC", "language": "\x9bfr"}),
        Counter.model_validate({"counterId": "Q1", "timezone": CLEAR, "language": OSC52}),
    ):
        assert_clean(record.timezone)
        assert_clean(record.language)


def test_a_plain_time_zone_is_kept_as_it_is() -> None:
    place = Place.model_validate(
        {"placeId": "P1", "timezone": "America/Argentina/ComodRivadavia", "language": "fr_FR"}
    )
    assert place.timezone == "America/Argentina/ComodRivadavia"
    assert place.language == "fr_FR"


def test_a_tickets_lang_is_cleaned() -> None:
    ticket = Ticket.model_validate({"ticketId": "T1", "lang": CLEAR + "fr" + "x" * 500})
    assert_clean(ticket.lang)
    assert len(ticket.lang) <= 64


def test_an_events_action_is_cleaned() -> None:
    envelope = Envelope.model_validate(
        {"resource": TITLE, "actionCategory": OSC52 + "TICKET", "actionName": CLEAR + "UPDATE"}
    )
    for text in (envelope.resource, envelope.action_category, envelope.action_name):
        assert_clean(text)
    assert envelope.action_category.endswith("TICKET")


def test_appointment_type_keys_of_a_queue_state_are_cleaned() -> None:
    state = QueueState.model_validate(
        {"queueId": "Q1", "queueLength": {"byAppointmentType": {OSC52 + "A1": {}}}}
    )
    (key,) = state.queue_length.by_appointment_type
    assert_clean(key)
    assert key.endswith("A1")


def test_a_skipped_entry_is_logged_without_the_controls_of_its_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="lobby_display.models")
    # The error's location holds the service's key (queueLength.by_appointment_type.KEY....).
    length = {"byAppointmentType": {CLEAR + "A1": {"queueTicketLength": "many"}}}
    keyed(QueueState, {"Q1": {"queueId": "Q1", "queueLength": length}}, "queue_id")
    (record,) = caplog.records
    assert "skipped a QueueState entry" in record.getMessage()
    assert "A1" in record.getMessage()
    assert_clean(record.getMessage())

"""The simulator's REST routes as the display and `discover` use them: reference data keyed by
id, names by locale, paging limits, error bodies."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from lobby_display.models import (
    LOCALES,
    Counter,
    Endpoint,
    Place,
    Queue,
    QueueState,
    TicketPage,
    TimeSlot,
    keyed,
)
from lobby_display.simulator import SimulatorServer

SERVICE_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}:00,0000[+-]\d{4}$")


class Api:
    def __init__(self, sim: SimulatorServer, key: str) -> None:
        self.sim = sim
        self.key = key

    def get(self, route: str, **params: Any) -> httpx.Response:
        return httpx.get(
            f"{self.sim.url}/v1{route}", params={"key": self.key, **params}, timeout=10
        )

    def ok(self, route: str, **params: Any) -> Any:
        answer = self.get(route, **params)
        assert answer.status_code == 200, answer.text
        return answer.json()


@pytest.fixture
def api(simulator: SimulatorServer, sim_key: str) -> Api:
    return Api(simulator, sim_key)


def bad_request(answer: httpx.Response, mentions: str) -> None:
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["error"] == "INVALID_PARAMETER" and mentions in body["error_description"]
    assert body["error_uri"]


def test_company_place_and_its_collections_are_objects_keyed_by_id(api: Api) -> None:
    sim = api.sim
    companies = api.ok("/companies")
    assert list(companies) == [sim.company_id]
    places = api.ok(f"/companies/{sim.company_id}/places")
    assert keyed(Place, places, "place_id").keys() == {sim.place_id}
    assert api.ok("/places") == places
    place = Place.model_validate(api.ok(f"/places/{sim.place_id}"))
    assert place.timezone == "Europe/Paris" and place.name["fr_FR"] == "Mairie de Saint-Aubin"
    queues = keyed(Queue, api.ok(f"/places/{sim.place_id}/queues"), "queue_id")
    assert list(queues) == sim.queue_ids
    assert all(queue.appointment_types for queue in queues.values())
    counters = keyed(Counter, api.ok(f"/places/{sim.place_id}/counters"), "counter_id")
    assert list(counters) == sim.queue_ids, "counter ids are queue ids"
    endpoints = keyed(Endpoint, api.ok(f"/places/{sim.place_id}/endpoints"), "endpoint_id")
    assert {endpoint.queue_id for endpoint in endpoints.values()} == set(sim.queue_ids)
    assert {endpoint.state for endpoint in endpoints.values()} <= {0, 2}


def test_langs_selects_the_locales_of_every_name(api: Api) -> None:
    sim = api.sim
    queues = api.ok(f"/places/{sim.place_id}/queues", langs="ja_JP,ko_KR")
    for queue in queues.values():
        assert set(queue["name"]) == {"ja_JP", "ko_KR"}
        for kind in queue["appointmentTypes"].values():
            assert set(kind["name"]) == {"ja_JP", "ko_KR"}
    first = queues[sim.queue_ids[0]]["name"]
    assert first == {"ja_JP": "身分証明書", "ko_KR": "신분증"}
    repeated = api.ok(f"/places/{sim.place_id}", langs=["th_TH", "zh_TW"])
    assert set(repeated["name"]) == {"th_TH", "zh_TW"}
    everything = api.ok(f"/places/{sim.place_id}/endpoints")
    assert all(set(endpoint["name"]) == set(LOCALES) for endpoint in everything.values())
    bad_request(api.get("/places", langs="fr-FR"), "langs")


def test_queues_endpoints_and_counters_by_id(api: Api) -> None:
    sim = api.sim
    two = sim.queue_ids[:2]
    assert list(api.ok("/queues", queuesId=",".join(two))) == two
    assert list(api.ok("/queues", queuesId=[two[1], "unknown"])) == [two[1]]
    endpoints = api.ok("/queues/endpoints", queuesId=two[0])
    assert endpoints and {e["queueId"] for e in endpoints.values()} == {two[0]}
    counters = api.ok("/counters", countersId=",".join(two), langs="en_US")
    assert list(counters) == two
    assert counters[two[0]]["name"] == {"en_US": "Identity cards"}
    counter = api.ok(f"/counters/{two[1]}")
    assert counter["counterId"] == two[1]
    assert SERVICE_SHAPE.match(counter["infos"]["nextRestart"])
    assert counter["infos"]["value"] >= 0
    bad_request(api.get("/counters"), "countersId")
    state = httpx.post(
        f"{sim.url}/v1/queues/state", params={"key": api.key}, json={"queuesId": two}, timeout=5
    )
    assert state.status_code == 200
    assert [QueueState.model_validate(one).queue_id for one in state.json().values()] == two


def test_unknown_ids_and_routes_answer_404_with_an_error_body(api: Api) -> None:
    for route in (
        "/places/nope",
        "/places/nope/queues",
        "/counters/nope",
        "/queues/nope",
        "/nothing",
    ):
        answer = api.get(route)
        assert answer.status_code == 404, route
        assert set(answer.json()) == {"error", "error_description", "error_uri"}


def test_timeslots_of_the_day(api: Api) -> None:
    slots = api.ok(f"/places/{api.sim.place_id}/timeslots")
    assert slots
    for slot in slots:
        assert SERVICE_SHAPE.match(slot["startAt"]) and SERVICE_SHAPE.match(slot["endAt"])
        parsed = TimeSlot.model_validate(slot)
        assert parsed.start_at < parsed.end_at
    bad_request(api.get(f"/places/{api.sim.place_id}/timeslots", startAt="yesterday"), "startAt")


@pytest.mark.parametrize(
    ("params", "mentions"),
    [
        ({"page": 0}, "page"),
        ({"page": -3}, "page"),
        ({"page": "two"}, "page"),
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": 51}, "pageSize"),
    ],
)
@pytest.mark.parametrize("route", ["/queues/tickets/currents", "/queues/tickets/history"])
def test_paging_limits(api: Api, route: str, params: dict[str, Any], mentions: str) -> None:
    bad_request(api.get(route, **params), mentions)


def test_paging_defaults_and_the_end_of_the_list(api: Api) -> None:
    first = TicketPage.model_validate(api.ok("/queues/tickets/currents"))
    assert (first.page, first.page_size) == (1, 20)
    assert first.total_count >= 20 and len(first.tickets) == 20
    assert api.ok("/queues/tickets/currents", pageSize=50)["pageSize"] == 50
    beyond = api.ok("/queues/tickets/currents", page=1000, pageSize=50)
    assert beyond["tickets"] == [] and beyond["page"] == 1000 and beyond["totalCount"] > 0


def test_every_current_ticket_page_by_page(start_simulator: Callable[..., SimulatorServer]) -> None:
    sim = start_simulator(tickets=130, speed=0.01)  # a quiet place: pages do not shift
    api = Api(sim, sim.issue_key())
    seen: dict[str, Any] = {}
    page = 1
    while True:
        answer = TicketPage.model_validate(
            api.ok("/queues/tickets/currents", page=page, pageSize=50)
        )
        assert answer.total_count == 130
        seen.update({ticket.ticket_id: ticket for ticket in answer.tickets})
        if page * 50 >= answer.total_count:
            break
        page += 1
    assert page == 3 and len(answer.tickets) == 30
    assert set(seen) == set(sim.truth()["tickets"])
    assert all(ticket.state not in (600, 700) for ticket in seen.values())


def test_tickets_of_some_queues_and_the_history(api: Api) -> None:
    one = api.sim.queue_ids[0]
    mine = api.ok("/queues/tickets/currents", queuesId=one, pageSize=50)
    assert mine["tickets"] and {t["queue"]["id"] for t in mine["tickets"]} == {one}
    history = TicketPage.model_validate(api.ok("/queues/tickets/history", pageSize=50))
    assert history.total_count > 0
    assert {ticket.state for ticket in history.tickets} <= {600, 700}
    raw = api.ok("/queues/tickets/history", pageSize=1)["tickets"][0]
    done_or_cancelled = raw["timeline"]["doneAt"] or raw["timeline"]["cancelledAt"]
    assert SERVICE_SHAPE.match(done_or_cancelled)


def test_a_ticket_carries_its_endpoint_name_in_its_own_language(api: Api) -> None:
    endpoints = api.ok(f"/places/{api.sim.place_id}/endpoints")
    tickets = api.ok("/queues/tickets/currents", pageSize=50)["tickets"]
    called = [ticket for ticket in tickets if ticket["endpoint"]["id"]]
    assert called
    for ticket in called:
        names = endpoints[ticket["endpoint"]["id"]]["name"]
        assert ticket["endpoint"]["name"] == names[ticket["lang"]]
    waiting = [ticket for ticket in tickets if not ticket["endpoint"]["id"]]
    assert all(ticket["endpoint"] == {"id": None, "name": ""} for ticket in waiting)

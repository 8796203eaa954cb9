"""`lobby-display discover` against the simulator: the ids an installer needs, with their names,
and a `[place]` snippet that, pasted into the config, passes `check`."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from lobby_display.cli import main
from lobby_display.simulator import SimulatorServer


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
        monkeypatch.delenv(name)


def reference(sim: SimulatorServer, key: str, route: str) -> dict[str, Any]:
    """A collection of the place as the service gives it (read here without our client)."""
    answer = httpx.get(
        f"{sim.url}/v1/places/{sim.place_id}/{route}",
        params={"key": key, "langs": "fr_FR,en_US"},
        timeout=5,
    )
    answer.raise_for_status()
    data: dict[str, Any] = answer.json()
    return data


def run_discover(capsys: pytest.CaptureFixture[str], config: Path) -> tuple[int, str, str]:
    code = main(["discover", "--config", str(config)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def snippet_of(output: str) -> dict[str, Any]:
    """The TOML snippet at the end of the output, parsed."""
    start = output.index("\n# Paste into ")
    parsed: dict[str, Any] = tomllib.loads(output[start:])
    return parsed


def test_lists_every_queue_counter_and_endpoint_with_ids_and_names(
    simulator: SimulatorServer,
    sim_key: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = simulator.write_config(tmp_path, locales=["fr_FR", "en_US"])
    code, out, err = run_discover(capsys, config)
    assert code == 0, err
    rows = out.splitlines()

    def row_of(record_id: str) -> str:
        found = [row for row in rows if row.strip().split(" ")[0] == record_id]
        assert found, f"{record_id} is not listed:\n{out}"
        return found[0]

    queues = reference(simulator, sim_key, "queues")
    assert len(queues) == 5
    for queue_id, queue in queues.items():
        row = row_of(queue_id)
        assert queue["name"]["fr_FR"] in row and queue["name"]["en_US"] in row
        for type_id, kind in queue["appointmentTypes"].items():
            type_row = next(row for row in rows if f"type {type_id}" in row)
            assert kind["name"]["en_US"] in type_row
    counters = reference(simulator, sim_key, "counters")
    assert f"Counters ({len(counters)})" in out
    endpoints = reference(simulator, sim_key, "endpoints")
    for endpoint_id, endpoint in endpoints.items():
        row = row_of(endpoint_id)
        assert endpoint["name"]["en_US"] in row and endpoint["queueId"] in row
    assert simulator.place_id in rows[0]


def test_the_snippet_parses_and_pasted_into_the_config_passes_check(
    simulator: SimulatorServer,
    sim_key: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = simulator.write_config(tmp_path)
    code, out, _ = run_discover(capsys, config)
    assert code == 0
    place = snippet_of(out)["place"]
    assert place["id"] == simulator.place_id
    assert place["queues"] == list(reference(simulator, sim_key, "queues"))
    assert place["counters"] == list(reference(simulator, sim_key, "counters"))

    merged = simulator.write_config(tmp_path / "merged", place=place)
    assert main(["check", "--config", str(merged)]) == 0, capsys.readouterr().out
    report = capsys.readouterr().out
    assert report.count(" queue ") >= 5  # each configured queue was checked by id


def test_hostile_names_come_out_as_plain_text(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    simulator.set_hostile(True)
    config = simulator.write_config(tmp_path)
    code, out, _ = run_discover(capsys, config)
    assert code == 0
    assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out and "\x00" not in out
    assert max(len(row) for row in out.splitlines()) < 1000  # a 100 KB name is cut
    snippet_of(out)  # still valid TOML, whatever the names


def test_an_unknown_place_lists_the_places_the_account_sees(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path, place={"id": "PLACE_ID"})
    code, out, err = run_discover(capsys, config)
    assert code == 1
    assert "no place with id 'PLACE_ID'" in err and "set place.id" in err
    assert simulator.place_id in out


def test_an_unreachable_service_is_one_message_and_exit_1(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    config = simulator.write_config(tmp_path, url=f"http://127.0.0.1:{closed}")
    code, out, err = run_discover(capsys, config)
    assert code == 1 and out == ""
    assert "cannot reach the display service" in err and "lobby-display check" in err
    assert "Traceback" not in err

"""`lobby-display simulate` as a user runs it: URL and files printed, a config the display can
load, faults sent from the command line, a clean stop on SIGTERM."""

from __future__ import annotations

import json
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest

from lobby_display.config import load_config
from lobby_display.simulator import SimulatorServer


def lobby_display(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lobby_display", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Running:
    def __init__(self, process: subprocess.Popen[str], lines: list[str]) -> None:
        self.process = process
        self.lines = lines
        match = re.search(r"at (http://\S+)", lines[0])
        assert match, lines
        self.url = match.group(1)
        self.port = int(self.url.rsplit(":", 1)[1])

    def path(self, label: str) -> Path:
        line = next(line for line in self.lines if line.strip().startswith(label))
        return Path(line.split()[1])


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lobby_display",
            "simulate",
            "--port",
            "0",
            "--directory",
            str(tmp_path),
            "--speed",
            "50",
            "--heartbeat",
            "0.5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 20
    assert process.stdout is not None
    while not lines or lines[-1].strip() != "Ctrl-C stops.":
        assert time.monotonic() < deadline and process.poll() is None, lines
        lines.append(process.stdout.readline())
    yield Running(process, lines)
    if process.poll() is None:
        process.kill()
        process.wait(5)


def test_simulate_prints_its_address_and_writes_a_ready_config(
    running: Running, tmp_path: Path
) -> None:
    config = running.path("config")
    credentials = running.path("credentials")
    assert config.parent == credentials.parent == tmp_path
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    settings = load_config(config, environ={})
    assert settings.service.display_url == running.url
    assert settings.service.credentials == credentials
    assert settings.state.directory.parent == tmp_path
    assert settings.display.locales
    account = json.loads(credentials.read_text(encoding="utf-8"))
    printed = "".join(running.lines)
    assert "PRIVATE KEY" not in printed and account["private_key"][40:80] not in printed
    now = int(time.time())
    token = jwt.encode(
        {
            "iat": now - 30,
            "exp": now + 300,
            "aud": settings.service.display_url,
            "iss": account["client_email"],
            "email": account["client_email"],
            "sub": settings.service.company,
        },
        account["private_key"],
        algorithm="RS256",
    )
    answer = httpx.get(f"{running.url}/v1/api_key", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    key = answer.json()["apiKey"]
    place = httpx.get(f"{running.url}/v1/places/{settings.place.id}", params={"key": key})
    assert place.status_code == 200


def test_simulate_stops_cleanly_on_sigterm(running: Running) -> None:
    running.process.send_signal(signal.SIGTERM)
    assert running.process.wait(60) == 0
    assert running.process.stdout is not None
    assert "Simulator stopped." in running.process.stdout.read()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", running.port)) != 0


def test_faults_from_the_command_line(sim_account: object) -> None:
    with SimulatorServer(account=sim_account, speed=5.0) as sim:  # type: ignore[arg-type]
        port = str(sim.port)
        stalled = lobby_display("simulate", "--port", port, "--fault", "stall", "feed=queues")
        assert stalled.returncode == 0, stalled.stderr
        assert json.loads(stalled.stdout)["fault"] == "stall"
        assert sim.status()["feeds"]["queues"]["stalled"]
        failing = lobby_display(
            "simulate", "--port", port, "--fault", "fail", "count=1", "status=503"
        )
        assert failing.returncode == 0
        assert httpx.get(f"{sim.url}/v1/places", params={"key": sim.issue_key()}).status_code == 503
        unknown = lobby_display("simulate", "--port", port, "--fault", "explode")
        assert unknown.returncode == 1 and "unknown fault" in unknown.stderr
        bad = lobby_display("simulate", "--port", port, "--fault", "stall", "feed=everything")
        assert bad.returncode == 1 and "feed must be" in bad.stderr


def test_simulate_says_so_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = lobby_display("simulate", "--port", port, "--directory", str(tmp_path))
    assert result.returncode == 1
    assert "cannot listen" in result.stderr and "Traceback" not in result.stderr


def test_no_simulator_to_send_a_fault_to() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
    result = lobby_display("simulate", "--port", port, "--fault", "drop")
    assert result.returncode == 1 and "no simulator" in result.stderr

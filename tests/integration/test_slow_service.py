"""A service that answers one byte at a time, or answers too much: every request of the display
has one deadline as a whole and a cap on the bytes of its answer.

httpx's timeouts count per phase (connect, then each read): a server sending a byte every second
never trips them, and once held a key request (and with it every feed waiting for the key) and
`discover` for minutes. Here the simulator is behind the fault proxy dripping its answers, or a
small server on 127.0.0.1 answers 17 MiB: the feeds fail, say why and reconnect once the service
is quick again; `check` and `discover` fail with the route and the bound, within it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.proxy import ThreadedFaultProxy
from lobby_display.updates import Feed
from tests.helpers.feeds_harness import feeds_display, until

Start = Callable[..., SimulatorServer]
#: The deadline of every request in these tests (service.request_timeout), in seconds.
DEADLINE = 2.0
#: A byte every this many seconds: well within the read timeout below, so only the deadline
#: can end a request.
DRIP_EVERY = 0.5
READ_TIMEOUT = 5.0
#: Generous bound for a command to give up (it makes a few requests, each with the deadline).
COMMAND_BOUND = 40.0


@pytest.fixture
def sim(start_simulator: Start) -> SimulatorServer:
    """A simulator whose SSE sends no `retry:` (the feeds' own backoff applies)."""
    return start_simulator(retry_ms=None)


@pytest.fixture
def dripping(sim: SimulatorServer) -> Iterator[ThreadedFaultProxy]:
    """The fault proxy in front of `sim`, sending one byte every `DRIP_EVERY` seconds."""
    with ThreadedFaultProxy(sim.port) as proxy:
        proxy.drip(size=1, delay=DRIP_EVERY)
        yield proxy


async def test_no_feed_stays_stuck_behind_a_key_request_that_drips(
    sim: SimulatorServer,
    dripping: ThreadedFaultProxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The display starts without a key: the three feeds wait on the one request for a key,
    # whose answer comes a byte every half second (a few minutes in all).
    place = {"queues": sim.queue_ids, "counters": sim.queue_ids}
    async with feeds_display(
        sim,
        tmp_path,
        caplog,
        url=dripping.url,
        read_timeout=READ_TIMEOUT,
        request_timeout=DEADLINE,
        place=place,
    ) as shown:

        def errors(feed: Feed) -> list[str]:
            return [report.error for report in shown.screen.failures(feed) if report.error]

        await until(
            lambda: all(errors(feed) for feed in Feed),
            DEADLINE * 5,
            "every feed failing and saying why",
            explain=lambda: {feed.value: shown.screen.path(feed) for feed in Feed},
        )
        for feed in Feed:
            assert f"within {DEADLINE:g} s" in errors(feed)[0], errors(feed)
        dripping.stop_drip()
        await shown.live(timeout=15)
        await shown.settled(timeout=10)


def command(config: Path, name: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run `lobby-display NAME --config CONFIG`; its outcome and the seconds it took."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBBY_DISPLAY_")}
    for variable in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        env.pop(variable, None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "lobby_display", name, "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=COMMAND_BOUND * 2,
        check=False,
    )
    return done, time.monotonic() - started


def slow_config(
    sim: SimulatorServer, proxy: ThreadedFaultProxy, directory: Path, api_key: str | None = None
) -> Path:
    """A config of `sim` through `proxy`, with the deadline of these tests."""
    service = {"read_timeout": READ_TIMEOUT, "request_timeout": DEADLINE}
    return sim.write_config(directory, url=proxy.url, api_key=api_key, service=service)


def test_discover_fails_within_its_bound_naming_the_route(
    sim: SimulatorServer, dripping: ThreadedFaultProxy, tmp_path: Path
) -> None:
    key = sim.issue_key()
    config = slow_config(sim, dripping, tmp_path, api_key=key)
    done, seconds = command(config, "discover")
    assert done.returncode == 1, done.stderr
    assert seconds < COMMAND_BOUND
    assert f"GET /v1/places/{sim.place_id} failed" in done.stderr
    assert f"no complete answer within {DEADLINE:g} s" in done.stderr
    assert key not in done.stderr + done.stdout


def test_check_fails_within_its_bound_at_the_key_request(
    sim: SimulatorServer, dripping: ThreadedFaultProxy, tmp_path: Path
) -> None:
    config = slow_config(sim, dripping, tmp_path)
    done, seconds = command(config, "check")
    assert done.returncode == 1, done.stdout
    assert seconds < COMMAND_BOUND
    (line,) = [line for line in done.stdout.splitlines() if line.lstrip("✗ ").startswith("FAIL")]
    assert "GET /v1/api_key failed" in line and f"within {DEADLINE:g} s" in line, line


# --- an answer too large ------------------------------------------------------------------------


class _Flood(BaseHTTPRequestHandler):
    """Answers every GET with 17 MiB of JSON, without a Content-Length (ended by closing)."""

    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b" " * 65536
        try:
            self.wfile.write(b'{"placeId": "P1", "padding": "')
            for _ in range(17 * 16):
                self.wfile.write(chunk)
            self.wfile.write(b'"}')
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def flood() -> Iterator[str]:
    """A server on 127.0.0.1 answering 17 MiB to everything; its base address."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flood)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_answer_larger_than_the_cap_is_refused_naming_the_route_and_the_limit(
    flood: str, tmp_path: Path
) -> None:
    key = "flood-key-0123456789"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[service]\ndisplay_url = "{flood}"\napi_key = "{key}"\n'
        f'[place]\nid = "P1"\n[state]\ndirectory = "{tmp_path / "state"}"\n'
    )
    config.chmod(0o600)  # it holds a key
    done, _ = command(config, "discover")
    assert done.returncode == 1, done.stderr
    assert "GET /v1/places/P1 answered more than 16 MiB" in done.stderr, done.stderr
    assert key not in done.stderr + done.stdout

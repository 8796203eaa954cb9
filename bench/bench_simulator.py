"""Simulator throughput: ticket events per second that reach an httpx-sse client over HTTP.

The simulator runs in its own process (`lobby-display simulate`), as a real service would; this
process is the client: it opens the current-tickets feed on 127.0.0.1, starts a burst through
`POST /_sim/faults/burst`, and counts the events it receives and parses (JSON), as the display
does. Two measures:

- ceiling: a burst asked at a rate no machine sustains; the receive rate is what the pair can do;
- sustained: a burst at the target rate (1,000 events/s) for several seconds; every event must
  arrive, and the receive rate must match the asked rate.

Run:  .venv/bin/python bench/bench_simulator.py [--runs 5] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import jwt
from httpx_sse import connect_sse

SECTION = "## Simulator throughput"
TARGET_RATE = 1000


@dataclass
class Service:
    url: str
    key: str


@contextmanager
def simulator(queues: int, tickets: int) -> Iterator[Service]:
    """Start `lobby-display simulate` in its own process; yield its address and an API key."""
    with tempfile.TemporaryDirectory(prefix="bench-simulator-") as folder:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lobby_display",
                "simulate",
                "--port",
                "0",
                "--directory",
                folder,
                "--speed",
                "0.001",
                "--queues",
                str(queues),
                "--tickets",
                str(tickets),
                "--heartbeat",
                "5",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            match = re.search(r"at (http://\S+)", first)
            if not match:
                raise RuntimeError(f"the simulator did not start: {first!r}")
            url = match.group(1)
            while "Ctrl-C stops." not in process.stdout.readline():
                pass
            yield Service(url, _api_key(url, Path(folder) / "service-account.json"))
        finally:
            process.terminate()
            process.wait(10)


def _api_key(url: str, credentials: Path) -> str:
    account = json.loads(credentials.read_text(encoding="utf-8"))
    now = int(time.time())
    claims = {
        "iat": now - 30,
        "exp": now + 300,
        "aud": url,
        "iss": account["client_email"],
        "email": account["client_email"],
        "sub": account["company"],
    }
    token = jwt.encode(claims, account["private_key"], algorithm="RS256")
    answer = httpx.get(f"{url}/v1/api_key", headers={"Authorization": f"Bearer {token}"})
    answer.raise_for_status()
    return str(answer.json()["apiKey"])


@dataclass
class Run:
    events: int
    seconds: float

    @property
    def rate(self) -> float:
        return (self.events - 1) / self.seconds if self.seconds > 0 else 0.0


def one_burst(service: Service, rate: float, count: int) -> Run:
    """Open the feed, start a burst, and time the arrival of `count` ticket events."""
    timeout = httpx.Timeout(10.0, read=10.0)
    with (
        httpx.Client(timeout=timeout) as client,
        connect_sse(
            client,
            "GET",
            f"{service.url}/v1/queues/tickets/currents/sse",
            params={"key": service.key},
        ) as source,
    ):
        events = source.iter_sse()
        json.loads(next(events).data)  # the first page
        started = httpx.post(
            f"{service.url}/_sim/faults/burst", params={"rate": rate, "count": count}
        )
        started.raise_for_status()
        received = 0
        first = last = 0.0
        for event in events:
            if not event.data:
                continue
            envelope = json.loads(event.data)
            if envelope.get("resource") != "ticket":
                continue
            last = time.perf_counter()
            if received == 0:
                first = last
            received += 1
            if received >= count:
                break
    return Run(received, last - first)


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


@dataclass
class Place:
    queues: int
    tickets: int
    count: int
    ceiling: list[Run]
    sustained: list[Run]

    def rows(self) -> list[str]:
        ceiling = [run.rate for run in self.ceiling]
        kept = [run.rate for run in self.sustained]
        complete = all(run.events == TARGET_RATE * 5 for run in self.sustained)
        where = f"{self.queues} queues, {self.tickets:,} tickets"
        return [
            f"| {where} | ceiling: {self.count:,} events as fast as possible "
            f"| {statistics.median(ceiling):,.0f}/s | {min(ceiling):,.0f}/s "
            f"| {max(ceiling):,.0f}/s | {len(ceiling)} |",
            f"| {where} | sustained: {TARGET_RATE:,}/s asked for 5 s, all received: "
            f"{'yes' if complete else 'NO'} | {statistics.median(kept):,.0f}/s "
            f"| {min(kept):,.0f}/s | {max(kept):,.0f}/s | {len(kept)} |",
        ]


def measure(runs: int, count: int, queues: int, tickets: int) -> Place:
    """Ceiling and sustained runs against one simulated place."""
    with simulator(queues, tickets) as service:
        one_burst(service, 5000, 500)  # warm up
        ceiling = [one_burst(service, 1_000_000, count) for _ in range(runs)]
        sustained = [one_burst(service, TARGET_RATE, TARGET_RATE * 5) for _ in range(3)]
    return Place(queues, tickets, count, ceiling, sustained)


def report(places: list[Place]) -> str:
    lines = [
        SECTION,
        "",
        "Ticket events per second received and parsed (JSON) by an httpx-sse client from the",
        "current-tickets feed of the simulator, over HTTP on 127.0.0.1. The simulator runs in its",
        "own process (`lobby-display simulate`); each event is a real change of the place (an",
        "arrival, a call, a ticket done), started with `POST /_sim/faults/burst`. The ceiling",
        "asks for more than can be sent, so it shows what the client and server pair can do; the",
        "sustained run asks for the target rate and counts every event.",
        "",
        "| place | measure | median | min | max | runs |",
        "|---|---|---|---|---|---|",
    ]
    for place in places:
        lines.extend(place.rows())
    lines += [
        "",
        f"Machine: {machine()}; load average {os.getloadavg()[0]:.2f} when the run ended"
        " (other work shares the cores: the spread comes from there).",
        "",
        "Reproduce: `.venv/bin/python bench/bench_simulator.py --write docs/benchmarks.md`",
        "(about a minute; `--runs`, `--count` and `--places 5x200,30x10000` change the set-up).",
        "",
    ]
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    """Put `section` into `path`, replacing an earlier version of it and nothing else."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    start = text.find(SECTION)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        following = text.find("\n## ", start + len(SECTION))
        end = len(text) if following < 0 else following + 1
        text = text[:start] + section + ("\n" + text[end:] if following >= 0 else "")
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="ceiling runs per place")
    parser.add_argument("--count", type=int, default=10_000, help="events per ceiling run")
    parser.add_argument(
        "--places", default="5x200,30x10000", help="QUEUESxTICKETS of each place, comma-separated"
    )
    parser.add_argument("--write", type=Path, default=None, help="update this Markdown file")
    args = parser.parse_args(argv)
    places = []
    for spec in args.places.split(","):
        queues, _, tickets = spec.partition("x")
        places.append(measure(args.runs, args.count, int(queues), int(tickets)))
    section = report(places)
    print(section)
    if args.write is not None:
        write_section(args.write, section)
        print(f"written to {args.write}")
    worst = min(statistics.median(run.rate for run in place.ceiling) for place in places)
    return 0 if worst >= TARGET_RATE else 1


if __name__ == "__main__":
    sys.exit(main())

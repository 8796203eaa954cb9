"""`lobby-display simulate`: run the simulator alone, or send a fault to a running one."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from lobby_display.config import ConfigError
from lobby_display.simulator.dialect import Dialect
from lobby_display.simulator.server import (
    CONTROLS,
    FAULTS,
    Simulator,
    SimulatorOptions,
    stop_signals,
)

EXIT_OK = 0
EXIT_PROBLEM = 1


def simulate(args: argparse.Namespace) -> int:
    """Run the simulator until Ctrl-C or SIGTERM; with `--fault`, send a fault and exit."""
    fault: list[str] | None = getattr(args, "fault", None)
    if fault:
        return send_fault(args.host, args.port, fault[0], fault[1:])
    try:
        dialect = Dialect.parse(getattr(args, "dialect", None) or "")
    except ValueError as error:
        print(f"lobby-display simulate: --dialect: {error}", file=sys.stderr)
        return EXIT_PROBLEM
    options: SimulatorOptions = {
        "seed": args.seed,
        "speed": args.speed,
        "host": args.host,
        "port": args.port,
        "queues": getattr(args, "queues", 5),
        "tickets": getattr(args, "tickets", None),
        "timezone": getattr(args, "timezone", "Europe/Paris"),
        "heartbeat": getattr(args, "heartbeat", 15.0),
        "retry_ms": getattr(args, "retry", 3000),
        "hostile": getattr(args, "hostile", False),
        "dialect": dialect,
    }
    directory: Path | None = args.directory
    try:
        return asyncio.run(_serve(options, directory))
    except KeyboardInterrupt:
        return EXIT_OK


async def _serve(options: SimulatorOptions, directory: Path | None) -> int:
    try:
        sim = Simulator(**options)
        await sim.start()
    except OSError as error:
        where = f"{options.get('host')}:{options.get('port')}"
        print(
            f"lobby-display simulate: cannot listen on {where}: {error.strerror}", file=sys.stderr
        )
        return EXIT_PROBLEM
    except (ValueError, KeyError) as error:
        print(f"lobby-display simulate: {error}", file=sys.stderr)
        return EXIT_PROBLEM
    try:
        with stop_signals() as stop:
            folder = directory or Path(tempfile.mkdtemp(prefix="lobby-display-simulator-"))
            try:
                credentials = sim.write_credentials(folder)
                config = sim.write_config(folder)
            except OSError as error:
                print(
                    f"lobby-display simulate: cannot write into {folder}: {error}", file=sys.stderr
                )
                return EXIT_PROBLEM
            except ConfigError as error:
                # A display refuses plain http:// to another machine (the key would travel in
                # clear).
                print(
                    f"lobby-display simulate: no display could use {sim.url}: {error}\n"
                    "  run the simulator on 127.0.0.1 (the default) and the display on this "
                    "machine",
                    file=sys.stderr,
                )
                return EXIT_PROBLEM
            place = sim.place
            print(f"Display service simulator at {sim.url}", flush=False)
            print(
                f"  seed {place.options.seed}, speed {place.speed:g}, {len(place.queues)} queues, "
                f"{len(place.tickets)} current tickets, time zone {place.options.timezone}"
            )
            print(f"  dialect      {sim.dialect.describe()}")
            print(f"  place id     {sim.place_id}  ({sim.company})")
            print(f"  config       {config}")
            print(f"  credentials  {credentials}  (private key, mode 0600)")
            print(f"  display:     lobby-display run --config {config}")
            print(f"  faults:      curl -X POST '{sim.url}/_sim/faults/drop?feed=tickets'")
            print(
                f"               lobby-display simulate --port {sim.port} --fault stall feed=queues"
            )
            print(f"  calls:       lobby-display simulate --port {sim.port} --fault hold on=true")
            print(
                f"               lobby-display simulate --port {sim.port} --fault call label=A031"
            )
            print(
                f"               lobby-display simulate --port {sim.port} --fault capacity queue=1"
            )
            print(f"  state:       {sim.url}/_sim/status   truth: {sim.url}/_sim/truth")
            print("Ctrl-C stops.", flush=True)
            await stop.wait()
    finally:
        await sim.stop()
    print("Simulator stopped.", flush=True)
    return EXIT_OK


def send_fault(host: str, port: int, name: str, params: list[str]) -> int:
    """POST a fault or a control (`call`, `hold`) to the simulator at host:port; print its
    answer. A parameter may be repeated (`label=A031 label=B-12`)."""
    if name not in FAULTS and name not in CONTROLS:
        print(
            f"lobby-display simulate: unknown fault {name!r}; known: {' '.join(FAULTS)} "
            f"(and the controls {' '.join(CONTROLS)})",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    query: list[tuple[str, str]] = []
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            print(f"lobby-display simulate: expected NAME=VALUE, got {item!r}", file=sys.stderr)
            return EXIT_PROBLEM
        query.append((key, value))
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - a name, not a bind
        host = "127.0.0.1"
    route = f"faults/{name}" if name in FAULTS else name
    address = f"http://{host}:{port}/_sim/{urllib.parse.quote(route)}"
    if query:
        address += "?" + urllib.parse.urlencode(query)
    request = urllib.request.Request(address, method="POST", data=b"")  # noqa: S310 - http only
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            answer: Any = json.load(response)
    except urllib.error.HTTPError as error:
        with contextlib.suppress(ValueError):
            body = json.load(error)
            print(
                f"lobby-display simulate: {body.get('error_description', error)}", file=sys.stderr
            )
            return EXIT_PROBLEM
        print(f"lobby-display simulate: HTTP {error.code}", file=sys.stderr)
        return EXIT_PROBLEM
    except (urllib.error.URLError, OSError) as error:
        print(f"lobby-display simulate: no simulator at {host}:{port} ({error})", file=sys.stderr)
        return EXIT_PROBLEM
    print(json.dumps(answer, ensure_ascii=False))
    return EXIT_OK

"""The command line: run, demo, check, discover, simulate, screenshot, place.

Each command lives in the module that owns it; this file only parses arguments and turns the
known failures (a bad config: exit 2; `demo` or `simulate` without the simulator: exit 1) into
messages without tracebacks.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from lobby_display import __version__, frames
from lobby_display.config import ConfigError, load_config

EXIT_OK = 0
EXIT_NOT_INSTALLED = 1
EXIT_BAD_CONFIG = 2
#: What the `simulator` extra adds (its web server): without it, `demo` and `simulate` say so.
SIMULATOR_PACKAGES: Final = frozenset({"starlette", "uvicorn", "click"})


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `lobby-display`."""
    parser = argparse.ArgumentParser(
        prog="lobby-display",
        description="A live queue board for waiting-room TVs.",
    )
    parser.add_argument("--version", action="version", version=f"lobby-display {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="the kiosk display (what the systemd unit starts)")
    run.add_argument("--config", type=Path, required=True, help="the place's TOML file")

    demo = commands.add_parser(
        "demo", help="the display against the embedded simulator; no set-up needed"
    )
    demo.add_argument("--seed", type=int, default=1, help="seed of the simulated place")
    demo.add_argument("--speed", type=float, default=1.0, help="how fast simulated time runs")
    demo.add_argument(
        "--locales", default="", help="comma-separated locales to rotate (default: fr_FR,en_US,...)"
    )
    demo.add_argument(
        "--graphics",
        default="auto",
        choices=["auto", "sixel", "text", "sextants", "quadrants", "half-blocks"],
        help="how the called ticket is drawn (as [display] graphics; default: auto)",
    )
    demo.add_argument(
        "--replay",
        type=Path,
        default=None,
        metavar="FILE",
        help="show a recorded day (lobby-display record, or flight files) instead, in a loop",
    )

    check = commands.add_parser(
        "check", help="validate config and credentials, reach the service, print a report"
    )
    check.add_argument("--config", type=Path, required=True)
    check.add_argument(
        "--feed-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long each feed has to send its first message (default 10)",
    )

    discover = commands.add_parser(
        "discover", help="list the place's queues, counters and endpoints with their ids"
    )
    discover.add_argument("--config", type=Path, required=True)

    simulate = commands.add_parser("simulate", help="run the embedded display service alone")
    simulate.add_argument("--host", default="127.0.0.1")
    simulate.add_argument("--port", type=int, default=8765)
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--speed", type=float, default=1.0)
    simulate.add_argument(
        "--directory", type=Path, default=None, help="where to write credentials and config"
    )
    simulate.add_argument("--queues", type=int, default=5, help="number of queues")
    simulate.add_argument("--tickets", type=int, default=None, help="current tickets at start")
    simulate.add_argument("--timezone", default="Europe/Paris", help="the place's time zone")
    simulate.add_argument("--heartbeat", type=float, default=15.0, help="seconds between pings")
    simulate.add_argument("--retry", type=int, default=3000, help="SSE retry: value (ms)")
    simulate.add_argument("--hostile", action="store_true", help="hostile names and labels")
    simulate.add_argument(
        "--dialect",
        default="",
        metavar="WORDS",
        help="how events are written, comma-separated: partial, bare-tickets, ticket-maps, "
        "counter-maps, legacy-names, dates=spec|iso|service, first-page=N, or all "
        "(default: as the spec's samples; see README)",
    )
    simulate.add_argument(
        "--fault",
        nargs="+",
        metavar="NAME [KEY=VALUE]",
        help="send a fault to the simulator running at --host/--port and exit "
        "(e.g. --fault drop feed=tickets; see README)",
    )

    place = commands.add_parser(
        "place",
        help="put this screen's window full screen on its TV "
        "(several screens on one PC: lobby-display-screen@.service)",
    )
    place.add_argument("--config", type=Path, required=True)
    place.add_argument("--app-id", required=True, help="the window's app id (foot --app-id)")
    place.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long to wait for the window (default 30)",
    )

    install = commands.add_parser(
        "install", help="set up a screen on this PC in one step (as root; docs/deployment.md)"
    )
    install.add_argument("name", help="the screen's name: /etc/lobby-display/NAME.toml, unit @NAME")
    install.add_argument("--config", type=Path, required=True, help="the screen's TOML file")
    install.add_argument("--credentials", type=Path, help="the service-account JSON file")
    install.add_argument("--console", action="store_true", help="the tty1 unit, not the kiosk")
    install.add_argument("--wall", action="store_true", help="a screen of the wall (several TVs)")
    install.add_argument("--resolution", metavar="WxH", help="the TV's size (default: read)")
    install.add_argument("--no-packages", action="store_true", help="install no Debian package")
    install.add_argument("--dry-run", action="store_true", help="print every step, change nothing")
    install.add_argument("--root", type=Path, metavar="DIR", help="write into the tree DIR")
    uninstall = commands.add_parser("uninstall", help="disable and remove what install wrote")
    uninstall.add_argument("name")
    uninstall.add_argument("--purge", action="store_true", help="remove its state directory too")
    uninstall.add_argument("--dry-run", action="store_true", help="print the steps, change nothing")
    uninstall.add_argument("--root", type=Path, metavar="DIR", help="remove from the tree DIR")

    screenshot = commands.add_parser(
        "screenshot", help="save an SVG or PNG of what the screen would show now"
    )
    screenshot.add_argument("--config", type=Path, required=True)
    screenshot.add_argument("--output", type=Path, required=True, help="FILE.svg or FILE.png")
    screenshot.add_argument(
        "--size",
        type=_size,
        default=(160, 45),
        metavar="WxH",
        help="columns x lines when no display runs and the screen is rendered here (160x45)",
    )

    report = commands.add_parser(
        "report",
        help="a support bundle (tar.gz): flight recorder, config without secrets, "
        "log, screenshot, versions",
    )
    report.add_argument("--config", type=Path, required=True)
    report.add_argument("--out", type=Path, required=True, help="FILE.tar.gz")

    status = commands.add_parser(
        "status", help="the running screen's health (feeds live, last messages, reconnections)"
    )
    status.add_argument("--config", type=Path, required=True)
    status.add_argument("--json", action="store_true", help="print it as JSON, for scripts")

    record = commands.add_parser(
        "record", help="record the place's feeds and REST answers into a file (no secrets)"
    )
    record.add_argument("--config", type=Path, required=True)
    record.add_argument("--out", type=Path, required=True, help="FILE.jsonl.gz")
    record.add_argument(
        "--minutes", type=float, default=None, help="stop after this long (default: at Ctrl-C)"
    )

    replay = commands.add_parser(
        "replay", help="serve a recording as a display service (URL, credentials, config)"
    )
    replay.add_argument("file", type=Path, help="a recording, or a flight recorder's folder")
    replay.add_argument("--host", default="127.0.0.1")
    replay.add_argument("--port", type=int, default=8765)
    replay.add_argument("--speed", type=float, default=1.0, help="how fast the day runs")
    replay.add_argument("--loop", action="store_true", help="start again at the end")
    replay.add_argument(
        "--start-now",
        action="store_true",
        help="start the day at once (default: when the first screen connects)",
    )
    replay.add_argument(
        "--directory", type=Path, default=None, help="where to write credentials and config"
    )
    return parser


def _size(text: str) -> tuple[int, int]:
    """`--size WxH`: columns and lines."""
    width, _, height = text.lower().partition("x")
    if not (width.isdigit() and height.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 160x45 (columns x lines)")
    columns, lines = int(width), int(height)
    if not (20 <= columns <= 1000 and 5 <= lines <= 500):
        raise argparse.ArgumentTypeError(f"{text!r}: give 20 to 1000 columns and 5 to 500 lines")
    return columns, lines


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `lobby-display` and `python -m lobby_display`."""
    frames.compose_promptly()
    frames.write_promptly()
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return EXIT_BAD_CONFIG
    except KeyboardInterrupt:
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    command: str = args.command
    if command in ("simulate", "demo", "replay") and not simulator_installed(command):
        return EXIT_NOT_INSTALLED
    if command == "simulate":
        from lobby_display.simulator.cli import simulate

        return simulate(args)
    if command == "demo":
        from lobby_display.demo import demo

        return demo(args)
    if command == "replay":
        from lobby_display.simulator.replay import replay_command

        return replay_command(args)
    if command in ("install", "uninstall"):
        from lobby_display.ops.install import install_command, uninstall_command

        return (install_command if command == "install" else uninstall_command)(args)
    if command == "report":
        # Not after loading the config: a bundle is wanted most when it does not load.
        from lobby_display.ops.bundle import report_command

        return report_command(args.config, args.out)
    settings = load_config(args.config)
    if command == "run":
        from lobby_display.kiosk import run

        return run(settings)
    if command == "check":
        from lobby_display.ops.check import check

        return check(settings, feed_timeout=args.feed_timeout)
    if command == "discover":
        from lobby_display.ops.discover import discover

        return discover(settings)
    if command == "place":
        from lobby_display.wall import place

        return place(settings, args.app_id, timeout=args.timeout)
    if command == "screenshot":
        from lobby_display.ops.screenshot import screenshot

        return screenshot(settings, args.output, size=args.size)
    if command == "status":
        from lobby_display.ops.status import status

        return status(settings, as_json=args.json)
    if command == "record":
        from lobby_display.ops.record import record

        return record(settings, args.out, args.minutes)
    raise AssertionError(f"unhandled command {command}")


def simulator_installed(command: str) -> bool:
    """True when the simulator can be imported; else False, once `command` said how to install
    it (`lobby-display[simulator]`: its web server, which a kiosk does without)."""
    try:
        importlib.import_module("lobby_display.simulator")
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in SIMULATOR_PACKAGES:
            raise
        print(
            f"lobby-display {command}: the simulator is not installed (no {error.name}): "
            "pip install 'lobby-display[simulator]'",
            file=sys.stderr,
        )
        return False
    return True

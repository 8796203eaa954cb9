"""`lobby-display demo`: the embedded simulator on 127.0.0.1 and the display against it.

Nothing to set up: the simulator writes its own credentials and config into a temporary
directory and the display runs as the kiosk does, with a banner saying the data is made up.
With `--replay FILE` the service is a recorded day, served round and round.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from lobby_display.config import LOCALES, ConfigError, load_config
from lobby_display.graphics.terminal import detect
from lobby_display.kiosk import Kiosk
from lobby_display.recording import RecordingError, read_recording
from lobby_display.service import setup_logging
from lobby_display.source import feeds_source

#: Locales shown by default: all nine, so a visitor of the demo sees every script.
DEMO_LOCALES = LOCALES
DEMO_ROTATION_SECONDS = 8
#: The keys that end the demo: Ctrl-C, as in any terminal program, and the kiosk's chord.
DEMO_QUIT_KEYS = "ctrl+c,ctrl+q"


def demo_locales(text: str) -> list[str]:
    """The `--locales` option: comma-separated codes, or every locale when empty."""
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    return chosen or list(DEMO_LOCALES)


def demo(args: argparse.Namespace) -> int:
    """Run the demo until the quit key (ctrl+q) or Ctrl-C."""
    from lobby_display.app import LobbyApp
    from lobby_display.simulator import SimulatorServer
    from lobby_display.simulator.replay import ReplayServer

    replay: Path | None = getattr(args, "replay", None)
    with tempfile.TemporaryDirectory(prefix="lobby-display-demo-") as folder:
        directory = Path(folder)
        server: SimulatorServer | ReplayServer
        if replay is not None:
            # A recorded day (`lobby-display record`), round and round, in its own locales.
            try:
                server = ReplayServer(read_recording(replay), speed=args.speed, loop=True, port=0)
            except (RecordingError, ValueError) as error:
                print(f"lobby-display demo: {error}", file=sys.stderr)
                return 1
        else:
            server = SimulatorServer(seed=args.seed, speed=args.speed, port=0)
        try:
            server.start()
        except OSError as error:
            print(f"lobby-display demo: cannot start the simulator: {error}", file=sys.stderr)
            return 1
        try:
            display: dict[str, object] = {
                # Ctrl-C quits like any terminal program (the status line says so);
                # the kiosk keeps its single quit chord.
                "quit_key": DEMO_QUIT_KEYS,
                "rotation_seconds": DEMO_ROTATION_SECONDS,
                "graphics": getattr(args, "graphics", "auto"),
            }
            state = {"directory": str(directory / "state")}
            log = {"file": str(directory / "demo.log")}
            if isinstance(server, ReplayServer):
                if getattr(args, "locales", ""):
                    display["locales"] = demo_locales(args.locales)
                config = server.write_config(directory, display=display, state=state, log=log)
            else:
                config = server.call(
                    lambda sim: sim.write_config(
                        directory,
                        locales=demo_locales(getattr(args, "locales", "")),
                        display=display,
                        state=state,
                        log=log,
                    )
                )
            try:
                settings = load_config(config, environ={})
            except ConfigError as error:  # a bad --locales value
                print(f"lobby-display demo: {error}", file=sys.stderr)
                return 2
            setup_logging(settings)
            kiosk = Kiosk(settings)
            graphics = detect(settings.display.graphics)
            app = LobbyApp(
                settings,
                feeds_source(settings),
                hooks=kiosk.hooks(),
                banner="demo",
                graphics=graphics,
            )
            app.run()
            return app.return_code or 0
        finally:
            server.stop()

"""An unexpected error that stops the screen: the terminal (the TV, under the console unit)
gets one short line, never the traceback or its local variables; those go to the log."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from lobby_display.app import FATAL_MESSAGE
from tests.helpers.terminal import TerminalProgram

#: The real screen, whose timer callback fails with a local variable worth hiding.
PROGRAM = textwrap.dedent(
    """
    import sys
    from lobby_display.app import AppHooks, LobbyApp
    from lobby_display.config import settings_from_dict
    from lobby_display.service import setup_logging

    settings = settings_from_dict(
        {
            "service": {"display_url": "http://127.0.0.1:9", "api_key": "k-0123456789"},
            "place": {"id": "P1"},
            "display": {"locales": ["en_US"]},
            "log": {"file": sys.argv[1]},
        },
        environ={},
    )
    setup_logging(settings)

    def boom():
        local_detail = "LOCAL-VARIABLE-VALUE"
        raise RuntimeError("the screen broke " + local_detail[:5])

    def ready():
        app.set_timer(0.5, boom)

    app = LobbyApp(settings, hooks=AppHooks(ready=ready))
    app.run()
    sys.exit(app.return_code or 0)
    """
)


def test_a_fatal_error_shows_one_line_and_logs_the_traceback(tmp_path: Path) -> None:
    log_file = tmp_path / "display.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "LOBBY_DISPLAY_"))}
    env["TEXTUAL_ANIMATIONS"] = "none"
    with TerminalProgram(
        [sys.executable, "-c", PROGRAM, str(log_file)], env=env, rows=30, columns=100
    ) as program:
        run = program.wait(30)
    shown = run.output.decode("utf-8", "replace")
    assert run.returncode == 1
    assert "Traceback" not in shown and "LOCAL-VARIABLE-VALUE" not in shown
    assert "boom" not in shown
    assert FATAL_MESSAGE.split(";")[0] in " ".join(shown.split())
    logged = log_file.read_text()
    assert "Traceback" in logged and "RuntimeError: the screen broke LOCAL" in logged
    assert ", in boom" in logged  # where it failed

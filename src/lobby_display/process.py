"""The display process's signals and files: stop, reload, its PID file, a screenshot on request.

The kiosk installs these on the screen's event loop; the screen knows none of them. SIGTERM and
SIGINT end the screen cleanly, SIGHUP reloads the configuration, SIGUSR1 writes what the screen
shows for `lobby-display screenshot` (this is the display's half of that command).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from lobby_display import terminal_loss
from lobby_display.config import ConfigError, Settings, load_config
from lobby_display.files import write_atomically

log = logging.getLogger(__name__)

#: File in `$RUNTIME_DIRECTORY` holding the PID that handles SIGHUP. In the kiosk unit the main
#: PID is cage's, so `ExecReload=` signals the PID in this file instead.
PID_FILE_NAME: Final = "app.pid"
#: File a running display writes when it gets SIGUSR1 (next to its PID file under systemd).
SCREENSHOT_NAME: Final = "screenshot.svg"


# ---------------------------------------------------------------------------------------------
# Stop and reload


def install_signal_handlers(
    loop: asyncio.AbstractEventLoop,
    on_exit: Callable[[], object],
    on_reload: Callable[[], object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Callable[[], None]:
    """SIGTERM and SIGINT call `on_exit`; SIGHUP calls `on_reload`. Returns an undo function.

    Call it from inside the running loop. A SIGHUP that comes from the terminal going away (the
    terminal emulator died) calls `on_exit` instead: there is nothing left to draw on. Without
    `on_reload`, SIGHUP is ignored rather than killing the screen. A plain `signal.signal`
    handler hangs under Textual: these go through `loop.add_signal_handler`.

    Under systemd (`$RUNTIME_DIRECTORY` set) the process's PID is written to `app.pid` there,
    so the kiosk unit's `ExecReload=` can reach this process rather than cage.
    """
    terminals = [fd for fd in (0, 1, 2) if _isatty(fd)]

    def leave(name: str) -> None:
        log.info("%s received: leaving", name)
        on_exit()

    def hangup() -> None:
        if terminals and not all(_isatty(fd) for fd in terminals):
            log.info("SIGHUP received and the terminal is gone: leaving")
            on_exit()
        elif on_reload is None:
            log.info("SIGHUP received: nothing to reload")
        else:
            log.info("SIGHUP received: reloading the configuration")
            on_reload()

    loop.add_signal_handler(signal.SIGTERM, leave, "SIGTERM")
    loop.add_signal_handler(signal.SIGINT, leave, "SIGINT")
    loop.add_signal_handler(signal.SIGHUP, hangup)
    pid_file = _write_pid_file(environ)

    def undo() -> None:
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(number)
        if pid_file is not None:
            with contextlib.suppress(OSError):
                if pid_file.read_text().strip() == str(os.getpid()):
                    pid_file.unlink()

    return undo


def take_signals(
    on_exit: Callable[[], object],
    on_reload: Callable[[], object] | None,
    *,
    terminal: bool,
) -> Callable[[], None] | None:
    """The screen's signal handling, from inside its running loop; an undo function.

    `install_signal_handlers`, and for a screen on a `terminal` the exits that do not wait on
    the loop (`terminal_loss.guard`: a lost terminal, a SIGTERM while the loop is stuck
    writing). None when signals cannot be handled here (not the main thread): logged, and the
    screen still runs.
    """
    try:
        loop = asyncio.get_running_loop()
        undo_loop = install_signal_handlers(loop, on_exit, on_reload)
        undo_guard = (
            terminal_loss.guard(on_exit, call_soon=loop.call_soon_threadsafe) if terminal else None
        )
    except (NotImplementedError, RuntimeError, ValueError) as error:
        log.warning("signal handlers not installed: %s", error)
        return None

    def undo() -> None:
        if undo_guard is not None:
            undo_guard()
        undo_loop()

    return undo


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _write_pid_file(environ: Mapping[str, str] | None) -> Path | None:
    env = os.environ if environ is None else environ
    directory = env.get("RUNTIME_DIRECTORY", "").split(":", 1)[0]
    if not directory:
        return None
    path = Path(directory) / PID_FILE_NAME
    try:
        partial = path.with_suffix(".tmp")
        partial.write_text(f"{os.getpid()}\n")
        partial.replace(path)
    except OSError as error:
        log.warning("cannot write %s (%s): systemctl reload will not reach the screen", path, error)
        return None
    return path


def reload_config(
    path: Path | str | None, current: Settings, environ: Mapping[str, str] | None = None
) -> tuple[Settings, str | None]:
    """Read the config file again: `(new settings, None)`, or `(current, why)` when it is bad.

    `path` defaults to the file `current` came from. A bad file never replaces working settings:
    the screen goes on as before and the reason (every problem, with its key) is logged.
    """
    source = Path(path) if path is not None else current.source
    if source is None:
        why = "no configuration file to reload (the settings did not come from a file)"
        log.warning("reload refused: %s", why)
        return current, why
    try:
        fresh = load_config(source, environ)
    except ConfigError as error:
        log.warning("reload refused, keeping the running configuration: %s", error)
        return current, str(error)
    changed = changed_keys(current, fresh)
    if changed:
        log.info("configuration reloaded from %s; changed: %s", source, ", ".join(changed))
    else:
        log.info("configuration reloaded from %s; nothing changed", source)
    return fresh, None


def changed_keys(old: Settings, new: Settings) -> list[str]:
    """Dotted names of the keys whose values differ (`display.locales`), never the values."""
    before = _flatten(old.model_dump())
    after = _flatten(new.model_dump())
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


# ---------------------------------------------------------------------------------------------
# Screenshots on request


def screenshot_signal_path(settings: Settings, environ: Mapping[str, str] | None = None) -> Path:
    """Where a running display writes its screenshot on SIGUSR1.

    Under systemd, next to its PID file in `$RUNTIME_DIRECTORY` (the one directory the display
    and the command, run from a shell, agree on); elsewhere (no PID file, so no command will
    ask) in the state directory, for whoever sends the signal by hand.
    """
    env = os.environ if environ is None else environ
    runtime = env.get("RUNTIME_DIRECTORY", "").split(":", 1)[0]
    if runtime:
        return Path(runtime) / SCREENSHOT_NAME
    return settings.state_directory(env) / SCREENSHOT_NAME


def export_screen(export: Callable[[], str], path: Path) -> None:
    """Write the SVG `export()` gives (what the screen shows now) to `path`, atomically and for
    its owner only. A failure to write raises OSError."""
    write_atomically(path, export())


def answer_screenshots(export: Callable[[], str], where: Callable[[], Path]) -> None:
    """SIGUSR1, from inside the screen's running loop: `export_screen(export, where())`.

    A file that cannot be written is logged and the screen carries on. Without signals here
    (not the main thread) nothing is installed.
    """

    def answer() -> None:
        path = where()
        try:
            export_screen(export, path)
        except OSError as error:
            log.warning("cannot write the screenshot %s: %s", path, error.strerror or error)

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, answer)


__all__ = [
    "PID_FILE_NAME",
    "SCREENSHOT_NAME",
    "answer_screenshots",
    "changed_keys",
    "export_screen",
    "install_signal_handlers",
    "reload_config",
    "screenshot_signal_path",
    "take_signals",
]

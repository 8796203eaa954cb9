"""The one door `install` and `uninstall` open onto the machine: the commands they run (apt-get,
dpkg-query, systemd-sysusers, systemctl, systemd-run) and what they ask systemd.

`System.run` turns a missing program or a failed command into a `SystemError_` naming it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

#: systemd makes this directory when it runs as PID 1 (what sd_booted() tests).
SYSTEMD_RUNTIME: Final = Path("/run/systemd/system")
#: How long a unit has to report READY=1 (its TimeoutStartSec= is 60 s; a restart after a
#: crash adds RestartSec=5).
READY_TIMEOUT: Final = 90.0


class SystemError_(Exception):  # (not the builtin SystemError)
    """A command could not run or failed; the message says which and why."""


class System:
    """Runs commands for the installer; `root` is the tree under --root (None: this machine)."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        out: TextIO | None = None,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        systemd_runtime: Path = SYSTEMD_RUNTIME,
    ) -> None:
        self.root = root
        self.systemd_runtime = systemd_runtime
        self.out = out if out is not None else sys.stdout
        self.environ = dict(os.environ if environ is None else environ)
        self.sleep = sleep

    # ----------------------------------------------------------------------------------------
    # Running

    def run(
        self,
        argv: Sequence[str],
        *,
        capture: bool = True,
        ok_codes: Sequence[int] = (0,),
        environ: Mapping[str, str] | None = None,
        timeout: float | None = 600,
    ) -> subprocess.CompletedProcess[str]:
        """Run `argv`; its output is captured (or shown, `capture=False`). Raises
        `SystemError_` when the program is missing or exits with a code not in `ok_codes`."""
        env = dict(self.environ)
        env.update(environ or {})
        try:
            if capture:
                result = subprocess.run(  # noqa: S603  (our own commands, no shell)
                    list(argv),
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=timeout,
                    stdin=subprocess.DEVNULL,
                )
            else:
                self.out.flush()
                result = subprocess.run(  # noqa: S603  (our own commands, no shell)
                    list(argv), text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL
                )
        except FileNotFoundError:
            raise SystemError_(
                f"{argv[0]}: not installed (needed to run: {_shown(argv)})"
            ) from None
        except PermissionError:
            raise SystemError_(f"{argv[0]}: permission denied (run as root)") from None
        except subprocess.TimeoutExpired:
            raise SystemError_(f"{_shown(argv)}: no answer within {timeout:.0f} s") from None
        if result.returncode not in ok_codes:
            said = ((result.stderr or "") + (result.stdout or "")).strip() if capture else ""
            tail = "\n".join(said.splitlines()[-6:])
            raise SystemError_(
                f"{_shown(argv)} failed (exit {result.returncode})" + (f":\n{tail}" if tail else "")
            )
        return result

    def require_systemd(self, what: str) -> None:
        """Raise unless systemd runs this machine (PID 1) and systemctl answers."""
        if not self.systemd_runtime.is_dir():
            raise SystemError_(
                f"cannot {what}: systemd is not running on this machine (PID 1 is not systemd). "
                "Install on the screen's PC itself, or write a tree with --root DIR"
            )

    # ----------------------------------------------------------------------------------------
    # Packages

    def missing_packages(self, packages: Sequence[str]) -> list[str]:
        """Those of `packages` that dpkg does not list as installed."""
        result = self.run(
            ["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
            ok_codes=(0, 1),
        )
        installed = {
            line.split()[0]
            for line in result.stdout.splitlines()
            if line.split()[1:] == ["installed"]
        }
        return [package for package in packages if package not in installed]

    def install_packages(self, packages: Sequence[str]) -> None:
        """apt-get update, then install `packages` without recommends (output shown)."""
        quiet = {"DEBIAN_FRONTEND": "noninteractive"}
        self.run(["apt-get", "update", "-q"], capture=False, environ=quiet)
        self.run(
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
            capture=False,
            environ=quiet,
        )

    # ----------------------------------------------------------------------------------------
    # systemd

    def systemctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        """systemctl on unit files (enable, disable, mask, unmask): this machine's, or the
        tree's with --root (which needs no running systemd)."""
        prefix = ["systemctl", f"--root={self.root}"] if self.root is not None else ["systemctl"]
        return self.run([*prefix, *args])

    def manager(self, *args: str) -> subprocess.CompletedProcess[str]:
        """systemctl asking the running systemd (daemon-reload, start, restart, stop)."""
        self.require_systemd(f"run systemctl {' '.join(args)}")
        return self.run(["systemctl", *args])

    def unit_file_state(self, unit: str) -> str:
        """`systemctl is-enabled`'s word for `unit` (enabled, disabled, masked, ...; "" when
        the unit is not known). Read from the files, so it works under --root too."""
        prefix = ["systemctl", f"--root={self.root}"] if self.root is not None else ["systemctl"]
        try:
            result = self.run([*prefix, "is-enabled", unit], ok_codes=range(0, 256))
        except SystemError_:
            return ""
        words = result.stdout.split()
        return words[0] if words else ""

    def sysusers(self, config: Path) -> None:
        """systemd-sysusers for the one file (creates the user and its groups)."""
        argv = ["systemd-sysusers"]
        if self.root is not None:
            argv.append(f"--root={self.root}")
        self.run([*argv, str(config)])

    def show(self, unit: str) -> dict[str, str]:
        """ActiveState, SubState and StatusText of `unit`."""
        self.require_systemd(f"ask systemd about {unit}")
        result = self.run(
            ["systemctl", "show", "-p", "ActiveState,SubState,StatusText,Result", unit]
        )
        state = {}
        for line in result.stdout.splitlines():
            key, _, value = line.partition("=")
            state[key] = value
        return state

    def is_active(self, unit: str) -> bool:
        """Whether `unit` is active (running) now."""
        return self.show(unit).get("ActiveState") == "active"

    def run_as_unit(self, properties: Sequence[str], argv: Sequence[str]) -> int:
        """Run `argv` the way a unit with `properties` would (systemd-run), its output shown;
        its exit code."""
        self.require_systemd("run a command as the unit would (systemd-run)")
        command = ["systemd-run", "--pipe", "--wait", "--quiet", "--collect"]
        for prop in properties:
            command += ["-p", prop]
        result = self.run([*command, *argv], capture=False, ok_codes=range(0, 256))
        return result.returncode

    def wait_ready(self, unit: str, timeout: float = READY_TIMEOUT) -> dict[str, str]:
        """Wait until `unit` is active and running (its READY=1 came); its state. Raises when it
        fails or does not get there within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.show(unit)
            active, sub = state.get("ActiveState", ""), state.get("SubState", "")
            if active == "active" and sub == "running":
                return state
            if active == "failed":
                raise SystemError_(
                    f"{unit} failed ({state.get('Result', '?')}): see journalctl -u {unit}"
                )
            if time.monotonic() >= deadline:
                raise SystemError_(
                    f"{unit} is not ready after {timeout:.0f} s ({active}/{sub}): "
                    f"see journalctl -u {unit}"
                )
            self.sleep(0.5)


def _shown(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(part) for part in argv)

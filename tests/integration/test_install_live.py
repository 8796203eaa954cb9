"""`lobby-display install`'s steps that need a running systemd, against stand-ins for it.

This machine has no running systemd (PID 1 is something else), so `systemctl start`, `show` and
`systemd-run` cannot be run for real here. These tests put stand-in `systemctl` and
`systemd-run` programs first on $PATH (the installer's commands go through them exactly as on a
screen's PC; unit-file verbs with --root go on to the real systemctl) and write into a tree, to
check what the installer asks of systemd: daemon-reload after new units, `check` run as the
unit would (its user, credentials, state directory), enable, start, a restart after a new
config, nothing at all on a second run, the status line once READY, and a failing check or unit
stopping the install with the files of the run put back. Without any systemd the install says
so, with no traceback.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from lobby_display.ops.install import KIOSK, SCREEN, Request, install
from lobby_display.ops.system import System
from tests.helpers.needs import needs

pytestmark = [needs("systemd-sysusers", "systemd"), needs("systemctl", "systemd")]

FAKE_SYSTEMCTL = """#!{python}
# Stand-in for systemctl: unit-file verbs with --root go to the real one; the manager's verbs
# (daemon-reload, start, restart, stop, show) are played from a small state file.
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(["systemctl", *args]) + "\\n")
if any(a.startswith("--root=") for a in args):
    os.execv("/usr/bin/systemctl", ["systemctl", *args])
path = os.environ["FAKE_STATE"]
state = json.load(open(path)) if os.path.exists(path) else {{}}
verb, units = args[0], [a for a in args[1:] if not a.startswith("-")]
if verb in ("start", "restart"):
    for unit in units:
        failing = unit == os.environ.get("FAKE_FAILING_UNIT")
        state[unit] = "failed" if failing else "active"
elif verb == "stop":
    for unit in units:
        state[unit] = "inactive"
elif verb == "show":
    now = state.get(units[-1], "inactive")
    sub = {{"active": "running", "failed": "failed"}}.get(now, "dead")
    result = "exit-code" if now == "failed" else "success"
    status = "tickets live, queues live, counters live" if now == "active" else ""
    print(f"ActiveState={{now}}\\nSubState={{sub}}\\nResult={{result}}\\nStatusText={{status}}")
json.dump(state, open(path, "w"))
"""
FAKE_SYSTEMD_RUN = """#!{python}
# Stand-in for systemd-run: says what it was asked and answers as `check` would.
import json, os, sys
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(["systemd-run", *sys.argv[1:]]) + "\\n")
code = int(os.environ.get("FAKE_CHECK_EXIT", "0"))
print("check: " + ("all checks passed" if code == 0 else "the service refused the credentials"))
sys.exit(code)
"""
CONFIG = """\
[service]
display_url = "https://display.example.net"
credentials = "/etc/lobby-display/service-account.json"
company = "Example Company"

[place]
id = "P1"

[display]
locales = {locales}
"""


class Machine:
    """A tree, stand-ins for systemd's commands on $PATH, and what they were asked."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tree = tmp_path / "tree"
        self.tree.mkdir()
        self.runtime = tmp_path / "run-systemd-system"  # what systemd makes when it runs
        self.runtime.mkdir()
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name, text in (("systemctl", FAKE_SYSTEMCTL), ("systemd-run", FAKE_SYSTEMD_RUN)):
            program = bin_dir / name
            program.write_text(text.format(python=sys.executable))
            program.chmod(0o755)
        self.log = tmp_path / "calls.jsonl"
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        monkeypatch.setenv("FAKE_STATE", str(tmp_path / "state.json"))
        monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/usr/sbin:/bin:/sbin")
        self.config = tmp_path / "hall.toml"

    def write_config(self, locales: list[str]) -> None:
        self.config.write_text(CONFIG.format(locales=json.dumps(locales)))
        self.config.chmod(0o600)

    def install(self, credentials: Path | None = None, **options: object) -> tuple[int, str]:
        """Run the installer with its live steps; exit code and output; the calls start afresh."""
        self.log.unlink(missing_ok=True)
        out = io.StringIO()
        system = System(self.tree, out=out, systemd_runtime=self.runtime, sleep=lambda _: None)
        request = Request(
            name="hall",
            config=self.config,
            credentials=credentials,
            root=self.tree,
            packages=False,
            live_under_root=True,
            **options,  # type: ignore[arg-type]
        )
        code = install(request, out=out, system=system)
        return code, out.getvalue()

    def calls(self, program: str = "systemctl") -> list[list[str]]:
        """The manager's verbs asked (unit-file verbs under --root left out)."""
        if not self.log.exists():
            return []
        lines = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [
            line[1:]
            for line in lines
            if line[0] == program and not any(a.startswith("--root=") for a in line)
        ]


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    return Machine(tmp_path, monkeypatch)


UNIT = "lobby-display-kiosk@hall.service"


def test_first_install_checks_as_the_unit_then_enables_starts_and_shows_the_status(
    machine: Machine, service_account_file: Path
) -> None:
    machine.write_config(["en_US"])
    code, out = machine.install(service_account_file)
    assert code == 0, out
    verbs = [call for call in machine.calls() if call[0] != "show"]
    assert verbs == [["daemon-reload"], ["start", UNIT]]
    (check,) = machine.calls("systemd-run")
    properties = [check[i + 1] for i, arg in enumerate(check) if arg == "-p"]
    assert properties == [
        "User=lobby-display",
        "StateDirectory=lobby-display/hall",
        "LoadCredential=service-account.json:/etc/lobby-display/service-account.json",
    ]
    assert check[-4:] == [
        "/opt/lobby-display/.venv/bin/lobby-display",
        "check",
        "--config",
        "/etc/lobby-display/hall.toml",
    ]
    assert "--pipe" in check and "--wait" in check
    # check ran after the files were in place and before the unit was enabled
    assert out.index("check hall as its unit would") > out.index("write /etc/lobby-display/hall")
    assert out.index("enable lobby-display-kiosk@hall") > out.index("check hall as its unit")
    assert (
        'lobby-display-kiosk@hall.service: active (running), Status: "tickets live, queues live, '
        'counters live"' in out
    )


def test_a_second_run_asks_systemd_nothing_but_the_status(
    machine: Machine, service_account_file: Path
) -> None:
    machine.write_config(["en_US"])
    assert machine.install(service_account_file)[0] == 0
    code, out = machine.install(service_account_file)
    assert code == 0, out
    assert {call[0] for call in machine.calls()} == {"show"}
    assert machine.calls("systemd-run") == []
    assert "nothing to change: everything was already in place" in out
    assert "active (running)" in out


def test_a_new_config_is_checked_and_the_running_unit_restarted(
    machine: Machine, service_account_file: Path
) -> None:
    machine.write_config(["en_US"])
    assert machine.install(service_account_file)[0] == 0
    machine.write_config(["ja_JP", "en_US"])
    code, out = machine.install()
    assert code == 0, out
    verbs = [call for call in machine.calls() if call[0] != "show"]
    assert verbs == [["restart", UNIT]]  # no unit file changed: no daemon-reload
    assert len(machine.calls("systemd-run")) == 1
    assert "Noto Sans Mono CJK JP" in (machine.tree / "etc/lobby-display/hall.foot.ini").read_text()


def test_a_failing_check_stops_the_install_and_puts_the_files_back(
    machine: Machine,
    service_account_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    machine.write_config(["en_US"])
    monkeypatch.setenv("FAKE_CHECK_EXIT", "1")
    code, out = machine.install(service_account_file)
    assert code == 1
    # check's own report reaches the installer's terminal
    assert "the service refused the credentials" in capfd.readouterr().out
    assert "lobby-display check found a problem (its report is above)" in out
    assert "put back as they were" in out
    assert not (machine.tree / "etc/lobby-display").exists()
    assert not (machine.tree / f"etc/systemd/system/{KIOSK.template}").exists()
    assert [call for call in machine.calls() if call[0] != "show"] == [["daemon-reload"]]


def test_a_failing_check_keeps_the_running_screens_files(
    machine: Machine, service_account_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine.write_config(["en_US"])
    assert machine.install(service_account_file)[0] == 0
    before = (machine.tree / "etc/lobby-display/hall.toml").read_bytes()
    machine.write_config(["fr_FR"])
    monkeypatch.setenv("FAKE_CHECK_EXIT", "1")
    code, out = machine.install()
    assert code == 1, out
    assert (machine.tree / "etc/lobby-display/hall.toml").read_bytes() == before
    assert not [call for call in machine.calls() if call[0] in ("start", "restart")]


def test_a_unit_that_fails_to_start_is_reported_with_where_to_look(
    machine: Machine, service_account_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine.write_config(["en_US"])
    monkeypatch.setenv("FAKE_FAILING_UNIT", UNIT)
    code, out = machine.install(service_account_file)
    assert code == 1
    assert f"{UNIT} failed (exit-code): see journalctl -u {UNIT}" in out


def test_a_wall_screen_restarts_the_wall_when_its_files_change(
    machine: Machine, service_account_file: Path
) -> None:
    machine.write_config(["en_US"])
    assert machine.install(service_account_file, form=SCREEN)[0] == 0
    screen = "lobby-display-screen@hall.service"
    assert [c for c in machine.calls() if c[0] != "show"] == [["daemon-reload"], ["start", screen]]
    # The wall runs (started with its screen); a changed sway.conf restarts it.
    state = json.loads(Path(machine.log.parent / "state.json").read_text())
    state["lobby-display-wall.service"] = "active"
    Path(machine.log.parent / "state.json").write_text(json.dumps(state))
    sway = machine.tree / "etc/lobby-display/sway.conf"
    sway.write_text(sway.read_text() + "# edited\n")
    code, out = machine.install(form=SCREEN)
    assert code == 0, out
    verbs = [c for c in machine.calls() if c[0] != "show"]
    assert verbs == [
        ["daemon-reload"],
        ["restart", "lobby-display-wall.service"],
        ["restart", screen],
    ]


def test_without_systemd_the_install_says_so_and_puts_the_files_back(
    tmp_path: Path, service_account_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = Machine(tmp_path, monkeypatch)
    machine.runtime.rmdir()  # as on this machine: PID 1 is not systemd
    machine.write_config(["en_US"])
    code, out = machine.install(service_account_file)
    assert code == 1
    assert "systemd is not running on this machine (PID 1 is not systemd)" in out
    assert "Traceback" not in out
    assert not (machine.tree / "etc/lobby-display").exists()

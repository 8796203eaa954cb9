"""The wall: one sway for every TV of a PC, one unit per screen; valid, hardened, and really able
to put two boards on two outputs.

- `systemd-analyze verify` and `security` run over these units with the others, in
  test_systemd_units.py.
- The keys each screen relies on: its own READY/WATCHDOG/restart, config, state and runtime
  directories, credentials; bound to the wall; the wall's sockets are where the screens look.
- `sway --validate` accepts the shipped sway.conf (and refuses a broken one).
- For real, on wlroots' headless backend with two outputs: sway started by the wall's own
  ExecStart says READY=1 and WATCHDOG=1 through its config; two screens started by the screen
  unit's own ExecStart (foot -> env -> `lobby-display run`, against the embedded simulator, with
  writable+executable memory refused) each say READY=1 on their own notification socket, and
  the unit's ExecStartPost (`lobby-display place`) puts each window full screen on the output
  its config names. A screen whose output is missing still shows, with a warning, and moves to
  its output when that appears.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from lobby_display.cli import build_parser
from lobby_display.config import load_config
from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.wall import APP_ID_PREFIX
from tests.integration.test_systemd_units import (
    INSTALLED,
    _python_for,
    _run_as_user,
    commands,
    environment,
    missing,
    one,
    parse_unit,
)

ROOT = Path(__file__).resolve().parents[2]
UNIT_DIR = ROOT / "systemd"
WALL = UNIT_DIR / "lobby-display-wall.service"
SCREEN = UNIT_DIR / "lobby-display-screen@.service"
SWAY_CONF = UNIT_DIR / "sway.conf"
FOOT_INI = UNIT_DIR / "foot.ini"
UNITS = [WALL, SCREEN]
INSTANCE = "hall"


# --------------------------------------------------------------------------------------------
# The keys the screens depend on


@pytest.mark.parametrize("path", UNITS, ids=lambda path: path.name)
def test_each_unit_keeps_going_on_its_own(path: Path) -> None:
    unit = parse_unit(path)
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "all"
    assert one(unit, "Service", "Restart") == "always"
    assert int(one(unit, "Service", "WatchdogSec")) > 0
    assert int(one(unit, "Service", "RestartSec")) > 0
    # The default start limit would leave a flapping screen black for good.
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"
    assert one(unit, "Service", "User") == "lobby-display"
    assert "PAMName" not in unit["Service"]  # a PAM session breaks NotifyAccess (FIELD-NOTES)


def test_wall_runs_sway_on_tty1_with_a_seat_from_seatd() -> None:
    unit = parse_unit(WALL)
    assert shlex.split(one(unit, "Service", "ExecStart")) == [
        "/usr/bin/sway",
        "--config",
        "/etc/lobby-display/sway.conf",
    ]
    assert "getty@tty1.service" in one(unit, "Unit", "Conflicts")
    assert "seatd.service" in one(unit, "Unit", "Wants")
    env = environment(unit)
    assert env["LIBSEAT_BACKEND"] == "seatd"
    assert env["WLR_LIBINPUT_NO_DEVICES"] == "1"
    assert set(one(unit, "Service", "SupplementaryGroups").split()) == {"video", "render"}
    assert one(unit, "Install", "WantedBy") == "multi-user.target"
    # sway itself cannot say READY=1 or WATCHDOG=1: its config runs systemd-notify for it.
    execs = [line for line in SWAY_CONF.read_text().splitlines() if line.startswith("exec ")]
    assert "exec /usr/bin/systemd-notify --ready" in execs
    assert any("systemd-notify WATCHDOG=1" in line and "swaymsg" in line for line in execs)


def test_screen_is_bound_to_the_wall_and_finds_its_sockets() -> None:
    wall, screen = parse_unit(WALL), parse_unit(SCREEN)
    assert one(screen, "Unit", "BindsTo") == "lobby-display-wall.service"
    assert "lobby-display-wall.service" in one(screen, "Unit", "After").split()
    # Enabling a screen makes the wall start it, and enables the wall.
    assert one(screen, "Install", "WantedBy") == "lobby-display-wall.service"
    assert one(screen, "Install", "Also") == "lobby-display-wall.service"
    wall_env, screen_env = environment(wall), environment(screen)
    assert screen_env["SWAYSOCK"] == wall_env["SWAYSOCK"]
    assert screen_env["WAYLAND_DISPLAY"] == wall_env["XDG_RUNTIME_DIR"] + "/wayland-1"
    assert one(wall, "Service", "RuntimeDirectory") == "lobby-display-wall"
    assert wall_env["XDG_RUNTIME_DIR"] == "%t/lobby-display-wall"


def test_screen_has_its_own_config_state_and_credentials() -> None:
    unit = parse_unit(SCREEN)
    assert one(unit, "Service", "StateDirectory") == "lobby-display/%i"
    assert one(unit, "Service", "RuntimeDirectory") == "lobby-display/%i"
    assert one(unit, "Service", "LoadCredential") == (
        "service-account.json:/etc/lobby-display/service-account.json"
    )
    start = shlex.split(one(unit, "Service", "ExecStart"))
    assert start[0] == "/usr/bin/foot"
    assert "--config=/etc/lobby-display/%i.foot.ini" in start
    assert f"--app-id={APP_ID_PREFIX}%i" in start
    assert start[start.index("/usr/bin/env") : start.index(INSTALLED)] == [
        "/usr/bin/env",
        "-u",
        "WATCHDOG_PID",
    ]
    ours = start[start.index(INSTALLED) + 1 :]
    assert ours == ["run", "--config", "/etc/lobby-display/%i.toml"]
    args = build_parser().parse_args([arg.replace("%i", INSTANCE) for arg in ours])
    assert (args.command, args.config) == ("run", Path(f"/etc/lobby-display/{INSTANCE}.toml"))
    # The app's PID file is where ExecReload looks (foot's PID would get the SIGHUP otherwise).
    assert "$$RUNTIME_DIRECTORY/app.pid" in unit["Service"]["ExecReload"][0]


def test_screen_places_its_own_window_after_start_and_reload() -> None:
    unit = parse_unit(SCREEN)
    place = shlex.split(one(unit, "Service", "ExecStartPost"))
    assert place[0] == INSTALLED
    assert unit["Service"]["ExecReload"][1] == one(unit, "Service", "ExecStartPost")
    args = build_parser().parse_args([arg.replace("%i", INSTANCE) for arg in place[1:]])
    assert args.command == "place"
    assert args.config == Path(f"/etc/lobby-display/{INSTANCE}.toml")
    # The very window foot opens.
    assert args.app_id == f"{APP_ID_PREFIX}{INSTANCE}"


def test_screen_environment_is_accepted_by_the_config_loader() -> None:
    settings = load_config(ROOT / "config.example.toml", environ=environment(parse_unit(SCREEN)))
    assert settings.display.theme == "dark"


@pytest.mark.parametrize("path", UNITS, ids=lambda path: path.name)
def test_programs_the_units_start_exist_here(path: Path) -> None:
    named = {argv[0] for argv in commands(parse_unit(path))} - {INSTALLED}
    absent = sorted(program for program in named if not os.access(program, os.X_OK))
    if absent:
        missing(f"{', '.join(absent)} not installed (Debian packages sway, foot)")


def test_sysusers_puts_the_user_in_the_wall_groups(tmp_path: Path) -> None:
    if shutil.which("systemd-sysusers") is None:
        missing("systemd-sysusers is missing (Debian package systemd)")
    (tmp_path / "etc").mkdir()
    subprocess.run(
        ["systemd-sysusers", f"--root={tmp_path}", str(UNIT_DIR / "lobby-display.sysusers.conf")],
        capture_output=True,
        check=True,
        timeout=60,
    )
    members = {
        line.split(":")[0]: line.split(":")[3].split(",")
        for line in (tmp_path / "etc/group").read_text().splitlines()
    }
    for group in one(parse_unit(WALL), "Service", "SupplementaryGroups").split():
        assert "lobby-display" in members[group]


# --------------------------------------------------------------------------------------------
# sway's configuration


def _sway_validate(config: Path, work: Path, prefix: list[str]) -> subprocess.CompletedProcess[str]:
    runtime = work / "validate-run"
    runtime.mkdir(mode=0o700)
    if prefix:
        shutil.chown(runtime, "nobody", "nogroup")
    copy = work / config.name
    shutil.copy(config, copy)
    copy.chmod(0o644)
    env = [
        "PATH=/usr/bin:/bin",
        f"XDG_RUNTIME_DIR={runtime}",
        "WLR_BACKENDS=headless",
        "WLR_RENDERER=pixman",
        "WLR_LIBINPUT_NO_DEVICES=1",
    ]
    return subprocess.run(
        [*prefix, "/usr/bin/env", "-i", *env, "sway", "--validate", "--config", str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=work,  # the checkout's may be out of the user's reach
    )


@pytest.fixture
def world_readable() -> Iterator[Path]:
    """A directory that the unprivileged user can reach (the checkout may be out of its reach)."""
    work = Path(tempfile.mkdtemp(prefix="lobby-display-wall-"))
    work.chmod(0o755)
    yield work
    shutil.rmtree(work, ignore_errors=True)


def _need_sway() -> None:
    if shutil.which("sway") is None or shutil.which("swaymsg") is None:
        missing("sway is not installed (Debian package sway)")


def test_sway_conf_is_valid(world_readable: Path) -> None:
    _need_sway()
    result = _sway_validate(SWAY_CONF, world_readable, _run_as_user())
    assert result.returncode == 0, result.stderr
    assert "Error on line" not in result.stderr, result.stderr


def test_sway_validate_refuses_a_broken_config(world_readable: Path) -> None:
    """The check above can fail: a misspelt command is an error."""
    _need_sway()
    broken = world_readable / "broken" / "sway.conf"
    broken.parent.mkdir()
    broken.write_text(SWAY_CONF.read_text().replace("default_border none", "default_bordr none"))
    result = _sway_validate(broken, world_readable, _run_as_user())
    assert result.returncode != 0
    assert "default_bordr" in result.stderr


# --------------------------------------------------------------------------------------------
# The wall for real: sway headless with two outputs, two screens, each on its own output


def _runtime_distributions() -> set[str]:
    """Names of the distributions `lobby-display` needs to run (its dependencies, recursively)."""
    wanted, seen = ["lobby-display"], set()
    while wanted:
        name = wanted.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        for text in metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
    return seen


def _portable_runtime(target: Path) -> str:
    """Copy our package and every distribution it runs on into `target`, readable by anyone."""
    shutil.copytree(ROOT / "src" / "lobby_display", target / "lobby_display")
    for name in _runtime_distributions() - {"lobby-display"}:
        distribution = metadata.distribution(name)
        for file in distribution.files or []:
            if file.parts[0] == ".." or file.suffix == ".pyc":
                continue
            source = Path(str(distribution.locate_file(file)))
            if source.is_file():
                destination = target / file
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, destination)
    subprocess.run(["chmod", "-R", "a+rX", str(target)], check=True)
    return str(target)


# Runs a program with writable+executable memory refused (PR_SET_MDWE, Linux 6.3+, inherited
# by children and across exec): what MemoryDenyWriteExecute=yes does to the screen unit.
NO_WX_MEMORY = (
    "import ctypes, os, sys\n"
    "refused = ctypes.CDLL(None, use_errno=True).prctl(65, 1, 0, 0, 0) == 0\n"
    "os.environ['WALL_TEST_MDWE'] = '1' if refused else '0'\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


@dataclass
class Wall:
    """A running headless sway, started the way the wall unit starts it."""

    work: Path
    prefix: list[str]
    python: str
    pythonpath: str
    specifiers: dict[str, str]
    env: dict[str, str]
    process: subprocess.Popen[bytes]

    def tree(self) -> dict[str, Any]:
        result = subprocess.run(
            ["swaymsg", "-t", "get_tree", "--raw"],
            env={"PATH": "/usr/bin:/bin", "SWAYSOCK": self.env["SWAYSOCK"]},
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        tree: dict[str, Any] = json.loads(result.stdout)
        return tree

    def swaymsg(self, *args: str) -> None:
        subprocess.run(
            ["swaymsg", *args],
            env={"PATH": "/usr/bin:/bin", "SWAYSOCK": self.env["SWAYSOCK"]},
            capture_output=True,
            check=True,
            timeout=30,
        )


def _expand(text: str, specifiers: dict[str, str]) -> str:
    for specifier, value in specifiers.items():
        text = text.replace(specifier, value)
    return text


def _unit_env(unit: dict[str, dict[str, list[str]]], specifiers: dict[str, str]) -> dict[str, str]:
    return {key: _expand(value, specifiers) for key, value in environment(unit, "%i").items()}


def _user_dir(path: Path, prefix: list[str]) -> Path:
    path.mkdir(mode=0o700, parents=True)
    if prefix:
        shutil.chown(path, "nobody", "nogroup")
    return path


def _messages(server: socket.socket, until: Callable[[str], bool], timeout: float) -> list[str]:
    """Datagrams received until one satisfies `until` (all of them, then: the caller checks)."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while (left := deadline - time.monotonic()) > 0:
        server.settimeout(left)
        try:
            seen.append(server.recv(65536).decode())
        except TimeoutError:
            break
        if until(seen[-1]):
            break
    return seen


def _notify_socket(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(path))
    path.chmod(0o777)
    return server


@pytest.fixture(scope="module")
def wall() -> Iterator[Wall]:
    with _running_wall(outputs=2) as running:
        yield running


@contextlib.contextmanager
def _running_wall(outputs: int) -> Iterator[Wall]:
    """sway headless with `outputs` outputs, started by the wall unit's own ExecStart."""
    _need_sway()
    if shutil.which("foot") is None:
        missing("foot is not installed (Debian package foot)")
    prefix = _run_as_user()
    work = Path(tempfile.mkdtemp(prefix="lobby-display-wall-"))
    try:
        work.chmod(0o755)
        lib = work / "lib"
        lib.mkdir()
        pythonpath = _portable_runtime(lib)
        python = _python_for(prefix, pythonpath)
        # systemd's %t (runtime), %S (state), %C (cache): one tree per test run.
        specifiers = {"%t": str(work / "run"), "%S": str(work / "state"), "%C": str(work / "cache")}
        for directory in specifiers.values():
            Path(directory).mkdir(mode=0o755)
        unit = parse_unit(WALL)
        env = _unit_env(unit, specifiers)
        _user_dir(Path(env["XDG_RUNTIME_DIR"]), prefix)
        _user_dir(Path(env["XDG_CACHE_HOME"]), prefix)
        config = work / "sway.conf"
        shutil.copy(SWAY_CONF, config)
        config.chmod(0o644)
        argv = [
            str(config) if arg == "/etc/lobby-display/sway.conf" else arg
            for arg in shlex.split(one(unit, "Service", "ExecStart"))
        ]
        env.update(
            PATH="/usr/bin:/bin",
            NOTIFY_SOCKET=str(work / "wall.notify"),
            WATCHDOG_USEC="30000000",
            # For this test only: no GPU, no seat, two virtual outputs.
            WLR_BACKENDS="headless",
            WLR_HEADLESS_OUTPUTS=str(outputs),
            WLR_RENDERER="pixman",
            LIBSEAT_BACKEND="noop",
        )
        with _notify_socket(work / "wall.notify") as server:
            log = (work / "sway.log").open("wb")
            process = subprocess.Popen(
                [*prefix, "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=work,  # the checkout's may be out of the user's reach (foot inherits it)
            )
            try:
                # READY=1 and the first WATCHDOG=1 come from two programs sway starts at once
                # (sway.conf): in either order.
                got: set[str] = set()

                def ready_and_watched(text: str) -> bool:
                    got.update(text.split("\n"))
                    return {"READY=1", "WATCHDOG=1"} <= got

                said = _messages(server, ready_and_watched, 30)
                assert {"READY=1", "WATCHDOG=1"} <= got, (
                    f"sway said {said!r}:\n{(work / 'sway.log').read_text()[-3000:]}"
                )
                yield Wall(work, prefix, python, pythonpath, specifiers, env, process)
            finally:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                log.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_wall_is_ready_with_both_sockets_where_the_screens_look(wall: Wall) -> None:
    screen_env = _unit_env(parse_unit(SCREEN), wall.specifiers)
    for name in ("WAYLAND_DISPLAY", "SWAYSOCK"):
        assert Path(screen_env[name]).is_socket(), f"{name}={screen_env[name]} is not a socket"
    outputs = subprocess.run(
        ["swaymsg", "-t", "get_outputs", "--raw"],
        env={"PATH": "/usr/bin:/bin", "SWAYSOCK": screen_env["SWAYSOCK"]},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    # Its two outputs (a test below adds a third, as a TV switched on late, and sway 1.7 has
    # no command to take it away again).
    names = [output["name"] for output in json.loads(outputs.stdout)]
    assert names[:2] == ["HEADLESS-1", "HEADLESS-2"]


@dataclass
class Screen:
    name: str
    process: subprocess.Popen[bytes]
    notify: socket.socket
    said: list[str]
    placed: subprocess.CompletedProcess[str]
    runtime: Path


def _windows(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """app id -> {output, workspace, fullscreen, visible} for every window."""
    found: dict[str, dict[str, Any]] = {}

    def walk(node: dict[str, Any], output: str, workspace: str) -> None:
        if node.get("type") == "output":
            output = node["name"]
        if node.get("type") == "workspace":
            workspace = node["name"]
        if node.get("app_id"):
            found[node["app_id"]] = {
                "output": output,
                "workspace": workspace,
                "fullscreen": node.get("fullscreen_mode") == 1,
                "visible": node.get("visible"),
            }
        for child in node.get("nodes", []) + node.get("floating_nodes", []):
            walk(child, output, workspace)

    walk(tree, "", "")
    return found


def _start_screen(wall: Wall, sim: SimulatorServer, name: str, output: str) -> Screen:
    """Start one screen as its unit would: ExecStart, READY=1, then ExecStartPost."""
    unit = parse_unit(SCREEN)
    specifiers = {**wall.specifiers, "%i": name}
    env = _unit_env(unit, specifiers)
    for key in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "HOME"):
        _user_dir(Path(env[key]), wall.prefix)
    etc = wall.work / "etc" / name
    etc.mkdir(parents=True)
    config = sim.write_config(etc, locales=["en_US"], display={"output": output})
    foot_ini = etc / "foot.ini"
    shutil.copy(FOOT_INI, foot_ini)
    if wall.prefix:
        for path in [etc, *etc.rglob("*")]:
            shutil.chown(path, "nobody", "nogroup")
    files = {
        f"/etc/lobby-display/{name}.toml": str(config),
        f"/etc/lobby-display/{name}.foot.ini": str(foot_ini),
    }

    def command(key: str) -> list[str]:
        argv = [_expand(arg, specifiers) for arg in shlex.split(one(unit, "Service", key))]
        for installed, copy in files.items():
            argv = [arg.replace(installed, copy) for arg in argv]
        where = argv.index(INSTALLED)
        return [*argv[:where], wall.python, "-m", "lobby_display", *argv[where + 1 :]]

    env.update(
        PATH="/usr/bin:/bin",
        PYTHONPATH=wall.pythonpath,
        RUNTIME_DIRECTORY=env["XDG_RUNTIME_DIR"],
        STATE_DIRECTORY=env["HOME"],
        NOTIFY_SOCKET=str(wall.work / f"{name}.notify"),
        WATCHDOG_USEC="30000000",
        WATCHDOG_PID="1",  # foot's, under systemd: the app must not take it for its own
        TEXTUAL_ANIMATIONS="none",
    )
    start = [wall.python, "-c", NO_WX_MEMORY, *command("ExecStart")]
    as_user = [*wall.prefix, "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items())]
    # The socket stays open while the screen runs, as systemd's does (the watchdog's pings).
    server = _notify_socket(wall.work / f"{name}.notify")
    log = (wall.work / f"{name}.foot.log").open("wb")
    process = subprocess.Popen(
        [*as_user, *start], stdout=log, stderr=subprocess.STDOUT, cwd=wall.work
    )
    log.close()
    said = _messages(server, lambda text: "READY=1" in text.split("\n"), 40)
    placed = subprocess.run(
        [*as_user, *command("ExecStartPost")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=wall.work,
    )
    return Screen(name, process, server, said, placed, Path(env["XDG_RUNTIME_DIR"]))


@pytest.fixture(scope="module")
def screens(wall: Wall, sim_account: ServiceAccount) -> Iterator[dict[str, Screen]]:
    """Two screens, each with its own config naming its output (the reverse of sway's order)."""
    with SimulatorServer(seed=7, account=sim_account, speed=60.0, heartbeat=0.3) as sim:
        started = {
            "hall": _start_screen(wall, sim, "hall", "HEADLESS-2"),
            "annex": _start_screen(wall, sim, "annex", "HEADLESS-1"),
        }
        try:
            yield started
        finally:
            for screen in started.values():
                if screen.process.poll() is None:
                    screen.process.terminate()
            for screen in started.values():
                try:
                    screen.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    screen.process.kill()
                    screen.process.wait()
                screen.notify.close()


def _log_of(wall: Wall, name: str) -> str:
    state_log = Path(wall.specifiers["%S"]) / "lobby-display" / name / "lobby-display.log"
    text = (wall.work / f"{name}.foot.log").read_text(errors="replace")[-2000:]
    if state_log.exists():
        text += "\n--- app log ---\n" + state_log.read_text(errors="replace")[-2000:]
    return text


@pytest.mark.parametrize("name", ["hall", "annex"])
def test_each_screen_says_ready_on_its_own_socket(
    wall: Wall, screens: dict[str, Screen], name: str
) -> None:
    screen = screens[name]
    assert any("READY=1" in text.split("\n") for text in screen.said), (
        f"{name} said {screen.said!r}:\n{_log_of(wall, name)}"
    )
    assert screen.process.poll() is None
    # The app (not foot) wrote its PID where the unit's ExecReload looks.
    assert (screen.runtime / "app.pid").read_text().strip().isdigit()


def test_the_screens_ran_with_writable_executable_memory_refused(
    wall: Wall, screens: dict[str, Screen]
) -> None:
    pid = int((screens["hall"].runtime / "app.pid").read_text())
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    if b"WALL_TEST_MDWE=0" in environ:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux 6.3+)")
    assert b"WALL_TEST_MDWE=1" in environ


@pytest.mark.parametrize(("name", "output"), [("hall", "HEADLESS-2"), ("annex", "HEADLESS-1")])
def test_each_window_is_full_screen_on_its_own_output(
    wall: Wall, screens: dict[str, Screen], name: str, output: str
) -> None:
    screen = screens[name]
    assert screen.placed.returncode == 0, screen.placed.stderr
    assert f"showing on {output}" in screen.placed.stderr
    window = _windows(wall.tree())[f"{APP_ID_PREFIX}{name}"]
    assert window == {
        "output": output,
        "workspace": f"{APP_ID_PREFIX}{name}@{output}",
        "fullscreen": True,
        "visible": True,
    }


def test_a_screen_whose_output_is_missing_shows_anyway_and_moves_when_it_appears(
    wall: Wall, screens: dict[str, Screen]
) -> None:
    """A TV switched on after the PC: the board shows meanwhile, then goes to its TV."""
    name, output = "late", "HEADLESS-3"  # the name sway gives the next output it creates
    app_id = f"{APP_ID_PREFIX}{name}"
    etc = wall.work / "etc" / name
    etc.mkdir(parents=True)
    (etc / "late.toml").write_text(
        (wall.work / "etc" / "hall" / "config.toml")
        .read_text()
        .replace('output = "HEADLESS-2"', f'output = "{output}"')
    )
    if wall.prefix:
        for path in [etc, *etc.iterdir()]:
            shutil.chown(path, "nobody", "nogroup")
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": wall.pythonpath,
        "WAYLAND_DISPLAY": wall.env["XDG_RUNTIME_DIR"] + "/wayland-1",
        "XDG_RUNTIME_DIR": wall.env["XDG_RUNTIME_DIR"],
        "SWAYSOCK": wall.env["SWAYSOCK"],
    }
    as_user = [*wall.prefix, "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items())]
    window = subprocess.Popen(
        [*as_user, "foot", f"--app-id={app_id}", "sleep", "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=wall.work,
    )
    place = ["place", "--config", str(etc / "late.toml"), "--app-id", app_id]
    try:
        placed = subprocess.run(
            [*as_user, wall.python, "-m", "lobby_display", *place],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=wall.work,
        )
        assert placed.returncode == 0, placed.stderr
        assert f"output {output} is not connected" in placed.stderr
        shown = _windows(wall.tree())[app_id]
        assert shown["fullscreen"] and shown["visible"], shown
        assert shown["output"] in ("HEADLESS-1", "HEADLESS-2")

        wall.swaymsg("create_output")
        deadline = time.monotonic() + 10
        while _windows(wall.tree())[app_id]["output"] != output and time.monotonic() < deadline:
            time.sleep(0.05)
        windows = _windows(wall.tree())
        assert windows[app_id]["output"] == output
        assert windows[app_id]["fullscreen"] and windows[app_id]["visible"]
        # The screen it covered meanwhile is back in view.
        for other in ("hall", "annex"):
            assert windows[f"{APP_ID_PREFIX}{other}"]["visible"], windows
    finally:
        window.terminate()
        window.wait(timeout=15)


def test_a_screen_ends_when_the_app_does(sim_account: ServiceAccount) -> None:
    """SIGTERM to the app (systemctl stop): foot follows, so systemd sees the unit end.

    On a wall of its own: the other tests' screens keep running, whatever the order.
    """
    with (
        _running_wall(outputs=1) as lone,
        SimulatorServer(seed=7, account=sim_account, speed=60.0, heartbeat=0.3) as sim,
    ):
        screen = _start_screen(lone, sim, "annex", "HEADLESS-1")
        try:
            assert any("READY=1" in text.split("\n") for text in screen.said), (
                f"annex said {screen.said!r}:\n{_log_of(lone, 'annex')}"
            )
            pid = int((screen.runtime / "app.pid").read_text())
            os.kill(pid, signal.SIGTERM)
            assert screen.process.wait(timeout=30) == 0
        finally:
            if screen.process.poll() is None:
                screen.process.kill()
                screen.process.wait()
            screen.notify.close()

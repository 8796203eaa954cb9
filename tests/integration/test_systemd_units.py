"""The systemd units: valid for systemd 252, hardened, and really able to run the screen.

- `systemd-analyze verify` prints nothing for each unit. It exits 0 on unknown keys (a warning
  only), so any output fails. The programs a unit starts must exist for verify to pass: the
  units are verified under `--root` in a copy of this machine's unit directory, with a stub at
  every program path the units name; the programs themselves are checked separately.
- `systemd-analyze security --offline=true` rates each unit's exposure at 4.0 or less.
- The keys the screen relies on are present, the command line is one the CLI accepts, and the
  environment a unit sets is one the config loader accepts.
- The kiosk chain, exactly as the unit's ExecStart spells it (cage -> foot -> env -> the app),
  is started with wlroots' headless backend: READY=1 and WATCHDOG=1 from the app reach the
  notification socket through cage and foot, and the chain ends when the app does.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from lobby_display.cli import build_parser
from lobby_display.config import load_config
from tests.helpers.needs import needs

ROOT = Path(__file__).resolve().parents[2]
UNIT_DIR = ROOT / "systemd"
# The single-screen units. The wall and its screens (several TVs on one PC) differ by design
# (no app in the wall, no tty in a screen): tests/integration/test_wall_units.py.
WALL_UNITS = ("lobby-display-wall.service", "lobby-display-screen@.service")
UNITS = sorted(p for p in UNIT_DIR.glob("*.service") if p.name not in WALL_UNITS)
#: Every unit shipped, wall units included: verified and rated here, each the same way.
ALL_UNITS = sorted(UNIT_DIR.glob("*.service"))
KIOSK = UNIT_DIR / "lobby-display-kiosk@.service"
CONSOLE = UNIT_DIR / "lobby-display-console@.service"
FOOT_INI = UNIT_DIR / "foot.ini"
INSTALLED = "/opt/lobby-display/.venv/bin/lobby-display"
INSTANCE = "hall"
MAX_EXPOSURE = 4.0

needs_analyze = needs("systemd-analyze", "systemd")


def missing(reason: str) -> NoReturn:
    """Skip on a developer's machine; fail under CI, whose .ci/run installs every tool."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI installs it: see .ci/run)")
    pytest.skip(reason)


def unit_id(path: Path) -> str:
    return path.name


def instance_name(unit: Path) -> str:
    """The name `systemctl` would use: a template gets the instance `INSTANCE`."""
    return unit.name.replace("@.", f"@{INSTANCE}.")


def verify(root: Path, name: str) -> tuple[str, int]:
    """What `systemd-analyze verify` says of the unit `name` under `root` (it should be
    nothing), and its exit code."""
    result = subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", name],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return (result.stdout + result.stderr).strip(), result.returncode


Unit = dict[str, dict[str, list[str]]]


def parse_unit(path: Path) -> Unit:
    """Sections -> key -> every value given (keys may repeat; `\\` continues a line)."""
    sections: Unit = {}
    current: dict[str, list[str]] = {}
    pending = ""
    for raw in path.read_text().splitlines():
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def one(unit: Unit, section: str, key: str) -> str:
    values = unit[section].get(key, [])
    assert len(values) == 1, f"[{section}] {key}= given {len(values)} times"
    return values[0]


def commands(unit: Unit) -> list[list[str]]:
    """Every Exec*= command line, split like systemd does, without the `-@+!:` prefixes."""
    lines = []
    for key, values in unit["Service"].items():
        if key.startswith("Exec"):
            for value in values:
                argv = shlex.split(value)
                argv[0] = argv[0].lstrip("-@+!:")
                lines.append(argv)
    return lines


def environment(unit: Unit, instance: str = INSTANCE) -> dict[str, str]:
    env: dict[str, str] = {}
    for value in unit["Service"].get("Environment", []):
        for assignment in shlex.split(value):
            key, _, val = assignment.partition("=")
            env[key] = val.replace("%i", instance)
    return env


# --------------------------------------------------------------------------------------------
# systemd-analyze


@pytest.fixture(scope="module")
def verify_root() -> Iterator[Path]:
    """A file-system root with this machine's units, ours, and a stub at each program path."""
    with tempfile.TemporaryDirectory(prefix="lobby-display-units-") as name:
        root = Path(name)
        for directory in ("/usr/lib/systemd/system", "/etc/systemd/system"):
            if Path(directory).is_dir():
                shutil.copytree(directory, root / directory.lstrip("/"), symlinks=True)
        target = root / "etc/systemd/system"
        target.mkdir(parents=True, exist_ok=True)
        for unit in ALL_UNITS:
            shutil.copy(unit, target / unit.name)
            for argv in commands(parse_unit(unit)):
                stub = root / argv[0].lstrip("/")
                stub.parent.mkdir(parents=True, exist_ok=True)
                stub.write_text("#!/bin/sh\nexit 0\n")
                stub.chmod(0o755)
        yield root


@needs_analyze
@pytest.mark.parametrize("unit", ALL_UNITS, ids=unit_id)
def test_systemd_analyze_verify_prints_nothing(unit: Path, verify_root: Path) -> None:
    name = instance_name(unit)
    output, code = verify(verify_root, name)
    assert output == "", f"systemd-analyze verify {name}:\n{output}"
    assert code == 0


@needs_analyze
def test_verify_catches_an_unknown_key(verify_root: Path) -> None:
    """The check above can fail: a misspelt key is reported (while verify still exits 0)."""
    broken = verify_root / "etc/systemd/system/lobby-display-broken@.service"
    broken.write_text(CONSOLE.read_text().replace("WatchdogSec=", "WatchDogSec="))
    try:
        output, _ = verify(verify_root, "lobby-display-broken@x.service")
    finally:
        broken.unlink()
    assert "WatchDogSec" in output


@needs_analyze
def test_verify_sees_a_screen_bound_to_a_missing_wall(verify_root: Path) -> None:
    """The check can fail for the wall too: a screen bound to a unit that does not exist."""
    screen = UNIT_DIR / "lobby-display-screen@.service"
    broken = verify_root / "etc/systemd/system/lobby-display-broken@.service"
    broken.write_text(screen.read_text().replace("lobby-display-wall.service", "no-wall.service"))
    try:
        output, _ = verify(verify_root, "lobby-display-broken@x.service")
    finally:
        broken.unlink()
    assert "no-wall.service" in output


_EXPOSURE = re.compile(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)")


@needs_analyze
@pytest.mark.parametrize("unit", ALL_UNITS, ids=unit_id)
def test_security_exposure_is_at_most_4(unit: Path) -> None:
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = _EXPOSURE.search(result.stdout + result.stderr)
    assert match, f"no exposure line in:\n{result.stdout}{result.stderr}"
    assert float(match.group(1)) <= MAX_EXPOSURE, result.stdout


def _exposure(unit: Path) -> float:
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = _EXPOSURE.search(result.stdout + result.stderr)
    assert match, f"no exposure line in:\n{result.stdout}{result.stderr}"
    return float(match.group(1))


@pytest.mark.parametrize("path", [KIOSK, CONSOLE], ids=unit_id)
def test_screen_units_keep_their_mounts_private(path: Path) -> None:
    assert one(parse_unit(path), "Service", "PrivateMounts") == "yes"


def _documented_allow_list() -> str:
    """The IPAddressDeny=/IPAddressAllow= drop-in that deployment.md gives installers."""
    text = (ROOT / "docs" / "deployment.md").read_text()
    blocks = re.findall(r"```ini\n(.*?)```", text, re.DOTALL)
    found: list[str] = [block for block in blocks if "IPAddressDeny=" in block]
    assert len(found) == 1, "deployment.md should give one IPAddressDeny= drop-in"
    return found[0]


@needs_analyze
@pytest.mark.parametrize("path", [KIOSK, CONSOLE], ids=unit_id)
def test_the_documented_address_allow_list_is_valid_and_lowers_the_exposure(
    path: Path, verify_root: Path
) -> None:
    drop_in = _documented_allow_list()
    directory = verify_root / "etc/systemd/system" / f"{path.name}.d"
    directory.mkdir(exist_ok=True)
    (directory / "network.conf").write_text(drop_in)
    try:
        output, _ = verify(verify_root, instance_name(path))
    finally:
        shutil.rmtree(directory)
    assert output == "", output
    with tempfile.TemporaryDirectory() as scratch:
        combined = Path(scratch) / path.name
        combined.write_text(path.read_text() + "\n" + drop_in)
        assert _exposure(combined) < _exposure(path)


# --------------------------------------------------------------------------------------------
# The keys the screen depends on


@pytest.mark.parametrize("path", UNITS, ids=unit_id)
def test_unit_keeps_the_screen_alive(path: Path) -> None:
    unit = parse_unit(path)
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "all"
    assert one(unit, "Service", "Restart") == "always"
    assert int(one(unit, "Service", "WatchdogSec")) > 0
    assert int(one(unit, "Service", "RestartSec")) > 0
    # The default start limit would leave a flapping screen black for good.
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"
    assert one(unit, "Service", "User") == "lobby-display"
    assert one(unit, "Service", "StateDirectory") == "lobby-display/%i"
    assert one(unit, "Service", "LoadCredential") == (
        "service-account.json:/etc/lobby-display/service-account.json"
    )
    assert "getty@tty1.service" in one(unit, "Unit", "Conflicts")
    assert "PAMName" not in unit["Service"]  # a PAM session breaks NotifyAccess (FIELD-NOTES)
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


@pytest.mark.parametrize("path", UNITS, ids=unit_id)
def test_unit_starts_the_run_command_with_the_instance_config(path: Path) -> None:
    (start,) = [argv for argv in commands(parse_unit(path)) if argv[0] != "/usr/bin/setterm"][:1]
    assert INSTALLED in start
    ours = start[start.index(INSTALLED) + 1 :]
    assert ours == ["run", "--config", "/etc/lobby-display/%i.toml"]
    args = build_parser().parse_args([arg.replace("%i", INSTANCE) for arg in ours])
    assert args.command == "run"
    assert args.config == Path(f"/etc/lobby-display/{INSTANCE}.toml")


@pytest.mark.parametrize("path", UNITS, ids=unit_id)
def test_unit_environment_is_accepted_by_the_config_loader(path: Path) -> None:
    settings = load_config(ROOT / "config.example.toml", environ=environment(parse_unit(path)))
    expected = "console" if path == CONSOLE else "dark"
    assert settings.display.theme == expected


def test_console_unit_puts_the_app_on_tty1() -> None:
    unit = parse_unit(CONSOLE)
    assert one(unit, "Service", "TTYPath") == "/dev/tty1"
    # Textual reads standard input and draws on standard error.
    for key in ("StandardInput", "StandardOutput", "StandardError"):
        assert one(unit, "Service", key) == "tty"
    env = environment(unit)
    assert env["TERM"] == "linux"
    assert env["LOBBY_DISPLAY_DISPLAY__THEME"] == "console"
    assert one(unit, "Service", "MemoryDenyWriteExecute") == "yes"


def test_kiosk_unit_runs_cage_foot_and_the_app_with_a_seat_from_seatd() -> None:
    unit = parse_unit(KIOSK)
    start = shlex.split(one(unit, "Service", "ExecStart"))
    assert start[:3] == ["/usr/bin/cage", "-d", "--"]
    assert start[3] == "/usr/bin/foot"
    assert "--config=/etc/lobby-display/%i.foot.ini" in start
    assert start[start.index("/usr/bin/env") : start.index(INSTALLED)] == [
        "/usr/bin/env",
        "-u",
        "WATCHDOG_PID",
    ]
    assert "seatd.service" in one(unit, "Unit", "Wants")
    assert environment(unit)["LIBSEAT_BACKEND"] == "seatd"
    assert "video" in one(unit, "Service", "SupplementaryGroups").split()
    assert "AF_UNIX" in one(unit, "Service", "RestrictAddressFamilies").split()
    # The app's PID file is where ExecReload looks (cage's PID would get the SIGHUP otherwise).
    assert "$$RUNTIME_DIRECTORY/app.pid" in one(unit, "Service", "ExecReload")


@pytest.mark.parametrize("path", UNITS, ids=unit_id)
def test_programs_the_units_start_exist_here(path: Path) -> None:
    named = [argv[0] for argv in commands(parse_unit(path))]
    named += [
        arg
        for argv in commands(parse_unit(path))
        for arg in argv[1:]
        if arg.startswith("/usr/bin/")
    ]
    absent = [
        program for program in named if program != INSTALLED and not os.access(program, os.X_OK)
    ]
    if absent and set(absent) <= {"/usr/bin/cage", "/usr/bin/foot"}:
        missing(f"{', '.join(absent)} not installed (Debian packages cage, foot)")
    assert not absent


# --------------------------------------------------------------------------------------------
# foot's configuration and fonts


def test_foot_ini_is_valid() -> None:
    if shutil.which("foot") is None:
        missing("foot is not installed (Debian package foot)")
    result = subprocess.run(
        ["foot", "--check-config", f"--config={FOOT_INI}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert " err:" not in result.stderr and "warn:" not in result.stderr, result.stderr


def _foot_sections() -> dict[str, dict[str, str]]:
    """foot.ini's keys by section ("main" for those before the first header)."""
    sections: dict[str, dict[str, str]] = {"main": {}}
    current = sections["main"]
    for raw in FOOT_INI.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif "=" in line:
            key, value = line.split("=", 1)
            current[key.strip()] = value.strip()
    return sections


def test_foot_ini_turns_off_the_bindings_that_start_a_program() -> None:
    """A keyboard plugged into the TV opens no terminal and launches no URL (foot 1.13's
    defaults: Control+Shift+n, Control+Shift+u)."""
    bindings = _foot_sections().get("key-bindings", {})
    for action in ("spawn-terminal", "show-urls-launch", "show-urls-copy", "show-urls-persistent"):
        assert bindings.get(action) == "none", f"{action} is left on"
    for action in ("pipe-visible", "pipe-scrollback", "pipe-selected"):
        assert action not in bindings or bindings[action].endswith("none"), action


def _foot_fonts() -> list[str]:
    for line in FOOT_INI.read_text().splitlines():
        if line.startswith("font="):
            return [part.split(":")[0].strip() for part in line[5:].split(",")]
    raise AssertionError("no font= line in foot.ini")


def test_foot_ini_names_fonts_for_latin_cjk_and_thai() -> None:
    fonts = _foot_fonts()
    assert fonts[0] == "DejaVu Sans Mono"
    assert any(re.fullmatch(r"Noto Sans Mono CJK (SC|TC|JP|KR)", font) for font in fonts)
    assert "Tlwg Mono" in fonts


@pytest.mark.parametrize("variant", ["SC", "TC", "JP", "KR"])
def test_every_documented_font_choice_is_installed(variant: str) -> None:
    """fontconfig resolves each name in foot.ini (and each CJK variant) to that very font."""
    if shutil.which("fc-match") is None:
        missing("fontconfig is not installed (Debian package fontconfig)")
    wanted = [f"Noto Sans Mono CJK {variant}" if "CJK" in f else f for f in _foot_fonts()]
    for font in wanted:
        found = subprocess.run(
            ["fc-match", "-f", "%{family}", font], capture_output=True, text=True, timeout=30
        ).stdout
        if font not in found.split(","):
            missing(f"{font} not installed (fonts-dejavu-core fonts-noto-cjk fonts-thai-tlwg)")


# --------------------------------------------------------------------------------------------
# MemoryDenyWriteExecute= (console unit): the whole program must live without W+X memory.

MDWE_PROBE = textwrap.dedent(
    """
    import ctypes, importlib.util, mmap, ssl, sys
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1
    if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
        sys.exit(77)
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        sys.exit("a writable and executable mapping was allowed: the probe proves nothing")
    except OSError:
        pass
    import babel.dates, httpx, httpx_sse, jwt
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwt.encode({"sub": "company"}, key, algorithm="RS256")
    ssl.create_default_context()
    import lobby_display.cli, lobby_display.service
    if importlib.util.find_spec("lobby_display.app") is not None:
        import lobby_display.app
    from textual.app import App
    from textual.widgets import Static
    class Board(App):
        def compose(self):
            yield Static("board")
        def on_mount(self):
            self.set_timer(0.1, self.exit)
    Board().run(headless=True)
    print("fine")
    """
)


def test_the_program_runs_without_writable_executable_memory() -> None:
    result = subprocess.run(
        [sys.executable, "-c", MDWE_PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TEXTUAL_ANIMATIONS": "none"},
    )
    if result.returncode == 77:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux 6.3+)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "fine"


# --------------------------------------------------------------------------------------------
# The kiosk chain, started for real with wlroots' headless backend

PROBE = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from lobby_display.process import install_signal_handlers
    from lobby_display.service import Notifier, watchdog_period

    async def main():
        notifier = Notifier()
        stop = asyncio.Event()
        def reload():
            notifier.reloading()
            notifier.ready()
        install_signal_handlers(asyncio.get_running_loop(), stop.set, reload)
        report = {
            "pid": os.getpid(),
            "term": os.environ.get("TERM"),
            "watchdog_pid": os.environ.get("WATCHDOG_PID"),
            "period": watchdog_period(),
            "stderr_is_a_terminal": os.isatty(2),
        }
        notifier.ready("probe " + json.dumps(report))
        notifier.watchdog()
        await stop.wait()
        notifier.stopping()
        return 0

    sys.exit(asyncio.run(main()))
    """
)


def _run_as_user() -> list[str]:
    """cage refuses to run as root: as root, run the chain as `nobody`."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        missing("running as root without setpriv (util-linux) to drop to nobody")
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


_LIST_MODULES = (
    "import sys, lobby_display.service\n"
    "files = {getattr(m, '__file__', None) or '' for m in list(sys.modules.values())}\n"
    "print('\\n'.join(sorted(files)))"
)


def _portable_packages(target: Path) -> str:
    """Copy our package and the third-party ones it imports into `target`, readable by anyone.

    The checkout and the test venv may sit where `nobody` cannot read (root's home); the copy
    in the world-readable work directory can always be read.
    """
    files = subprocess.run(
        [sys.executable, "-c", _LIST_MODULES],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    ).stdout.split()
    roots = [ROOT / "src", *{Path(p) for p in sysconfig.get_paths().values()}]
    roots = [r for r in roots if "site-packages" in r.parts or r == ROOT / "src"]
    for name in files:
        path = Path(name)
        for root in roots:
            if path.is_relative_to(root):
                top = root / path.relative_to(root).parts[0]
                if top.is_dir():
                    shutil.copytree(top, target / top.name, dirs_exist_ok=True)
                else:
                    shutil.copy(top, target / top.name)
    subprocess.run(["chmod", "-R", "a+rX", str(target)], check=True)
    return str(target)


def _python_for(prefix: list[str], pythonpath: str) -> str:
    """A Python of this version that the chain's user may run (the venv's may be out of reach)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    errors = b""
    for python in (sys.executable, f"/usr/bin/python{version}"):
        check = subprocess.run(
            [
                *prefix,
                "/usr/bin/env",
                f"PYTHONPATH={pythonpath}",
                python,
                "-c",
                "import lobby_display.service",
            ],
            capture_output=True,
            timeout=60,
        )
        if check.returncode == 0:
            return python
        errors += check.stderr[-300:]
    missing(f"no Python {version} that the unprivileged user can run: {errors!r}")


def _receive(server: socket.socket) -> str:
    try:
        return server.recv(65536).decode()
    except TimeoutError:
        return ""


def test_kiosk_chain_passes_ready_watchdog_and_reload_to_the_app(tmp_path: Path) -> None:
    for program in ("/usr/bin/cage", "/usr/bin/foot"):
        if not os.access(program, os.X_OK):
            missing(f"{program} not installed (Debian packages cage, foot, xwayland)")
    prefix = _run_as_user()
    # Everything the unprivileged user touches lives in a world-traversable directory.
    work = Path(tempfile.mkdtemp(prefix="lobby-display-kiosk-"))
    try:
        work.chmod(0o755)
        runtime = work / "run"
        runtime.mkdir(mode=0o700)
        if prefix:
            shutil.chown(runtime, "nobody", "nogroup")
        probe = work / "probe.py"
        probe.write_text(PROBE)
        foot_ini = work / "foot.ini"
        shutil.copy(FOOT_INI, foot_ini)
        for path in (probe, foot_ini):
            path.chmod(0o644)
        lib = work / "lib"
        lib.mkdir()
        pythonpath = _portable_packages(lib)
        python = _python_for(prefix, pythonpath)

        unit = parse_unit(KIOSK)
        argv = shlex.split(one(unit, "Service", "ExecStart"))
        argv = [f"--config={foot_ini}" if a.startswith("--config=/etc") else a for a in argv]
        argv = [*argv[: argv.index(INSTALLED)], python, str(probe)]
        env = {
            key: value
            for key, value in environment(unit).items()
            if not key.startswith(("XDG_", "HOME"))
        }
        env.update(
            PATH="/usr/bin:/bin",
            HOME=str(runtime),
            XDG_RUNTIME_DIR=str(runtime),
            PYTHONPATH=pythonpath,
            RUNTIME_DIRECTORY=str(runtime),
            # What systemd would set (WATCHDOG_PID names cage, the main process) ...
            NOTIFY_SOCKET=str(work / "notify"),
            WATCHDOG_USEC="30000000",
            WATCHDOG_PID="1",
            # ... and, for this test only, no GPU and no seatd.
            WLR_BACKENDS="headless",
            WLR_RENDERER="pixman",
            LIBSEAT_BACKEND="noop",
        )
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
            server.bind(env["NOTIFY_SOCKET"])
            os.chmod(env["NOTIFY_SOCKET"], 0o777)
            server.settimeout(30)
            log = (work / "cage.log").open("wb")
            chain = subprocess.Popen(  # cwd: the checkout's may be out of the user's reach
                [*prefix, *argv], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work
            )
            try:
                ready = _receive(server)
                assert ready.startswith("READY=1\nSTATUS=probe "), (
                    f"got {ready!r}; cage and foot said:\n{(work / 'cage.log').read_text()[-3000:]}"
                )
                report = json.loads(ready.split("STATUS=probe ", 1)[1])
                assert _receive(server) == "WATCHDOG=1"
                assert report["term"] == "foot"
                assert report["watchdog_pid"] is None
                assert report["period"] == 15.0
                # The app's standard error is foot's terminal: logs must never go there.
                assert report["stderr_is_a_terminal"] is True

                # `systemctl reload`: the unit's ExecReload= line reaches the app, not cage.
                reload = shlex.split(one(unit, "Service", "ExecReload").replace("$$", "$"))
                subprocess.run(reload, env={"RUNTIME_DIRECTORY": str(runtime)}, check=True)
                assert _receive(server).startswith("RELOADING=1\nMONOTONIC_USEC=")
                assert _receive(server) == "READY=1"
                assert chain.poll() is None

                # The app ends (as on SIGTERM from `systemctl stop`): foot and cage follow, so
                # systemd sees the unit end and restarts it.
                os.kill(report["pid"], signal.SIGTERM)
                assert _receive(server) == "STOPPING=1"
                chain.wait(timeout=30)
            finally:
                if chain.poll() is None:
                    chain.kill()
                    chain.wait()
                log.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The dedicated user


SYSUSERS = UNIT_DIR / "lobby-display.sysusers.conf"


def test_sysusers_creates_the_user_and_groups_the_units_need(tmp_path: Path) -> None:
    if shutil.which("systemd-sysusers") is None:
        missing("systemd-sysusers is missing (Debian package systemd)")
    (tmp_path / "etc").mkdir()
    result = subprocess.run(
        ["systemd-sysusers", f"--root={tmp_path}", str(SYSUSERS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    users = {
        line.split(":")[0]: line.split(":")
        for line in (tmp_path / "etc/passwd").read_text().splitlines()
    }
    members = {
        line.split(":")[0]: line.split(":")[3].split(",")
        for line in (tmp_path / "etc/group").read_text().splitlines()
    }
    for unit_path in UNITS:
        unit = parse_unit(unit_path)
        user = one(unit, "Service", "User")
        assert users[user][6] == "/usr/sbin/nologin"
        for group in " ".join(unit["Service"].get("SupplementaryGroups", [])).split():
            assert user in members[group], f"{user} is not in {group}"

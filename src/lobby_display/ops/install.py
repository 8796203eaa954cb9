"""`lobby-display install NAME` and `uninstall NAME`: a screen set up (or removed) in one step.

A plan of steps, each saying what it does and whether it is done: a second run changes nothing,
the first failure puts back what the run wrote. `--dry-run` only prints; `--root DIR` writes
under DIR. The steps are docs/deployment.md's manual steps, in the same order.
"""

from __future__ import annotations

import abc
import argparse
import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final, TextIO

from lobby_display.config import ConfigError, Settings, load_config
from lobby_display.ops import foot_ini
from lobby_display.ops.system import System, SystemError_

USER: Final = "lobby-display"
ETC: Final = "/etc/lobby-display"
UNIT_DIR: Final = "/etc/systemd/system"
SYSUSERS: Final = "/etc/sysusers.d/lobby-display.conf"
PROGRAM: Final = "/opt/lobby-display/.venv/bin/lobby-display"
DEFAULT_CREDENTIALS: Final = f"{ETC}/service-account.json"
CREDENTIAL_ID: Final = "service-account.json"
WALL_UNIT: Final = "lobby-display-wall.service"
GETTYS: Final = ("getty@tty1.service", "autovt@tty1.service")
#: A screen's name: it is part of file names and of a unit's instance name.
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: What every form needs: Python, TLS roots, a clock set from the network, the label's font.
BASE_PACKAGES: Final = ("python3", "ca-certificates", "systemd-timesyncd", "fonts-dejavu-core")
SOUND_PACKAGES: Final = ("espeak-ng", "alsa-utils")
#: Exit codes: refused before anything was written (like a bad config), failed on the way.
EXIT_REFUSED: Final = 2
EXIT_FAILED: Final = 1


@dataclass(frozen=True)
class Form:
    """One way to show a board: its unit template, the files and packages it needs."""

    kind: str
    template: str
    units: tuple[str, ...]
    packages: tuple[str, ...]
    foot: bool
    seatd: bool

    def unit(self, name: str) -> str:
        """The instance unit of the screen `name`."""
        return self.template.replace("@.", f"@{name}.")


KIOSK: Final = Form(
    "kiosk",
    "lobby-display-kiosk@.service",
    ("lobby-display-kiosk@.service",),
    ("cage", "foot", "xwayland", "seatd", "libgl1-mesa-dri"),
    foot=True,
    seatd=True,
)
CONSOLE: Final = Form(
    "console",
    "lobby-display-console@.service",
    ("lobby-display-console@.service",),
    (),
    foot=False,
    seatd=False,
)
SCREEN: Final = Form(
    "wall screen",
    "lobby-display-screen@.service",
    (WALL_UNIT, "lobby-display-screen@.service"),
    ("sway", "foot", "seatd", "libgl1-mesa-dri"),
    foot=True,
    seatd=True,
)
FORMS: Final = (KIOSK, CONSOLE, SCREEN)


class Refused(Exception):
    """The install cannot start (bad name, credentials, arguments): nothing was written."""


class InstallError(Exception):
    """A step failed; the message says which, why, and what was put back."""


# ------------------------------------------------------------------------------------------------
# Where things are


def source_directory() -> Path:
    """The release's `systemd/` directory: beside the venv the program runs from
    (/opt/lobby-display/systemd), or in the checkout of an editable install."""
    candidates = [
        Path(sys.prefix).parent / "systemd",
        Path(__file__).resolve().parents[3] / "systemd",
    ]
    for candidate in candidates:
        if (candidate / KIOSK.template).is_file():
            return candidate
    raise Refused(
        "cannot find the release's systemd/ directory (looked in "
        + ", ".join(str(c) for c in candidates)
        + "): install the program as docs/deployment.md says"
    )


class Accounts:
    """User and group ids by name: this machine's, or those of the tree's etc/passwd and
    etc/group under --root (the host may have no user lobby-display)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def uid(self, name: str) -> int | None:
        if name == "root":
            return 0
        if self.root is None:
            import pwd

            try:
                return pwd.getpwnam(name).pw_uid
            except KeyError:
                return None
        return self._lookup(self.root / "etc/passwd", name)

    def gid(self, name: str) -> int | None:
        if name == "root":
            return 0
        if self.root is None:
            import grp

            try:
                return grp.getgrnam(name).gr_gid
            except KeyError:
                return None
        return self._lookup(self.root / "etc/group", name)

    @staticmethod
    def _lookup(path: Path, name: str) -> int | None:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            fields = line.split(":")
            if len(fields) >= 3 and fields[0] == name and fields[2].isdigit():
                return int(fields[2])
        return None


@dataclass
class Context:
    """What a plan's steps share: where files go, who owns them, what changed so far."""

    root: Path | None
    system: System
    accounts: Accounts
    #: Whether the live steps run (not under --root, unless a test runs them against fakes).
    live: bool = False
    changed: list[str] = field(default_factory=list)
    units_changed: bool = False
    wall_changed: bool = False

    def path(self, absolute: str) -> Path:
        """`absolute` on this machine, or under the tree with --root."""
        if self.root is None:
            return Path(absolute)
        return self.root / absolute.lstrip("/")


# ------------------------------------------------------------------------------------------------
# Steps


class Step(abc.ABC):
    """One thing to do; `live` steps need this machine's systemd or apt, skipped under --root."""

    live = False
    #: Whether doing it changes the machine (a check or a wait does not).
    changes = True
    #: Set on unit files: a change needs `systemctl daemon-reload`.
    is_unit = False
    #: Set on the wall's files: a change needs the wall restarted.
    is_wall = False
    #: Set on the step that (re)starts the unit: after it, a failure puts no file back.
    commits = False

    def __init__(self, ctx: Context, title: str) -> None:
        self.ctx = ctx
        self.title = title

    @abc.abstractmethod
    def is_done(self) -> bool:
        """Whether the machine (or the tree) is already as this step would leave it."""

    @abc.abstractmethod
    def apply(self) -> None:
        """Do it; raises `SystemError_`, `InstallError` or `OSError` on failure."""

    def undo(self) -> None:  # noqa: B027  (most steps have nothing to put back)
        """Put back what `apply` changed (files); steps that cannot say nothing."""


class WriteFile(Step):
    """A file with exactly this content, owner, group and mode (written atomically)."""

    def __init__(
        self,
        ctx: Context,
        path: str,
        content: bytes,
        *,
        owner: str = "root",
        group: str = "root",
        mode: int = 0o644,
        what: str = "",
    ) -> None:
        label = f"{owner}:{group} {mode:04o}"
        super().__init__(ctx, f"write {path} ({label}){': ' + what if what else ''}")
        self.path = ctx.path(path)
        self.content = content
        self.owner, self.group, self.mode = owner, group, mode
        self._before: tuple[bytes, os.stat_result] | None = None
        self._existed = False

    def ids(self) -> tuple[int | None, int | None]:
        return self.ctx.accounts.uid(self.owner), self.ctx.accounts.gid(self.group)

    def is_done(self) -> bool:
        try:
            info = self.path.lstat()
            if not stat.S_ISREG(info.st_mode):
                return False
            same = self.path.read_bytes() == self.content
        except OSError:
            return False
        uid, gid = self.ids()
        return (
            same
            and stat.S_IMODE(info.st_mode) == self.mode
            and (info.st_uid, info.st_gid) == (uid, gid)
        )

    def apply(self) -> None:
        uid, gid = self.ids()
        if uid is None or gid is None:
            missing = self.owner if uid is None else self.group
            raise InstallError(f"{self.path}: no user or group {missing!r} to own it")
        try:
            info = self.path.lstat()
            if stat.S_ISREG(info.st_mode):
                self._before = (self.path.read_bytes(), info)
            self._existed = True
        except FileNotFoundError:
            pass
        write_owned(self.path, self.content, uid, gid, self.mode)

    def undo(self) -> None:
        if self._before is not None:
            data, info = self._before
            write_owned(self.path, data, info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
        elif not self._existed:
            self.path.unlink(missing_ok=True)


class UnitFile(WriteFile):
    is_unit = True


class WallFile(WriteFile):
    is_unit = True
    is_wall = True


class MakeDirectory(Step):
    """A directory owned by root, mode 0755 (made with its parents)."""

    def __init__(self, ctx: Context, path: str) -> None:
        super().__init__(ctx, f"make the directory {path} (root:root 0755)")
        self.path = ctx.path(path)
        self._made = False

    def is_done(self) -> bool:
        try:
            info = self.path.lstat()
        except OSError:
            return False
        return stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o755

    def apply(self) -> None:
        self._made = not self.path.exists()
        make_directories(self.path)
        os.chmod(self.path, 0o755)  # noqa: S103  (/etc's directories are world-readable)

    def undo(self) -> None:
        if self._made:
            with contextlib.suppress(OSError):
                self.path.rmdir()


class Remove(Step):
    """A file or a directory tree that must not be there (with what it held)."""

    def __init__(self, ctx: Context, path: str, what: str = "", *, title: str = "") -> None:
        super().__init__(ctx, title or f"remove {path}{' (' + what + ')' if what else ''}")
        self.path = ctx.path(path)

    def is_done(self) -> bool:
        return not os.path.lexists(self.path)

    def apply(self) -> None:
        if self.path.is_dir() and not self.path.is_symlink():
            shutil.rmtree(self.path)
        else:
            self.path.unlink(missing_ok=True)


class RemoveUnitFile(Remove):
    is_unit = True


class Command(Step):
    """A command whose effect a probe can see (`done`)."""

    def __init__(
        self,
        ctx: Context,
        title: str,
        run: Callable[[], object],
        done: Callable[[], bool],
        *,
        live: bool = False,
        undo: Callable[[], object] | None = None,
        commits: bool = False,
    ) -> None:
        super().__init__(ctx, title)
        self._run, self._done, self._undo = run, done, undo
        self.live = live
        self.commits = commits

    def is_done(self) -> bool:
        return self._done()

    def apply(self) -> None:
        self._run()

    def undo(self) -> None:
        if self._undo is not None:
            self._undo()


class Report(Step):
    """A step that changes nothing (a check, a wait), run when `wanted` says so."""

    changes = False
    live = True

    def __init__(
        self, ctx: Context, title: str, run: Callable[[], None], wanted: Callable[[], bool]
    ) -> None:
        super().__init__(ctx, title)
        self._run, self._wanted = run, wanted

    def is_done(self) -> bool:
        return not self._wanted()

    def apply(self) -> None:
        self._run()


def make_directories(path: Path) -> None:
    """`path` and its missing parents, each made root's with mode 0755 (whatever the umask)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir()
        os.chmod(directory, 0o755)  # noqa: S103  (as /etc's own directories)


def write_owned(path: Path, data: bytes, uid: int, gid: int, mode: int) -> None:
    """Replace `path` with `data`, owned `uid:gid` with `mode` from its first byte on disk
    (through a synced temp file: a reader sees the old file or the new, never half)."""
    make_directories(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, 0o600)
        os.fchown(handle, uid, gid)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fchmod(stream.fileno(), mode)
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ------------------------------------------------------------------------------------------------
# Executing a plan


@dataclass
class Plan:
    """The steps of one install or uninstall, and what to print around them."""

    heading: str
    steps: list[Step]
    notes: list[str] = field(default_factory=list)
    #: Lines printed at the end of a run that did something (or found all done).
    finish: Callable[[], list[str]] | None = None


def execute(plan: Plan, ctx: Context, *, dry_run: bool, out: TextIO) -> int:
    """Run `plan`: skip what is done, say each step, stop at the first failure (putting back the
    files this run wrote). Returns the exit code."""
    print(plan.heading, file=out)
    for note in plan.notes:
        print(f"  note: {note}", file=out)
    applied: list[Step] = []
    committed = False
    would = 0
    for step in plan.steps:
        if step.live and not ctx.live:
            print(f"  skipped  {step.title} (skipped under --root: needs this machine)", file=out)
            continue
        try:
            done = step.is_done()
        except SystemError_ as error:
            if not dry_run:
                return _fail(step, str(error), applied, committed, out)
            print(f"  would    {step.title} (cannot tell now: {error})", file=out)
            would += step.changes
            continue
        if done:
            if step.changes:
                print(f"  ok       {step.title} (already done)", file=out)
            continue
        if step.changes:
            ctx.changed.append(step.title)
            ctx.units_changed |= step.is_unit
            ctx.wall_changed |= step.is_wall
        if dry_run:
            print(f"  would    {step.title}", file=out)
            would += step.changes
            continue
        print(f"  {'doing' if step.changes else 'running'}    {step.title}", file=out)
        # From the (re)start on, the unit runs on the new files: a failure leaves them.
        committed |= step.commits
        try:
            step.apply()
        except (SystemError_, InstallError, OSError) as error:
            return _fail(step, str(error), applied, committed, out)
        applied.append(step)
    if dry_run:
        print(
            f"dry run: {would} change{'s' if would != 1 else ''} to make; nothing was written",
            file=out,
        )
        return 0
    if plan.finish is not None:
        try:
            for line in plan.finish():
                print(line, file=out)
        except SystemError_ as error:
            print(f"failed: {error}", file=out)
            return EXIT_FAILED
    if not ctx.changed:
        print("nothing to change: everything was already in place", file=out)
    else:
        count = len(ctx.changed)
        print(f"done: {count} change{'s' if count != 1 else ''}", file=out)
    return 0


def _fail(step: Step, reason: str, applied: list[Step], committed: bool, out: TextIO) -> int:
    print(f"failed: {step.title}:\n  {reason}", file=out)
    if committed:
        print("the unit was (re)started with the new files; they stay", file=out)
        return EXIT_FAILED
    restored = 0
    for done in reversed(applied):
        try:
            done.undo()
            restored += isinstance(done, (WriteFile, MakeDirectory))
        except (OSError, SystemError_) as error:
            print(f"  could not put back: {done.title}: {error}", file=out)
    if restored:
        print(f"the {restored} file(s) this run wrote were put back as they were", file=out)
    return EXIT_FAILED


# ------------------------------------------------------------------------------------------------
# Install


@dataclass(frozen=True)
class Request:
    """What `lobby-display install` was asked."""

    name: str
    config: Path
    credentials: Path | None = None
    form: Form = KIOSK
    root: Path | None = None
    dry_run: bool = False
    packages: bool = True
    resolution: tuple[int, int] | None = None
    #: Run the live steps even under --root (tests, with stand-ins for systemctl on $PATH).
    live_under_root: bool = False


def install(request: Request, *, out: TextIO | None = None, system: System | None = None) -> int:
    """Set up the screen `request.name`; the exit code (2: refused, nothing written)."""
    out = out if out is not None else sys.stdout
    try:
        ctx, plan = plan_install(request, out=out, system=system)
    except ConfigError as error:
        print(f"{error}\nlobby-display install: nothing was written", file=sys.stderr)
        return EXIT_REFUSED
    except Refused as refused:
        print(f"lobby-display install: {refused}; nothing was written", file=sys.stderr)
        return EXIT_REFUSED
    except SystemError_ as error:
        print(f"lobby-display install: {error}; nothing was written", file=sys.stderr)
        return EXIT_FAILED
    return execute(plan, ctx, dry_run=request.dry_run, out=out)


def plan_install(
    request: Request, *, out: TextIO, system: System | None = None
) -> tuple[Context, Plan]:
    """Validate everything, then the steps. Raises `ConfigError` (bad config), `Refused`."""
    name, form = request.name, request.form
    check_name(name)
    settings = load_config(request.config, environ={})
    locales = list(settings.display.locales)
    if form is CONSOLE:
        scripts = [
            loc for loc in locales if loc in foot_ini.CJK_VARIANT or loc in foot_ini.THAI_LOCALES
        ]
        if scripts:
            raise ConfigError(
                str(request.config),
                [
                    f"display.locales: the text console cannot draw {', '.join(scripts)}: "
                    "install without --console (the kiosk unit)"
                ],
            )
    root = request.root
    if root is not None:
        root = root.resolve()
    system = system if system is not None else System(root, out=out)
    live = root is None or request.live_under_root
    ctx = Context(root=root, system=system, accounts=Accounts(root), live=live)
    source = source_directory()
    unit = form.unit(name)
    refuse_conflicts(ctx, name, form)
    if root is None and not request.dry_run:
        if os.geteuid() != 0:
            raise Refused("run as root (it installs packages and writes /etc)")
        system.require_systemd(f"install {unit}")
        if not Path(PROGRAM).is_file():
            raise Refused(f"{PROGRAM} is missing: install the program first (docs/deployment.md)")

    credentials = plan_credentials(ctx, settings, request)
    notes = []
    size_note, size = choose_pixel_size(ctx, settings, request.resolution)
    if form.foot:
        notes.append(size_note)
    if root is not None and not ctx.path(PROGRAM).is_file():
        notes.append(f"{ctx.path(PROGRAM)} is missing: put the program in the image too")

    steps: list[Step] = [MakeDirectory(ctx, ETC)]
    packages = sorted(
        {
            *BASE_PACKAGES,
            *form.packages,
            *(foot_ini.font_packages(locales) if form.foot else ()),
            *(SOUND_PACKAGES if settings.sound.enabled else ()),
        }
    )
    if request.packages:
        steps.append(
            Command(
                ctx,
                f"install the packages {' '.join(packages)}",
                run=lambda: system.install_packages(system.missing_packages(packages)),
                done=lambda: not system.missing_packages(packages),
                live=True,
            )
        )
        if form.seatd:
            steps.append(
                Command(
                    ctx,
                    "enable and start seatd.service (the screen's seat)",
                    run=lambda: system.manager("enable", "--now", "seatd.service"),
                    done=lambda: (
                        system.unit_file_state("seatd.service") == "enabled"
                        and system.is_active("seatd.service")
                    ),
                    live=True,
                )
            )
    sysusers_file = (source / "lobby-display.sysusers.conf").read_bytes()
    steps.append(WriteFile(ctx, SYSUSERS, sysusers_file, what="the user lobby-display"))
    steps.append(
        Command(
            ctx,
            f"create the user {USER} (systemd-sysusers)",
            run=lambda: system.sysusers(ctx.path(SYSUSERS)),
            done=lambda: ctx.accounts.uid(USER) is not None and ctx.accounts.gid(USER) is not None,
        )
    )
    for unit_file in form.units:
        kind = WallFile if unit_file == WALL_UNIT else UnitFile
        steps.append(kind(ctx, f"{UNIT_DIR}/{unit_file}", (source / unit_file).read_bytes()))
    if form is SCREEN:
        steps.append(
            WallFile(
                ctx, f"{ETC}/sway.conf", (source / "sway.conf").read_bytes(), what="the wall's sway"
            )
        )
    dropin = f"{UNIT_DIR}/{unit}.d/credentials.conf"
    if credentials.dropin is None:
        steps.append(
            RemoveUnitFile(ctx, dropin, title=f"no drop-in {dropin} (the unit's own key file)")
        )
    else:
        steps.append(
            UnitFile(ctx, dropin, credentials.dropin.encode(), what=credentials.dropin_why)
        )
    config_bytes = request.config.read_bytes()
    if settings.service.api_key is not None:
        steps.append(
            WriteFile(
                ctx,
                f"{ETC}/{name}.toml",
                config_bytes,
                owner=USER,
                group=USER,
                mode=0o600,
                what="holds the API key: for the display's user alone",
            )
        )
    else:
        steps.append(WriteFile(ctx, f"{ETC}/{name}.toml", config_bytes, group=USER, mode=0o640))
    if credentials.source is not None and credentials.target is not None:
        steps.append(
            WriteFile(
                ctx,
                credentials.target,
                credentials.source,
                mode=0o600,
                what="the service-account key (systemd hands the unit a copy)",
            )
        )
    if form.foot:
        template = (source / "foot.ini").read_text()
        text = foot_ini.render(template, locales, size)
        fonts = ", ".join(foot_ini.fonts_for(locales))
        steps.append(
            WriteFile(
                ctx, f"{ETC}/{name}.foot.ini", text.encode(), what=f"{fonts}, pixelsize {size}"
            )
        )

    steps.append(
        Command(
            ctx,
            "reload systemd's units (systemctl daemon-reload)",
            run=lambda: system.manager("daemon-reload"),
            done=lambda: not ctx.units_changed,
            live=True,
        )
    )
    check_props = [f"User={USER}", f"StateDirectory=lobby-display/{name}", *credentials.properties]
    if form is CONSOLE:
        check_props.append("Environment=LOBBY_DISPLAY_DISPLAY__THEME=console")

    def run_check() -> None:
        code = system.run_as_unit(check_props, [PROGRAM, "check", "--config", f"{ETC}/{name}.toml"])
        if code != 0:
            raise InstallError(
                f"lobby-display check found {'a bad config' if code == 2 else 'a problem'} "
                "(its report is above); nothing was enabled or started"
            )

    steps.append(
        Report(
            ctx,
            f"check {name} as its unit would (user {USER}, its credentials and state directory)",
            run=run_check,
            wanted=lambda: bool(ctx.changed) or not system.is_active(unit),
        )
    )
    steps.append(
        Command(
            ctx,
            "mask getty@tty1 and autovt@tty1 (the screen owns tty1)",
            run=lambda: system.systemctl("mask", *GETTYS),
            done=lambda: all(system.unit_file_state(g) == "masked" for g in GETTYS),
            undo=lambda: system.systemctl("unmask", *GETTYS),
        )
    )
    steps.append(
        Command(
            ctx,
            f"enable {unit}" + (f" (and {WALL_UNIT})" if form is SCREEN else ""),
            run=lambda: system.systemctl("enable", unit),
            done=lambda: system.unit_file_state(unit) == "enabled",
            undo=lambda: system.systemctl("disable", unit),
        )
    )
    if form is SCREEN:
        steps.append(
            Command(
                ctx,
                f"restart {WALL_UNIT} (its files changed; every screen restarts with it)",
                run=lambda: system.manager("restart", WALL_UNIT),
                done=lambda: not ctx.wall_changed or not system.is_active(WALL_UNIT),
                live=True,
            )
        )

    def start() -> None:
        system.manager("restart" if system.is_active(unit) else "start", unit)

    steps.append(
        Command(
            ctx,
            f"start {unit} (restart it if it runs)",
            run=start,
            done=lambda: system.is_active(unit) and not ctx.changed,
            live=True,
            commits=True,
        )
    )

    def finish() -> list[str]:
        if not ctx.live:
            return [f"{unit} is installed under {root}"]
        state = system.wait_ready(unit)
        status = state.get("StatusText", "")
        line = f"{unit}: {state.get('ActiveState')} ({state.get('SubState')})"
        return [line + (f', Status: "{status}"' if status else "")]

    where = f" into {root}" if root is not None else ""
    heading = f"lobby-display install {name} ({form.kind}: {unit}){where}"
    return ctx, Plan(heading, steps, notes, finish)


def check_name(name: str) -> None:
    if not NAME_PATTERN.fullmatch(name):
        raise Refused(
            f"{name!r} is not a screen name: letters, digits, '-' and '_', at most 64 "
            "(it names /etc/lobby-display/NAME.toml and the unit's instance)"
        )


def refuse_conflicts(ctx: Context, name: str, form: Form) -> None:
    """A PC runs one kiosk or console instance, or the wall and its screens: refuse another."""
    for other in enabled_screens(ctx):
        other_form, other_name = other
        if other_form is form and other_name == name:
            continue
        if form is SCREEN and other_form is SCREEN:
            continue
        what = other_form.unit(other_name)
        if other_name == name:
            why = f"{name} is installed as a {other_form.kind}"
        else:
            why = f"{what} is enabled and takes tty1 too (one board per PC, or the wall)"
        raise Refused(f"{why}: run `lobby-display uninstall {other_name}` first")


def enabled_screens(ctx: Context) -> list[tuple[Form, str]]:
    """The kiosk, console and wall-screen instances enabled in the unit directory."""
    found = []
    for wants in ctx.path(UNIT_DIR).glob("*.wants"):
        for link in wants.iterdir():
            for form in FORMS:
                prefix = form.template.split("@")[0] + "@"
                if link.name.startswith(prefix) and link.name.endswith(".service"):
                    found.append((form, link.name[len(prefix) : -len(".service")]))
    return sorted(set(found), key=lambda item: (item[0].kind, item[1]))


@dataclass(frozen=True)
class Credentials:
    """Where the key file goes, what the unit is told (a drop-in), what `check` is given."""

    source: bytes | None
    target: str | None
    dropin: str | None
    dropin_why: str
    properties: tuple[str, ...]


def plan_credentials(ctx: Context, settings: Settings, request: Request) -> Credentials:
    service = settings.service
    if service.api_key is not None:
        if request.credentials is not None:
            raise Refused(
                f"{request.config} sets a fixed service.api_key: --credentials is not used; "
                "leave it out, or remove api_key from the config"
            )
        no_key_file = (
            "# The config holds a fixed API key: no key file to hand the unit.\n"
            "[Service]\nLoadCredential=\n"
        )
        return Credentials(None, None, no_key_file, "no key file (api_key)", ())
    configured = service.credentials
    assert configured is not None  # the config's validator: credentials or api_key
    target = str(configured) if configured.is_absolute() else f"{ETC}/{configured.name}"
    credential_id = configured.name
    dropin: str | None = None
    if (credential_id, target) != (CREDENTIAL_ID, DEFAULT_CREDENTIALS):
        dropin = (
            "# The config's service.credentials, handed to the unit under its own name.\n"
            f"[Service]\nLoadCredential=\nLoadCredential={credential_id}:{target}\n"
        )
    properties = (f"LoadCredential={credential_id}:{target}",)
    data = None
    if request.credentials is not None:
        data = validated_credentials(request.credentials)
    elif not ctx.path(target).is_file():
        raise Refused(
            f"{ctx.path(target)} (the config's service.credentials) is not there: "
            "give the service-account file with --credentials FILE"
        )
    return Credentials(data, target, dropin, f"the key file {target}", properties)


def validated_credentials(path: Path) -> bytes:
    """The bytes of a service-account file that the display will accept (checked on a private
    copy: the installer's file may be open to others; the installed one will not be)."""
    from lobby_display.auth import CredentialsError, load_service_account
    from lobby_display.files import FileRefused, read_regular

    try:
        data = read_regular(path, limit=64 * 1024, what="a service-account JSON file").data
    except FileNotFoundError:
        raise Refused(f"{path}: service-account file not found") from None
    except (FileRefused, OSError) as error:
        raise Refused(f"{path}: {getattr(error, 'reason', None) or error.strerror}") from None
    with tempfile.TemporaryDirectory(prefix="lobby-display-install-") as directory:
        copy = Path(directory) / path.name
        copy.write_bytes(data)
        copy.chmod(0o600)
        try:
            load_service_account(copy)
        except CredentialsError as error:
            raise Refused(str(error).replace(str(copy), str(path))) from None
    return data


def choose_pixel_size(
    ctx: Context, settings: Settings, resolution: tuple[int, int] | None
) -> tuple[str, int]:
    """foot's pixel size for this screen's TV, and a note saying where the size came from."""
    output = settings.display.output
    if resolution is not None:
        width, height = resolution
        origin = "--resolution"
    else:
        found = None if ctx.root is not None else foot_ini.connected_resolution(output)
        if found is not None:
            connector, (width, height) = found
            origin = f"the TV on {connector}"
        else:
            width, height = foot_ini.DEFAULT_RESOLUTION
            why = "none read under --root" if ctx.root is not None else "no TV found connected"
            origin = f"{why}; give --resolution WxH"
    size = foot_ini.pixel_size(width, height)
    columns, rows = foot_ini.grid(width, height, size)
    note = (
        f"screen {width}x{height} ({origin}): foot pixelsize {size}, about {columns} x {rows} cells"
    )
    return note, size


# ------------------------------------------------------------------------------------------------
# Uninstall


def uninstall(
    name: str,
    *,
    purge: bool = False,
    root: Path | None = None,
    dry_run: bool = False,
    out: TextIO | None = None,
    system: System | None = None,
) -> int:
    """Disable and remove what `install` wrote for `name` (its state too with `purge`)."""
    out = out if out is not None else sys.stdout
    try:
        check_name(name)
        if root is not None:
            root = root.resolve()
        system = system if system is not None else System(root, out=out)
        ctx = Context(root=root, system=system, accounts=Accounts(root), live=root is None)
        if root is None and not dry_run:
            if os.geteuid() != 0:
                raise Refused("run as root")
            system.require_systemd(f"uninstall {name}")
        plan = plan_uninstall(ctx, name, purge)
    except Refused as refused:
        print(f"lobby-display uninstall: {refused}; nothing was changed", file=sys.stderr)
        return EXIT_REFUSED
    except SystemError_ as error:
        print(f"lobby-display uninstall: {error}; nothing was changed", file=sys.stderr)
        return EXIT_FAILED
    return execute(plan, ctx, dry_run=dry_run, out=out)


def plan_uninstall(ctx: Context, name: str, purge: bool) -> Plan:
    system = ctx.system
    screens = enabled_screens(ctx)
    mine = [form for form, other in screens if other == name]
    others = [form for form, other in screens if other != name]
    config = ctx.path(f"{ETC}/{name}.toml")
    steps: list[Step] = []
    for form in mine:
        unit = form.unit(name)
        steps += [
            Command(
                ctx,
                f"stop {unit}",
                run=partial(system.manager, "stop", unit),
                done=lambda unit=unit: not system.is_active(unit),  # type: ignore[misc]
                live=True,
            ),
            Command(
                ctx,
                f"disable {unit}",
                run=partial(system.systemctl, "disable", unit),
                done=lambda unit=unit: system.unit_file_state(unit) != "enabled",  # type: ignore[misc]
            ),
        ]
    if SCREEN in mine and SCREEN in others:
        # Disabling a screen disables the wall too (its [Install] Also=); the others need it.
        steps.append(
            Command(
                ctx,
                f"enable {WALL_UNIT} again (the other screens start with it)",
                run=partial(system.systemctl, "enable", WALL_UNIT),
                done=lambda: system.unit_file_state(WALL_UNIT) == "enabled",
            )
        )
    for form in FORMS:
        steps.append(RemoveUnitFile(ctx, f"{UNIT_DIR}/{form.unit(name)}.d", "its drop-ins"))
    key_file = _credentials_of(config)
    steps.append(Remove(ctx, f"{ETC}/{name}.toml"))
    steps.append(Remove(ctx, f"{ETC}/{name}.foot.ini"))
    if not [path for path in ctx.path(ETC).glob("*.toml") if path != config]:
        for path in sorted({DEFAULT_CREDENTIALS, *([key_file] if key_file else [])}):
            if path.startswith(ETC + "/"):
                steps.append(Remove(ctx, path, "the key file: no screen left uses it"))
    for form in FORMS:
        if form in others:
            continue
        if form is SCREEN and ctx.path(f"{UNIT_DIR}/{WALL_UNIT}").exists():
            steps += [
                Command(
                    ctx,
                    f"stop {WALL_UNIT} (no screen left)",
                    run=partial(system.manager, "stop", WALL_UNIT),
                    done=lambda: not system.is_active(WALL_UNIT),
                    live=True,
                ),
                Command(
                    ctx,
                    f"disable {WALL_UNIT}",
                    run=partial(system.systemctl, "disable", WALL_UNIT),
                    done=lambda: system.unit_file_state(WALL_UNIT) != "enabled",
                ),
            ]
            steps.append(Remove(ctx, f"{ETC}/sway.conf", "the wall's: no screen left"))
        for unit_file in form.units:
            steps.append(RemoveUnitFile(ctx, f"{UNIT_DIR}/{unit_file}", "no screen left uses it"))
    if not others:
        steps.append(
            Command(
                ctx,
                "unmask getty@tty1 and autovt@tty1 (a login prompt on tty1 again)",
                run=partial(system.systemctl, "unmask", *GETTYS),
                done=lambda: all(system.unit_file_state(g) != "masked" for g in GETTYS),
            )
        )
    steps.append(
        Command(
            ctx,
            "reload systemd's units (systemctl daemon-reload)",
            run=partial(system.manager, "daemon-reload"),
            done=lambda: not ctx.units_changed,
            live=True,
        )
    )
    notes = [f"the user {USER} and {SYSUSERS} stay (files may belong to it)"]
    for directory in (f"/var/lib/lobby-display/{name}", f"/var/cache/lobby-display/{name}"):
        if purge:
            steps.append(Remove(ctx, directory, "--purge"))
        else:
            notes.append(f"the state in {directory} stays (--purge removes it)")
    steps.append(RemoveEmptyDirectory(ctx, ETC))
    where = f" in {ctx.root}" if ctx.root is not None else ""
    return Plan(f"lobby-display uninstall {name}{where}", steps, notes)


class RemoveEmptyDirectory(Step):
    """A directory removed once nothing is left in it."""

    def __init__(self, ctx: Context, path: str) -> None:
        super().__init__(ctx, f"remove {path} if empty")
        self.path = ctx.path(path)

    def is_done(self) -> bool:
        try:
            return not self.path.is_dir() or any(self.path.iterdir())
        except OSError:
            return True

    def apply(self) -> None:
        self.path.rmdir()


def _credentials_of(config: Path) -> str | None:
    """The absolute key file a screen's config names, if it can be read."""
    try:
        settings = load_config(config, environ={})
    except ConfigError:
        return None
    configured = settings.service.credentials
    if configured is None:
        return None
    return str(configured) if configured.is_absolute() else f"{ETC}/{configured.name}"


def form_for(*, console: bool, wall: bool) -> Form:
    """The form `--console` / `--wall` pick (the kiosk without either)."""
    if console and wall:
        raise Refused("--console and --wall are two different set-ups: give one")
    return CONSOLE if console else SCREEN if wall else KIOSK


def parse_resolution(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        return foot_ini.parse_resolution(text)
    except ValueError as error:
        raise Refused(f"--resolution {error}") from None


def install_command(args: argparse.Namespace) -> int:
    """`lobby-display install`'s arguments -> `install`."""
    try:
        form = form_for(console=args.console, wall=args.wall)
        resolution = parse_resolution(args.resolution)
    except Refused as refused:
        print(f"lobby-display install: {refused}; nothing was written", file=sys.stderr)
        return EXIT_REFUSED
    request = Request(
        name=args.name,
        config=args.config,
        credentials=args.credentials,
        form=form,
        root=args.root,
        dry_run=args.dry_run,
        packages=not args.no_packages,
        resolution=resolution,
    )
    return install(request)


def uninstall_command(args: argparse.Namespace) -> int:
    """`lobby-display uninstall`'s arguments -> `uninstall`."""
    return uninstall(args.name, purge=args.purge, root=args.root, dry_run=args.dry_run)

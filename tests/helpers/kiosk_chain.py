"""The kiosk chain, headless: what a TV shows, captured as a PNG.

sway on wlroots' headless backend with software rendering (pixman) shows foot full screen at the
TV's resolution; foot runs with the project's `systemd/foot.ini` (font size scaled for 4K) and
starts `lobby-display run` against a config; grim captures the output. This is the chain the
product ships (FIELD-NOTES, "The real kiosk chain"), in a form the tests and
`tools/screenshots.py` share:

    with KioskChain(config, size=(1920, 1080)) as chain:   # config: readable by CHAIN_USER
        picture = chain.wait_until(lambda shot: colours(shot) > 16)   # a PIL image
        labels = read_labels(picture)                # the big labels, as OCR reads them from afar

`Scene` puts the simulator behind it, with calls made on cue (the tests and the screenshots use
that).

sway and foot refuse to run as root, so as root the chain runs as an unprivileged system user
(`CHAIN_USER`, created if missing); as any other user it runs as that user. The project's venv
Python may live where that user cannot go (root's home), so the chain runs Debian's
/usr/bin/python3 (same minor version) on world-readable copies of the project's package and of
the installed distributions it depends on (`runtime()`), made once per version and reused.

`missing_tools()` names what is not installed; `read_labels()` is the legibility check (OCR of
the picture scaled to 25 %).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as metadata
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from packaging.requirements import Requirement

# The Noto CJK variant foot should prefer for a locale: the one `lobby-display install` writes.
from lobby_display.ops.foot_ini import CJK_VARIANT

ROOT = Path(__file__).resolve().parents[2]
FOOT_INI = ROOT / "systemd" / "foot.ini"
#: The unprivileged user the chain runs as when the tests run as root.
CHAIN_USER = "lobby-display-chain"
#: Programs the chain needs, with the Debian package of each.
PROGRAMS: Mapping[str, str] = {
    "sway": "sway",
    "foot": "foot",
    "grim": "grim",
    "tesseract": "tesseract-ocr",
    "setpriv": "util-linux",
    "fc-match": "fontconfig",
}
#: Fonts foot.ini names, with their Debian packages.
FONTS: Mapping[str, str] = {
    "DejaVu Sans Mono": "fonts-dejavu-core",
    "Noto Sans Mono CJK SC": "fonts-noto-cjk",
    "Tlwg Mono": "fonts-thai-tlwg",
}
#: foot.ini's pixel size at 1920x1080 (18x36-pixel cells, 106 x 30): scaled with the height.
BASE_PIXELSIZE = 30
BASE_HEIGHT = 1080


# --------------------------------------------------------------------------------------------
# What is needed


def system_python() -> str:
    """Debian's Python of the running minor version (the chain's user can run it)."""
    return f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"


def missing_tools() -> list[str]:
    """What the chain needs and does not find, as 'program (Debian package)' phrases."""
    absent = [
        f"{program} ({package})"
        for program, package in PROGRAMS.items()
        if shutil.which(program) is None
    ]
    if not os.access(system_python(), os.X_OK):
        absent.append(f"{system_python()} (python3)")
    if shutil.which("fc-match") is not None:
        for family, package in FONTS.items():
            found = subprocess.run(
                ["fc-match", "--format=%{family}", family],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            ).stdout
            if family not in found.split(","):
                absent.append(f"font {family} ({package})")
    return absent


# --------------------------------------------------------------------------------------------
# Who runs it


def chain_user() -> tuple[int, int]:
    """uid and gid the chain runs as: `CHAIN_USER` (created if missing) as root, else ours."""
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    made = None
    for _ in range(10):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(CHAIN_USER)
            return entry.pw_uid, entry.pw_gid
        if made is not None:
            # A test of another worker (pytest -n) making it at the same time held the lock.
            time.sleep(0.5)
        made = subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                CHAIN_USER,
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    raise ChainError(f"useradd {CHAIN_USER} failed: {made.stderr.strip() if made else ''}")


def as_user(uid: int, gid: int) -> list[str]:
    """The command prefix that runs a program as uid:gid (nothing when we are that user)."""
    if os.geteuid() == uid:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]


def give(path: Path, uid: int, gid: int) -> None:
    """Make `path` (recursively) the chain user's."""
    if os.geteuid() != 0:
        return
    for folder, _, files in os.walk(path):
        os.chown(folder, uid, gid)
        for name in files:
            os.chown(Path(folder, name), uid, gid)


# --------------------------------------------------------------------------------------------
# The program, where the chain's user can run it


@dataclass(frozen=True)
class Runtime:
    """A Python the chain's user can run, and the PYTHONPATH that holds the project."""

    python: str
    pythonpath: str

    def command(self, *args: str) -> list[str]:
        """`lobby-display ARGS...` with this Python."""
        return [self.python, "-m", "lobby_display", *args]


def _closure() -> list[metadata.Distribution]:
    """The installed distributions the project depends on (pyproject's list, recursively)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [(Requirement(text), "") for text in project["dependencies"]]
    found: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, str]] = set()
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        extras = sorted(requirement.extras) or [""]
        if all((name, wanted) in seen for wanted in extras):
            continue
        seen.update((name, wanted) for wanted in extras)
        dist = found.get(name) or metadata.distribution(requirement.name)
        found[name] = dist
        for text in dist.requires or []:
            for wanted in extras:
                todo.append((Requirement(text), wanted))
    return sorted(found.values(), key=lambda dist: dist.metadata["Name"].lower())


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()[:16]


def _sources() -> list[tuple[str, bytes]]:
    package = ROOT / "src" / "lobby_display"
    return [
        (str(path.relative_to(package)), path.read_bytes())
        for path in sorted(package.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]


def _made_once(target: Path, fill: Callable[[Path], None]) -> Path:
    """`target`, filled by `fill(folder)` once (in a sibling, then renamed), world-readable."""
    if (target / ".complete").exists():
        return target
    building = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
    try:
        fill(building)
        subprocess.run(["chmod", "-R", "a+rX,go-w", str(building)], check=True, timeout=60)
        (building / ".complete").touch()
        building.rename(target)
    except OSError:
        if not (target / ".complete").exists():
            raise
    finally:
        shutil.rmtree(building, ignore_errors=True)  # made meanwhile by another run: theirs
    return target


def _prune(base: Path, keep: set[Path], days: float = 1.0) -> None:
    """Remove copies made for other versions that nobody used for `days`."""
    limit = time.time() - days * 86400
    for old in base.glob("lobby-display-chain-*"):
        with contextlib.suppress(OSError):
            if old not in keep and old.is_dir() and old.stat().st_mtime < limit:
                shutil.rmtree(old, ignore_errors=True)


def runtime(base: Path = Path("/var/tmp")) -> Runtime:
    """Debian's Python, and world-readable copies of the project and of its dependencies.

    The same files as a non-editable install: our package as it is in src/ now, and the files
    the installed distributions recorded, compiled modules included (the same CPython minor
    version reads them). Each copy is made once and reused while nothing changes: the
    dependencies (`base/lobby-display-chain-deps-HASH`, by Python and distribution versions,
    about 110 MB) and the package (`...-src-HASH`, by the sources' contents); copies unused
    for a day are removed.
    """
    dists = _closure()
    versions = "".join(f"{dist.metadata['Name']}=={dist.version}\n" for dist in dists)

    def fill_deps(folder: Path) -> None:
        for dist in dists:
            for file in dist.files or []:
                source = Path(str(dist.locate_file(file)))
                if file.parts[0] == ".." or not source.is_file():
                    continue  # scripts in bin/, and the like
                copy = folder / file
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy)

    def fill_src(folder: Path) -> None:
        for name, content in sources:
            copy = folder / "lobby_display" / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(content)

    sources = _sources()
    deps_key = _digest(sys.version.encode(), versions.encode())
    src_key = _digest(*(part for name, content in sources for part in (name.encode(), content)))
    deps = _made_once(base / f"lobby-display-chain-deps-{deps_key}", fill_deps)
    src = _made_once(base / f"lobby-display-chain-src-{src_key}", fill_src)
    for used in (deps, src):
        os.utime(used)
    _prune(base, {deps, src})
    return Runtime(system_python(), f"{src}:{deps}")


# --------------------------------------------------------------------------------------------
# The chain


def foot_ini(height: int, locale: str | None = None) -> str:
    """systemd/foot.ini with the font size for an output `height` pixels high (30 at 1080p,
    60 at 2160p, as docs/deployment.md says) and the CJK variant of `locale`."""
    text = FOOT_INI.read_text()
    size = round(BASE_PIXELSIZE * height / BASE_HEIGHT)
    text = re.sub(r"pixelsize=\d+", f"pixelsize={size}", text)
    variant = CJK_VARIANT.get(locale or "")
    if variant:
        text = text.replace("Noto Sans Mono CJK SC", f"Noto Sans Mono CJK {variant}")
    return text


class ChainError(RuntimeError):
    """The chain did not start or could not capture; the message holds the logs' ends."""


@dataclass
class KioskChain:
    """sway (headless) + foot (systemd/foot.ini) + `lobby-display run --config CONFIG`.

    `config`'s directory is handed to the chain's user (its state directory must be in it or
    writable by that user). `locale` picks foot's CJK font variant. Start with `with`; every
    `capture()` is a grim of the whole output.
    """

    config: Path
    size: tuple[int, int] = (1920, 1080)
    locale: str | None = None
    program: Runtime | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    log_files: Sequence[Path] = ()
    """Files whose ends `logs()` shows with sway's (the program's [log] file, say)."""
    work: Path = field(init=False)
    runtime_dir: Path = field(init=False)
    display: str = field(init=False, default="")
    _sway: subprocess.Popen[bytes] | None = field(init=False, default=None)
    _uid: int = field(init=False, default=-1)
    _gid: int = field(init=False, default=-1)
    _shots: int = field(init=False, default=0)

    def __enter__(self) -> KioskChain:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    # --- life ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start sway, foot and the program; return once the compositor's socket is there."""
        self._uid, self._gid = chain_user()
        program = self.program or runtime()
        self.work = Path(tempfile.mkdtemp(prefix="lobby-display-chain-", dir="/tmp"))
        self.work.chmod(0o755)
        self.runtime_dir = self.work / "run"
        home = self.work / "home"
        for folder in (self.runtime_dir, home):
            folder.mkdir(mode=0o700)
            give(folder, self._uid, self._gid)
        give(self.config.parent, self._uid, self._gid)
        width, height = self.size
        ini = self.work / "foot.ini"
        ini.write_text(foot_ini(height, self.locale))
        environment = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "PYTHONPATH": program.pythonpath,
            "PYTHONDONTWRITEBYTECODE": "1",
            "RUNTIME_DIRECTORY": str(self.runtime_dir),
            **self.environ,
        }
        exports = "".join(f"export {key}={_quote(value)}\n" for key, value in environment.items())
        command = " ".join(
            _quote(arg) for arg in program.command("run", "--config", str(self.config))
        )
        launch = self.work / "launch"
        launch.write_text(
            "#!/bin/sh\n"
            f"echo $$ >{self.runtime_dir}/launch.pid\n"
            f"cd {_quote(str(home))}\n"
            f"{exports}"
            f"{command}\n"
            f'echo "$?" >{self.runtime_dir}/exited\n'
            "exec sleep 3600\n"
        )
        (self.work / "sway.conf").write_text(
            f"output HEADLESS-1 mode {width}x{height}\n"
            "output HEADLESS-1 bg #000000 solid_color\n"
            "default_border none\n"
            "default_floating_border none\n"
            "seat seat0 hide_cursor 1\n"
            f"exec foot --config={ini} {launch}\n"
        )
        for path in (ini, launch, self.work / "sway.conf"):
            path.chmod(0o755 if path == launch else 0o644)
        log = (self.work / "sway.log").open("wb")
        self._sway = subprocess.Popen(
            [
                *as_user(self._uid, self._gid),
                "env",
                "-i",
                "PATH=/usr/bin:/bin",
                f"HOME={home}",
                "LANG=C.UTF-8",
                f"XDG_RUNTIME_DIR={self.runtime_dir}",
                "WLR_BACKENDS=headless",
                "WLR_RENDERER=pixman",
                "WLR_LIBINPUT_NO_DEVICES=1",
                "sway",
                "--config",
                str(self.work / "sway.conf"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            # Its own working directory: foot (and the program) inherit it, and the checkout's
            # may be out of the chain user's reach (a fresh clone in root's 0700 home).
            cwd=self.work,
        )
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            sockets = sorted(p.name for p in self.runtime_dir.glob("wayland-[0-9]*"))
            sockets = [name for name in sockets if not name.endswith(".lock")]
            if sockets:
                self.display = sockets[0]
                return
            if self._sway.poll() is not None:
                break
            time.sleep(0.1)
        raise ChainError(f"the compositor did not start\n{self.logs()}")

    def stop(self) -> None:
        """End the program (SIGTERM, as systemd would), foot's shell and sway; keep nothing."""
        for name in ("app.pid", "launch.pid"):
            self._end(self._pid(name))
        if self._sway is not None:
            if self._sway.poll() is None:
                self._sway.terminate()
                try:
                    self._sway.wait(10)
                except subprocess.TimeoutExpired:
                    self._sway.kill()
                    self._sway.wait(10)
            self._sway = None
        if hasattr(self, "work") and not os.environ.get("KIOSK_CHAIN_KEEP"):
            shutil.rmtree(self.work, ignore_errors=True)

    def _pid(self, name: str) -> int | None:
        if not hasattr(self, "runtime_dir"):
            return None
        with contextlib.suppress(OSError, ValueError):
            return int((self.runtime_dir / name).read_text().split()[0])
        return None

    def _end(self, pid: int | None) -> None:
        """SIGTERM `pid` if it is still one of the chain's processes; SIGKILL after 5 s."""
        if pid is None or not self._ours(pid):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self._ours(pid):
            time.sleep(0.05)
        if self._ours(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _ours(self, pid: int) -> bool:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        uid = re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE)
        state = re.search(r"^State:\s+(\S)", status, re.MULTILINE)
        return bool(uid and int(uid.group(1)) == self._uid and state and state.group(1) != "Z")

    # --- looking at it ---------------------------------------------------------------------

    def exited(self) -> int | None:
        """The program's exit status when it has ended (its last screen stays), else None."""
        with contextlib.suppress(OSError, ValueError):
            return int((self.runtime_dir / "exited").read_text())
        return None

    def capture(self, save: Path | None = None) -> Any:
        """grim the output; returns a PIL image (RGB) and writes the PNG to `save` if given."""
        from PIL import Image

        self._shots += 1
        shot = self.runtime_dir / f"shot-{self._shots}.png"
        done = subprocess.run(
            [
                *as_user(self._uid, self._gid),
                "env",
                f"XDG_RUNTIME_DIR={self.runtime_dir}",
                f"WAYLAND_DISPLAY={self.display}",
                "grim",
                str(shot),
            ],
            capture_output=True,
            timeout=60,
            check=False,
            cwd=self.work,
        )
        if done.returncode != 0:
            raise ChainError(f"grim failed: {done.stderr.decode()[-500:]}\n{self.logs()}")
        with Image.open(shot) as image:
            picture = image.convert("RGB")
        shot.unlink()
        if save is not None:
            save.parent.mkdir(parents=True, exist_ok=True)
            picture.save(save, optimize=True)
        return picture

    def wait_until(
        self, check: Callable[[Any], bool], timeout: float = 30, every: float = 0.5
    ) -> Any:
        """Capture until `check(picture)` holds; returns that picture, else raises ChainError."""
        deadline = time.monotonic() + timeout
        while True:
            picture = self.capture()
            if check(picture):
                return picture
            if self.exited() is not None:
                raise ChainError(f"the program ended with status {self.exited()}\n{self.logs()}")
            if time.monotonic() > deadline:
                raise ChainError(f"gave up after {timeout} s\n{self.logs()}")
            time.sleep(every)

    def logs(self) -> str:
        """The ends of sway's log and of the program's standard error."""
        parts = []
        names: list[str | Path] = ["sway.log", *self.log_files]
        for name in names:
            with contextlib.suppress(OSError):
                text = (self.work / name).read_text(errors="replace")
                parts.append(f"--- {name} ---\n{text[-3000:]}")
        return "\n".join(parts)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@contextlib.contextmanager
def shared_directory(prefix: str = "lobby-display-chain-") -> Iterator[Path]:
    """A new directory under /tmp that the chain's user can reach (pytest's tmp_path is not:
    /tmp/pytest-of-root is root's alone). Put the config, credentials and state there."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        if not os.environ.get("KIOSK_CHAIN_KEEP"):
            shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Reading the screen as a visitor does

#: The scale a visitor sees the screen at, four times farther than the TV was made for.
FAR: float = 0.25
#: foot.ini's cell height at 1080p (pixelsize 30): cells scale with the output's height.
CELL_HEIGHT_1080 = 36


@dataclass(frozen=True)
class Box:
    """A rectangle in pixels: left, top, right, bottom (exclusive)."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    def scaled(self, factor: float) -> Box:
        return Box(*(round(value * factor) for value in self.astuple()))

    def astuple(self) -> tuple[int, int, int, int]:
        return (self.left, self.top, self.right, self.bottom)

    def union(self, other: Box) -> Box:
        return Box(
            min(self.left, other.left),
            min(self.top, other.top),
            max(self.right, other.right),
            max(self.bottom, other.bottom),
        )


@dataclass(frozen=True)
class SeenLabel:
    """A ticket label found on the screen and what OCR read there (from afar)."""

    text: str
    box: Box
    """Where its glyphs are, in the screenshot's pixels."""
    highlighted: bool
    """True: dark glyphs on an amber card (a new call); False: amber glyphs (steady)."""
    word_heights: tuple[int, ...]
    """Heights of the words OCR read, in pixels of the picture scaled to 25 %."""


def cell_height(picture: Any) -> float:
    """Height of a terminal cell in `picture`'s pixels (foot.ini, scaled as `foot_ini` does)."""
    return float(CELL_HEIGHT_1080 * picture.height / BASE_HEIGHT)


def is_amber(pixel: tuple[int, int, int]) -> bool:
    """The theme's call colours: amber (a highlighted card, 255,175,33) and light amber (a
    steady label, 255,209,102); other colours of the board are blue, white, grey or green."""
    red, green, blue = pixel
    return red >= 200 and 120 <= green <= 235 and blue <= 150 and red - blue >= 100


def _components(mask: list[bool], width: int, height: int) -> list[tuple[Box, int]]:
    """Bounding boxes and pixel counts of the 4-connected regions of `mask` (row-major)."""
    seen = bytearray(len(mask))
    found = []
    for start, on in enumerate(mask):
        if not on or seen[start]:
            continue
        seen[start] = 1
        stack = [start]
        left, top, right, bottom, count = width, height, 0, 0, 0
        while stack:
            index = stack.pop()
            y, x = divmod(index, width)
            count += 1
            left, right = min(left, x), max(right, x + 1)
            top, bottom = min(top, y), max(bottom, y + 1)
            for near in (
                index - 1 if x > 0 else -1,
                index + 1 if x + 1 < width else -1,
                index - width,
                index + width if y + 1 < height else -1,
            ):
                if near >= 0 and mask[near] and not seen[near]:
                    seen[near] = 1
                    stack.append(near)
        found.append((Box(left, top, right, bottom), count))
    return found


def _lines(glyphs: list[Box]) -> list[Box]:
    """Glyph boxes grouped into lines of text (vertical overlap, gaps under a glyph's height:
    the dash of `B-12` is no big glyph, and leaves such a gap), left to right."""
    lines: list[Box] = []
    for glyph in sorted(glyphs, key=lambda box: box.left):
        for number, line in enumerate(lines):
            overlap = min(line.bottom, glyph.bottom) - max(line.top, glyph.top)
            gap = glyph.left - line.right
            if overlap > 0.5 * min(line.height, glyph.height) and gap < line.height:
                lines[number] = line.union(glyph)
                break
        else:
            lines.append(glyph)
    return lines


def _scaled_down(picture: Any) -> Any:
    from PIL import Image

    size = (round(picture.width * FAR), round(picture.height * FAR))
    return picture.resize(size, Image.Resampling.BOX)


def far_view(picture: Any) -> Any:
    """The screen as seen from four times farther: grayscale, scaled to 25 %, normalised."""
    from PIL import ImageOps

    return ImageOps.autocontrast(_scaled_down(picture).convert("L"))


#: Big glyphs are at least this many cells high. Body text is less than one cell high: DejaVu
#: Sans Mono's capitals and digits are 0.6 cell, its tallest glyph with a descender 0.8.
BIG = 0.9


@dataclass(frozen=True)
class LabelPlace:
    """Where a big label is: its line of glyphs and, when highlighted, its amber card."""

    line: Box
    card: Box | None

    @property
    def highlighted(self) -> bool:
        return self.card is not None


def _is_card(box: Box, amber: list[bool], width: int) -> bool:
    """A filled amber rectangle: its four edges are (nearly) all amber."""
    if box.width < 4 or box.height < 4:
        return False
    edges = [
        [amber[box.top * width + x] for x in range(box.left, box.right)],
        [amber[(box.bottom - 1) * width + x] for x in range(box.left, box.right)],
        [amber[y * width + box.left] for y in range(box.top, box.bottom)],
        [amber[y * width + box.right - 1] for y in range(box.top, box.bottom)],
    ]
    return all(sum(edge) >= 0.9 * len(edge) for edge in edges)


def find_labels(picture: Any) -> list[LabelPlace]:
    """Where the big ticket labels are (in `picture`'s pixels), top to bottom, left to right.

    Found by colour in the picture scaled to 25 %: an amber card (a filled rectangle) holds a
    highlighted label, whose glyphs are the dark shapes at least `BIG` cells high inside it;
    amber shapes at least `BIG` cells high outside any card are a steady label's glyphs. Body
    text (recent calls, the clock, counters), amber or not, is less than a cell high.
    """
    small = _scaled_down(picture)
    width, height = small.size
    amber = [is_amber(pixel) for pixel in small.getdata()]
    big = BIG * cell_height(picture) * FAR
    shapes = _components(amber, width, height)
    cards = [box for box, _ in shapes if box.height >= 2 * big and _is_card(box, amber, width)]
    found: list[LabelPlace] = []
    for card in cards:
        inside = [
            not amber[y * width + x]
            for y in range(card.top, card.bottom)
            for x in range(card.left, card.right)
        ]
        glyphs = [
            Box(h.left + card.left, h.top + card.top, h.right + card.left, h.bottom + card.top)
            for h, _ in _components(inside, card.width, card.height)
            if h.height >= big
        ]
        found.extend(LabelPlace(line, card) for line in _lines(glyphs))

    def in_a_card(box: Box) -> bool:
        return any(card.union(box) == card for card in cards)

    steady = [box for box, _ in shapes if box.height >= big and box not in cards]
    found.extend(LabelPlace(line, None) for line in _lines([b for b in steady if not in_a_card(b)]))
    found.sort(key=lambda place: (place.line.top // max(1, round(big)), place.line.left))
    return [
        LabelPlace(place.line.scaled(1 / FAR), place.card and place.card.scaled(1 / FAR))
        for place in found
    ]


def ocr_words(image: Any, psm: int = 7) -> list[tuple[str, int, float]]:
    """tesseract's words in `image` (text, box height in pixels, confidence)."""
    with tempfile.TemporaryDirectory(prefix="lobby-display-ocr-") as folder:
        path = Path(folder) / "in.png"
        image.save(path)
        done = subprocess.run(
            ["tesseract", str(path), "stdout", "--psm", str(psm), "-l", "eng", "tsv"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    words = []
    for row in done.stdout.splitlines()[1:]:
        parts = row.split("\t")
        if len(parts) == 12 and parts[0] == "5" and parts[11].strip():
            words.append((parts[11].strip(), int(parts[9]), float(parts[10])))
    return words


def read_labels(picture: Any) -> list[SeenLabel]:
    """The big labels on the screen as OCR reads them in the picture scaled to 25 %.

    Each label `find_labels` finds is cut from the far view with a margin (inside its card when
    it has one), made dark on light, and read as one line (`--psm 7`); only words at least
    `BIG` cells high count, so body text never passes for a label.
    """
    from PIL import ImageOps

    view = far_view(picture)
    big = BIG * cell_height(picture) * FAR
    seen = []
    for place in find_labels(picture):
        line = place.line.scaled(FAR)
        # Little room above and below (the counter's line is close), more at the sides; then
        # a plain border of the background's shade, which tesseract needs around a line.
        high, wide = max(1, round(line.height * 0.05)), max(2, round(line.height * 0.4))
        limit = place.card.scaled(FAR) if place.card else Box(0, 0, view.width, view.height)
        crop = view.crop(
            (
                max(limit.left, line.left - wide),
                max(limit.top, line.top - high),
                min(limit.right, line.right + wide),
                min(limit.bottom, line.bottom + high),
            )
        )
        if not place.highlighted:
            crop = ImageOps.invert(crop)  # light glyphs on dark: tesseract wants dark on light
        crop = ImageOps.autocontrast(crop)
        crop = ImageOps.expand(crop, border=max(4, line.height // 2), fill=255)
        words = [word for word in ocr_words(crop) if word[1] >= big]
        seen.append(
            SeenLabel(
                text=" ".join(word[0] for word in words),
                box=place.line,
                highlighted=place.highlighted,
                word_heights=tuple(word[1] for word in words),
            )
        )
    return seen


def read_header(picture: Any) -> str:
    """OCR of the header (the top three cell rows, full size): the place's name is there."""
    from PIL import ImageOps

    band = picture.crop((0, 0, picture.width, round(3 * cell_height(picture))))
    gray = ImageOps.autocontrast(band.convert("L"))
    if sum(gray.getdata()) / (gray.width * gray.height) < 128:
        gray = ImageOps.invert(gray)
    return " ".join(word for word, _, _ in ocr_words(gray, psm=11))


def colours(picture: Any) -> int:
    """How many distinct colours the picture has (a blank screen has one or two)."""
    found = picture.getcolors(maxcolors=1 << 16)
    return 1 << 16 if found is None else len(found)


# --------------------------------------------------------------------------------------------
# A scene: the simulator, a display of it on the chain, calls made on cue


@dataclass
class Scene:
    """The chain showing a simulated place whose operators are held: only the calls made with
    `call()` appear. `highlight_seconds` is short, so a call's highlight (amber card) and its
    steady look can both be captured; a call made `highlight_seconds` after the previous one
    is alone in the "now calling" area.

        with SimulatorServer(seed=3) as sim, shared_directory() as folder:
            with Scene(sim, folder, locale="en_US", size=(1920, 1080)) as scene:
                scene.call(["A031"])
                picture, labels = scene.wait_for(["A031"], highlighted=True)
    """

    simulator: Any
    folder: Path
    locale: str = "en_US"
    size: tuple[int, int] = (1920, 1080)
    highlight_seconds: float = 6.0
    program: Runtime | None = None
    display: Mapping[str, Any] = field(default_factory=dict)
    chain: KioskChain = field(init=False)
    live_at: float = field(init=False, default=0.0)
    last_call: float = field(init=False, default=0.0)

    def __enter__(self) -> Scene:
        self.simulator.hold_calls(True)
        directory = self.folder / f"{self.locale}-{self.size[0]}x{self.size[1]}"
        log = directory / "app.log"
        config = self.simulator.write_config(
            directory,
            locales=[self.locale],
            display={"highlight_seconds": self.highlight_seconds, **self.display},
            state={"directory": str(directory / "state")},
            log={"file": str(log), "level": "INFO"},
        )
        self.chain = KioskChain(
            config, size=self.size, locale=self.locale, program=self.program, log_files=[log]
        )
        self.chain.__enter__()
        try:
            self._wait_live()
        except BaseException:
            self.chain.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.chain.stop()

    def _wait_live(self, timeout: float = 60) -> None:
        """Until the display reads the three feeds and its screen is drawn."""
        deadline = time.monotonic() + timeout
        while True:
            feeds = self.simulator.status()["feeds"]
            if all(feed["connections"] > 0 for feed in feeds.values()):
                break
            if self.chain.exited() is not None or time.monotonic() > deadline:
                raise ChainError(f"the display never read its feeds ({feeds})\n{self.chain.logs()}")
            time.sleep(0.2)
        self.live_at = time.monotonic()
        picture = self.chain.wait_until(lambda picture: colours(picture) > 16, timeout=30)
        # The calls of the first snapshot (if any) are highlighted from when the screen took
        # them, which may be seconds after the feeds connected (a slow start, a 4K screen): a
        # call made within highlight_seconds of then would share the "now calling" area.
        deadline = time.monotonic() + 10
        while not find_labels(picture) and time.monotonic() < deadline:
            time.sleep(0.3)
            picture = self.chain.capture()
        self.last_call = time.monotonic()

    def call(
        self,
        labels: Sequence[str],
        counters: Sequence[int | str] | None = None,
        alone: bool = True,
    ) -> None:
        """Call `labels` (together, in this order) at `counters` (default: the desks in turn).
        `alone`: first wait until the previous calls are more than highlight_seconds old, so
        that these are the only ones in the "now calling" area."""
        pause = self.last_call + self.highlight_seconds + 1.0 - time.monotonic()
        if alone and pause > 0:
            time.sleep(pause)
        self.simulator.call_tickets(labels, counters)
        self.last_call = time.monotonic()

    def wait_for(
        self,
        labels: Sequence[str],
        highlighted: bool,
        timeout: float | None = None,
        fold: Callable[[str], str] = str,
    ) -> tuple[Any, list[SeenLabel]]:
        """Capture until the screen shows `labels` (in any order) as its only big labels, all
        highlighted (or all steady), as OCR reads them from afar; return that picture and what
        was read. After `timeout` seconds from the call (default: the highlight's length and 2 s
        more, or 15 s more for steady), return the last picture that had as many labels in the
        wanted look (else the last picture) and what OCR read there.
        `fold` maps both what is wanted and what is read before they are compared.
        """
        if timeout is None:
            timeout = self.highlight_seconds + (2 if highlighted else 15)
        deadline = self.last_call + timeout
        wanted = sorted(fold(label) for label in labels)
        best: tuple[Any, list[SeenLabel]] | None = None
        while True:
            picture = self.chain.capture()
            places = find_labels(picture)
            if len(places) == len(wanted) and all(p.highlighted == highlighted for p in places):
                seen = read_labels(picture)
                if sorted(fold(item.text) for item in seen) == wanted:
                    return picture, seen
                best = picture, seen
            if time.monotonic() > deadline or self.chain.exited() is not None:
                return best or (picture, read_labels(picture))
            time.sleep(0.2)

    def since_call(self) -> float:
        """Seconds since the last call."""
        return time.monotonic() - self.last_call

"""`lobby-display report`: a support bundle (tar.gz) with what a bug report needs, no secret.

Flight recorder files, settings without secrets, the recent log, a screenshot, the health and
the versions, with `MANIFEST.txt` saying what is in it and what could not be gathered. Every
text member is masked for the secrets known here.
"""

from __future__ import annotations

import errno
import gzip
import importlib.metadata
import io
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import SecretStr

from lobby_display import __version__
from lobby_display.children import child_environment
from lobby_display.config import MAX_CONFIG_BYTES, ConfigError, Settings, load_config
from lobby_display.files import FileRefused, expected_owners, kind_of, read_regular
from lobby_display.ops.status import UNIT_STATE_ROOT, find_health, unit_directories
from lobby_display.redaction import MASK, redact

#: Largest part of the log kept (its end), and of any other file read into the bundle.
MAX_LOG_BYTES: Final = 2 * 1024 * 1024
MAX_FILE_BYTES: Final = 64 * 1024 * 1024
#: Log lines asked of the journal.
JOURNAL_LINES: Final = 5000
#: The units that run a screen named like its config file (`hall` for `hall.toml`).
UNITS: Final = (
    "lobby-display-kiosk@{}.service",
    "lobby-display-console@{}.service",
    "lobby-display-screen@{}.service",
)
#: Libraries whose versions are listed.
LIBRARIES: Final = ("textual", "rich", "babel", "httpx", "httpx-sse", "pydantic", "pillow")
#: Key names whose values are secrets wherever they appear in the settings.
SECRET_KEY_NAMES: Final = re.compile(r"(?i)(api_?key|token|secret|password|passphrase|private)")
#: A JSON web token (a developer token): three base64url parts, the first two JSON objects.
JWT: Final = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+")
#: The value left in place of a secret in the settings.
REMOVED: Final = MASK

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1


@dataclass
class Bundle:
    """The members gathered so far, and the manifest's lines."""

    secrets: set[str] = field(default_factory=set)
    members: dict[str, bytes] = field(default_factory=dict)
    included: list[tuple[str, str]] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)

    def mask(self, text: str) -> str:
        """`text` with every known secret, and anything shaped like one, masked."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return JWT.sub(MASK, redact(text))

    def add_text(self, name: str, text: str, what: str) -> None:
        """A text member, masked."""
        self.members[name] = self.mask(text).encode("utf-8")
        self.included.append((name, what))

    def add_bytes(self, name: str, data: bytes, what: str) -> None:
        """A member kept as it is (checked for secrets by the caller)."""
        self.members[name] = data
        self.included.append((name, what))

    def miss(self, what: str, why: str) -> None:
        """Something that could not be gathered, and why."""
        self.missing.append((what, self.mask(why)))

    def holds_secret(self, text: str) -> bool:
        """True when `text` holds a known secret or something masking would change."""
        return self.mask(text) != text


def report(
    settings: Settings,
    output: Path,
    *,
    environ: Mapping[str, str] | None = None,
    signal_wait: float = 5.0,
) -> int:
    """Write the support bundle to `output`; 0 when written, 1 when it cannot be."""
    env = os.environ if environ is None else environ
    now = datetime.now(UTC)
    bundle = Bundle()
    _known_secrets(settings, env, bundle)
    state_dirs = unit_directories(settings, env)[1]
    name = settings.source.stem if settings.source is not None else ""
    _add_config(settings, bundle)
    _add_versions(bundle, _terminal(settings, env))
    _add_log(settings.log.file, name, state_dirs, bundle)
    _add_health(settings, env, bundle)
    _add_screenshot(settings, env, bundle, signal_wait)
    _add_flight(state_dirs, bundle)
    head = [f"config: {settings.source or '(no file)'}; place {settings.place.id}"]
    credentials = settings.credentials_path(env)
    if credentials is not None:
        head.append(f"credentials file: {credentials} (its contents are never included)")
    return _finish(bundle, output, name or settings.place.id, head, now)


def report_command(config: Path, output: Path) -> int:
    """`lobby-display report`: the bundle of the screen of `config`, even when the config does
    not load (what it says is wrong goes in, with the file, masked)."""
    try:
        settings = load_config(config)
    except ConfigError as error:
        return report_unloadable(config, error, output)
    return report(settings, output)


def report_unloadable(
    config: Path, error: ConfigError, output: Path, environ: Mapping[str, str] | None = None
) -> int:
    """The bundle of a screen whose config does not load: the file (masked), what is wrong with
    it, the versions, and what the units' names find (journal, state directory)."""
    env = os.environ if environ is None else environ
    now = datetime.now(UTC)
    bundle = Bundle()
    name = config.stem
    state_dirs = _unique(
        [Path(part) for part in env.get("STATE_DIRECTORY", "").split(":")[:1] if part]
        + [UNIT_STATE_ROOT / name]
    )
    try:
        raw = read_regular(config, limit=MAX_CONFIG_BYTES, what="a TOML file").data
    except OSError as problem:
        bundle.miss("config.toml", f"{config}: {problem.strerror or problem}")
    else:
        bundle.add_text(
            "config.toml",
            masked_toml(raw.decode("utf-8", "replace"), bundle),
            f"the file {config} as it is, secret-like values removed",
        )
    bundle.add_text("config-error.txt", f"{error}\n", "why the config does not load")
    _add_versions(bundle, "unknown (the config does not load)")
    _add_log(None, name, state_dirs, bundle)
    bundle.miss("health.json", "the config does not load (see config-error.txt)")
    bundle.miss("screenshot.svg", "the config does not load (see config-error.txt)")
    _add_flight(state_dirs, bundle)
    head = [f"config: {config} DOES NOT LOAD (see config-error.txt)"]
    print(error, file=sys.stderr)
    return _finish(bundle, output, name, head, now)


def _finish(bundle: Bundle, output: Path, name: str, head: list[str], now: datetime) -> int:
    bundle.add_text("MANIFEST.txt", manifest(bundle, now, head), "this list")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60] or "display"
    top = f"lobby-display-report-{safe}-{now.strftime('%Y%m%dT%H%M%SZ')}"
    try:
        write_tar(output, top, bundle.members, now)
    except OSError as error:
        print(f"lobby-display report: cannot write {output}: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(f"lobby-display report: wrote {output} ({len(bundle.members)} files)")
    for what, why in bundle.missing:
        print(f"  not included: {what}: {why}")
    return EXIT_OK


def _unique(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


def masked_toml(text: str, bundle: Bundle) -> str:
    """A config file's text with the value of every secret-like key replaced (line by line: the
    file may not be valid TOML), then masked like every member."""
    lines = []
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if match and SECRET_KEY_NAMES.search(match.group("key")):
            value = match.group("value").strip().strip("\"'")
            if len(value) >= 6:
                bundle.secrets.add(value)
            line = f'{match.group("head")}"{REMOVED}"'
        lines.append(line)
    return "\n".join(lines) + "\n"


#: `key = value` in a TOML line (dotted and quoted keys too).
_ASSIGNMENT: Final = re.compile(r"^(?P<head>\s*(?P<key>[\w.\"'-]+)\s*=\s*)(?P<value>.*)$")


# --- secrets --------------------------------------------------------------------------------


def _known_secrets(settings: Settings, env: Mapping[str, str], bundle: Bundle) -> None:
    """The secrets this machine holds for the screen, to mask them wherever they appear."""
    from lobby_display.auth import KEY_CACHE_NAME

    if settings.service.api_key is not None:
        bundle.secrets.add(settings.service.api_key.get_secret_value())
    for directory in unit_directories(settings, env)[1]:
        try:
            data = json.loads(read_regular(directory / KEY_CACHE_NAME, limit=65536).data)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("apiKey"), str):
            bundle.secrets.add(data["apiKey"])
    path = settings.credentials_path(env)
    if path is not None:
        try:
            account = json.loads(read_regular(path, limit=1024 * 1024).data)
        except (OSError, ValueError):
            account = None
        if isinstance(account, dict) and isinstance(account.get("private_key"), str):
            # Each line of the key's body, so that a part of it is masked too.
            for line in account["private_key"].splitlines():
                if len(line.strip()) >= 16 and "-----" not in line:
                    bundle.secrets.add(line.strip())
    bundle.secrets = {secret for secret in bundle.secrets if len(secret) >= 6}


# --- the members ----------------------------------------------------------------------------


def settings_toml(settings: Settings) -> str:
    """The settings in effect as TOML, every secret (and secret-like key) removed."""
    data = settings.model_dump(mode="json")
    lines = [
        f"# The settings in effect (the file {settings.source or '(none)'}, environment overrides",
        "# and defaults); secrets removed. The credentials file's contents are never included.",
    ]
    for section, values in data.items():
        if not isinstance(values, dict):
            continue
        lines.append(f"\n[{section}]")
        for key, value in values.items():
            secret = SECRET_KEY_NAMES.search(key) is not None or isinstance(
                getattr(getattr(settings, section), key, None), SecretStr
            )
            if value is None:
                lines.append(f"# {key} = (not set)")
            elif secret:
                lines.append(f'{key} = "{REMOVED}"')
            else:
                lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    # A JSON string is a TOML basic string (TOML also reads \uXXXX escapes).
    return json.dumps(str(value), ensure_ascii=True)


def _add_config(settings: Settings, bundle: Bundle) -> None:
    bundle.add_text(
        "config.toml",
        settings_toml(settings),
        f"the settings in effect (from {settings.source or 'no file'}), secrets removed",
    )


def _add_versions(bundle: Bundle, terminal: str) -> None:
    lines = [f"lobby-display {__version__}", f"Python {sys.version.split()[0]} ({sys.executable})"]
    for library in LIBRARIES:
        try:
            lines.append(f"{library} {importlib.metadata.version(library)}")
        except importlib.metadata.PackageNotFoundError:
            lines.append(f"{library} (not installed)")
    lines.append(f"OS {_os_name()}; kernel {platform.release()} ({platform.machine()})")
    lines.append(f"terminal {terminal}")
    bundle.add_text(
        "versions.txt",
        "\n".join(lines) + "\n",
        "versions of the program, Python, its libraries, the OS and the terminal",
    )


def _os_name() -> str:
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.platform()
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip().strip('"')
    return platform.platform()


def _terminal(settings: Settings, env: Mapping[str, str]) -> str:
    """The running screen's TERM (from its environment) and foot's version when installed."""
    parts: list[str] = []
    display = _running_display(settings, env)
    if display is None:
        parts.append("TERM of the screen unknown (no display of this config is running)")
    else:
        try:
            raw = Path(f"/proc/{display.pid}/environ").read_bytes()
            found = dict(item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item).get(
                b"TERM", b"(not set)"
            )
            parts.append(
                f"TERM={found.decode('utf-8', 'replace')} (the screen's, PID {display.pid})"
            )
        except OSError as error:
            parts.append(f"TERM of the screen unreadable ({error.strerror})")
    foot = shutil.which("foot")
    if foot is not None:
        parts.append(_run([foot, "--version"]) or "foot (version unknown)")
    return "; ".join(parts)


def _run(command: list[str], timeout: float = 20.0) -> str:
    try:
        done = subprocess.run(  # noqa: S603 - fixed programs, our own arguments
            command,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=child_environment(),
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""


def _add_log(log_file: Path | None, name: str, state_dirs: list[Path], bundle: Bundle) -> None:
    """The end of the screen's log: its file, else the journal (the units of the screen `name`),
    else the fallback file in the state directory."""
    reasons: list[str] = []
    if log_file is not None:
        text = _tail(log_file, reasons)
        if text is not None:
            bundle.add_text("log.txt", text, f"the end of the log file {log_file}")
            return
    else:
        journal = _journal(name, reasons)
        if journal is not None:
            bundle.add_text("log.txt", journal, "the screen's last journal entries")
            return
    from lobby_display.service import FALLBACK_LOG_NAME

    for directory in state_dirs:
        path = directory / FALLBACK_LOG_NAME
        if path.exists():
            text = _tail(path, reasons)
            if text is not None:
                bundle.add_text("log.txt", text, f"the end of the log file {path}")
                return
    bundle.miss("log.txt", "; ".join(reasons) or "no log found")


def _tail(path: Path, reasons: list[str]) -> str | None:
    """The last `MAX_LOG_BYTES` of the log file at `path`, from a whole line.

    Only a regular file, not a link, owned by the screen's user or root: the command often
    runs as root, and the screen's user could otherwise put a link to any file there.
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK | os.O_NOFOLLOW
    owners = expected_owners(path.parent)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        reasons.append(f"{path}: no such file")
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            reasons.append(f"{path}: is a symbolic link, not a log file: refused")
        else:
            reasons.append(f"{path}: {error.strerror}")
        return None
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            reasons.append(f"{path}: is {kind_of(info.st_mode)}, not a log file: refused")
            return None
        if info.st_uid not in owners:
            reasons.append(f"{path}: is owned by user {info.st_uid}, not the screen's: refused")
            return None
        stream.seek(max(0, info.st_size - MAX_LOG_BYTES))
        data = stream.read(MAX_LOG_BYTES)
    if info.st_size > MAX_LOG_BYTES:
        data = data.partition(b"\n")[2]  # from a whole line
    return data.decode("utf-8", "replace")


def _journal(name: str, reasons: list[str]) -> str | None:
    journalctl = shutil.which("journalctl")
    if journalctl is None:
        reasons.append("journalctl is not installed")
        return None
    if not name:
        reasons.append("no unit to ask the journal for (the settings came from no file)")
        return None
    command = [journalctl, "--no-pager", "--quiet", "-o", "short-iso", "-n", str(JOURNAL_LINES)]
    for unit in UNITS:
        command += ["-u", unit.format(name)]
    text = _run(command, timeout=60)
    if not text.strip() or text.strip() == "-- No entries --":
        reasons.append(
            f"the journal has no entries of {', '.join(unit.format(name) for unit in UNITS)} "
            "(or cannot be read: run as root or a member of systemd-journal)"
        )
        return None
    return text + "\n"


def _add_health(settings: Settings, env: Mapping[str, str], bundle: Bundle) -> None:
    found = find_health(settings, env)
    if found.health is None or found.path is None:
        bundle.miss("health.json", found.problem)
        return
    bundle.add_text(
        "health.json",
        found.health.model_dump_json(indent=2) + "\n",
        f"the screen's health as it last wrote it ({found.path})",
    )


def _running_display(settings: Settings, env: Mapping[str, str]) -> Any:
    from lobby_display.ops.screenshot import find_running_display

    return find_running_display(settings, env)


def _add_screenshot(
    settings: Settings, env: Mapping[str, str], bundle: Bundle, wait: float
) -> None:
    from lobby_display.ops.screenshot import ask_running_display

    display = _running_display(settings, env)
    if display is None:
        runtime = ", ".join(str(path) for path in unit_directories(settings, env)[0])
        bundle.miss(
            "screenshot.svg",
            f"no display of this config is running (no app.pid of a running screen in {runtime})",
        )
        return
    svg = ask_running_display(display, wait)
    if svg is None:
        bundle.miss("screenshot.svg", f"the display (PID {display.pid}) sent no screenshot")
        return
    bundle.add_text("screenshot.svg", svg, f"what the screen (PID {display.pid}) showed")


def _add_flight(state_dirs: Iterable[Path], bundle: Bundle) -> None:
    try:
        from lobby_display.recording import flight_files
    except ImportError:
        bundle.miss("flight/", "this version has no flight recorder")
        return
    looked: list[str] = []
    for directory in state_dirs:
        files = flight_files(directory)
        looked.append(str(directory))
        if not files:
            continue
        owners = expected_owners(directory)
        for path in files:
            name = f"flight/{path.name}"
            try:
                data = read_regular(
                    path,
                    limit=MAX_FILE_BYTES,
                    what="a flight file",
                    follow_links=False,
                    owners=owners,
                ).data
            except OSError as error:
                bundle.miss(
                    name,
                    str(error) if isinstance(error, FileRefused) else f"{path}: {error.strerror}",
                )
                continue
            problem = _flight_problem(data, bundle)
            if problem:
                bundle.miss(name, problem)
                continue
            bundle.add_bytes(
                name, data, "the flight recorder's feeds (replay with `lobby-display replay FILE`)"
            )
        return
    bundle.miss("flight/", f"no flight recorder files in {', '.join(looked)}")


def _flight_problem(data: bytes, bundle: Bundle) -> str:
    """Why a flight file is left out ("" when it is not): unreadable, or holding a secret."""
    try:
        text = gzip.decompress(data).decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error):
        # A file cut short (power lost) keeps what it holds: read what decompresses.
        decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            text = decompressor.decompress(data).decode("utf-8", "replace")
        except zlib.error:
            return "not a gzip file: left out"
    if bundle.holds_secret(text):
        return "holds a secret (a key or a token): left out"
    return ""


# --- the manifest and the archive ---------------------------------------------------------


def manifest(bundle: Bundle, now: datetime, head: list[str]) -> str:
    """What the bundle holds, and what it lacks and why (`head`: lines on the config)."""
    lines = [
        f"lobby-display {__version__} support bundle, made {now.isoformat(timespec='seconds')}",
        *head,
    ]
    lines.append("")
    lines.append("Included:")
    lines += [f"  {name}: {what}" for name, what in bundle.included]
    lines.append("  MANIFEST.txt: this list")
    lines.append("")
    lines.append("Not included:" if bundle.missing else "Not included: nothing")
    lines += [f"  {what}: {why}" for what, why in bundle.missing]
    lines.append("")
    lines.append(
        "Secrets (API key, private key, developer tokens) are masked as *** in every file; "
        "a flight file holding one is left out."
    )
    return "\n".join(lines) + "\n"


def write_tar(output: Path, top: str, members: Mapping[str, bytes], now: datetime) -> None:
    """Write `members` under the folder `top` to `output` (gzip), atomically, mode 0600."""
    directory = output.parent if str(output.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{output.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            with tarfile.open(fileobj=stream, mode="w:gz") as archive:
                for name, data in members.items():
                    info = tarfile.TarInfo(f"{top}/{name}")
                    info.size = len(data)
                    info.mtime = int(now.timestamp()) or int(time.time())
                    info.mode = 0o600
                    archive.addfile(info, io.BytesIO(data))
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, output)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

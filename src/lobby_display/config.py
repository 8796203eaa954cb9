"""The place's TOML file turned into validated settings; every mistake names its key and file.

`load_config(path)` reads the file, applies the `LOBBY_DISPLAY_<SECTION>__<KEY>` overrides and
validates everything at once; a bad file raises `ConfigError` listing every problem.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from lobby_display.files import FileRefused, read_regular
from lobby_display.models import LOCALES, Locale

ENV_PREFIX: Final = "LOBBY_DISPLAY_"
#: Largest configuration file read (the documented example is about 10 kB).
MAX_CONFIG_BYTES: Final = 1024 * 1024
#: Default name of the service-account file inside `$CREDENTIALS_DIRECTORY`.
DEFAULT_CREDENTIAL_NAME: Final = "service-account.json"


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, docstrings document each key."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ServiceSettings(Section):
    """`[service]`: where the display service is and how to authenticate to it."""

    display_url: str
    """Base address of the display service, without `/v1` (`https://...`). Plain `http://` only
    for a service on this machine (127.0.0.1, ::1, localhost): elsewhere it would send the API
    key and the developer token in clear."""

    credentials: Path | None = None
    """Service-account JSON with `private_key` and `client_email`. A relative name is looked up in
    `$CREDENTIALS_DIRECTORY` first (systemd `LoadCredential=`)."""

    company: str = ""
    """Company name: the `sub` claim of the developer token. Required with `credentials`."""

    api_key: SecretStr | None = None
    """A fixed API key instead of `credentials` (no rotation: the display stops when it expires)."""

    ca_bundle: Path | None = None
    """CA bundle (PEM) to verify the service's TLS certificate; default: the system's."""

    connect_timeout: float = Field(default=10.0, gt=0, le=120)
    """Seconds to wait for a connection to the service."""

    read_timeout: float = Field(default=45.0, gt=0, le=600)
    """Seconds without a byte (not even a heartbeat) before a feed is taken as stalled and
    reconnected. About three heartbeat intervals."""

    request_timeout: float = Field(default=30.0, gt=0, le=600)
    """Seconds a whole request for names, tickets or an API key may take, from connecting to the
    last byte; a slower answer fails and is retried like an unreachable service (a server
    sending a byte now and then never trips the two timeouts above). Also the longest a feed
    waits for its stream to answer."""

    key_refresh_hours: float = Field(default=20.0, gt=0, le=48)
    """Hours before a cached API key is renewed (the service asks for about once a day; a random
    part of up to 10 % is added so several screens do not renew together)."""

    reference_refresh_minutes: float = Field(default=30.0, gt=0, le=1440)
    """Minutes between reloads of names (place, queues, endpoints, counters)."""

    @field_validator("display_url")
    @classmethod
    def _url(cls, value: str) -> str:
        url = value.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                "must be an http:// or https:// address, like https://display.example.net"
            )
        if url.endswith("/v1"):
            raise ValueError("give the base address without /v1 (it is added for every route)")
        if parts.query or parts.fragment:
            raise ValueError("must not carry a query or a fragment")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise ValueError(
                f"http:// to {parts.hostname} would send the API key and the developer token in "
                f"clear: use https://{parts.netloc} (plain http:// is for a service on this "
                "machine only: 127.0.0.1, ::1 or localhost)"
            )
        return url

    @model_validator(mode="after")
    def _one_way_to_authenticate(self) -> ServiceSettings:
        if self.credentials is None and self.api_key is None:
            raise ValueError("set either credentials (a service-account file) or api_key")
        if self.credentials is not None and not self.company.strip():
            raise ValueError("company is required with credentials (it is the token's sub claim)")
        return self


def is_loopback(host: str) -> bool:
    """True for this machine's own addresses: 127.0.0.0/8, ::1 and localhost."""
    name = host.lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class PlaceSettings(Section):
    """`[place]`: which place, and which of its queues and counters, the screen shows."""

    id: str = Field(min_length=1)
    """Id of the place (see `lobby-display discover`)."""

    queues: list[str] = Field(default_factory=list)
    """Queue ids to show, in this order; empty: every queue of the place."""

    counters: list[str] = Field(default_factory=list)
    """Counter ids to show, in this order; empty: every counter of the place."""


#: Characters refused in `display.output` (quotes, escapes and sway's command separators).
_OUTPUT_FORBIDDEN: Final = frozenset("\"'\\,;[]")


class DisplaySettings(Section):
    """`[display]`: what the screen shows and how."""

    locales: list[Locale] = Field(default_factory=lambda: list[Locale](["en_US"]), min_length=1)
    """Locales shown in turn (any of fr_FR en_US es_ES de_DE zh_CN zh_TW ja_JP ko_KR th_TH)."""

    rotation_seconds: float = Field(default=12.0, ge=3, le=600)
    """Seconds each locale stays on screen."""

    recent_calls: int = Field(default=6, ge=0, le=30)
    """How many recent calls are listed."""

    highlight_seconds: float = Field(default=12.0, ge=0, le=300)
    """Seconds a new call or a recall stays highlighted. The calls made in this time before the
    latest one share the "now calling" space with it until the next call."""

    call_max_age_seconds: float = Field(default=600.0, ge=0)
    """A call older than this when first seen (after a restart, say) is listed but not announced
    or highlighted as new."""

    group_size: int = Field(default=1, ge=1, le=50)
    """Group size whose first availability is shown."""

    clock: Literal["24h", "12h"] = "24h"
    """Clock style for every locale."""

    theme: Literal["dark", "high-contrast", "console"] = "dark"
    """dark (default), high-contrast, or console (16 colours, for the Linux text console)."""

    timezone: str = ""
    """Time zone of the clock; default: the place's, else the machine's."""

    graphics: Literal["auto", "sixel", "text", "sextants", "quadrants", "half-blocks"] = "auto"
    """How the called ticket's label is drawn: auto (a sixel image where the terminal says it
    shows them, as foot does; else text), sixel, or text: sub-cell block characters, sextants on
    foot, kitty and WezTerm, half-blocks on the Linux console, else quadrants (or name one).
    Read at start: a change needs a restart."""

    stale_after_seconds: float = Field(default=30.0, ge=1)
    """Seconds a feed may be down before its numbers are dimmed and marked out of date."""

    withdraw_after_seconds: float = Field(default=300.0, ge=1)
    """Seconds a feed may be down before its numbers are withdrawn from the screen."""

    quit_key: str = "ctrl+q"
    """Key chord that quits (for the installer); empty: no key quits."""

    output: str = ""
    """The TV this screen goes on when one PC drives several (lobby-display-screen@.service): a
    video output's name like "HDMI-A-2" (`swaymsg -t get_outputs`); "" lets the compositor
    choose. Not used by the single-screen units."""

    @field_validator("locales", mode="before")
    @classmethod
    def _locale_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("output")
    @classmethod
    def _output(cls, value: str) -> str:
        name = value.strip()
        # The name is quoted inside sway commands: these characters would end or split them.
        bad = sorted({c for c in name if c in _OUTPUT_FORBIDDEN or not c.isprintable()})
        if bad:
            shown = " ".join(repr(c) for c in bad)
            raise ValueError(
                f"{value!r} is not an output name ({shown} not allowed; like HDMI-A-2)"
            )
        return name

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        if value:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"unknown time zone {value!r} (use a name like Europe/Paris)"
                ) from None
        return value

    @model_validator(mode="after")
    def _thresholds(self) -> DisplaySettings:
        if self.withdraw_after_seconds <= self.stale_after_seconds:
            raise ValueError("withdraw_after_seconds must be longer than stale_after_seconds")
        return self


class StateSettings(Section):
    """`[state]`: where the display keeps what survives a restart (API key, last board)."""

    directory: Path = Path("/var/lib/lobby-display")
    """Directory for the cached API key and the last board; systemd's `$STATE_DIRECTORY` wins
    when set."""

    record_minutes: float = Field(default=30.0, ge=0, le=1440)
    """Flight recorder: the last minutes of the feeds kept in `flight/` under the state
    directory, as `lobby-display record` writes them (`lobby-display replay` serves them,
    `lobby-display report` bundles them). 0 turns it off."""

    record_max_mb: float = Field(default=16.0, ge=1, le=1024)
    """Most the flight recorder's files may take together, in MiB (the oldest go first)."""


class LogSettings(Section):
    """`[log]`: logging (never onto the screen)."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Lowest level written."""

    file: Path | None = None
    """Log file; default: standard error (the journal under systemd)."""


class SoundSettings(Section):
    """`[sound]`: calls announced aloud: a chime and a spoken sentence (off by default)."""

    enabled: bool = False
    """Announce each new call and recall aloud (needs an audio player; the voice needs
    `espeak-ng`)."""

    mode: Literal["both", "chime", "voice", "silent"] = "both"
    """both (a chime, then the sentence), chime (the chime alone), voice (the sentence alone), or
    silent (nothing is played; the screen alone)."""

    chime_file: Path | None = None
    """A WAV file played instead of the built-in two-tone chime."""

    voice_locales: list[Locale] = Field(default_factory=list)
    """Locales the sentence is spoken in, one after the other; default: the first of
    `display.locales`. A locale without an espeak-ng voice is skipped (and logged)."""

    volume: int = Field(default=100, ge=0, le=100)
    """Loudness of the chime and the voice, 0 to 100, relative to the machine's mixer level."""

    voice_rate: int = Field(default=150, ge=80, le=400)
    """Speed of the voice in words per minute (espeak-ng's own default is 175)."""

    quiet_hours: str = ""
    """Hours without sound, like "22:00-07:00" (may cross midnight), in the display's time zone;
    "" means none. The screen still shows every call."""

    max_queue: int = Field(default=8, ge=1, le=100)
    """Announcements that may wait their turn; beyond that the oldest waiting one is dropped (it is
    still shown) and logged."""

    player: str = ""
    """Command that plays a WAV file given as its last argument, like "aplay -q -D plughw:1";
    default: the first of pw-play, paplay, aplay found."""

    @field_validator("voice_locales", mode="before")
    @classmethod
    def _voice_locale_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, value: str) -> str:
        text = value.strip()
        if not text:
            return ""
        window = _quiet_window(text)
        if window is None:
            raise ValueError(
                f'{value!r} is not a time range: write it as HH:MM-HH:MM, like "22:00-07:00"'
            )
        start, end = window
        if start == end:
            raise ValueError(f"{value!r} starts and ends at the same time (an empty range)")
        return f"{start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}"

    @field_validator("player")
    @classmethod
    def _player(cls, value: str) -> str:
        import shlex

        try:
            shlex.split(value)
        except ValueError as error:
            raise ValueError(f"cannot read the command {value!r}: {error}") from None
        return value.strip()

    def quiet_window(self) -> tuple[int, int] | None:
        """The quiet hours as (start, end) minutes after midnight, or None when there are none."""
        return _quiet_window(self.quiet_hours) if self.quiet_hours else None


class MonitoringSettings(Section):
    """`[monitoring]`: health for node-exporter's textfile collector (off by default)."""

    textfile: Path | None = None
    """File the screen writes its health to every few seconds, in the Prometheus text format, for
    node-exporter's textfile collector: a name ending in `.prom` in its directory (like
    "/var/lib/prometheus/node-exporter/lobby_display.prom"), which must exist and be writable by
    the screen. Not set: not written (`lobby-display status` works without it). Read at start:
    a change needs a restart."""

    @field_validator("textfile")
    @classmethod
    def _textfile(cls, value: Path | None) -> Path | None:
        if value is not None and value.suffix != ".prom":
            raise ValueError(
                f"{str(value)!r} must end in .prom (node-exporter's textfile collector reads "
                "only *.prom files)"
            )
        if value is not None and not value.is_absolute():
            raise ValueError(f"{str(value)!r} must be an absolute path")
        return value


def _quiet_window(text: str) -> tuple[int, int] | None:
    """Read "HH:MM-HH:MM" into minutes after midnight; None when it is not such a range."""
    parts = text.replace(" ", "").split("-")
    if len(parts) != 2:
        return None
    minutes = []
    for part in parts:
        hour, _, minute = part.partition(":")
        if not (hour.isdigit() and minute.isdigit() and len(hour) <= 2 and len(minute) == 2):
            return None
        if int(hour) > 24 or int(minute) > 59 or (int(hour) == 24 and int(minute) != 0):
            return None
        minutes.append((int(hour) * 60 + int(minute)) % (24 * 60))
    return minutes[0], minutes[1]


class Settings(Section):
    """The whole configuration of one screen."""

    service: ServiceSettings
    """How to reach the display service."""

    place: PlaceSettings
    """Which place is shown."""

    display: DisplaySettings = Field(default_factory=DisplaySettings)
    """What the screen shows."""

    state: StateSettings = Field(default_factory=StateSettings)
    """What survives a restart."""

    log: LogSettings = Field(default_factory=LogSettings)
    """Logging."""

    sound: SoundSettings = Field(default_factory=SoundSettings)
    """Calls announced aloud."""

    monitoring: MonitoringSettings = Field(default_factory=MonitoringSettings)
    """Health for the place's monitoring."""

    source: Annotated[Path | None, Field(exclude=True)] = None
    """The file these settings came from (set by `load_config`, not a key of the file)."""

    def credentials_path(self, environ: Mapping[str, str] | None = None) -> Path | None:
        """The service-account file to read, honouring `$CREDENTIALS_DIRECTORY`."""
        return resolve_credentials(self.service.credentials, environ)

    def state_directory(self, environ: Mapping[str, str] | None = None) -> Path:
        """The state directory, honouring systemd's `$STATE_DIRECTORY`."""
        env = os.environ if environ is None else environ
        if from_systemd := env.get("STATE_DIRECTORY"):
            return Path(from_systemd.split(":", 1)[0])
        return self.state.directory


def resolve_credentials(
    configured: Path | None, environ: Mapping[str, str] | None = None
) -> Path | None:
    """Where to read the service-account file.

    With `$CREDENTIALS_DIRECTORY` set (systemd `LoadCredential=`), a file there named like the
    configured one's last part wins; so does `service-account.json` when nothing is configured.
    """
    env = os.environ if environ is None else environ
    directory = env.get("CREDENTIALS_DIRECTORY")
    if directory:
        name = configured.name if configured is not None else DEFAULT_CREDENTIAL_NAME
        candidate = Path(directory) / name
        if candidate.is_file():
            return candidate
    if configured is not None and not configured.is_absolute() and directory:
        return Path(directory) / configured
    return configured


class ConfigError(Exception):
    """A configuration that cannot be used; `problems` lists each mistake with its key."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  {source}: {problem}" for problem in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"{source}: {len(problems)} configuration {noun}:\n{lines}")


def load_config(path: Path | str, environ: Mapping[str, str] | None = None) -> Settings:
    """Read, override from the environment, and validate the config file at `path`."""
    path = Path(path)
    source = str(path)
    try:
        # A FIFO, a device or a huge file is refused at once: `run` and `check` never hang.
        read = read_regular(path, limit=MAX_CONFIG_BYTES, what="a TOML file")
        raw = read.data
    except FileNotFoundError:
        raise ConfigError(source, ["file not found"]) from None
    except FileRefused as refused:
        raise ConfigError(source, [refused.reason]) from None
    except PermissionError:
        raise ConfigError(source, ["cannot be read (permission denied)"]) from None
    except OSError as error:
        raise ConfigError(source, [f"cannot be read ({error.strerror})"]) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(source, ["is not UTF-8 text"]) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(source, [f"not valid TOML: {error}"]) from None
    service = data.get("service")
    if not (isinstance(service, dict) and "api_key" in service and read.open_to_others):
        return settings_from_dict(data, source, environ, path=path)
    # The same rule as the credentials file's: a secret is for the display's user alone.
    exposed = (
        f"service.api_key: the file holds a secret but is open to group or others "
        f"(mode {read.mode:04o}); run: chmod 600 {path} (the display's user must own it), or "
        "give the key in $LOBBY_DISPLAY_SERVICE__API_KEY"
    )
    try:
        settings_from_dict(data, source, environ, path=path)
    except ConfigError as error:
        raise ConfigError(source, [*error.problems, exposed]) from None
    raise ConfigError(source, [exposed])


def settings_from_dict(
    data: Mapping[str, Any],
    source: str = "<config>",
    environ: Mapping[str, str] | None = None,
    path: Path | None = None,
) -> Settings:
    """Validate settings given as a dict (as TOML would give them), with environment overrides."""
    env = os.environ if environ is None else environ
    merged, problems = _apply_environment(dict(data), env)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as error:
        problems.extend(_describe(error))
    if problems:
        raise ConfigError(source, problems)
    if path is not None:
        settings = settings.model_copy(update={"source": path})
    return settings


def _apply_environment(
    data: dict[str, Any], environ: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """Overlay `LOBBY_DISPLAY_<SECTION>__<KEY>` variables on the file's values."""
    problems: list[str] = []
    for name, value in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        rest = name[len(ENV_PREFIX) :]
        if "__" not in rest:
            problems.append(
                f"environment variable {name}: expected {ENV_PREFIX}<SECTION>__<KEY>, "
                "like LOBBY_DISPLAY_PLACE__ID"
            )
            continue
        section, key = (part.lower() for part in rest.split("__", 1))
        current = data.get(section)
        if current is None:
            current = {}
        if not isinstance(current, dict):
            problems.append(f"environment variable {name}: [{section}] is not a table in the file")
            continue
        data[section] = {**current, key: _env_value(value)}
    return data, problems


def _env_value(text: str) -> Any:
    """An environment value: a TOML array or table if it looks like one, else the string."""
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            return tomllib.loads(f"v = {stripped}")["v"]
        except tomllib.TOMLDecodeError:
            return text
    return text


def _describe(error: ValidationError) -> list[str]:
    """Turn pydantic's errors into lines naming each key, with a hint for unknown keys."""
    problems = []
    for detail in error.errors(include_url=False):
        location = [str(part) for part in detail["loc"]]
        key = ".".join(location) or "(top level)"
        kind = detail["type"]
        if kind == "extra_forbidden":
            problems.append(f"{key}: unknown key{_suggestion(location)}")
        elif kind == "missing":
            problems.append(f"{key}: required key is missing")
        elif kind == "literal_error":
            expected = detail.get("ctx", {}).get("expected", "")
            given = _shown(detail.get("input"))
            problems.append(f"{key}: {given} is not one of {expected}")
        else:
            message = detail["msg"].removeprefix("Value error, ")
            if (
                kind
                in (
                    "string_type",
                    "int_type",
                    "float_type",
                    "list_type",
                    "bool_type",
                    "int_parsing",
                    "float_parsing",
                    "bool_parsing",
                    "path_type",
                    "model_type",
                    "dict_type",
                )
                and location[-1] not in _SECRET_KEYS
            ):
                message = f"{message} (got {_shown(detail.get('input'))})"
            problems.append(f"{key}: {message}")
    return problems


#: Keys whose value is never quoted back in a message (it would land in logs and terminals).
_SECRET_KEYS: Final = frozenset({"api_key"})


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _suggestion(location: list[str]) -> str:
    """` (did you mean X?)` for an unknown key close to a known one."""
    model: type[BaseModel] = Settings
    for part in location[:-1]:
        field = model.model_fields.get(part)
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        model = annotation
    known = [name for name in model.model_fields if name != "source"]
    close = difflib.get_close_matches(location[-1], known, n=1)
    return f" (did you mean {close[0]}?)" if close else f" (known keys: {', '.join(known)})"


__all__ = [
    "LOCALES",
    "ConfigError",
    "DisplaySettings",
    "LogSettings",
    "MonitoringSettings",
    "PlaceSettings",
    "ServiceSettings",
    "Settings",
    "SoundSettings",
    "StateSettings",
    "load_config",
    "resolve_credentials",
    "settings_from_dict",
]

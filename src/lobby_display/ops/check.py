"""`lobby-display check`: every reason the screen could stay empty, tested in turn and reported.

The checks follow the path of the data, from the config to the feeds, then sound and fonts; a
check after a failed one is skipped. Exit 0 when nothing failed (warnings allowed), 1 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, TextIO

import httpx

from lobby_display.auth import (
    EARLIEST_PLAUSIBLE_YEAR,
    AuthRefused,
    ClockNotSynchronised,
    CredentialsError,
    DisplayServiceError,
    FixedApiKey,
    KeyRefused,
    ServiceAccount,
    ServiceApiKeys,
    ServiceFailed,
    ServiceUnreachable,
    load_service_account,
)
from lobby_display.children import child_environment
from lobby_display.client import DisplayClient
from lobby_display.config import ENV_PREFIX, Settings
from lobby_display.feeds import (
    CounterDecoder,
    Decoder,
    FeedRunner,
    QueueStateDecoder,
    TicketDecoder,
)
from lobby_display.files import FileRefused, private_directory
from lobby_display.models import Counter, Place, Queue, pick_name
from lobby_display.ops.common import client_for, config_name, is_under, quiet_logs
from lobby_display.ops.report import Report
from lobby_display.updates import (
    CountersSnapshot,
    Feed,
    FeedHealth,
    FeedStatus,
    QueueStatesSnapshot,
    TicketsSnapshot,
    Update,
)

#: Seconds each feed has to deliver its first message.
DEFAULT_FEED_TIMEOUT: Final = 10.0
#: Largest difference between the local clock and the service's `Date` header that passes.
#: Developer tokens are backdated 30 s and live 5 minutes; beyond a minute trouble starts.
MAX_CLOCK_SKEW_SECONDS: Final = 60.0
#: Locales whose script the Linux console cannot show, with the fontconfig language that
#: finds a font for it, the language in words, and the Debian package that provides one.
SCRIPT_FONTS: Final[Mapping[str, tuple[str, str, str]]] = {
    "zh_CN": ("zh-cn", "Simplified Chinese", "fonts-noto-cjk"),
    "zh_TW": ("zh-tw", "Traditional Chinese", "fonts-noto-cjk"),
    "ja_JP": ("ja", "Japanese", "fonts-noto-cjk"),
    "ko_KR": ("ko", "Korean", "fonts-noto-cjk"),
    "th_TH": ("th", "Thai", "fonts-thai-tlwg"),
}
#: The CJK languages share code points with different glyphs: the family made for the locale
#: (`Noto Sans Mono CJK JP` for Japanese) is named first when it is installed.
_PREFERRED_FAMILY: Final = {"zh-cn": " SC", "zh-tw": " TC", "ja": " JP", "ko": " KR"}
_FEED_ROUTES: Final = {
    Feed.TICKETS: "/v1/queues/tickets/currents/sse",
    Feed.QUEUES: "/v1/queues/state/sse",
    Feed.COUNTERS: "/v1/counters/sse",
}


def check(
    settings: Settings,
    *,
    feed_timeout: float = DEFAULT_FEED_TIMEOUT,
    out: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run every check, print the report on `out` (stdout), return 0 (all ok) or 1 (a problem)."""
    env = os.environ if environ is None else environ
    report = Report(out)
    with quiet_logs():
        asyncio.run(Checks(settings, report, env, feed_timeout).run())
    report.summary()
    return 0 if report.passed else 1


class DateProbe:
    """Remembers the service's first `Date` header and the local time it arrived at."""

    def __init__(self) -> None:
        self.service: datetime | None = None
        self.local: datetime | None = None

    async def hook(self, response: httpx.Response) -> None:
        """httpx response hook."""
        if self.service is not None:
            return
        header = response.headers.get("date")
        if not header:
            return
        with contextlib.suppress(TypeError, ValueError, IndexError):
            moment = email.utils.parsedate_to_datetime(header)
            if moment.tzinfo is not None:
                self.service, self.local = moment, datetime.now(UTC)

    @property
    def skew(self) -> float | None:
        """Seconds the local clock is ahead of the service's (negative: behind)."""
        if self.service is None or self.local is None:
            return None
        return (self.local - self.service).total_seconds()


@dataclass(frozen=True, slots=True)
class FirstMessage:
    """How one feed's first message went."""

    feed: Feed
    seconds: float
    records: int | None = None
    """Records in the first message; None when it did not come."""
    error: str = ""


class Checks:
    """One run of the checks, printing on `report` as it goes."""

    def __init__(
        self, settings: Settings, report: Report, environ: Mapping[str, str], feed_timeout: float
    ) -> None:
        self.settings = settings
        self.report = report
        self.env = environ
        self.feed_timeout = feed_timeout
        self.file = config_name(settings)
        self.url = settings.service.display_url
        self.dates = DateProbe()

    async def run(self) -> None:
        """Every check, in order."""
        self.check_config()
        account = self.check_credentials()
        self.check_state()
        if account is None and self.settings.service.api_key is None:
            self.report.skip("service", "not contacted: the credentials must be fixed first")
            self.report.skip("API key", "needs working credentials")
            self.check_clock()
            self.skip_place()
        else:
            await self.check_service(account)
        await self.check_sound()
        self.check_fonts()
        self.check_monitoring()

    # --- local ---------------------------------------------------------------------------------

    def check_config(self) -> None:
        overrides = sorted(name for name in self.env if name.startswith(ENV_PREFIX))
        extra = f" (overridden by {', '.join(overrides)})" if overrides else ""
        self.report.ok("config", f"{self.file} is valid{extra}")

    def check_credentials(self) -> ServiceAccount | None:
        service = self.settings.service
        if service.api_key is not None:
            unused = " (service.credentials is ignored)" if service.credentials else ""
            self.report.ok(
                "credentials",
                f"a fixed service.api_key from {self.file}{unused}; it is never renewed",
            )
            return None
        path = self.settings.credentials_path(self.env)
        if path is None:  # excluded by the config's validation
            self.report.fail("credentials", "neither service.credentials nor service.api_key")
            return None
        directory = self.env.get("CREDENTIALS_DIRECTORY", "")
        where = " (from $CREDENTIALS_DIRECTORY)" if directory and is_under(path, directory) else ""
        try:
            account = load_service_account(path)
        except CredentialsError as error:
            self.report.fail("credentials", f"{error}{where}", _credentials_fix(str(error), path))
            return None
        size = account.private_key.key_size
        self.report.ok(
            "credentials",
            f"{path}{where}: service account {account.client_email}, RSA {size}-bit key, "
            "readable by its owner only",
        )
        return account

    def check_state(self) -> None:
        directory = self.settings.state_directory(self.env)
        origin = "$STATE_DIRECTORY" if self.env.get("STATE_DIRECTORY") else "state.directory"
        fix = (
            f"create it for the display's user: install -d -m 700 -o lobby-display {directory} "
            "(the systemd units do it with StateDirectory=); run check as that user"
        )
        if not directory.exists():
            # Not created here: made by whoever runs check (root, say), the display could not
            # write in it. The display makes it at its first start if the parent lets it.
            parent = next((part for part in directory.parents if part.exists()), directory)
            if parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
                self.report.ok(
                    "state", f"{directory} ({origin}) does not exist yet; it can be created"
                )
            else:
                self.report.fail(
                    "state",
                    f"{directory} ({origin}) does not exist and {parent} does not let it be "
                    "created: the API key and the last board cannot be kept across restarts",
                    fix,
                )
            return
        try:
            private_directory(directory, create=False)
        except FileRefused as refused:
            # The display refuses to keep its files there (the key, the board): say so.
            self.report.fail(
                "state",
                f"{refused} ({origin}); the display keeps no API key or board there",
                f"chmod 700 {directory}",
            )
            return
        except OSError:
            pass  # (the write below says why)
        try:
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".check-") as probe:
                probe.write(b"lobby-display check\n")
                probe.flush()
                os.fsync(probe.fileno())
        except OSError as error:
            reason = error.strerror or type(error).__name__
            self.report.fail(
                "state",
                f"{directory} ({origin}) is not writable: {reason}; the API key and the last "
                "board cannot be kept across restarts",
                fix,
            )
            return
        self.report.ok("state", f"{directory} ({origin}) is writable")

    def check_clock(self) -> None:
        now = datetime.now(UTC)
        fix = (
            "turn on time synchronisation (timedatectl set-ntp true, with systemd-timesyncd or "
            "chrony) and let the machine reach an NTP server"
        )
        if now.year < EARLIEST_PLAUSIBLE_YEAR:
            self.report.fail(
                "clock",
                f"the system clock reads {now:%Y-%m-%d %H:%M} UTC: it is not synchronised, and "
                "no developer token is signed until it is",
                fix,
            )
            return
        skew = self.dates.skew
        local = f"{now:%Y-%m-%d %H:%M:%S} UTC"
        if skew is None:
            self.report.ok(
                "clock", f"{local} (not compared with the service's: no answer with a Date)"
            )
        elif abs(skew) > MAX_CLOCK_SKEW_SECONDS:
            way = "ahead of" if skew > 0 else "behind"
            self.report.fail(
                "clock",
                f"{local} is {abs(skew):.0f} s {way} the service's clock (its Date header); "
                "the service refuses developer tokens from a wrong clock",
                fix,
            )
        else:
            self.report.ok("clock", f"{local}, within {abs(skew):.0f} s of the service's clock")

    # --- the service ----------------------------------------------------------------------------

    async def check_service(self, account: ServiceAccount | None) -> None:
        client = client_for(
            self.settings, account=account, read_timeout=max(self.feed_timeout + 5, 15.0)
        )
        hooks = client.http.event_hooks
        hooks["response"] = [*hooks.get("response", []), self.dates.hook]
        client.http.event_hooks = hooks
        async with client:
            place = await self.contact(client)
            self.check_clock()
            if place is None:
                self.skip_place()
                return
            if isinstance(place, DisplayServiceError):
                self.place_failed(place)
                for name in ("queues", "counters", "feeds"):
                    self.report.skip(name, "needs the place")
                return
            self.report.ok("place", f"{place.place_id}: {_place_words(place, self.settings)}")
            queues = await self.check_queues(client)
            counters = await self.check_counters(client)
            await self.check_feeds(client, queues, counters)

    async def contact(self, client: DisplayClient) -> Place | DisplayServiceError | None:
        """The service and API-key lines; the place when the key works (or the error that
        fetching it gave), None when there is no key to go on with."""
        keys = client.keys
        fixed = isinstance(keys, FixedApiKey)
        if isinstance(keys, ServiceApiKeys):
            try:
                await keys.get()
            except ClockNotSynchronised as error:
                self.report.skip("service", "not contacted: no token is signed with this clock")
                self.report.fail("API key", str(error), "see the clock line below")
                return None
            except ServiceUnreachable as error:
                self.unreachable(error)
                return None
            except KeyRefused as error:
                self.reached()
                self.report.fail(
                    "API key",
                    str(error),
                    f"make sure {self.settings.credentials_path(self.env)} is the service "
                    f"account issued for company {self.settings.service.company!r} (service."
                    f"company in {self.file}) at {self.url}, and that the clock is right",
                )
                return None
            except ServiceFailed as error:
                self.service_failed(error)
                return None
            self.reached()
            self.report.ok(
                "API key", "obtained from /v1/api_key with the service account (not shown)"
            )
        try:
            place = await client.place(self.settings.place.id)
        except ServiceUnreachable as error:
            self.unreachable(error)
            return None
        except AuthRefused as error:
            if fixed:
                self.reached()
            self.report.fail(
                "API key",
                f"the service refuses the {'fixed service.api_key' if fixed else 'new key'}: "
                f"{error}",
                f"set a valid service.api_key in {self.file}, or use service.credentials (a "
                "service account) so keys are renewed"
                if fixed
                else "the account may lack access to this place: ask the service's operator",
            )
            return None
        except ServiceFailed as error:
            server_side = error.status is None or error.status >= 500
            if fixed and server_side:
                self.service_failed(error)
                return None
            if fixed:
                self.reached()
                self.report.ok("API key", "the fixed service.api_key is accepted (not shown)")
            return error
        if fixed:
            self.reached()
            self.report.ok("API key", "the fixed service.api_key is accepted (not shown)")
        return place

    def reached(self) -> None:
        self.report.ok("service", f"{self.url} answers")

    def unreachable(self, error: ServiceUnreachable) -> None:
        text = str(error)
        fix = (
            f"check service.display_url in {self.file}, the network, DNS and firewall: this "
            f"machine must reach {self.url}"
        )
        if "CERTIFICATE" in text.upper() or "SSL" in text.upper():
            fix = (
                "the service's TLS certificate is not trusted: install the CA "
                "(ca-certificates) or set service.ca_bundle, and check the clock"
            )
        self.report.fail("service", f"cannot reach the display service: {text}", fix)
        self.report.skip("API key", "the service was not reached")

    def service_failed(self, error: ServiceFailed) -> None:
        self.report.fail(
            "service",
            f"the service at {self.url} fails: {error}",
            "try again in a few minutes; if it lasts, tell the display service's operator",
        )
        self.report.skip("API key", "the service did not answer properly")

    def place_failed(self, error: DisplayServiceError) -> None:
        place_id = self.settings.place.id
        fix = (
            f"set place.id in {self.file}: lobby-display discover --config {self.file} lists "
            "the places this account can see"
        )
        if isinstance(error, ServiceFailed) and error.status == 404:
            self.report.fail("place", f"no place with id {place_id!r} at {self.url}", fix)
        else:
            self.report.fail("place", f"cannot read place {place_id!r}: {error}", fix)

    def skip_place(self) -> None:
        for name in ("place", "queues", "counters", "feeds"):
            self.report.skip(name, "needs the service and an API key")

    async def check_queues(self, client: DisplayClient) -> list[str]:
        """The queue lines; returns the ids the feeds follow."""
        place_id = self.settings.place.id
        configured = self.settings.place.queues
        try:
            queues = await client.place_queues(place_id)
        except DisplayServiceError as error:
            self.report.fail("queues", f"cannot list the queues of place {place_id}: {error}")
            return list(configured)
        self.check_ids("queue", "place.queues", configured, queues)
        return list(configured) or sorted(queues)

    async def check_counters(self, client: DisplayClient) -> list[str]:
        """The counter lines; returns the ids the counters feed follows."""
        place_id = self.settings.place.id
        configured = self.settings.place.counters
        try:
            counters = await client.place_counters(place_id)
        except DisplayServiceError as error:
            self.report.fail("counters", f"cannot list the counters of place {place_id}: {error}")
            return list(configured)
        self.check_ids("counter", "place.counters", configured, counters)
        return list(configured) or sorted(counters)

    def check_ids(
        self,
        kind: str,
        key: str,
        configured: Sequence[str],
        known: Mapping[str, Queue] | Mapping[str, Counter],
    ) -> None:
        place_id = self.settings.place.id
        locale = self.settings.display.locales[0]
        if not configured:
            if known:
                listed = ", ".join(pick_name(item.name, locale) or "?" for item in known.values())
                self.report.ok(
                    f"{kind}s", f"{key} not set: all {len(known)} of the place ({listed})"
                )
            else:
                self.report.warn(
                    f"{kind}s",
                    f"place {place_id} has no {kind}: that part of the screen stays empty",
                )
            return
        for item_id in configured:
            item = known.get(item_id)
            if item is not None:
                self.report.ok(kind, f"{item_id} {pick_name(item.name, locale)}")
            else:
                self.report.fail(
                    kind,
                    f"{item_id!r} (in {key}) is not a {kind} of place {place_id}",
                    f"remove it from {key} in {self.file}, or use an id that lobby-display "
                    f"discover --config {self.file} lists",
                )

    async def check_feeds(
        self, client: DisplayClient, queue_ids: Sequence[str], counter_ids: Sequence[str]
    ) -> None:
        decoders: dict[Feed, Decoder] = {}
        if queue_ids:
            decoders[Feed.TICKETS] = TicketDecoder(client, queue_ids)
            decoders[Feed.QUEUES] = QueueStateDecoder(queue_ids)
        if counter_ids:
            decoders[Feed.COUNTERS] = CounterDecoder(counter_ids, self.settings.display.locales)
        results = await asyncio.gather(
            *(first_message(client, decoder, self.feed_timeout) for decoder in decoders.values())
        )
        outcomes = dict(zip(decoders, results, strict=True))
        for feed in Feed:
            outcome = outcomes.get(feed)
            if outcome is None:
                what = "counter" if feed is Feed.COUNTERS else "queue"
                self.report.ok(f"{feed} feed", f"nothing to follow: no {what}")
            else:
                self.report_feed(outcome)

    def report_feed(self, result: FirstMessage) -> None:
        name = f"{result.feed} feed"
        route = _FEED_ROUTES[result.feed]
        if result.records is not None:
            what = {Feed.TICKETS: "current ticket", Feed.QUEUES: "queue state"}
            noun = what.get(result.feed, "counter") + ("" if result.records == 1 else "s")
            self.report.ok(
                name, f"first message in {result.seconds:.1f} s ({result.records} {noun})"
            )
        elif result.error:
            self.report.fail(
                name,
                f"{route}: {result.error}",
                "a proxy between this machine and the service must pass event streams "
                "(text/event-stream) through, unbuffered; if it lasts, tell the service's "
                "operator",
            )
        else:
            self.report.fail(
                name,
                f"{route}: no first message within {self.feed_timeout:g} s",
                "the service, or a proxy on the way, holds the stream back: proxies must not "
                "buffer text/event-stream (nginx: proxy_buffering off); then run check again",
            )

    # --- the machine ---------------------------------------------------------------------------

    async def check_sound(self) -> None:
        sound = self.settings.sound
        if not sound.enabled:
            self.report.ok("sound", "off (sound.enabled = false)")
            return
        if sound.mode == "silent":
            self.report.ok("sound", "off (sound.mode = silent)")
            return
        from lobby_display.announce import Announcer

        announcer = Announcer.from_settings(self.settings)
        # The chime and voices it prepares go to a scratch directory: check must not leave
        # files owned by whoever runs it in the display's cache.
        with tempfile.TemporaryDirectory(prefix="lobby-display-check-") as scratch:
            announcer.cache_dir = Path(scratch)
            try:
                await announcer.start()
                described, audible = announcer.describe(), announcer.audible
                voices = announcer.voices
            finally:
                await announcer.stop()
        try_it = f"try it: python -m lobby_display.announce --config {self.file}"
        if not audible:
            self.report.fail(
                "sound",
                described,
                "install an audio player (pipewire-bin for pw-play, pulseaudio-utils for "
                "paplay, alsa-utils for aplay) or set sound.player, and espeak-ng for the "
                f"voice; {try_it}",
            )
        elif sound.mode in ("both", "voice") and not voices:
            self.report.warn(
                "sound", f"{described}; no voice", f"apt-get install espeak-ng; {try_it}"
            )
        else:
            self.report.ok("sound", described)

    def check_fonts(self) -> None:
        locales = self.settings.display.locales
        needed = [locale for locale in locales if locale in SCRIPT_FONTS]
        if not needed:
            self.report.ok("fonts", "Latin script only: any terminal font shows it")
            return
        if self.settings.display.theme == "console":
            self.report.warn(
                "fonts",
                f"{', '.join(needed)} cannot be shown on the Linux text console "
                "(display.theme = console)",
                "use the kiosk unit (cage + foot) for these locales",
            )
        fc_list = shutil.which("fc-list")
        if fc_list is None:
            self.report.warn(
                "fonts",
                f"cannot check the fonts for {', '.join(needed)}: fc-list is missing",
                "apt-get install fontconfig",
            )
            return
        found: list[str] = []
        missing: list[tuple[str, str, str]] = []
        for locale in needed:
            language, words, package = SCRIPT_FONTS[locale]
            family = _font_for(fc_list, language)
            if family:
                found.append(f"{locale} {family}")
            else:
                missing.append((locale, words, package))
        if missing:
            packages = sorted({package for _, _, package in missing})
            self.report.warn(
                "fonts",
                "no font for "
                + ", ".join(f"{locale} ({words})" for locale, words, _ in missing)
                + ": those names show as empty boxes",
                f"apt-get install {' '.join(packages)}",
            )
        if found:
            self.report.ok("fonts", "; ".join(found))

    def check_monitoring(self) -> None:
        """With `[monitoring] textfile`: can the screen write node-exporter's file there?"""
        textfile = self.settings.monitoring.textfile
        if textfile is None:
            return
        directory = textfile.parent
        fix = (
            f"the directory node-exporter's textfile collector reads, writable by the display's "
            f"user (setfacl -m u:lobby-display:rwx {directory}) and, under the units, "
            f"ReadWritePaths={directory} in a drop-in (docs/operations.md); run check as that user"
        )
        if not directory.is_dir():
            self.report.fail(
                "monitoring", f"{directory} does not exist: {textfile.name} cannot be written", fix
            )
            return
        try:
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".check-", suffix=".tmp"):
                pass
        except OSError as error:
            reason = error.strerror or type(error).__name__
            self.report.fail("monitoring", f"{directory} is not writable: {reason}", fix)
            return
        self.report.ok("monitoring", f"{textfile} can be written (node-exporter's textfile)")


async def first_message(client: DisplayClient, decoder: Decoder, bound: float) -> FirstMessage:
    """Connect one feed as the display does and wait (at most `bound` s) for its first message.

    The feed's own runner does the work (the same connection, key renewal and decoding as the
    screen); it is stopped as soon as the first message is decoded or the first attempt fails.
    """
    done = asyncio.Event()
    records: list[int] = []
    errors: list[str] = []

    def emit(update: Update) -> None:
        if isinstance(update, TicketsSnapshot):
            records.append(len(update.tickets))
        elif isinstance(update, QueueStatesSnapshot):
            records.append(len(update.states))
        elif isinstance(update, CountersSnapshot):
            records.append(len(update.counters))
        elif isinstance(update, FeedHealth):
            if update.status in (FeedStatus.RECONNECTING, FeedStatus.REFUSED):
                errors.append(update.error or update.status.value)
            if update.status is not FeedStatus.CONNECTING:
                done.set()

    started = time.monotonic()
    runner = asyncio.create_task(FeedRunner(client, decoder, emit).run())
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), bound)
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    seconds = time.monotonic() - started
    if records and not errors:
        return FirstMessage(decoder.feed, seconds, records[0])
    return FirstMessage(decoder.feed, seconds, None, errors[0] if errors else "")


def _place_words(place: Place, settings: Settings) -> str:
    name = pick_name(place.name, settings.display.locales[0]) or "(no name)"
    where = ", ".join(part for part in (place.city, place.country) if part)
    zone = f", time zone {place.timezone}" if place.timezone else ""
    return f"{name}{f' ({where})' if where else ''}{zone}"


def _credentials_fix(message: str, path: object) -> str:
    if "not found" in message:
        return (
            f"put the service-account JSON file at {path} (mode 600, owned by the display's "
            "user), or point service.credentials at it"
        )
    if "open to group or others" in message:
        return f"chmod 600 {path}"
    if "permission denied" in message or "cannot be read" in message:
        return f"give the file to the display's user: chown lobby-display {path}"
    if "not a service-account JSON file" in message or "larger than" in message:
        # A directory, a FIFO, a device, a huge file: not the key file at all.
        return "service.credentials must name the JSON file itself"
    if "owned by" in message:
        return f"give the file to the display's user: chown lobby-display {path}"
    return (
        "replace it with the service-account JSON file as issued: an object with "
        "client_email and an unencrypted RSA private_key in PEM"
    )


def _font_for(fc_list: str, language: str) -> str:
    """The first font family fontconfig has for `language`, "" when none."""
    try:
        found = subprocess.run(  # noqa: S603 - a fixed program and arguments
            [fc_list, f":lang={language}", "family"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
            env=child_environment(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    families = sorted({line.split(",")[0].strip() for line in found.stdout.splitlines() if line})
    suffix = _PREFERRED_FAMILY.get(language)
    preferred = [family for family in families if suffix and family.endswith(suffix)]
    monospace = [family for family in preferred if "Mono" in family]
    return next(iter(monospace or preferred or families), "")

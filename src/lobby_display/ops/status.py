"""`lobby-display status`: the running screen's health, for people and scripts (`--json`).

Reads the `health.json` the kiosk rewrites (monitoring.py) from its runtime or state directory.
Exit 0 when the screen runs and every feed is live, 1 otherwise, 2 for a bad config.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TextIO

from pydantic import ValidationError

from lobby_display.config import Settings
from lobby_display.files import FileRefused, expected_owners, read_regular
from lobby_display.models import clean_text
from lobby_display.monitoring import (
    HEALTH_FILE_NAME,
    WRITE_EVERY_SECONDS,
    Health,
    runtime_directory,
)
from lobby_display.updates import Feed

#: Where the systemd units keep their runtime and state directories (`.../lobby-display/NAME`).
UNIT_RUNTIME_ROOT: Final = Path("/run/lobby-display")
UNIT_STATE_ROOT: Final = Path("/var/lib/lobby-display")
#: A health file older than this is from a screen that stopped writing it (hung, or stopped).
STALE_AFTER_SECONDS: Final = 6 * WRITE_EVERY_SECONDS
#: Largest health file read (it is about 1 kB).
MAX_HEALTH_BYTES: Final = 256 * 1024

EXIT_OK: Final = 0
EXIT_NOT_WELL: Final = 1


def unit_directories(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> tuple[list[Path], list[Path]]:
    """The runtime and state directories the screen of this config may use, most likely first.

    As the units set them (`RuntimeDirectory=lobby-display/%i`, `StateDirectory=lobby-display/%i`,
    the instance being the config file's name without `.toml`), or as the environment says
    (`$RUNTIME_DIRECTORY`, `$STATE_DIRECTORY`), and the configured `[state] directory`.
    """
    env = os.environ if environ is None else environ
    runtime: list[Path] = []
    state: list[Path] = []
    if (directory := runtime_directory(env)) is not None:
        runtime.append(directory)
    state.append(settings.state_directory(env))
    if settings.source is not None:
        runtime.append(UNIT_RUNTIME_ROOT / settings.source.stem)
        state.append(UNIT_STATE_ROOT / settings.source.stem)
    return _unique(runtime), _unique([path for path in state if path not in runtime])


def _unique(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


@dataclass(frozen=True, slots=True)
class Found:
    """What was found of the screen's health."""

    health: Health | None
    path: Path | None
    problem: str = ""
    """Why there is no health ("" when there is)."""


def find_health(settings: Settings, environ: Mapping[str, str] | None = None) -> Found:
    """The newest health file of this config's screen, read and checked."""
    runtime, state = unit_directories(settings, environ)
    candidates = [directory / HEALTH_FILE_NAME for directory in (*runtime, *state)]
    problems: list[str] = []
    best: tuple[Health, Path] | None = None
    for path in candidates:
        try:
            # Not through a link, and only the screen's (or root's): often run as root.
            read = read_regular(
                path,
                limit=MAX_HEALTH_BYTES,
                what="a health file",
                follow_links=False,
                owners=expected_owners(path.parent),
            )
            health = Health.model_validate_json(read.data)
        except FileNotFoundError:
            continue
        except FileRefused as refused:
            problems.append(str(refused))
            continue
        except PermissionError:
            problems.append(f"{path}: cannot be read (run as the screen's user or root)")
            continue
        except OSError as error:
            problems.append(f"{path}: cannot be read ({error.strerror or error})")
            continue
        except ValidationError:
            problems.append(f"{path}: not a health file of this version (or damaged)")
            continue
        if best is None or health.written_at > best[0].written_at:
            best = (health, path)
    if best is not None:
        return Found(best[0], best[1])
    looked = ", ".join(str(path.parent) for path in candidates)
    problem = "; ".join(problems) or f"no {HEALTH_FILE_NAME} in {looked}"
    return Found(None, None, f"no running display found ({problem})")


def is_running(pid: int) -> bool:
    """True when `pid` is a lobby-display process now."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"lobby-display" in command or b"lobby_display" in command


def summary(found: Found, now: datetime) -> dict[str, Any]:
    """What `status` says, as plain data (the `--json` output)."""
    health = found.health
    if health is None:
        return {"running": False, "all_live": False, "problem": found.problem}
    alive = is_running(health.pid)
    age = max(0.0, (now - health.written_at).total_seconds())
    problem = ""
    if not alive:
        problem = f"the display (PID {health.pid}) is not running; its last health is shown"
    elif age > STALE_AFTER_SECONDS:
        problem = f"the display (PID {health.pid}) has not written its health for {age:.0f} s"
    feeds = {
        feed.value: {
            "live": record.live,
            "status": record.status.value,
            "seconds_since_last_message": _round(health.seconds_since_last_message(feed)),
            "reconnections": record.reconnections,
            "error": record.error,
        }
        for feed, record in health.feeds.items()
    }
    all_live = all(feed in health.feeds and health.feeds[feed].live for feed in Feed)
    return {
        "running": alive and age <= STALE_AFTER_SECONDS,
        "all_live": all_live,
        "problem": problem,
        "file": str(found.path),
        "version": health.version,
        "place_id": health.place_id,
        "screen": health.screen,
        "pid": health.pid,
        "started_at": health.started_at.isoformat(),
        "written_at": health.written_at.isoformat(),
        "seconds_since_written": _round(age),
        "feeds": feeds,
        "api_key_renewals": health.api_key_renewals,
        "calls_shown": health.calls_shown,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def status(
    settings: Settings,
    *,
    as_json: bool = False,
    environ: Mapping[str, str] | None = None,
    out: TextIO | None = None,
) -> int:
    """Print the screen's health; 0 when it runs with every feed live, else 1."""
    stream = sys.stdout if out is None else out
    facts = summary(find_health(settings, environ), datetime.now(UTC))
    if as_json:
        print(json.dumps(facts, indent=2, ensure_ascii=False), file=stream)
    else:
        print(words(facts), file=stream)
    return EXIT_OK if facts["running"] and facts["all_live"] else EXIT_NOT_WELL


def words(facts: Mapping[str, Any]) -> str:
    """The summary for people."""
    if "pid" not in facts:
        return f"lobby-display status: {facts['problem']}"
    state = "running" if facts["running"] else "NOT RUNNING"
    lines = [
        f"lobby-display {facts['version']}, place {_safe(facts['place_id'])}: {state} "
        f"(PID {facts['pid']}, since {facts['started_at']})"
    ]
    if facts["problem"]:
        lines.append(f"  {facts['problem']}")
    for feed, record in facts["feeds"].items():
        age = record["seconds_since_last_message"]
        last = "never" if age is None else f"{age:g} s ago"
        line = (
            f"  {feed:<9} {record['status']:<13} last message {last}, "
            f"{record['reconnections']} reconnections"
        )
        if record["error"]:
            line += f" ({_safe(record['error'])})"
        lines.append(line)
    lines.append(
        f"  API-key renewals {facts['api_key_renewals']}, calls shown {facts['calls_shown']}; "
        f"written {facts['seconds_since_written']:g} s ago to {facts['file']}"
    )
    return "\n".join(lines)


def _safe(text: str) -> str:
    # Written by the screen, from the network's words: nothing reaches the terminal raw.
    return clean_text(str(text), 200)

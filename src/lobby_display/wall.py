"""Several screens on one PC: `lobby-display place` puts a screen's window on its own TV.

Over sway's IPC socket, the screen's window gets a workspace of its own, tied to its
`[display] output` and shown full screen; sway brings it back when an unplugged TV returns, and
a TV not connected at start leaves the board on a free output meanwhile.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import struct
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lobby_display.config import Settings

log = logging.getLogger(__name__)

#: Prefix of every screen's app id (foot --app-id) and of its workspace's name.
APP_ID_PREFIX: Final = "lobby-display-"

# The i3 IPC protocol, which sway speaks: magic, payload length, message type, JSON payload.
_MAGIC: Final = b"i3-ipc"
_HEADER: Final = struct.Struct("=6sII")
RUN_COMMAND: Final = 0
GET_WORKSPACES: Final = 1
SUBSCRIBE: Final = 2
GET_OUTPUTS: Final = 3
GET_TREE: Final = 4
#: Events carry the high bit; `window` is event 3.
WINDOW_EVENT: Final = 0x80000003


class WallError(Exception):
    """sway cannot be reached or does not do what it was asked; the message says what."""


class SwayConnection:
    """One connection to sway's IPC socket; requests and, once subscribed, events."""

    def __init__(self, path: str, timeout: float = 10.0) -> None:
        self.path = path
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.settimeout(timeout)
        try:
            self._socket.connect(path)
        except OSError as error:
            self._socket.close()
            raise WallError(f"cannot reach sway at {path} ({error.strerror or error})") from None

    def __enter__(self) -> SwayConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._socket.close()

    def request(self, kind: int, payload: str = "") -> Any:
        """Send one message and return sway's answer, decoded from JSON."""
        data = payload.encode()
        try:
            self._socket.sendall(_HEADER.pack(_MAGIC, len(data), kind) + data)
            answer_kind, answer = self._read()
            while answer_kind & 0x80000000:  # an event that came first: not our answer
                answer_kind, answer = self._read()
        except (OSError, ValueError) as error:
            raise WallError(f"sway at {self.path} stopped answering ({error})") from None
        return answer

    def command(self, text: str) -> None:
        """Run sway commands (`a, b` or `a; b`); raise `WallError` naming the first that fails."""
        results = self.request(RUN_COMMAND, text)
        failed = [r for r in results if not r.get("success")]
        if failed:
            raise WallError(f"sway refused {text!r}: {failed[0].get('error', 'no reason given')}")

    def event(self, timeout: float) -> tuple[int, Any] | None:
        """The next event, or None when none comes within `timeout` seconds."""
        self._socket.settimeout(max(timeout, 0.001))
        try:
            return self._read()
        except TimeoutError:
            return None
        except (OSError, ValueError) as error:
            raise WallError(f"sway at {self.path} stopped answering ({error})") from None

    def _read(self) -> tuple[int, Any]:
        magic, length, kind = _HEADER.unpack(self._exactly(_HEADER.size))
        if magic != _MAGIC:
            raise ValueError("not an i3-ipc message")
        return kind, json.loads(self._exactly(length) or b"null")

    def _exactly(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self._socket.recv(size - len(chunks))
            if not chunk:
                raise ValueError("connection closed")
            chunks += chunk
        return bytes(chunks)


# ---------------------------------------------------------------------------------------------
# Reading sway's tree (pure functions of the JSON sway sends)


@dataclass(frozen=True)
class Window:
    """A window as sway shows it: its container id and where it is."""

    con_id: int
    output: str
    workspace: str
    fullscreen: bool


def find_window(tree: Mapping[str, Any], app_id: str) -> Window | None:
    """The window whose app id is exactly `app_id` (no pattern: names may hold any character)."""
    found = [window for window, node in _views(tree) if node.get("app_id") == app_id]
    # Two at once (a restart while the old window closes): the newest is the running one.
    return max(found, key=lambda window: window.con_id) if found else None


def _views(
    node: Mapping[str, Any], output: str = "", workspace: str = ""
) -> Iterator[tuple[Window, Mapping[str, Any]]]:
    if node.get("type") == "output":
        output = str(node.get("name", ""))
    elif node.get("type") == "workspace":
        workspace = str(node.get("name", ""))
    if node.get("app_id") is not None or node.get("window") is not None:
        window = Window(int(node["id"]), output, workspace, node.get("fullscreen_mode") == 1)
        yield window, node
    for child in [*node.get("nodes", []), *node.get("floating_nodes", [])]:
        yield from _views(child, output, workspace)


def workspace_names(tree: Mapping[str, Any]) -> set[str]:
    """Names of the workspaces that exist now."""
    names: set[str] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if node.get("type") == "workspace":
            names.add(str(node.get("name", "")))
        pending.extend(node.get("nodes", []))
    return names


def active_outputs(outputs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Names of the outputs sway shows something on, in sway's order."""
    return [str(output["name"]) for output in outputs if output.get("active")]


def free_outputs(
    tree: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]], ignore: int | None = None
) -> list[str]:
    """Active outputs whose visible workspace has no window (apart from `ignore`'s)."""
    busy = {window.workspace for window, _ in _views(tree) if window.con_id != ignore}
    return [
        str(output["name"])
        for output in outputs
        if output.get("active") and output.get("current_workspace") not in busy
    ]


def workspace_for(app_id: str, output: str) -> str:
    """The screen's workspace: named after its output too, so a new output starts afresh."""
    return f"{app_id}@{output}" if output else app_id


def _quoted(text: str) -> str:
    # Config validation keeps quotes and backslashes out of output names; app ids come from
    # unit instance names. Refuse rather than build a command sway would read differently.
    if '"' in text or "\\" in text or not text.isprintable():
        raise WallError(f"{text!r} cannot be used in a sway command")
    return f'"{text}"'


@dataclass(frozen=True)
class Placement:
    """What to ask sway, and what to say about it."""

    workspace: str
    commands: list[str]
    #: The output the window should end on; "" when sway picks it.
    expected: str
    #: Why the window is not on its configured output ("" when it is, or none is configured).
    warning: str


def plan(
    tree: Mapping[str, Any],
    outputs: Sequence[Mapping[str, Any]],
    window: Window,
    app_id: str,
    wanted: str,
) -> Placement:
    """The sway commands that put `window` full screen on the output `wanted` (or a free one)."""
    workspace = workspace_for(app_id, wanted)
    active = active_outputs(outputs)
    new = workspace not in workspace_names(tree)
    con = f"[con_id={window.con_id}]"
    commands: list[str] = []
    expected = wanted if wanted in active else ""
    warning = ""
    if wanted and new:
        # Ties the workspace to the output for as long as sway runs, even while it is absent.
        commands.append(f"workspace {_quoted(workspace)} output {_quoted(wanted)}")
    if wanted and wanted not in active:
        connected = ", ".join(active) or "none"
        known = {str(output.get("name")) for output in outputs}
        state = "is turned off in sway's config" if wanted in known else "is not connected"
        warning = f"output {wanted} {state} (outputs on: {connected})"
    if new and not expected:
        free = free_outputs(tree, outputs, ignore=window.con_id)
        if free:
            # A new workspace opens on the focused output: focus a TV that shows nothing.
            commands.append(f"focus output {_quoted(free[0])}")
            expected = free[0]
    commands.append(f"{con} move container to workspace {_quoted(workspace)}")
    commands.append(f"workspace --no-auto-back-and-forth {_quoted(workspace)}")
    if wanted in active:
        # The workspace may exist elsewhere (it was shown on a fallback while its TV was away).
        commands.append(f"move workspace to output {_quoted(wanted)}")
    commands.append(f"{con} fullscreen enable")
    return Placement(workspace, commands, expected, warning)


# ---------------------------------------------------------------------------------------------
# Talking to the running sway


def wait_for_window(sway_socket: str, app_id: str, timeout: float) -> None:
    """Return once a window with `app_id` exists; `WallError` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    with SwayConnection(sway_socket) as events, SwayConnection(sway_socket) as requests:
        # Subscribe first, then look: a window that appears in between is still seen.
        if not events.request(SUBSCRIBE, json.dumps(["window"])).get("success"):
            raise WallError("sway refused to report new windows")
        if find_window(requests.request(GET_TREE), app_id) is not None:
            return
        while (left := deadline - time.monotonic()) > 0:
            event = events.event(left)
            if event is None:
                break
            kind, payload = event
            container = payload.get("container", {}) if isinstance(payload, dict) else {}
            if kind == WINDOW_EVENT and container.get("app_id") == app_id:
                return
    raise WallError(f"no window {app_id!r} appeared within {timeout:g} s")


def place_window(sway_socket: str, app_id: str, wanted: str, timeout: float = 30.0) -> Window:
    """Put the window `app_id` full screen on `wanted` (or a free output); return where it is."""
    wait_for_window(sway_socket, app_id, timeout)
    with SwayConnection(sway_socket) as sway:
        tree = sway.request(GET_TREE)
        window = find_window(tree, app_id)
        if window is None:
            raise WallError(f"the window {app_id!r} closed before it could be placed")
        placement = plan(tree, sway.request(GET_OUTPUTS), window, app_id, wanted)
        sway.command("; ".join(placement.commands))
        placed = find_window(sway.request(GET_TREE), app_id)
    if placed is None:
        raise WallError(f"the window {app_id!r} closed while it was placed")
    if placement.warning:
        log.warning("%s: %s; showing on %s until it is", app_id, placement.warning, placed.output)
    elif not wanted:
        log.info("%s: no [display] output set; showing on %s", app_id, placed.output)
    else:
        log.info("%s: showing on %s", app_id, placed.output)
    return placed


def place(
    settings: Settings,
    app_id: str,
    timeout: float = 30.0,
    environ: Mapping[str, str] | None = None,
) -> int:
    """`lobby-display place`: 0 once the window is placed (on a fallback output too), else 1."""
    from lobby_display.service import setup_logging

    env = os.environ if environ is None else environ
    setup_logging(settings, env)
    sway_socket = env.get("SWAYSOCK", "")
    if not sway_socket:
        log.error("SWAYSOCK is not set: place runs in lobby-display-screen@.service, under sway")
        return 1
    try:
        place_window(sway_socket, app_id, settings.display.output, timeout)
    except WallError as error:
        log.error("%s: %s", app_id, error)
        return 1
    return 0


__all__ = [
    "APP_ID_PREFIX",
    "Placement",
    "SwayConnection",
    "WallError",
    "Window",
    "active_outputs",
    "find_window",
    "free_outputs",
    "place",
    "place_window",
    "plan",
    "wait_for_window",
    "workspace_for",
]

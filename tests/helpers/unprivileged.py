"""Run a piece of a test as an unprivileged user, so that permission errors happen as root too.

Root reads and writes any file whatever its mode, so a test of "permission denied" proves
nothing when the suite runs as root (CI does). `as_unprivileged(function, *args)` runs
`function(*args)` in a forked child that has dropped to `nobody` (no supplementary groups)
when we are root, and in this process otherwise; its return value or its exception comes back
to the caller (both must pickle). The child shares the test's imports and fixtures' objects
as they were when it forked (a `caplog` handler included: return what it captured).

`shared_folder()` is a fresh directory that user can reach (pytest's tmp_path sits in a 0700
directory of root's), owned by that user; remove it with `shutil.rmtree` when done.
"""

from __future__ import annotations

import os
import pickle
import pwd
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: The user a root test becomes (it exists on every Debian system).
USER = "nobody"


def ids() -> tuple[int, int]:
    """uid and gid of the unprivileged user (ours when we are not root)."""
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


def shared_folder() -> Path:
    """A new directory in /tmp that the unprivileged user owns (mode 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="lobby-display-unprivileged-", dir="/tmp"))
    uid, gid = ids()
    if os.geteuid() == 0:
        os.chown(folder, uid, gid)
    return folder


def give(path: Path) -> None:
    """Make `path` the unprivileged user's (nothing to do when we are that user)."""
    if os.geteuid() == 0:
        uid, gid = ids()
        shutil.chown(path, uid, gid)


def as_unprivileged(function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` as the unprivileged user: its result, or its exception raised here."""
    if os.geteuid() != 0:
        return function(*args)
    uid, gid = ids()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root for good, run, send back the outcome, end at once
        outcome: tuple[str, Any]
        try:
            os.close(reader)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            assert os.geteuid() == uid and os.getegid() == gid
            outcome = ("value", function(*args))
        except BaseException as error:
            outcome = ("error", error)
        try:
            data = pickle.dumps(outcome)
        except Exception as error:
            data = pickle.dumps(("error", RuntimeError(f"unpicklable outcome: {error!r}")))
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the unprivileged child ended without an answer (status {status})")
    kind, value = pickle.loads(data)
    if kind == "error":
        raise value
    result: T = value
    return result

"""Files read and written safely: read only when regular, owned as expected and small enough
(a FIFO, a device or a huge file is refused at once, naming the file), written atomically (a
reader or a power cut sees the old text or the new, never half) and privately.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: Directories the display makes for itself (state, sound cache, logs): its owner only.
PRIVATE_DIRECTORY_MODE: Final = 0o700
#: Files it writes that nobody else needs (board, API key, log, screenshots): its owner only.
PRIVATE_FILE_MODE: Final = 0o600


class FileRefused(OSError):
    """A file that is not read (not a regular file, a link where none may be, owned by another
    user, larger than such a file can be) or a directory that is not used (others may write to
    it). `str()` names it and the reason; `reason` is the reason alone (also `strerror`, so
    `except OSError` handlers can say it)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(errno.EPERM, reason, str(path))
        self.path = Path(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class FileRead:
    """What `read_regular` read: the bytes, and the file's status when it was opened."""

    data: bytes
    info: os.stat_result

    @property
    def mode(self) -> int:
        """The permission bits."""
        return stat.S_IMODE(self.info.st_mode)

    @property
    def open_to_others(self) -> bool:
        """True when group or others may read, write or run it."""
        return bool(self.mode & 0o077)


def kind_of(mode: int) -> str:
    """What a file of `st_mode` is, in words ("a named pipe (FIFO)", "a directory"...)."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _owner_names(owners: Collection[int]) -> str:
    import pwd  # (POSIX only, like the rest of the display)

    names = []
    for uid in sorted(set(owners)):
        try:
            names.append(pwd.getpwuid(uid).pw_name)
        except KeyError:
            names.append(f"user {uid}")
    return " or ".join(names)


def _check(path: Path, info: os.stat_result, what: str, owners: Collection[int] | None) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(path, f"is {kind_of(info.st_mode)}, not {what}")
    if owners is not None and info.st_uid not in owners:
        raise FileRefused(
            path,
            f"is owned by {_owner_names([info.st_uid])}, not by {_owner_names(owners)}: "
            "refused, as another user may change it",
        )


def read_regular(
    path: Path | str,
    *,
    limit: int,
    what: str = "a regular file",
    follow_links: bool = True,
    owners: Collection[int] | None = None,
) -> FileRead:
    """Read the regular file at `path`, at most `limit` bytes, without ever blocking on it.

    Raises `FileRefused` (an OSError) when it is not a regular file (a directory, a FIFO, a
    device: `what` says what it should be), when `follow_links` is False and it is a symbolic
    link, when `owners` is given and its owner is not among them, or when it holds more than
    `limit` bytes; the other OSErrors (FileNotFoundError, PermissionError...) as `open` does.
    The checks are made on the file actually opened (`fstat`), so a file swapped in between
    the look and the read is refused too.
    """
    path = Path(path)
    # A first look, so a FIFO or a device is never even opened (opening some has effects).
    info = os.stat(path, follow_symlinks=follow_links)
    if not follow_links and stat.S_ISLNK(info.st_mode):
        raise FileRefused(path, f"is a symbolic link, not {what}: refused")
    _check(path, info, what, owners)
    if info.st_size > limit:
        raise FileRefused(path, f"is larger than {limit} bytes: refused, {what} is never that big")
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
    if not follow_links:
        flags |= os.O_NOFOLLOW
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_links:
            raise FileRefused(path, f"is a symbolic link, not {what}: refused") from None
        raise
    try:
        opened = os.fstat(descriptor)
        _check(path, opened, what, owners)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(descriptor)
    if size > limit:
        raise FileRefused(path, f"is larger than {limit} bytes: refused, {what} is never that big")
    return FileRead(b"".join(chunks), opened)


def make_directories(path: Path) -> None:
    """Make `path` and its missing parents, each for its owner only (0700; `Path.mkdir` gives
    the parents it makes the umask's mode). Existing ones are left as they are."""
    missing = [part for part in (path, *path.parents) if not part.is_dir()]
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):
            part.mkdir(mode=PRIVATE_DIRECTORY_MODE)


def private_directory(path: Path, *, create: bool = True) -> Path:
    """`path`, made if missing (mode 0700, for its owner only) unless `create` is False, and
    checked.

    Raises `FileRefused` when it is not a directory, or when group or others may write to it
    (they could replace the saved board or the API key there, or put links in their place);
    other OSErrors as `mkdir` and `stat` do (FileNotFoundError when missing and not created).
    """
    if create:
        make_directories(path)
    info = path.stat()
    if not stat.S_ISDIR(info.st_mode):
        raise FileRefused(path, f"is {kind_of(info.st_mode)}, not a directory")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        raise FileRefused(
            path,
            f"is writable by group or others (mode {mode:04o}), so another user could replace "
            f"the files kept there: refused; run: chmod 700 {path}",
        )
    return path


def expected_owners(directory: Path) -> set[int]:
    """Who may own a file the display reads back from `directory`: this process's user, root,
    and the directory's owner (root reading the display's files for `screenshot`)."""
    owners = {os.geteuid(), 0}
    with contextlib.suppress(OSError):
        owners.add(directory.stat().st_uid)
    return owners


def write_atomically(
    path: Path,
    content: str | bytes,
    mode: int = PRIVATE_FILE_MODE,
    *,
    private_parent: bool = True,
    sync: bool = True,
) -> None:
    """Replace `path` with `content` (text as UTF-8) and permission bits `mode` (owner only by
    default), through a synced temp file. A link at `path` is replaced, never followed.
    `sync=False` skips the sync, for a file rewritten every few seconds whose loss in a power
    cut does not matter (the health files): it spares the box's flash.

    A missing directory is made private (0700). With `private_parent` (the display's own
    directories) an existing one that others may write to is refused (`FileRefused`); without
    (a file a person asked for, in /tmp say) it is only required to exist or be creatable.
    """
    if private_parent:
        private_directory(path.parent)
    else:
        make_directories(path.parent)
    data = content.encode("utf-8") if isinstance(content, str) else content
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            if sync:
                os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

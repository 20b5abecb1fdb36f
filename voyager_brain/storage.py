"""Every write voyager-brain makes goes through this module.

Two primitives, both under an advisory lock on a side file (``brain.md.lock`` beside
``brain.md``) so that concurrent writers are serialized without ever locking the file that
readers open:

* `atomic_write` replaces a file in one step: temp file in the same folder, fsync,
  ``os.replace``, fsync the folder. A reader (or a crash) sees the old bytes or the new ones,
  never a mix.
* `append` adds bytes with a single ``write`` on an ``O_APPEND`` descriptor, then fsync.

Every path is first checked by `confine.check` (nothing outside the repository: no
symbolic link inside it, no FIFO or device), and opened without following a link.

Standard library only: this is on the path of every agent hook.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from . import confine
from .errors import LockTimeoutError

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

DEFAULT_LOCK_TIMEOUT = 10.0


def lock_path(path: Path) -> Path:
    """The side file whose lock guards `path`."""
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def locked(path: Path, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the exclusive advisory lock for `path` (on its side ``.lock`` file).

    Waits up to `timeout` seconds, then raises `LockTimeoutError`. The lock is released
    when the block ends or when the process dies, so a killed writer never leaves a stale
    lock behind. Not re-entrant: do not nest two `locked()` blocks on the same path.
    """
    lock = lock_path(path)
    confine.check(lock)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = confine.open_checked(lock, os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise LockTimeoutError(
                        f"{path}: another process has held {lock.name} for over "
                        f"{timeout:g}s; try again, or raise lock_timeout_seconds in config.toml"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        yield
    finally:
        # Closing the descriptor releases the flock.
        os.close(fd)


# A temporary file is always new: never an existing file, never through a link.
_CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` atomically and durably. The caller holds the lock.

    `durable=False` skips the fsyncs, for caches: still atomic (a reader sees the old
    file or the new one), but a crash may lose the new one, which costs a rebuild."""
    # Checked here, not only by the lock: some writers hold none (caches, the engine's
    # logs), and a folder linked out of the repository would take the new file there.
    confine.check(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)


def create(path: Path, data: bytes) -> bool:
    """Create `path` with `data` unless it exists; False when it already did.

    The file appears complete or not at all (written aside, then hard-linked into place),
    and an existing file is never replaced, so no lock is needed.
    """
    confine.check(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
    finally:
        os.unlink(tmp)
    _fsync_dir(path.parent)
    return True


def append(path: Path, data: bytes) -> None:
    """Append `data` to `path` (created if missing) in one write, then fsync.

    The caller holds the lock. One ``write`` call means a process killed mid-append leaves
    either nothing or everything of `data` on a local file system.
    """
    confine.check(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = confine.open_checked(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        start = os.fstat(fd).st_size
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            # A full disk or a file size limit stops the write part way: what was
            # written is taken back (we hold the lock), so no torn line is left, and
            # the error names the file.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise OSError(exc.errno, f"cannot append: {exc.strerror}", str(path)) from None
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist (`confine.read_bytes`: a link
    inside a repository, a FIFO or a device raise `UnsafePathError`)."""
    return confine.read_bytes(path)


def open_read(path: Path) -> BinaryIO:
    """`path` opened for reading as `read_bytes` would read it (FileNotFoundError when
    missing), for the readers that seek: a log's tail, what it has grown by."""
    return os.fdopen(confine.open_checked(path, os.O_RDONLY), "rb")


def open_append(path: Path) -> BinaryIO:
    """`path` opened for appending (created if missing), checked as `append` checks it:
    for the logs a child process writes to."""
    confine.check(path)
    return os.fdopen(confine.open_checked(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab")


def move_aside(path: Path, stamp: str) -> Path:
    """Rename a file we cannot read to ``<name>.<stamp>.corrupt`` and return the new path."""
    confine.check(path)
    target = path.with_name(f"{path.name}.{stamp}.corrupt")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{stamp}-{n}.corrupt")
    os.replace(path, target)
    _fsync_dir(path.parent)
    return target

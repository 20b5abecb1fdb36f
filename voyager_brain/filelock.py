"""The lock on a memory log, taken the way Rho takes the lock on its brain.jsonl
(Rho's ``extensions/lib/file-lock.ts``), so that voyager-brain and Rho can append to one
log at the same time and lose nothing.

The protocol, followed to the letter:

- The lock is the file ``<log>.lock``, created exclusively (``O_CREAT | O_EXCL``, mode
  0600) holding the JSON object ``{"pid", "nonce", "acquiredAt", "refreshedAt",
  "hostname", "purpose"}`` (times in milliseconds since the epoch, written with two-space
  indentation). Whoever creates it holds the lock.
- Released by deleting the file, only while it still holds the holder's pid and nonce.
- A lock is stale, and is deleted by the next process that wants it, when its pid is not
  running (a pid that exists but cannot be signalled counts as running), or its
  ``refreshedAt`` is more than 30 seconds old; a file that is not such an object is stale
  when its modification time is more than 30 seconds old.
- Waiting: retries after 10 ms, doubling up to 250 ms, each with up to half as much again
  of random jitter, until the timeout (Rho's is 5 s; ours is ``lock_timeout_seconds``).

So the lock is held for one append or one read-and-rewrite, never longer: past 30 seconds
another process may take it. There is no permanent file at that name (an older
voyager-brain's empty ``memory.jsonl.lock`` is stale by its age, as Rho judges it).

Standard library only: every hook that writes memory passes through here.
"""

from __future__ import annotations

import contextlib
import os
import time

from . import cjson, confine
from .errors import LockTimeoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: A lock older than this (its ``refreshedAt``, else its file's mtime) is stale.
STALE_MS = 30_000
FIRST_WAIT = 0.010
LONGEST_WAIT = 0.250
_NUMBER = (int, float)
_FIELDS = (("pid", _NUMBER), ("nonce", str), ("acquiredAt", _NUMBER), ("refreshedAt", _NUMBER))


def lock_path(log: Path) -> Path:
    """The lock file of `log`."""
    return log.with_name(log.name + ".lock")


@contextlib.contextmanager
def locked(log: Path, timeout: float, purpose: str = "append") -> Iterator[None]:
    """Hold the lock on `log` (see the module's docstring) for the block; raises
    `LockTimeoutError` after `timeout` seconds of waiting."""
    lock = lock_path(log)
    confine.check(lock)
    lock.parent.mkdir(parents=True, exist_ok=True)
    pid, nonce = os.getpid(), os.urandom(6).hex()
    deadline = time.monotonic() + timeout
    wait = FIRST_WAIT
    while True:
        now = int(time.time() * 1000)
        if _create(lock, pid, nonce, now, purpose):
            break
        holder, seen = _read(lock)
        if _stale(holder, seen, now):
            _remove_if_unchanged(lock, seen)
            continue
        if time.monotonic() >= deadline:
            by = f" (held by pid {holder['pid']})" if holder else ""
            raise LockTimeoutError(
                f"{log}: another process has held {lock.name} for over {timeout:g}s{by};"
                " try again, or raise lock_timeout_seconds in config.toml"
            )
        jitter = os.urandom(1)[0] / 255 * wait * 0.5  # no `random`: hooks pay for imports
        time.sleep(min(wait + jitter, LONGEST_WAIT))
        wait = min(wait * 2, LONGEST_WAIT)
    try:
        yield
    finally:
        _release(lock, pid, nonce)


def _create(lock: Path, pid: int, nonce: str, now: int, purpose: str) -> bool:
    """Create the lock file holding our payload; False when it exists already."""
    payload = {
        "pid": pid,
        "nonce": nonce,
        "acquiredAt": now,
        "refreshedAt": now,
        "hostname": os.uname().nodename,
        "purpose": purpose,
    }
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        fd = confine.open_checked(lock, flags, 0o600)
    except FileExistsError:
        return False
    try:
        os.write(fd, _indented(payload).encode())
    except BaseException:
        os.close(fd)
        os.unlink(lock)
        raise
    os.close(fd)
    return True


def _indented(payload: dict[str, object]) -> str:
    """`JSON.stringify(payload, null, 2)` of a flat object."""
    lines = [f"  {cjson.dumps(key)}: {cjson.dumps(value)}" for key, value in payload.items()]
    return "{\n" + ",\n".join(lines) + "\n}"


def _read(lock: Path) -> tuple[dict[str, object] | None, os.stat_result | None]:
    """The lock's payload (None when it is not one) and the file's status (None when it
    is gone)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, None
    try:
        seen = os.fstat(fd)
        data = os.read(fd, 64 << 10)
    except OSError:
        return None, None
    finally:
        os.close(fd)
    try:
        value = cjson.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None, seen
    if not isinstance(value, dict) or not isinstance(value.get("hostname"), str):
        return None, seen
    for name, kind in _FIELDS:
        # Rho asks `typeof === "number"`: any JSON number, an int or a float.
        field = value.get(name)
        if not isinstance(field, kind) or isinstance(field, bool):
            return None, seen
    return value, seen


def _running(pid: object) -> bool:
    if not isinstance(pid, (int, float)) or isinstance(pid, bool) or pid <= 0:
        return False
    if isinstance(pid, float) and not pid.is_integer():
        return False  # node's process.kill refuses it: not running
    try:
        os.kill(int(pid), 0)
    except PermissionError:
        return True  # it exists; we may not signal it
    except (OSError, OverflowError):
        return False
    return True


def _stale(holder: dict[str, object] | None, seen: os.stat_result | None, now: int) -> bool:
    if seen is None:
        return True  # gone: try again at once
    if holder is not None:
        if not _running(holder["pid"]):
            return True
        refreshed = holder["refreshedAt"]
        assert isinstance(refreshed, (int, float))
        return now - refreshed > STALE_MS
    return now - seen.st_mtime_ns // 1_000_000 > STALE_MS


def _remove_if_unchanged(lock: Path, seen: os.stat_result | None) -> None:
    """Delete the stale lock, unless another process replaced it meanwhile (Rho deletes
    by name; checking the inode first narrows the race it leaves)."""
    if seen is None:
        return
    try:
        now = os.lstat(lock)
        same = (now.st_ino, now.st_dev, now.st_mtime_ns)
        if same == (seen.st_ino, seen.st_dev, seen.st_mtime_ns):
            os.unlink(lock)
    except FileNotFoundError:
        pass


def _release(lock: Path, pid: int, nonce: str) -> None:
    """Delete the lock if it is still ours (a process that judged it stale may have
    taken it)."""
    holder, _ = _read(lock)
    if holder is not None and holder["pid"] == pid and holder["nonce"] == nonce:
        with contextlib.suppress(OSError):
            os.unlink(lock)

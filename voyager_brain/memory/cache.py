"""A cached fold of a memory log, reused while the log has only grown.

Session start folds the logs on every agent launch; a log is append-only, so the fold of
its first N bytes stays valid as long as those bytes are unchanged. The cache (in a
``cache/`` folder, never in git) keeps the folded state, which file it read (device and
inode: a rewrite makes a new file), how many bytes it covers, and the last bytes before
that point; when the same file still holds those bytes there, only what was appended
since is parsed and folded. Anything else (a gc, a merge, a hand edit, a
cache from another Python) falls back to a full read. The cache is an optimisation only:
failing to read or write it never fails a read.

The process also keeps the last fold in memory, so a long-running agent loop folds only
new bytes without touching the cache file.
"""

from __future__ import annotations

import contextlib
import fcntl
import marshal
import os
import sys
from pathlib import Path

from .. import confine, conflicts, storage
from ..errors import BrainError
from ..value import Record
from . import log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_VERSION = (3, sys.version_info[:2])  # 3: keyed entries fold by key; head, mtime
_EDGE = 256  # the bytes kept of each end of what a fold covered
# Rewriting the cache file costs about as much as folding a few thousand lines, so a
# small growth is folded again by the next reader rather than saved every time.
_RESAVE_MIN_BYTES = 256 * 1024
_memory: dict[Path, dict[str, Any]] = {}
# Logs whose fold the process keeps: the personal log and a few projects. A process that
# goes through many repositories (a server, a benchmark) keeps only the latest ones, so
# its memory does not grow with every repository it has seen.
KEEP = 4


def remember(table: dict[Any, Any], key: Any, value: Any) -> None:
    """`table[key] = value`, the least recently remembered keys dropped past `KEEP`."""
    table.pop(key, None)
    table[key] = value
    while len(table) > KEEP:
        del table[next(iter(table))]


def _load(cache_path: Path) -> dict[str, Any] | None:
    try:
        # loads() of the bytes is several times faster than load() of the file object.
        data = marshal.loads(storage.read_bytes(cache_path) or b"")
    except (OSError, EOFError, ValueError, TypeError, BrainError):
        return None
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        return None
    # Of this version, but written by another build, or by hand: what it lacks or holds
    # in another shape is read as no cache at all.
    if not all(isinstance(data.get(key), kind) for key, kind in _SHAPE.items()):
        return None
    data["saved"] = data.get("offset")  # what the file holds is saved, by definition
    return data


#: What a cache record must hold to be used (besides ``version`` and ``top``).
_SHAPE: dict[str, type | tuple[type, ...]] = {
    "file": tuple, "offset": int, "tail": bytes, "head": bytes, "mtime": int,
    "entries": dict, "dead": dict, "total": int, "bad": int,
}  # fmt: skip


def _save(cache_path: Path, record: dict[str, Any]) -> None:
    if _deferred is not None:
        _deferred.append((cache_path, record))
        return
    # A read-only or full disk only costs the next read a full fold.
    with contextlib.suppress(OSError):
        storage.atomic_write(cache_path, marshal.dumps(record), durable=False)


# Saves held back by `defer_saves` (None: save at once).
_deferred: list[tuple[Path, dict[str, Any]]] | None = None


def defer_saves() -> None:
    """Hold cache saves back until `flush_saves`: a command that prints a context saves
    after its output is out (a 40k-line fold takes ~50 ms to write)."""
    global _deferred
    _deferred = []


def flush_saves(*, detach: bool = False) -> None:
    """Write the saves held back. With `detach` (a command about to exit, its output
    flushed), in a forked child that lets go of stdin, stdout and stderr at once, so
    whoever reads the output sees its end now; where fork is missing, here and now.

    Each save holds the cache file's side lock until it is written (the child inherits
    it), so whoever takes that lock finds no save under way; a cache another process is
    saving right now is left to it."""
    global _deferred
    pending, _deferred = _deferred or [], None
    held = [(path, record, fd) for path, record in pending if (fd := _try_lock(path)) is not None]
    if not held:
        return
    child = -1  # no child: save here
    if detach and hasattr(os, "fork"):
        with contextlib.suppress(OSError):
            child = os.fork()
    if child > 0:
        for _, _, fd in held:
            os.close(fd)  # the child's copies keep the locks until its saves are done
        return
    if child == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            for cache_path, record, _ in held:
                _save(cache_path, record)
        finally:
            os._exit(0)
    for cache_path, record, fd in held:
        try:
            _save(cache_path, record)
        finally:
            os.close(fd)  # releases the lock


def _try_lock(cache_path: Path) -> int | None:
    """A descriptor holding the lock of `cache_path`, or None when it is taken (or the
    folder cannot be written: then nothing can be saved there either)."""
    try:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        fd = confine.open_checked(storage.lock_path(cache_path), os.O_RDWR | os.O_CREAT)
    except (OSError, BrainError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


class Position(Record):
    """Where a fold stopped: the bytes it covers (whole lines), the first and the last
    of them, and the file's modification time when it was read.

    A file replaced by another (gc, git, an atomic save) is told from one that only
    grew by its inode first; but the file system hands a freed inode out again, so two
    rewrites can leave the same inode. Then a different first or last bytes, or, at the
    same size, a different modification time (an append always grows the file) give it
    away."""

    offset: int
    tail: bytes
    head: bytes = b""
    mtime_ns: int = 0

    def after(self, data: bytes, mtime_ns: int) -> Position:
        """This position moved past `data`, read from the file as it was at `mtime_ns`."""
        head = self.head if len(self.head) >= _EDGE else (self.head + data)[:_EDGE]
        return Position(self.offset + len(data), (self.tail + data)[-_EDGE:], head, mtime_ns)


def read_folded(
    path: Path, cache_path: Path | None, top: Path | None = None
) -> tuple[log.Folded, log.Health]:
    """The fold of the log at `path` and the health of reading it, using and refreshing
    the cache at `cache_path` (None: no cache file, only the in-process memo). With `top`
    (a project log), relative paths are resolved against it as lines are folded, so the
    cache holds them resolved, for this clone's location only."""
    state, health, _ = read_folded_at(path, cache_path, top)
    return state, health


def grown_by(path: Path, at: Position) -> bytes | None:
    """What the file at `path` holds after `at` when it has only grown since (the bytes
    before `at` begin and end as they did; at the same size, it was not written since),
    else None. b"" when it has not changed."""
    try:
        with storage.open_read(path) as f:
            st = os.fstat(f.fileno())
            if st.st_size == at.offset and at.mtime_ns and st.st_mtime_ns != at.mtime_ns:
                return None  # written over at the same size
            if at.head and f.read(len(at.head)) != at.head:
                return None
            f.seek(max(0, at.offset - len(at.tail)))
            if f.read(len(at.tail)) != at.tail or f.tell() != at.offset:
                return None
            return f.read()
    except FileNotFoundError:
        return None


def read_folded_at(
    path: Path, cache_path: Path | None, top: Path | None = None
) -> tuple[log.Folded, log.Health, Position]:
    """`read_folded`, and the position the fold covers up to (a torn last line is not
    folded: it is read again once whole). The state's dicts are the process memo's own:
    copy them before changing anything (a session start reads ten thousand entries
    once; copying them would cost more than it saves)."""
    where = str(top) if top is not None else None
    confine.check(path)  # a log linked out of the repository is never folded
    try:
        st = path.stat()
    except FileNotFoundError:
        return log.Folded(), log.Health(), Position(0, b"")
    record = _memory.get(path) or (_load(cache_path) if cache_path else None)
    size, file = st.st_size, (st.st_dev, st.st_ino)
    if record is not None and (record.get("top") != where or record.get("file") != file):
        # Resolved against another location (a moved clone), or another file: a log
        # rewritten (gc, git, an atomic save) can end in the same bytes as before.
        record = None
    previous = record
    start, state, total, bad = 0, log.Folded(), 0, 0
    data = None
    if record and size >= record["offset"]:
        data = grown_by(path, _position(record))
        # Git may rewrite a merged file in place and keep what the cache has read.
        if data and conflicts.OPEN in data:
            conflicts.check(storage.read_bytes(path) or b"", path)
    if data is not None:
        assert record is not None
        start = record["offset"]
        # Copies: the caller may change what it gets; the memo must not change.
        state = log.Folded(dict(record["entries"]), dict(record["dead"]))
        total, bad = record["total"], record["bad"]
    else:
        data = storage.read_bytes(path)
        if data is None:
            return log.Folded(), log.Health(), Position(0, b"")
        conflicts.check(data, path)
    # Only whole lines are folded; a torn last line is read again next time.
    end = data.rfind(b"\n") + 1
    health = log.fold_data(data, end, state, top=where)
    _, rest = log.parse(data[end:]) if end < len(data) else ([], log.Health())
    offset = start + end
    if record is None or start == 0 or offset != record["offset"]:
        with storage.open_read(path) as f:
            head = f.read(min(_EDGE, offset))
            f.seek(max(0, offset - _EDGE))
            tail = f.read(min(_EDGE, offset))
        record = {
            "version": _VERSION,
            "top": where,
            "file": file,
            "offset": offset,
            "tail": tail,
            "head": head,
            "mtime": st.st_mtime_ns,
            "entries": state.entries,  # shared with the caller, who only reads them
            "dead": state.dead,
            "total": total + health.total,
            "bad": bad + health.bad_lines,
        }
        saved = previous.get("saved", 0) if previous else 0
        if cache_path is not None and (
            start == 0 or offset - saved >= max(_RESAVE_MIN_BYTES, saved // 8)
        ):
            _save(cache_path, record)
            saved = offset
        record["saved"] = saved
    remember(_memory, path, record)
    result = log.Health(
        total + health.total + rest.total,
        bad + health.bad_lines + rest.bad_lines,
        end < len(data),
    )
    return state, result, _position(record)


def _position(record: dict[str, Any]) -> Position:
    return Position(record["offset"], record["tail"], record["head"], record["mtime"])

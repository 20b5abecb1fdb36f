"""A cached fold of a memory log, reused while the log has only grown.

Session start folds the logs on every agent launch; a log is append-only, so the fold of
its first N bytes stays valid as long as those bytes are unchanged. The cache (in a
``cache/`` folder, never in git) keeps the folded state, how many bytes it covers, and
the last bytes before that point; when the file still holds those bytes there, only what
was appended since is parsed and folded. Anything else (a gc, a merge, a hand edit, a
cache from another Python) falls back to a full read. The cache is an optimisation only:
failing to read or write it never fails a read.

The process also keeps the last fold in memory, so a long-running agent loop folds only
new bytes without touching the cache file.
"""

from __future__ import annotations

import contextlib
import marshal
import sys
from pathlib import Path
from typing import Any

from .. import storage
from . import log

_VERSION = (1, sys.version_info[:2])
_TAIL = 256
# Rewriting the cache file costs about as much as folding a few thousand lines, so a
# small growth is folded again by the next reader rather than saved every time.
_RESAVE_MIN_BYTES = 256 * 1024
_memory: dict[Path, dict[str, Any]] = {}


def _load(cache_path: Path) -> dict[str, Any] | None:
    try:
        # loads() of the bytes is several times faster than load() of the file object.
        data = marshal.loads(cache_path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        return None
    data["saved"] = data.get("offset")  # what the file holds is saved, by definition
    return data


def _save(cache_path: Path, record: dict[str, Any]) -> None:
    # A read-only or full disk only costs the next read a full fold.
    with contextlib.suppress(OSError):
        storage.atomic_write(cache_path, marshal.dumps(record), durable=False)


def read_folded(
    path: Path, cache_path: Path | None, top: Path | None = None
) -> tuple[log.Folded, log.Health]:
    """The fold of the log at `path` and the health of reading it, using and refreshing
    the cache at `cache_path` (None: no cache file, only the in-process memo). With `top`
    (a project log), relative paths are resolved against it as lines are folded, so the
    cache holds them resolved, for this clone's location only."""
    where = str(top) if top is not None else None
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return log.Folded(), log.Health()
    record = _memory.get(path) or (_load(cache_path) if cache_path else None)
    if record is not None and record.get("top") != where:
        record = None  # resolved against another location (a moved clone)
    previous = record
    start, state, total, bad = 0, log.Folded(), 0, 0
    with path.open("rb") as f:
        if record and size >= record["offset"]:
            f.seek(record["offset"] - len(record["tail"]))
            if f.read(len(record["tail"])) == record["tail"]:
                start = record["offset"]
                # Copies: the caller may change what it gets; the memo must not change.
                state = log.Folded(dict(record["entries"]), dict(record["dead"]))
                total, bad = record["total"], record["bad"]
        f.seek(start)
        data = f.read()
    # Only whole lines are folded; a torn last line is read again next time.
    end = data.rfind(b"\n") + 1
    entries, health = log.parse(data[:end])
    if where is not None:
        log.resolve_paths(entries, where)
    log.fold(entries, into=state)
    _, rest = log.parse(data[end:]) if end < len(data) else ([], log.Health())
    offset = start + end
    if record is None or start == 0 or offset != record["offset"]:
        with path.open("rb") as f:
            f.seek(max(0, offset - _TAIL))
            tail = f.read(min(_TAIL, offset))
        record = {
            "version": _VERSION,
            "top": where,
            "offset": offset,
            "tail": tail,
            "entries": dict(state.entries),
            "dead": dict(state.dead),
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
    _memory[path] = record
    result = log.Health(
        total + health.total + rest.total,
        bad + health.bad_lines + rest.bad_lines,
        end < len(data),
    )
    return state, result

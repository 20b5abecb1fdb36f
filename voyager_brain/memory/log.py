"""The memory log's file format (seed 001), byte-compatible with the original brain.jsonl.

One JSON object per line, append-only: an update or a removal is a new line that
supersedes earlier ones (event sourcing). Reading never fails on a bad line: it is skipped
and counted, and a last line without its newline (a torn write) is reported as
``truncated_tail``. Appends are one ``write`` under the side-file lock, after a torn last
line has been closed with a newline, so a new entry never fuses with it.

Standard library only: session start folds this file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import deque
from collections.abc import Iterable, Mapping
from datetime import datetime
from itertools import compress, repeat
from operator import eq, itemgetter, setitem
from pathlib import Path

from .. import conflicts, filelock, storage
from ..errors import EntryError

# A log's lines are read by `lines`; `parse` and `Health` are this module's too, the way a
# log is read and what reading it found.
from .lines import Health as Health
from .lines import is_entry, loads_line, no_cycle_collection, pieces
from .lines import parse as parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The ten entry types of the seed.
ENTRY_TYPES = (
    "behavior",
    "identity",
    "user",
    "learning",
    "preference",
    "context",
    "task",
    "reminder",
    "tombstone",
    "meta",
)

#: The seed's schema registry: required fields (besides id, type, created) ...
REQUIRED: dict[str, tuple[str, ...]] = {
    "behavior": ("category", "text"),
    "identity": ("key", "value"),
    "user": ("key", "value"),
    "learning": ("text",),
    "preference": ("text", "category"),
    "context": ("project", "path", "content"),
    "task": ("description",),
    "reminder": ("text", "cadence", "enabled"),
    "tombstone": ("target_id", "target_type", "reason"),
    "meta": ("key", "value"),
}
#: ... and enum constraints.
ENUMS: dict[str, dict[str, tuple[str, ...]]] = {
    "behavior": {"category": ("do", "dont", "value")},
}
#: Fields that hold a filesystem path: relative to the repository top in a project log.
PATH_FIELDS: dict[str, str] = {"context": "path", "learning": "projectPath"}
#: Keyed types get deterministic ids from their natural key.
NATURAL_KEYS: dict[str, str] = {"identity": "key", "user": "key", "meta": "key", "context": "path"}
KEYED = frozenset(NATURAL_KEYS)


def deterministic_id(type_: str, natural_key: str) -> str:
    """``sha256("type:naturalKey")[:8]``, the id of identity, user, meta and context."""
    import hashlib  # only writers need ids: readers (every session start) skip the import

    return hashlib.sha256(f"{type_}:{natural_key}".encode()).hexdigest()[:8]


def random_id() -> str:
    """Eight random hex characters, the id of every other entry."""
    import secrets

    return secrets.token_hex(4)


def new_id(entry: Mapping[str, Any]) -> str:
    """The id a new entry gets: deterministic for keyed types, random otherwise."""
    key_field = NATURAL_KEYS.get(str(entry.get("type")))
    if key_field is not None and isinstance(entry.get(key_field), str):
        return deterministic_id(str(entry["type"]), entry[key_field])
    return random_id()


def validate(entry: Mapping[str, Any], where: str = "entry") -> None:
    """Check an entry against the schema registry before it is written.

    Raises `EntryError` naming the field and what was expected.
    """
    type_ = entry.get("type")
    if type_ not in REQUIRED:
        raise EntryError(f"{where}: type: expected one of {', '.join(ENTRY_TYPES)}, got {type_!r}")
    for field in ("id", *REQUIRED[str(type_)]):
        value = entry.get(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise EntryError(f"{where}: {field}: required for a {type_} entry")
    if not isinstance(entry["id"], str):
        raise EntryError(f"{where}: id: expected a string, got {entry['id']!r}")
    created = entry.get("created")
    try:
        if not isinstance(created, str):
            raise ValueError
        datetime.fromisoformat(created)
    except ValueError:
        raise EntryError(f"{where}: created: expected an ISO 8601 time, got {created!r}") from None
    for field, allowed in ENUMS.get(str(type_), {}).items():
        if entry.get(field) not in allowed:
            raise EntryError(
                f"{where}: {field}: expected one of {', '.join(allowed)}, got {entry.get(field)!r}"
            )


# -- reading ----------------------------------------------------------------------------


def resolve_paths(entries: Iterable[dict[str, Any]], top: str) -> None:
    """Make the relative paths of a project log's entries absolute against the repository
    `top`, in place (the entries are fresh from `parse`)."""
    entries = entries if isinstance(entries, list) else list(entries)
    _resolve_paths(entries, list(map(dict.get, entries, repeat("type"))), top)


def _resolve_paths(entries: list[dict[str, Any]], kinds: list[Any], top: str) -> None:
    # By C loops over the list (a project log of 40k learnings has 40k paths to resolve):
    # of each type's entries, those whose path field holds a string get it resolved.
    # Most share a handful of paths ("." above all): each is resolved once, and an
    # absolute one maps to itself.
    resolved: dict[str, str] = {}
    for kind, field in PATH_FIELDS.items():
        group = list(compress(entries, map(eq, kinds, repeat(kind))))
        values: list[Any] = list(map(dict.get, group, repeat(field)))
        is_str = list(map(isinstance, values, repeat(str)))
        paths = list(compress(values, is_str))
        for path in set(paths) - resolved.keys():
            resolved[path] = (
                path if os.path.isabs(path) else os.path.normpath(os.path.join(top, path))
            )
        absolute = map(resolved.__getitem__, paths)
        deque(map(setitem, compress(group, is_str), repeat(field), absolute), maxlen=0)


def read(path: Path) -> tuple[list[dict[str, Any]], Health]:
    """`parse` of the file at `path`; a missing file is an empty, healthy log. Raises
    `ConflictError` when it holds git conflict markers."""
    data = storage.read_bytes(path)
    if data:
        conflicts.check(data, path)
    return parse(data) if data else ([], Health())


# -- folding --------------------------------------------------------------------------


def natural_key(kind: Any, entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """What a keyed entry (identity, user, meta: `key`; context: `path`) is folded by,
    or None for every other entry. A context's path is compared normalized, so that one
    written relative (".", resolved against the top) and one written absolute by Rho are
    the same context."""
    field = NATURAL_KEYS.get(kind) if isinstance(kind, str) else None
    value = entry.get(field) if field is not None else None
    if not isinstance(value, str):
        return None
    return (kind, os.path.normpath(value) if kind in PATH_FIELDS else value)


class Folded:
    """The materialized state: live entries by id (in the order they first appeared, or
    reappeared after a tombstone) and the ids tombstones removed. A keyed entry (see
    `natural_key`) replaces the live one of the same key whatever its id, as Rho's
    `foldBrain` keeps identity, user and meta in maps by key: one live entry per key."""

    __slots__ = ("_keys", "dead", "entries")

    def __init__(
        self,
        entries: dict[str, dict[str, Any]] | None = None,
        dead: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.entries = {} if entries is None else entries
        self.dead = {} if dead is None else dead
        self._keys: dict[tuple[str, str], str] | None = None

    def put(self, entry_id: str, entry: dict[str, Any]) -> None:
        """One line's entry made live: it resurrects a tombstoned id, and a keyed entry
        takes the place of the live entry of its key."""
        self.dead.pop(entry_id, None)
        key = natural_key(entry.get("type"), entry)
        if key is not None:
            if self._keys is None:
                self._keys = {}
                for live_id, live in self.entries.items():
                    found = natural_key(live.get("type"), live)
                    if found is not None:
                        self._keys[found] = live_id
            held = self._keys.get(key)
            if held is not None and held != entry_id:
                other = self.entries.get(held)
                # The index may be out of date (a tombstone, a line that changed the key):
                # only an entry that still has this key gives way.
                if other is not None and natural_key(other.get("type"), other) == key:
                    del self.entries[held]
            self._keys[key] = entry_id
        self.entries[entry_id] = entry

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Folded):
            return NotImplemented
        return (self.entries, self.dead) == (other.entries, other.dead)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"Folded(entries={self.entries!r}, dead={self.dead!r})"

    def live(self, type_: str | None = None) -> list[dict[str, Any]]:
        """Live entries, optionally of one type, in fold order."""
        values = self.entries.values()
        return [e for e in values if e.get("type") == type_] if type_ else list(values)


def fold(
    entries: Iterable[dict[str, Any]],
    into: Folded | None = None,
    *,
    top: str | None = None,
    batch: int = 2048,
) -> Folded:
    """Apply the log in file order (never sorted by ``created``): a later line with the
    same id replaces the earlier one, a tombstone removes its target and is remembered,
    and a new entry with a tombstoned id resurrects it. Linear in the number of lines.
    `into` continues an earlier fold with lines appended since. With `top` (a project
    log), `resolve_paths` is done first (the lines are fresh from `parse`). The lines
    are handled `batch` at a time."""
    state = into if into is not None else Folded()
    entries = entries if isinstance(entries, list) else list(entries)
    # A few thousand lines at a time: each pass over them finds them in the CPU cache
    # the first one brought them into (100k lines: ~20 ms less than whole-list passes).
    for start in range(0, len(entries), batch):
        lines = entries[start : start + batch]
        kinds = list(map(dict.get, lines, repeat("type")))
        if top is not None:
            _resolve_paths(lines, kinds, top)
        _apply(state, lines, kinds, None)
    return state


def fold_data(data: bytes, stop: int, into: Folded, *, top: str | None = None) -> Health:
    """``fold(parse(data[:stop])[0], into, top=top)``, and the health of that parse
    (`stop` ends a line). The work on each line is done a piece at a time, while the
    piece's entries are still in the CPU's cache; the dict updates in one go at the end,
    while the folded state's own tables are."""
    entries: list[dict[str, Any]] = []
    kinds: list[Any] = []
    ids: list[Any] = []
    bad = 0
    with no_cycle_collection():
        for found, wrong in pieces(data, stop):
            found_kinds = list(map(dict.get, found, repeat("type")))
            if top is not None:
                _resolve_paths(found, found_kinds, top)
            entries += found
            kinds += found_kinds
            ids += map(dict.get, found, repeat("id"))
            bad += wrong
        _apply(into, entries, kinds, ids)
    return Health(len(entries), bad, False)


def _apply(
    state: Folded, entries: list[dict[str, Any]], kinds: list[Any], ids: list[Any] | None
) -> None:
    # The lines between two tombstones are upserts: one dict.update (a known id keeps
    # its place, a new one goes last, as one assignment each would do) and, when some
    # ids were tombstoned, their resurrection. A session start folds every line. Keyed
    # entries (a handful in a log) replace by key, one at a time (`Folded.put`); the
    # lines between them still go in one update each.
    start, size = 0, len(entries)
    while start < size:
        try:
            stop = kinds.index("tombstone", start)
        except ValueError:
            stop = size
        if stop > start:
            run_ids = ids[start:stop] if ids is not None else None
            run_kinds = kinds[start:stop]
            keyed: list[int] = []
            if not KEYED.isdisjoint(run_kinds):
                keyed = list(compress(range(stop - start), map(KEYED.__contains__, run_kinds)))
            at = start
            for k in [*(start + n for n in keyed), stop]:
                if k > at:
                    _upsert(state, entries[at:k], run_ids and run_ids[at - start : k - start])
                if k < stop:
                    state.put(entries[k]["id"], entries[k])
                at = k + 1
        _tombstone(state, entries, stop, size)
        start = stop + 1


def _upsert(state: Folded, run: list[dict[str, Any]], run_ids: list[Any] | None) -> None:
    """Lines without a tombstone or a keyed entry among them: one update."""
    if run_ids is None:
        run_ids = list(map(itemgetter("id"), run))
    dead = state.dead
    if dead:
        for entry_id in dead.keys() & run_ids:
            del dead[entry_id]
    state.entries.update(zip(run_ids, run, strict=True))


def _tombstone(state: Folded, entries: list[dict[str, Any]], at: int, size: int) -> None:
    """Apply the tombstone at `at` (nothing when `at` is past the end)."""
    if at < size:
        target = entries[at].get("target_id")
        if isinstance(target, str):
            state.entries.pop(target, None)
            state.dead[target] = entries[at]


# -- writing --------------------------------------------------------------------------


def encode(entry: Mapping[str, Any]) -> bytes:
    """One line of the log: compact JSON, UTF-8 as is, a final newline; a lone surrogate
    (read from a line that escaped it) is written escaped again."""
    return (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "backslashreplace"
    )


def append(
    path: Path,
    entries: Iterable[Mapping[str, Any]],
    lock_timeout: float = 10.0,
    *,
    held: bool = False,
) -> None:
    """Validate `entries` and append them in one write under the lock (`held`: the
    caller holds it already).

    A torn last line (a writer killed mid-line, a bad merge) is closed with a newline
    first, so the new lines never fuse with it; its bytes stay, counted as a bad line.
    """
    blob = b""
    for n, entry in enumerate(entries):
        validate(entry, f"{path.name} entry {n + 1}")
        blob += encode(entry)
    if not blob:
        return
    with contextlib.nullcontext() if held else filelock.locked(path, lock_timeout):
        storage.append(path, _close_torn_tail(path) + blob)


def _close_torn_tail(path: Path) -> bytes:
    try:
        with storage.open_read(path) as f:
            f.seek(0, 2)
            if f.tell() == 0:
                return b""
            f.seek(-1, 2)
            return b"" if f.read(1) == b"\n" else b"\n"
    except FileNotFoundError:
        return b""


def compacted_lines(state: Folded) -> list[dict[str, Any]]:
    """The lines of a log rewritten as its folded state: the live entries, then the
    tombstones whose targets are not live (other clones may still hold those targets)."""
    return [*state.entries.values(), *(t for i, t in state.dead.items() if i not in state.entries)]


#: Beside a log, where `gc` keeps the lines it could not read (appended, never rewritten).
REJECTED = ".rejected"


def bad_lines(data: bytes) -> list[bytes]:
    """The lines of `data` that are not entries (`parse` counts them), as they are."""
    return [raw for raw in data.split(b"\n") if raw.strip() and not is_entry(loads_line(raw))]


def set_aside_bad_lines(path: Path, lock_timeout: float = 10.0) -> int:
    """Move the lines of the log at `path` that are not entries to ``<log>.rejected``
    (appended), keeping every other line as it is and in its order, and end a last line
    that lacks its newline; atomically under the lock. Returns how many lines moved."""
    with filelock.locked(path, lock_timeout):
        data = storage.read_bytes(path) or b""
        conflicts.check(data, path)
        kept: list[bytes] = []
        rejected: list[bytes] = []
        for raw in data.split(b"\n"):
            if raw.strip():
                (kept if is_entry(loads_line(raw)) else rejected).append(raw)
        if rejected:
            storage.append(
                path.with_name(path.name + REJECTED), b"".join(r + b"\n" for r in rejected)
            )
        blob = b"".join(raw + b"\n" for raw in kept)
        if blob != data:
            storage.atomic_write(path, blob)
    return len(rejected)


def gc(path: Path, lock_timeout: float = 10.0) -> tuple[int, int, int]:
    """Rewrite the log as its folded state, atomically under the lock. Lines that are
    not entries (a hand edit's trailing comma, a torn line) are never dropped: they are
    appended to ``<log>.rejected`` beside it first. Returns (bytes before, bytes after,
    lines moved there)."""
    with filelock.locked(path, lock_timeout):
        data = storage.read_bytes(path) or b""
        conflicts.check(data, path)  # its marker lines would go as bad lines: both sides kept
        entries, health = parse(data)
        blob = b"".join(encode(e) for e in compacted_lines(fold(entries)))
        rejected = bad_lines(data) if health.bad_lines else []
        if rejected:
            kept = path.with_name(path.name + REJECTED)
            storage.append(kept, b"".join(raw + b"\n" for raw in rejected))
        if blob != data:
            storage.atomic_write(path, blob)
    return len(data), len(blob), len(rejected)

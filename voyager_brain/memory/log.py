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
import gc as _gc  # `gc` here is the log's own garbage collection (see gc())
import json
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from itertools import compress, repeat
from operator import eq, itemgetter, setitem
from pathlib import Path

from .. import conflicts, filelock, storage
from ..errors import EntryError
from ..value import Record

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


# -- reading --------------------------------------------------------------------------


# Health and Folded are not dataclasses: every session start imports this module, and
# creating a dataclass costs about a millisecond.
class Health(Record):
    """What reading a log found: valid entries, skipped lines, a torn last line."""

    total: int = 0
    bad_lines: int = 0
    truncated_tail: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "bad_lines": self.bad_lines,
            "truncated_tail": self.truncated_tail,
        }


def parse_objects(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """Every JSON object line of `data` (no id or type needed), and the bad-line count."""
    found: list[dict[str, Any]] = []
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        value = _loads(raw)
        if isinstance(value, dict):
            found.append(value)
        else:
            bad += 1
    return found, bad


# Bytes decoded at a time: one str of a whole large log is several times its size (a
# single non-Latin-1 character makes every character 2 or 4 bytes) and slower to walk;
# a piece this small stays in the CPU's cache while its lines are parsed (10k lines in
# a fresh process: 36 ms median with 16 KB pieces, 44 ms with 256 KB ones).
_CHUNK = 1 << 14


def parse(data: bytes, *, chunk: int = _CHUNK) -> tuple[list[dict[str, Any]], Health]:
    """The entries of a log's bytes, in file order, and the health of the read.

    A line that is not a JSON object with a string ``id`` and ``type`` is a bad line.
    A last line without a newline is a torn tail: counted as a bad line when it does not
    parse, and reported either way. The bytes are read in pieces (see `pieces`).
    """
    entries: list[dict[str, Any]] = []
    bad = 0
    with _no_cycle_collection():
        for found, wrong in pieces(data, chunk=chunk):
            entries += found
            bad += wrong
    return entries, Health(len(entries), bad, bool(data) and not data.endswith(b"\n"))


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cycle collector off while a log is read, as it was before afterwards. Reading
    makes one container per line, and the collections they set off walk the entries
    read so far again and again (about a tenth of the time of reading 100k lines in a
    process that keeps the collector on); none of them finds a cycle."""
    if not _gc.isenabled():
        yield
        return
    _gc.disable()
    try:
        yield
    finally:
        _gc.enable()


def pieces(
    data: bytes, stop: int | None = None, *, chunk: int = _CHUNK
) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """`parse` of ``data[:stop]`` a piece at a time: the entries and the bad-line count
    of each piece of about `chunk` bytes ending at a newline (a newline byte is never
    inside a UTF-8 character, so each line is in one piece). Folding each piece as it
    comes touches its entries while they are still in the CPU's cache."""
    start, size = 0, len(data) if stop is None else stop
    while start < size:
        end = min(data.find(b"\n", start + chunk - 1, size) + 1 or size, size)
        piece = data[start:end] if start or end < len(data) else data
        try:
            text = piece.decode()
        except UnicodeDecodeError:
            yield parse_lines(piece)
        else:
            yield _parse_piece(text)
        start = end


def _is_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("type"), str)
    )


# What bytes.strip() removes: a line of only these is blank, never a bad line. JSON's
# own whitespace, all json.loads allows after a value, is narrower.
_BLANK = " \t\n\r\x0b\x0c"
_JSON_SPACE = " \t\r"
# The decoder's scanner, called directly: raw_decode() around it is a Python frame per
# line. It takes a value at an index and raises StopIteration where none starts.
_scan_once: Callable[[str, int], tuple[Any, int]]
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # not in the stubs


def _parse_text(text: str) -> tuple[list[dict[str, Any]], int]:
    """`parse_lines` of the decoded file, faster: one decoder call per line straight
    on the whole text (json.loads per line decodes and copies each line first). Any line
    the fast step does not take whole goes through json.loads, so the result is the same."""
    entries: list[dict[str, Any]] = []
    bad = 0
    pos, size = 0, len(text)
    find = text.find
    while pos < size:
        end_of_line = find("\n", pos)
        if end_of_line < 0:
            end_of_line = size
        try:
            value, end = _scan_once(text, pos)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end != end_of_line and (
            end < 0 or end > end_of_line or text[end:end_of_line].strip(_JSON_SPACE)
        ):
            line = text[pos:end_of_line]
            pos = end_of_line + 1
            if not line.strip(_BLANK):
                continue
            value = _loads(line.encode())
        else:
            pos = end_of_line + 1
        # _is_entry, inline: this loop runs once per line of the log.
        if (
            value.__class__ is dict
            and value.get("id").__class__ is str
            and value.get("type").__class__ is str
        ):
            entries.append(value)
        else:
            bad += 1
    return entries, bad


# Two objects on one line: a "}", a comma and a "{" with only JSON whitespace between
# (a newline is whitespace too, but it ends the line).
_TWO_ON_A_LINE = r"\}[ \t\r]*,[ \t\r]*\{"


def _parse_piece(text: str) -> tuple[list[dict[str, Any]], int]:
    """`_parse_text`, mostly in one decoder call: the piece's lines read as one JSON
    array (each newline a comma). The decoder makes each key string once per call, not
    once per line, so a piece of a hundred entries holds a few dozen key strings instead
    of several hundred (less to allocate, to walk in the CPU's cache and to free).

    The array is taken only when it means what the lines do: as many values as lines,
    every one an entry, and no line holding two objects. A value that went on over a line
    would make one element of two lines, so some other line would have to hold two
    elements for the count to match, and between two objects on a line there is only
    "}", whitespace, a comma, whitespace and "{". Anything else is read line by line."""
    body = text[:-1] if text.endswith("\n") else text
    if not re.search(_TWO_ON_A_LINE, body):
        joined = "[" + body.replace("\n", ",") + "]"
        try:
            values, end = _scan_once(joined, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end == len(joined) and len(values) == body.count("\n") + 1:
            for value in values:
                if (
                    value.__class__ is not dict
                    or value.get("id").__class__ is not str
                    or value.get("type").__class__ is not str
                ):
                    break
            else:
                return values, 0
    return _parse_text(text)


def _loads(raw: bytes) -> Any:
    """One line as json.loads reads it, or None when it is not JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def parse_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The entries of `data` read line by line with json.loads, and the bad-line count
    (`parse` without its fast path, for bytes that are not UTF-8 throughout)."""
    entries: list[dict[str, Any]] = []
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        value = _loads(raw)
        if _is_entry(value):
            entries.append(value)
        else:
            bad += 1
    return entries, bad


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


class Folded:
    """The materialized state: live entries by id (in the order they first appeared, or
    reappeared after a tombstone) and the ids tombstones removed."""

    __slots__ = ("dead", "entries")

    def __init__(
        self,
        entries: dict[str, dict[str, Any]] | None = None,
        dead: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.entries = {} if entries is None else entries
        self.dead = {} if dead is None else dead

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
    with _no_cycle_collection():
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
    # ids were tombstoned, their resurrection. A session start folds every line.
    live, dead = state.entries, state.dead
    start, size = 0, len(entries)
    while start < size:
        try:
            stop = kinds.index("tombstone", start)
        except ValueError:
            stop = size
        if stop > start:
            run = entries[start:stop]
            run_ids = ids[start:stop] if ids is not None else list(map(itemgetter("id"), run))
            if dead:
                for entry_id in dead.keys() & run_ids:
                    del dead[entry_id]
            live.update(zip(run_ids, run, strict=True))
        if stop < size:
            target = entries[stop].get("target_id")
            if isinstance(target, str):
                live.pop(target, None)
                dead[target] = entries[stop]
        start = stop + 1


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
    return [raw for raw in data.split(b"\n") if raw.strip() and not _is_entry(_loads(raw))]


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
                (kept if _is_entry(_loads(raw)) else rejected).append(raw)
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

"""Three-way merges of the brain files, and the git merge driver that runs them.

git calls ``voyager-brain merge-driver %O %A %B %P`` when both branches of a merge changed
``.voyager/brain.md``, ``brain.json`` or ``memory.jsonl``: base, ours (the result is written
there), theirs, and the file's path in the repository. Each merge reads the three versions
with the file's own parser and never writes conflict markers:

* `merge_state` (brain.json), field by field in the spirit of the seed's merge table;
* `merge_brain` (brain.md), entry by entry: the union of both sides' changes;
* `merge_memory` (memory.jsonl), line by line: the base lines, then both sides' new lines.

Every merge gives the same bytes whichever side is ours. A side that cannot be parsed raises
`CorruptFileError`; the driver then exits 1 and leaves git's normal conflict for a person.
Deletions win: what one side removed (and the other did not add) stays removed, even when
the other side changed it meanwhile.

Standard library only, as on the hook path: git runs the driver once per file per merge.
"""

from __future__ import annotations

import heapq
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import storage
from ..errors import BrainError, CorruptFileError, MergeError
from ..memory import log
from ..render import Templates
from ..session import brainfile
from ..session.brainfile import BrainDocument
from ..session.model import BrainEntry
from ..state import brainjson as state
from ..timestamps import parse_timestamp

_MISSING: Any = object()

# -- brain.json -----------------------------------------------------------------------

_RULES = {rule.path: rule for rule in state.MERGE_RULES}


def _same(a: Any, b: Any) -> bool:
    """JSON equality, as `state._canon` sees it (true is not 1, 1 is not 1.0, key order
    does not count), without encoding anything."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b) or a is b


def _pick(base: Any, win: Any, lose: Any) -> Any:
    """A whole value: the side that changed it; when both did, the newer side (`win`)."""
    if _same(win, base) and not _same(lose, base):
        return lose
    return win


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _merge_set(base: Any, win: list[Any], lose: list[Any], key: Callable[[Any], str]) -> list[Any]:
    """Union of both sides' additions, minus what either side removed from the base."""
    in_base = {key(x) for x in _as_list(base)}
    in_win, in_lose = {key(x) for x in win}, {key(x) for x in lose}
    removed = {k for k in in_base if k not in in_win or k not in in_lose}
    out, seen = [], set(removed)
    for item in [*win, *lose]:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


def _merge_recent(base: Any, win: list[Any], lose: list[Any], keep: int) -> list[Any]:
    """recentlyCompleted: like a set, oldest first: the items both kept, then the older
    side's additions, then the newer side's; the last `keep` stay."""
    merged = _merge_set(base, win, lose, state._canon)
    in_base = {state._canon(x) for x in _as_list(base)}
    in_win = {state._canon(x) for x in win}
    kept = [x for x in merged if state._canon(x) in in_base]
    older = [x for x in merged if state._canon(x) not in in_base | in_win]
    newer = [x for x in merged if state._canon(x) not in in_base and state._canon(x) in in_win]
    return (kept + older + newer)[-keep:]


def _by_key(items: Any, key: str) -> dict[str, Any]:
    return {item[key]: item for item in _as_list(items) if isinstance(item, dict)}


def _merge_items(path: str, base: Any, win: list[Any], lose: list[Any], key: str) -> list[Any]:
    """Upserted lists (decisions, keyFiles, knownIssues), item by item by their merge key;
    an item both sides changed is merged field by field, the newer side winning."""
    old, mine, other = _by_key(base, key), _by_key(win, key), _by_key(lose, key)
    out = []
    for k in dict.fromkeys([*mine, *other]):
        if k in old and (k not in mine or k not in other):
            continue  # removed on one side
        if k in mine and k in other and not _same(mine[k], other[k]):
            out.append(_merge_object(f"{path}[]", old.get(k, _MISSING), mine[k], other[k]))
        else:
            out.append(mine[k] if k in mine else other[k])
    return out


def _merge_object(
    path: str, base: Any, win: dict[str, Any], lose: dict[str, Any], deep: bool = False
) -> dict[str, Any]:
    """Key by key; a key removed on one side stays removed."""
    old = base if isinstance(base, dict) else {}
    out = {}
    for key in dict.fromkeys([*win, *lose]):
        if key in old and (key not in win or key not in lose):
            continue
        if key not in lose:
            out[key] = win[key]
        elif key not in win:
            out[key] = lose[key]
        else:
            sub = f"{path}.{key}" if path else key
            out[key] = _merge_value(sub, old.get(key, _MISSING), win[key], lose[key], deep)
    return out


def _merge_value(path: str, base: Any, win: Any, lose: Any, deep: bool = False) -> Any:
    rule = _RULES.get(path)
    if rule is not None and isinstance(win, list) and isinstance(lose, list):
        match rule.strategy:
            case state.Strategy.UNION:
                return _merge_set(base, win, lose, state._canon)
            case state.Strategy.UNION_DEDUP:
                return _merge_set(base, win, lose, state._norm)
            case state.Strategy.UPSERT:
                assert rule.key is not None
                return _merge_items(path, base, win, lose, rule.key)
            case state.Strategy.RECENT:
                assert rule.keep is not None
                return _merge_recent(base, win, lose, rule.keep)
    if rule is not None and rule.strategy is not state.Strategy.DEEP_MERGE:
        return _pick(base, win, lose)
    if isinstance(win, dict) and isinstance(lose, dict):
        deep = deep or rule is not None  # a deep-merged object: its lists are unions
        return _merge_object(path, base, win, lose, deep)
    if deep and isinstance(win, list) and isinstance(lose, list):
        return _merge_set(base, win, lose, state._canon)
    return _pick(base, win, lose)


def _updated(document: Mapping[str, Any]) -> datetime:
    moment = datetime.fromisoformat(str(document.get("lastUpdated")))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _newer_first(
    ours: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(newer, older) by lastUpdated; a tie is broken by the documents' canonical JSON
    (then their bytes), so the choice never depends on which side is ours."""

    def rank(document: dict[str, Any]) -> tuple[datetime, str, str]:
        return _updated(document), state._canon(document), state.dumps(document)

    if _updated(ours) != _updated(theirs):
        return (ours, theirs) if _updated(ours) > _updated(theirs) else (theirs, ours)
    return (ours, theirs) if rank(ours) >= rank(theirs) else (theirs, ours)


def merge_state(base: bytes, ours: bytes, theirs: bytes, name: str = "brain.json") -> bytes:
    """Three-way merge of brain.json (an empty base: the file was added on both sides).

    * facts.stack, facts.custom, and lists inside deep-merged objects: both sides'
      additions, minus items either side removed from the base;
    * decisions, keyFiles, knownIssues: item by item by their merge key; an item changed
      on both sides is merged field by field, the side with the newer lastUpdated winning
      where both changed the same field;
    * replaced fields (nextSteps, currentGoal, ...) and any other value: the side that
      changed it, the newer side when both did;
    * objects (facts, activeState, preferences, environment, unknown ones): key by key;
    * recentlyCompleted: both sides' additions, the newest 10 kept;
    * sessionCount: the base plus both sides' increments; lastUpdated: the newer.
    """
    old = state.loads(base, Path(f"base:{name}")) if base.strip() else {}
    win, lose = _newer_first(
        state.loads(ours, Path(f"ours:{name}")), state.loads(theirs, Path(f"theirs:{name}"))
    )
    merged = _merge_object("", old, win, lose)
    merged["lastUpdated"] = win["lastUpdated"]
    count = int(old.get("sessionCount", 0))
    merged["sessionCount"] = max(
        0, count + (int(win["sessionCount"]) - count) + (int(lose["sessionCount"]) - count)
    )
    data = state.dumps(state.ordered(merged)).encode()
    _check(lambda: state.loads(data, Path(f"merged:{name}")), name)
    return data


# -- brain.md -------------------------------------------------------------------------


def _canon_any(value: Any) -> str:
    """Front matter values may be YAML times, dates or anything else."""
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _as_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value
    if isinstance(value, str):
        try:
            return parse_timestamp(value)
        except ValueError:
            return None
    return None


def _choose(base: Any, ours: Any, theirs: Any) -> Any:
    """Three-way choice where there is no newer side (`base` may be missing): the side
    that changed it; when both did, the later time (last_compaction), else the greater
    value, so that both ways agree."""
    o, t = _canon_any(ours), _canon_any(theirs)
    b = None if base is _MISSING else _canon_any(base)
    if o == t or t == b:
        return ours
    if o == b:
        return theirs
    times = _as_time(ours), _as_time(theirs)
    if times[0] is not None and times[1] is not None and times[0] != times[1]:
        return ours if times[0] > times[1] else theirs
    return ours if o > t else theirs


def _merge_meta(
    base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> dict[str, Any]:
    out = {}
    for key in sorted({*ours, *theirs}):
        if key in base and (key not in ours or key not in theirs):
            continue
        if key not in theirs:
            out[key] = ours[key]
        elif key not in ours:
            out[key] = theirs[key]
        else:
            out[key] = _choose(base.get(key, _MISSING), ours[key], theirs[key])
    return out


def merge_entries(
    base: Sequence[BrainEntry], ours: Sequence[BrainEntry], theirs: Sequence[BrainEntry]
) -> tuple[BrainEntry, ...]:
    """The entries of both sides, minus those either side removed from the base, ordered
    by time; entries of the same second keep the base's order, then their places in
    their files. An entry is its type, time and text; when the two sides disagree on its
    source, `_choose` picks one."""
    where = {e.key: n for n, e in enumerate(base)}
    mine = {e.key: (n, e) for n, e in enumerate(ours)}
    other = {e.key: (n, e) for n, e in enumerate(theirs)}
    chosen = []
    for key, (n, entry) in mine.items():
        if key in other:
            m, twin = other[key]
            n = min(n, m)
            if twin.source != entry.source:
                was = base[where[key]].source if key in where else _MISSING
                if _choose(was, entry.source, twin.source) != entry.source:
                    entry = twin
        elif key in where:
            continue  # removed by theirs: compacted, or deleted by hand
        chosen.append(((key[1], where.get(key, len(base)), n, *key), entry))
    for key, (n, entry) in other.items():
        if key not in mine and key not in where:  # (in the base: removed by ours)
            chosen.append(((key[1], where.get(key, len(base)), n, *key), entry))
    chosen.sort(key=lambda item: (*item[0], item[1].source or ""))
    return tuple(entry for _, entry in chosen)


def merge_brain(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    name: str = "brain.md",
    templates: Templates | None = None,
) -> bytes:
    """Three-way merge of brain.md: `merge_entries`, and for the title, the front matter
    (key by key) and the text before the first section, the side that changed each; when
    both did, the later time (last_compaction) or else the greater value. Rendered with
    `templates` (the project's overrides, if any)."""
    memo: brainfile.SectionMemo = {}  # most sections are the same in every version
    old = brainfile.parse(base, Path(f"base:{name}"), memo)
    mine = brainfile.parse(ours, Path(f"ours:{name}"), memo)
    other = brainfile.parse(theirs, Path(f"theirs:{name}"), memo)
    entries = merge_entries(old.entries, mine.entries, other.entries)
    # A hand-written first heading is the file's title: no title of ours is written.
    heading = _choose(old.heading, mine.heading, other.heading)
    project = _choose(old.project, mine.project, other.project) or "Project"
    doc = BrainDocument(
        project=project if heading is None else None,
        meta=_merge_meta(old.meta, mine.meta, other.meta),
        entries=entries,
        preamble=_choose(old.preamble, mine.preamble, other.preamble),
        heading=heading,
    )
    text = brainfile.render(doc, templates or Templates())

    def reread() -> None:
        again = brainfile.parse(text, Path(f"merged:{name}"), memo)
        if (again.project, dict(again.meta), again.entries, again.preamble, again.heading) != (
            doc.project,
            dict(doc.meta),
            doc.entries,
            doc.preamble,
            doc.heading,
        ):
            raise MergeError(f"merged:{name}: the rendered file reads back differently")

    _check(reread, name)
    return text.encode()


# -- memory.jsonl ---------------------------------------------------------------------


def _read_log(data: bytes, where: Path) -> tuple[list[bytes], list[dict[str, Any]]]:
    """The non-blank lines (stripped) and their entries. Every line must be an entry; a
    last line without its newline is accepted when it parses."""
    entries, health = log.parse(data)
    if health.bad_lines:
        for number, raw in enumerate(data.split(b"\n"), 1):
            if raw.strip() and log.parse(raw)[1].bad_lines:
                raise CorruptFileError(where, "not a JSON object with a string id and type", number)
    lines = [raw.strip() for raw in data.split(b"\n") if raw.strip()]
    return lines, entries


def _subject(entry: Mapping[str, Any]) -> str:
    """The id a line is about: a tombstone's target, any other line's own id."""
    if entry.get("type") == "tombstone" and isinstance(entry.get("target_id"), str):
        return str(entry["target_id"])
    return str(entry["id"])


def _written(entry: Mapping[str, Any]) -> str:
    value = entry.get("updated") or entry.get("created")
    return value if isinstance(value, str) else ""


def merge_memory(base: bytes, ours: bytes, theirs: bytes, name: str = "memory.jsonl") -> bytes:
    """Three-way merge of a memory log.

    The base lines both sides kept, in the base's order; then the lines either side added,
    once each, ordered by (``updated`` or ``created``, id, the line), so the later write
    of an entry wins. Two constraints bend that order: lines about the same entry stay in
    the order each side has them (base lines included: an earlier merge may have put a
    base tombstone after a concurrent update, which must not come after it again), and a
    deletion (a side's last word on an entry is a new
    tombstone) goes after every line about that entry but those a side wrote after the
    tombstone, so the other side's concurrent update does not undo it. A side rewritten
    by `memory gc` merges too: the lines it dropped were superseded or deleted, and stay
    dropped. Bad lines in the base are carried like any other; ours and theirs must parse
    entirely.
    """
    base_lines = [raw.strip() for raw in base.split(b"\n") if raw.strip()]
    sides = [
        _read_log(ours, Path(f"ours:{name}")),
        _read_log(theirs, Path(f"theirs:{name}")),
    ]
    in_base = set(base_lines)
    present = [set(lines) for lines, _ in sides]
    head = [line for line in base_lines if all(line in lines for lines in present)]

    entry_of: dict[bytes, dict[str, Any]] = {}
    for lines, entries in sides:
        for line, entry in zip(lines, entries, strict=True):
            if line not in in_base:
                entry_of.setdefault(line, entry)
    # Base lines first, in the base's order, then new lines by when they were written.
    order: dict[bytes, tuple[Any, ...]] = {line: (0, n) for n, line in enumerate(head)}
    order |= {line: (1, _written(e), str(e["id"]), line) for line, e in entry_of.items()}
    after: dict[bytes, set[bytes]] = {line: set() for line in order}  # must come later
    positions = [{line: n for n, line in enumerate(lines)} for lines, _ in sides]

    # A side's own order of the lines about one entry.
    for lines, entries in sides:
        last: dict[str, bytes] = {}
        for line, entry in zip(lines, entries, strict=True):
            if line in order:
                subject = _subject(entry)
                if last.get(subject, line) != line:
                    after[last[subject]].add(line)
                last[subject] = line

    # A deletion (a side's last word on an entry is a new tombstone) goes after every
    # line about that entry, except lines a side wrote after seeing the tombstone.
    about: dict[str, list[bytes]] = {}
    for line, entry in entry_of.items():
        if entry.get("type") != "tombstone":
            about.setdefault(str(entry["id"]), []).append(line)
    for lines, entries in sides:
        line_of = {id(e): line for line, e in zip(lines, entries, strict=True)}
        for target, tomb in log.fold(entries).dead.items():
            tomb_line = line_of[id(tomb)]
            if tomb_line not in entry_of:
                continue
            for line in about.get(target, ()):
                if not any(p.get(line, -1) > p.get(tomb_line, len(p)) for p in positions):
                    after[line].add(tomb_line)

    data = b"".join(line + b"\n" for line in _ordered(order, after))

    def reread() -> None:
        entries, health = log.parse(data)
        if health.bad_lines or len(entries) != len(order):
            raise MergeError(f"merged:{name}: the merged log reads back differently")

    _check(reread, name)
    return data


def _ordered(
    order: Mapping[bytes, tuple[Any, ...]], after: Mapping[bytes, set[bytes]]
) -> list[bytes]:
    """The lines by their sort key, each after the lines it must follow (Kahn's algorithm
    with a heap). Should the constraints ever form a cycle (two sides that ordered the
    same lines differently), the smallest remaining line goes next."""
    waiting = {line: 0 for line in order}
    for followers in after.values():
        for line in followers:
            waiting[line] += 1
    # (key, line): keys are distinct, so lines are never compared.
    ready = [(order[line], line) for line, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out: list[bytes] = []
    done: set[bytes] = set()
    while len(out) < len(order):
        if not ready:
            heapq.heappush(ready, min((order[line], line) for line in order if line not in done))
        line = heapq.heappop(ready)[1]
        if line in done:
            continue
        done.add(line)
        out.append(line)
        for follower in after[line]:
            waiting[follower] -= 1
            if waiting[follower] == 0 and follower not in done:
                heapq.heappush(ready, (order[follower], follower))
    return out


# -- the driver -----------------------------------------------------------------------


def _check(reread: Callable[[], object], name: str) -> None:
    """Our own output must read back; anything else is a bug, reported as one line."""
    try:
        reread()
    except MergeError:
        raise
    except BrainError as exc:
        raise MergeError(f"merged:{name}: the merged file does not read back: {exc}") from None


MERGES: dict[str, Callable[[bytes, bytes, bytes, str], bytes]] = {
    "brain.json": merge_state,
    "brain.md": merge_brain,
    "memory.jsonl": merge_memory,
}


def merge_file(real_path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The merge for the file at `real_path` (chosen by its name), with the templates of
    the ``.voyager/`` it is in for brain.md."""
    name = Path(real_path).name
    if name == "brain.md":
        templates = Templates(Path(real_path).parent / "templates")
        return merge_brain(base, ours, theirs, real_path, templates)
    merge = MERGES.get(name)
    if merge is None:
        raise MergeError(
            f"{real_path}: no merge for this file; expected one of {', '.join(MERGES)}"
        )
    return merge(base, ours, theirs, real_path)


USAGE = "usage: voyager-brain merge-driver BASE OURS THEIRS PATH (git's %O %A %B %P)"


def run_driver(args: Sequence[str]) -> int:
    """``voyager-brain merge-driver %O %A %B %P``: merge, write the result over OURS
    atomically, exit 0. When a version cannot be read, exit 1 with one line on stderr and
    OURS untouched: git then reports a conflict for a person to resolve."""
    if len(args) != 4:
        print(USAGE, file=sys.stderr)
        return 2
    base, ours, theirs, real_path = args
    try:
        versions = [Path(p).read_bytes() for p in (base, ours, theirs)]
        merged = merge_file(real_path, *versions)
        storage.atomic_write(Path(ours), merged)
    except BrainError as exc:
        print(f"voyager-brain merge-driver: {exc}; left for a manual merge", file=sys.stderr)
        return 1
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"voyager-brain merge-driver: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0

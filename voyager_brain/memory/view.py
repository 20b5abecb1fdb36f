"""Both memory logs as the session-start context reads them, kept current in place.

An agent loop builds the context again and again in one process while the logs grow by
a few lines at a time. `MemoryStore.snapshot()` folds both logs from their caches and
merges them on every call, and ranking the learnings scores every one of them: linear in
the log each time. A `MemoryView` keeps what those produce (the live entries of both
logs merged, grouped by type, and the learnings' rank keys with the best of them in
order) and applies only the lines appended since its last look, so a call after an
append costs what the new lines cost. Anything else (a log rewritten by gc, a merge, a
hand edit, a log replaced by another file) builds the view again from the fold caches.

The view is read-only for its callers: they get the entries themselves, not copies.

Order is the snapshot's: the personal log's entries in its fold order (a project entry
with the same id in that place), then the project's own in its fold order. Each entry's
place is a number (`order`): its position in the personal fold, or `_PROJECT` plus its
position in the project fold, so a line appended to either log finds its place without
moving the others.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable
from datetime import datetime
from itertools import compress, count, repeat
from operator import eq, itemgetter, not_
from pathlib import Path

from .. import conflicts, storage
from . import log, rank
from .cache import grown_by, read_folded_at, remember

_PROJECT = 1 << 53  # project-only entries come after every personal one

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]


class _Log:
    """One log as far as the view has applied it."""

    def __init__(self, path: Path, cache_path: Path | None, top: Path | None) -> None:
        self.path, self.top = path, top
        state, _, self.at = read_folded_at(path, cache_path, top)
        self.entries, self.dead = state.entries, state.dead
        self._own = False  # the dicts are the cache memo's until the first change
        self._seq: dict[str, int] | None = None
        self.identity = _identity(path)

    @property
    def seq(self) -> dict[str, int]:
        """The fold's dict order as numbers, kept for every id once live (a resurrected
        entry moves to the end, as in the fold). Made when first needed: a process that
        reads once never needs it."""
        if self._seq is None:
            self._seq = dict(zip(self.entries, range(len(self.entries)), strict=True))
            self.next = len(self.entries)
        return self._seq

    def advance(self, touched: set[str]) -> bool:
        """Fold the lines appended since; False when the file changed otherwise."""
        if _identity(self.path) != self.identity:
            return False
        if self.identity is None:  # missing then, missing now
            return True
        data = grown_by(self.path, self.at)
        if data is None:
            return False
        if conflicts.OPEN in data:  # git may rewrite a merged file in place
            conflicts.check(storage.read_bytes(self.path) or b"", self.path)
        end = data.rfind(b"\n") + 1
        if not end:
            return True
        lines, _ = log.parse(data[:end])
        if not log.KEYED.isdisjoint(map(itemgetter("type"), lines)):
            return False  # one entry per key (`log.Folded.put`): rare, so built again
        if self.top is not None:
            log.resolve_paths(lines, str(self.top))
        if not self._own:
            self.entries, self.dead, self._own = dict(self.entries), dict(self.dead), True
        entries, dead, seq = self.entries, self.dead, self.seq
        for line in lines:  # log.fold, keeping the positions
            if line.get("type") == "tombstone":
                target = line.get("target_id")
                if isinstance(target, str):
                    entries.pop(target, None)
                    dead[target] = line
                    touched.add(target)
                continue
            entry_id = line["id"]
            dead.pop(entry_id, None)
            if entry_id not in entries:
                seq[entry_id] = self.next
                self.next += 1
            entries[entry_id] = line
            touched.add(entry_id)
        self.at = self.at.after(data[:end], self.path.stat().st_mtime_ns)
        return True


def _identity(path: Path) -> tuple[int, int] | None:
    # A rewrite (gc, git, an atomic save) makes a new file: never mistaken for growth.
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


class _Ranking:
    """The learnings' rank keys at one cwd, valid from `now` until `until` (the first
    moment a score drops), and the largest of them in ascending order: `top` holds the
    `len(top)` largest keys of all (`complete`: all of them). A key is (score, created,
    order, id, last change): the order tells every two apart, so what follows it is
    never compared."""

    def __init__(self, cwd: str, now: datetime, learnings: dict[str, Entry], order: dict[str, int]):
        self.cwd, self.now = cwd, now
        self._keys, self.until = _keys(rank.Scorer(now, cwd), learnings, order)
        self._by_id: dict[str, rank.RankKey] | None = None  # made at the first update
        self.top: list[rank.RankKey] = []
        self.complete = not self._keys

    def valid(self, now: datetime) -> bool:
        return self.now <= now and (self.until is None or now < self.until)

    def _index(self) -> dict[str, rank.RankKey]:
        if self._by_id is None:
            self._by_id = {key[3]: key for key in self._keys}
            self._keys = []
        return self._by_id

    def update(self, now: datetime, changed: Iterable[str], view: MemoryView) -> None:
        index = self._index()
        changed = list(changed)
        for entry_id in changed:
            old = index.pop(entry_id, None)
            if old is not None:
                n = bisect.bisect_left(self.top, old)
                if n < len(self.top) and self.top[n] == old:
                    del self.top[n]
        ids = [i for i in changed if view.entries.get(i, {}).get("type") == "learning"]
        if ids:
            keys, until = _keys(
                rank.Scorer(now, self.cwd), {i: view.entries[i] for i in ids}, view.order
            )
            if until is not None and (self.until is None or until < self.until):
                self.until = until
            for key in keys:
                index[key[3]] = key
                if self.complete or (self.top and key > self.top[0]):
                    bisect.insort(self.top, key)

    def all(self) -> Iterable[rank.RankKey]:
        return self._keys if self._by_id is None else self._by_id.values()

    def head(self, limit: int | None) -> list[rank.RankKey]:
        if limit is None:
            return sorted(self.all(), reverse=True)
        if len(self.top) < limit and not self.complete:
            keys = list(self.all())
            # Newest first: most later keys are turned away with one comparison.
            self.top = sorted(heapq.nlargest(limit, reversed(keys)))
            self.complete = limit >= len(keys)
        return self.top[::-1][:limit]


def _keys(
    scorer: rank.Scorer, learnings: dict[str, Entry], order: dict[str, int]
) -> tuple[list[rank.RankKey], datetime | None]:
    ids = list(learnings)
    scores, created, changed = scorer.rows(list(learnings.values()))
    keys = list(zip(scores, created, map(order.__getitem__, ids), ids, changed, strict=True))
    return keys, scorer.next_change(changed)


def _keyed(entries: dict[str, Entry]) -> list[tuple[str, Entry]]:
    """The keyed entries (`log.natural_key`) among `entries`, picked out by C loops."""
    kinds = map(itemgetter("type"), entries.values())
    return list(compress(entries.items(), map(log.KEYED.__contains__, kinds)))


class MemoryView:
    """The personal and project logs merged, by type, current as of `refresh()`."""

    def __init__(self, personal: Path, project: Path | None, top: Path | None) -> None:
        self._paths = (personal, project, top)
        self._build()

    def _build(self) -> None:
        personal, project, top = self._paths
        mine = _Log(personal, personal.parent / "cache" / f"{personal.name}.fold", None)
        self._logs = [mine]
        # Personal ids a project entry of the same key replaces: a line with one of
        # these ids is rare, and `_settle` would give it the personal place.
        self._shadowed: set[str] = set()
        entries = dict(mine.entries)
        order = dict(zip(mine.entries, range(len(mine.entries)), strict=True))
        if project is not None:
            ours = _Log(project, project.parent / "cache" / "memory.jsonl.fold", top)
            self._logs.append(ours)
            for target in ours.dead.keys() & entries.keys():
                del entries[target], order[target]
            # A keyed project entry replaces the personal one of its key (the snapshot's
            # `Folded.put`).
            keys = {log.natural_key(e["type"], e): i for i, e in _keyed(ours.entries)}
            keys.pop(None, None)
            for entry_id, entry in _keyed(entries) if keys else ():
                key = log.natural_key(entry["type"], entry)
                if key is not None and keys.get(key, entry_id) != entry_id:
                    del entries[entry_id], order[entry_id]
                    self._shadowed.add(entry_id)
            entries.update(ours.entries)
            # An id in both logs keeps its personal place (the snapshot's order).
            kept = {i: order[i] for i in ours.entries.keys() & order.keys()}
            order.update(zip(ours.entries, count(_PROJECT), strict=False))
            order.update(kept)
        self.entries: dict[str, Entry] = entries
        self.order: dict[str, int] = order
        # Learnings, most of a large log, are picked out by C loops; the rest one by one.
        learning = list(map(eq, map(itemgetter("type"), entries.values()), repeat("learning")))
        groups: dict[str, dict[str, Entry]] = {}
        if any(learning):
            groups["learning"] = dict(compress(entries.items(), learning))
        for entry_id, entry in compress(entries.items(), map(not_, learning)):
            group = groups.get(entry["type"])  # a string: the parser checks it
            if group is None:
                group = groups[entry["type"]] = {}
            group[entry_id] = entry
        self._by_type = groups
        self._lists: dict[str, list[Entry]] = {}
        # Types whose group is still in the order it was built in, the snapshot's.
        self._in_order = set(self._by_type)
        # By cwd (the project boost depends on it), with the learnings changed since.
        self._rankings: dict[str, tuple[_Ranking, set[str]]] = {}

    def refresh(self) -> None:
        """Apply what was appended to either log since; rebuild on anything else."""
        touched: set[str] = set()
        entries = self.entries
        if (
            not all(part.advance(touched) for part in self._logs)
            or (self._shadowed and not self._shadowed.isdisjoint(touched))
            # A keyed entry replaced or removed: another of its key may hold it now.
            or any(entries[i]["type"] in log.KEYED for i in touched if i in entries)
        ):
            self._build()
            return
        for entry_id in touched:
            self._settle(entry_id)

    def _settle(self, entry_id: str) -> None:
        """Make the merged view of one id what the two folds now say."""
        mine = self._logs[0]
        ours = self._logs[1] if len(self._logs) > 1 else None
        new: Entry | None
        if ours is not None and entry_id in ours.entries:
            new = ours.entries[entry_id]
        elif (ours is not None and entry_id in ours.dead) or entry_id not in mine.entries:
            new = None
        else:
            new = mine.entries[entry_id]
        place = None
        if new is not None:
            place = (
                mine.seq[entry_id] if entry_id in mine.entries else _PROJECT + ours.seq[entry_id]  # type: ignore[union-attr]
            )
        old = self.entries.get(entry_id)
        if old is new and self.order.get(entry_id) == place:
            return
        if old is not None:
            kind = old["type"]
            del self._by_type[kind][entry_id]
            self._lists.pop(kind, None)
            self._in_order.discard(kind)
            del self.entries[entry_id]
            del self.order[entry_id]
        if new is not None and place is not None:
            kind = new["type"]
            self._by_type.setdefault(kind, {})[entry_id] = new
            self._lists.pop(kind, None)
            self._in_order.discard(kind)
            self.entries[entry_id] = new
            self.order[entry_id] = place
        if (old is not None and old.get("type") == "learning") or (
            new is not None and new.get("type") == "learning"
        ):
            for _, changed in self._rankings.values():
                changed.add(entry_id)

    # -- reading ----------------------------------------------------------------------

    def of_type(self, type_: str) -> list[Entry]:
        """The live entries of one type, in the snapshot's order."""
        found = self._lists.get(type_)
        if found is None:
            group = self._by_type.get(type_, {})
            if type_ in self._in_order:
                found = list(group.values())
            else:
                found = [group[i] for i in sorted(group, key=self.order.__getitem__)]
            self._lists[type_] = found
        return found

    def origin(self, entry_id: str) -> str:
        """Which log holds the live entry `entry_id`: "project" or "personal"."""
        ours = self._logs[1] if len(self._logs) > 1 else None
        return "project" if ours is not None and entry_id in ours.entries else "personal"

    def count(self, type_: str) -> int:
        return len(self._by_type.get(type_, ()))

    def top_learnings(
        self, now: datetime, cwd: str, limit: int | None
    ) -> tuple[list[Entry], datetime | None]:
        """`rank.top_learnings` of the live learnings (ties broken by the snapshot's
        order): the best `limit` (all with None), and when a score next drops."""
        ranking = self._ranking(now, cwd)
        return [self.entries[key[3]] for key in ranking.head(limit)], ranking.until

    def stale_learnings(
        self, now: datetime, cwd: str, after_days: int, min_score: int
    ) -> list[Entry]:
        """`rank.decay_candidates` of the live learnings, in order, from the same keys
        the ranking uses (decay runs at session start, just before the context)."""
        keys = list(self._ranking(now, cwd).all())
        marks = rank.Scorer(now, cwd).stale(
            map(itemgetter(0), keys), map(itemgetter(4), keys), after_days, min_score
        )
        stale = sorted(compress(keys, marks), key=itemgetter(2))
        return [self.entries[key[3]] for key in stale]

    def _ranking(self, now: datetime, cwd: str) -> _Ranking:
        ranking, changed = self._rankings.get(cwd) or (None, set())
        if ranking is None or not ranking.valid(now):
            ranking = _Ranking(cwd, now, self._by_type.get("learning", {}), self.order)
        elif changed:
            ranking.update(now, changed, self)
        self._rankings[cwd] = (ranking, set())
        return ranking


_views: dict[tuple[Path, Path | None, Path | None], MemoryView] = {}


def current_view(personal: Path, project: Path | None, top: Path | None) -> MemoryView:
    """The process's view of these logs, brought up to date."""
    key = (personal, project, top)
    view = _views.get(key)
    if view is None:
        view = MemoryView(personal, project, top)
    else:
        view.refresh()
    remember(_views, key, view)
    return view

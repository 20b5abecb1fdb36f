"""Where one item of the brain came from: ``voyager-brain blame KIND KEY``.

The item's file is read through the summarized history of `audit.history`, newest first:
the first commit that touches the item last changed it; the walk (and git) stops at the
first commit that added it.

Entry text that a compaction folded into a summary is blamed on the entry it came from:
where the walk meets the commit that brought in the summary, it goes on with the folded
entry that holds the text, and that commit is the one that folded it (`Blame.folded_by`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import storage
from ..errors import BrainError
from ..session.compaction import SUMMARY_SOURCE
from ..session.model import LABEL_TYPES, TYPE_LABELS, BrainEntry
from ..timestamps import format_timestamp, parse_timestamp
from .audit import Commit, history, open_repository, read_blob
from .changes import BRAIN_FILES, BRAIN_MD, BrainChanges, file_changes, kind_of, read_entries

#: What `blame` can look for: the brain file it lives in, and its section there.
KINDS = {
    "decision": ("brain.json", "decisions"),
    "keyFile": ("brain.json", "keyFiles"),
    "knownIssue": ("brain.json", "knownIssues"),
    "entry": ("brain.md", ""),
    "memory": ("memory.jsonl", ""),
}


@dataclasses.dataclass(frozen=True, slots=True)
class BlameEvent:
    commit: Commit
    op: str  # add, change, remove

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, **self.commit.to_dict()}


@dataclasses.dataclass(frozen=True, slots=True)
class Blame:
    """Where one item of the brain came from."""

    kind: str
    key: str  # the merge key, the entry's heading, the memory id
    path: str  # the file it lives in
    introduced: BlameEvent | None  # the latest commit that added it
    last_changed: BlameEvent | None  # the latest commit that added, changed or removed it
    uncommitted: str | None  # add, change or remove: the working tree against HEAD
    present: bool  # in the working tree now
    # An entry a compaction folded into a summary: that commit (None when the working
    # tree folded it), and the summary's heading.
    folded_by: Commit | None = None
    folded_into: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "path": self.path,
            "present": self.present,
            "introduced": self.introduced.to_dict() if self.introduced else None,
            "last_changed": self.last_changed.to_dict() if self.last_changed else None,
            "uncommitted": self.uncommitted,
            "folded_by": self.folded_by.to_dict() if self.folded_by else None,
            "folded_into": self.folded_into,
        }

    def render_text(self) -> str:
        """What `voyager-brain blame` prints: the item, then a line per commit."""
        lines = [f"{self.kind} {self.key!r} ({self.path})"]
        rows = []
        if self.introduced is not None:
            rows.append(("introduced", self.introduced.commit))
        last = self.last_changed
        if self.folded_by is not None:
            rows.append(("folded by", self.folded_by))
        elif last is not None and last != self.introduced:
            rows.append(("removed" if last.op == "remove" else "last changed", last.commit))
        lines += [f"{label:<13} {commit.describe()}" for label, commit in rows]
        if self.folded_by is not None:
            lines.append(f"{'':<13} into the summary {self.folded_into!r}")
        if self.uncommitted is not None:
            verb = {"add": "added", "change": "changed", "remove": "removed"}[self.uncommitted]
            if self.folded_by is None and self.folded_into is not None:
                verb = f"folded into the summary {self.folded_into!r}"
            lines.append(f"{'working tree':<13} {verb}, not committed yet")
        return "\n".join(lines) + "\n"


_SLOT = re.compile(r"^(?:#+\s*)?(?P<label>.+?)\s*[—–-]?\s+(?P<stamp>\d{4}-\d\d-\d\d\S*)\s*$")
_LABELS = {label.casefold(): type_ for label, type_ in LABEL_TYPES.items()} | {
    type_: type_ for type_ in LABEL_TYPES.values()
}


def _heading_slot(text: str) -> tuple[str, str] | None:
    """(type, time) of ``Observation — 2026-03-21T14:30:00Z`` (also with ``##``, any
    dash, or the type's own name: ``loop_status 2026-...``); None for other text."""
    m = _SLOT.match(text.strip())
    if m is None or m["label"].casefold() not in _LABELS:
        return None
    try:
        stamp = format_timestamp(parse_timestamp(m["stamp"]))
    except ValueError:
        return None
    return _LABELS[m["label"].casefold()], stamp


@dataclasses.dataclass(frozen=True, slots=True)
class _Target:
    """What one blame looks for in each commit's changes."""

    kind: str
    key: str  # as `Blame.key` shows it
    slot: tuple[str, str] = ("", "")  # an entry's type and time
    summary: bool = False  # the entry is a compaction summary

    def event(self, changes: BrainChanges) -> str | None:
        """add, change or remove when `changes` touch the item, else None."""
        if self.kind == "entry":
            e, here = changes.entries, self.among
            if here(e.added) or here(e.summaries):
                return "add"
            if here(new for _, new in e.edited):
                return "change"
            return "remove" if here(e.removed) or here(e.compacted) else None
        if self.kind == "memory":
            m = changes.memory
            if any(x.get("id") == self.key for x in m.added):
                return "add"
            if any(x.get("id") == self.key for _, x in m.updated):
                return "change"
            gone = [x.get("id") for x in m.removed] + [t.get("target_id") for _, t in m.tombstoned]
            return "remove" if self.key in gone else None
        section = KINDS[self.kind][1]
        for change in changes.state:
            if change.item != self.key:
                continue
            if change.path == section:
                return "add" if change.op == "add" else "remove"
            if change.path.startswith(section + "["):
                return "change"
        return None

    def among(self, entries: Iterable[BrainEntry]) -> bool:
        """Whether the entry is one of `entries`."""
        return any(
            x.key[:2] == self.slot and (x.source == SUMMARY_SOURCE) == self.summary for x in entries
        )


def blame(top: Path, kind: str, key: str) -> Blame:
    """Which commit introduced `key` (a decision's `what`, a key file's `path`, a known
    issue's `issue`, a brain.md entry's heading or text, a memory id) and which last
    changed it; also whether the working tree changes it. Raises `BrainError` when the
    item never existed, or when entry text matches more than one entry. `kind` is one of
    `KINDS`, in any case."""
    known = {k.casefold(): k for k in KINDS}
    if kind.casefold() not in known:
        raise BrainError(f"KIND: expected one of {', '.join(KINDS)}, got {kind!r}")
    kind = known[kind.casefold()]
    name, _ = KINDS[kind]
    path = next(p for p in BRAIN_FILES if kind_of(p) == name)
    with open_repository(top) as repository:
        head = read_blob(repository, f"HEAD:{path}")  # None before the first commit
    work = storage.read_bytes(top / path)
    in_work = file_changes(name, head, work, f"HEAD:{path}", path)
    text = key if kind == "entry" and _heading_slot(key) is None else None
    target = _blame_target(kind, key, path, work) or _entry_in_history(in_work, key)
    # The working tree's own compaction may have folded the entry.
    in_work_target, folded_into = target, None
    if target is not None:
        target, folded_into = _unfold(target, in_work, text)
        folded_into = folded_into or _summary_of(target, in_work, text)
    folded_by: Commit | None = None
    introduced = last = None
    with history(top, [path], follow=True, merges=False) as records:
        for record in records:
            if target is None:  # entry text not in the working tree: its newest version
                target = _entry_in_history(record.changes, key)
                if target is None:
                    continue
            target, into = _unfold(target, record.changes, text)
            if into is not None:  # this commit brought in the summary, folding the entry
                last = BlameEvent(record.commit, "remove")
                folded_by, folded_into = record.commit, into
                continue
            op = target.event(record.changes)
            if op is None:
                continue
            if last is None:
                last = BlameEvent(record.commit, op)
                into = _summary_of(target, record.changes, text) if op == "remove" else None
                if into is not None:
                    folded_by, folded_into = record.commit, into
            if op == "add":
                introduced = BlameEvent(record.commit, op)
                break
    if last is None and target is not in_work_target:  # added and folded, not committed
        target, folded_into = in_work_target, None
    uncommitted = target.event(in_work) if target is not None else None
    if target is None or (last is None and uncommitted is None):
        raise BrainError(f"{path}: no {kind} {key!r} in the working tree or its history")
    present = uncommitted != "remove" and (
        uncommitted is not None or (last is not None and last.op != "remove")
    )
    if uncommitted is not None and uncommitted != "remove":
        folded_by = folded_into = None  # the working tree brought it back
    return Blame(
        kind, target.key, path, introduced, last, uncommitted, present, folded_by, folded_into
    )


def _unfold(target: _Target, changes: BrainChanges, text: str | None) -> tuple[_Target, str | None]:
    """When `changes` brought in the summary `target` and folded into it an entry whose
    text contains `text`: that entry, and the summary's heading. Else `target`, None. More
    than one such entry raises `BrainError`, as for entries of the working tree."""
    e = changes.entries
    if text is None or not target.summary or not target.among(e.summaries):
        return target, None
    found = [x for x in e.compacted if text.casefold() in x.content.casefold()]
    if not found:
        return target, None  # the summary's own text
    if len(found) > 1:
        raise _ambiguous(BRAIN_MD, text, found)
    return _entry_target(found[0]), target.key


def _summary_of(target: _Target, changes: BrainChanges, text: str | None) -> str | None:
    """The heading of the summary into which `changes` folded the entry `target`, if
    they did: the one that holds `text`, when more than one came in."""
    e = changes.entries
    if target.kind != "entry" or not target.among(e.compacted) or not e.summaries:
        return None
    holding = [x for x in e.summaries if text and text.casefold() in x.content.casefold()]
    summary = (holding or list(e.summaries))[0]
    return _heading((summary.key[0], summary.key[1]))


def _blame_target(kind: str, key: str, path: str, work: bytes | None) -> _Target | None:
    """The item to look for; for entry text not in the working tree, None (the history
    is searched for it)."""
    if kind != "entry":
        return _Target(kind, key)
    entries = read_entries(work, path)
    slot = _heading_slot(key)
    if slot is not None:
        summary = any(e.key[:2] == slot and e.source == SUMMARY_SOURCE for e in entries)
        return _Target(kind, _heading(slot), slot, summary)
    found = [e for e in entries if key.casefold() in e.content.casefold()]
    if len(found) > 1:
        raise _ambiguous(path, key, found)
    return _entry_target(found[0]) if found else None


def _ambiguous(path: str, text: str, found: Sequence[BrainEntry]) -> BrainError:
    shown = "; ".join(_heading((e.key[0], e.key[1])) for e in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return BrainError(
        f"{path}: {len(found)} entries contain {text!r} ({shown}{more}); "
        "give the heading of one, e.g. 'Observation — 2026-03-21T14:30:00Z'"
    )


def _heading(slot: tuple[str, str]) -> str:
    return f"{TYPE_LABELS[slot[0]]} — {slot[1]}"


def _entry_target(entry: BrainEntry) -> _Target:
    slot = (entry.key[0], entry.key[1])
    return _Target("entry", _heading(slot), slot, entry.source == SUMMARY_SOURCE)


def _entry_in_history(changes: BrainChanges, text: str) -> _Target | None:
    """The entry of a commit's changes whose text contains `text`, if any."""
    e = changes.entries
    candidates = [
        *e.added,
        *e.summaries,
        *(new for _, new in e.edited),
        *e.removed,
        *e.compacted,
    ]
    for entry in candidates:
        if text.casefold() in entry.content.casefold():
            return _entry_target(entry)
    return None

"""What changed between two versions of the brain files, by meaning rather than by line.

* brain.json: `state.diff`, fields added, removed and changed, with the items of
  decisions, keyFiles and knownIssues matched by their merge keys (`what`, `path`, `issue`);
* brain.md: entries added and removed, edited (the same type and time, other text), and
  compacted (removed in a change that brought in a compaction summary);
* memory.jsonl: both versions folded; entries added, updated (the same id, other content),
  tombstoned, and removed without a tombstone (a hand edit).

`BrainChanges` holds all three. Its `summary()` is the one line that `voyager-brain log` and
the auto-commit message show (``+2 decisions, ~1 fact, +5 observations, compacted 40 -> 1
summary, +3 learnings, 1 tombstone``); `render_text`, `render_markdown` and `to_dict` show
every item.

Standard library only: the session-end hook builds its commit message here.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ..memory import log as memory_log
from ..session import brainfile
from ..session.compaction import SUMMARY_SOURCE
from ..session.model import BrainEntry
from ..state import brainjson as project_state
from ..timestamps import format_timestamp

BRAIN_JSON = ".voyager/brain.json"
BRAIN_MD = ".voyager/brain.md"
MEMORY_LOG = ".voyager/memory.jsonl"
#: The brain files git tracks, in the order their changes are reported. config.toml is
#: tracked too, but it holds settings, not memory; cache/ and lock files never are.
BRAIN_FILES = (BRAIN_JSON, BRAIN_MD, MEMORY_LOG)
_TITLES = {
    "brain.json": "Project state",
    "brain.md": "Session brain",
    "memory.jsonl": "Memory log",
}


def kind_of(path: str) -> str | None:
    """Which brain file `path` holds, by its name: brain.json, brain.md, memory.jsonl."""
    name = PurePosixPath(path).name
    return name if name in _TITLES else None


def _concat(a: Any, b: Any) -> Any:
    """Two changes of the same dataclass, field by field (tuples, or values with `+`)."""
    return type(a)(*(getattr(a, f.name) + getattr(b, f.name) for f in dataclasses.fields(a)))


# -- brain.md -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class EntryChanges:
    """brain.md's entries that came and went; an entry is its type, time and text."""

    added: tuple[BrainEntry, ...] = ()
    removed: tuple[BrainEntry, ...] = ()
    edited: tuple[tuple[BrainEntry, BrainEntry], ...] = ()  # (old, new): same type and time
    compacted: tuple[BrainEntry, ...] = ()  # removed where compaction summaries came in
    summaries: tuple[BrainEntry, ...] = ()  # those summaries

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in dataclasses.fields(self))

    def __add__(self, other: EntryChanges) -> EntryChanges:
        return _concat(self, other)  # type: ignore[no-any-return]


def _unique(entries: Iterable[BrainEntry]) -> list[BrainEntry]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for entry in entries:
        if entry.key not in seen:
            seen.add(entry.key)
            out.append(entry)
    return out


def entry_changes(old: Iterable[BrainEntry], new: Iterable[BrainEntry]) -> EntryChanges:
    """The entries of `new` that `old` lacks and the other way round, in file order.

    An entry that went and one that came with the same type and time are one edit. When
    compaction summaries (source ``compact``) came in and other entries went, those were
    folded into the summaries: they are `compacted`, not `removed`.
    """
    old_list, new_list = _unique(old), _unique(new)
    old_keys = {e.key for e in old_list}
    new_keys = {e.key for e in new_list}
    gone = [e for e in old_list if e.key not in new_keys]
    came = [e for e in new_list if e.key not in old_keys]
    summaries = tuple(e for e in came if e.source == SUMMARY_SOURCE)
    if summaries:
        added, edited, left = _pair(gone, [e for e in came if e.source != SUMMARY_SOURCE])
        if left:
            return EntryChanges(added=added, edited=edited, compacted=left, summaries=summaries)
    added, edited, left = _pair(gone, came)
    return EntryChanges(added=added, removed=left, edited=edited)


def _pair(
    gone: list[BrainEntry], came: list[BrainEntry]
) -> tuple[
    tuple[BrainEntry, ...], tuple[tuple[BrainEntry, BrainEntry], ...], tuple[BrainEntry, ...]
]:
    """(added, edited, removed): an entry that went pairs with one that came at the same
    type and time."""
    slots: dict[tuple[str, str], BrainEntry] = {}
    for entry in gone:
        slots.setdefault(entry.key[:2], entry)
    added, edited = [], []
    for entry in came:
        before = slots.pop(entry.key[:2], None)
        if before is None:
            added.append(entry)
        else:
            edited.append((before, entry))
    paired = {before.key for before, _ in edited}
    return tuple(added), tuple(edited), tuple(e for e in gone if e.key not in paired)


def read_entries(data: bytes | None, where: str) -> tuple[BrainEntry, ...]:
    """The entries of a brain.md version; none when it is missing. `where` names it in
    a `CorruptFileError`."""
    return brainfile.parse(data, Path(where)).entries if data else ()


# -- memory.jsonl ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryChanges:
    """The memory log's entries, folded, that came, changed and went."""

    added: tuple[dict[str, Any], ...] = ()
    # (old, new); old is None when only the new line is known (see `appended_memory_changes`)
    updated: tuple[tuple[dict[str, Any] | None, dict[str, Any]], ...] = ()
    # (the entry removed, when it was live before; the tombstone)
    tombstoned: tuple[tuple[dict[str, Any] | None, dict[str, Any]], ...] = ()
    removed: tuple[dict[str, Any], ...] = ()  # gone without a tombstone

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in dataclasses.fields(self))

    def __add__(self, other: MemoryChanges) -> MemoryChanges:
        return _concat(self, other)  # type: ignore[no-any-return]


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def memory_changes(old: Iterable[dict[str, Any]], new: Iterable[dict[str, Any]]) -> MemoryChanges:
    """Fold both versions of a log (its entries in file order) and compare the results.
    Each kind of change is in the order of the lines that made it (an entry's last line,
    a tombstone's own), so changes appended to a log read in the order they were made."""
    lines = list(new)
    before, after = memory_log.fold(old), memory_log.fold(lines)
    was, now = before.entries, after.entries
    last: dict[Any, int] = {}
    for n, line in enumerate(lines):
        key = line.get("target_id") if line.get("type") == "tombstone" else line.get("id")
        last[key] = n

    def ordered(items: Iterable[tuple[Any, Any]]) -> tuple[Any, ...]:
        return tuple(item for _, item in sorted(items, key=lambda pair: last.get(pair[0], -1)))

    return MemoryChanges(
        added=ordered((i, e) for i, e in now.items() if i not in was),
        updated=ordered(
            (i, (was[i], e)) for i, e in now.items() if i in was and _canon(was[i]) != _canon(e)
        ),
        tombstoned=ordered(
            (i, (was.get(i), t))
            for i, t in after.dead.items()
            if i not in now and (i in was or before.dead.get(i) != t)
        ),
        removed=tuple(e for i, e in was.items() if i not in now and i not in after.dead),
    )


def memory_changes_after(
    before: memory_log.Folded, lines: Sequence[dict[str, Any]]
) -> MemoryChanges:
    """What `memory_changes(old, [*old, *lines])` gives, where `before` is the fold of
    `old`: the log folded on from `before` and only the ids the appended lines name
    compared (a fold is per id: no other entry can change). `log` uses it for each
    commit that appends an update or a tombstone, rather than folding the parent's log
    twice and comparing every live entry."""
    after = memory_log.fold(lines, memory_log.Folded(dict(before.entries), dict(before.dead)))
    was, now = before.entries, after.entries
    last: dict[Any, int] = {}
    for n, line in enumerate(lines):
        last[line.get("target_id") if line.get("type") == "tombstone" else line.get("id")] = n
    added, updated, tombstoned = [], [], []
    for key in sorted(last, key=last.__getitem__):
        if key in now:
            if key not in was:
                added.append(now[key])
            elif _canon(was[key]) != _canon(now[key]):
                updated.append((was[key], now[key]))
        elif key in after.dead:
            dead = after.dead[key]
            if key in was or before.dead.get(key) != dead:
                tombstoned.append((was.get(key), dead))
    return MemoryChanges(tuple(added), tuple(updated), tuple(tombstoned))


def appended_memory_changes(lines: Sequence[dict[str, Any]]) -> MemoryChanges:
    """The changes made by appending `lines` to a log that is not at hand. An entry whose
    first line here carries ``updated`` (as every update voyager-brain writes does)
    existed before: it is updated, not added."""
    changes = memory_changes((), lines)
    known: dict[Any, bool] = {}
    for line in lines:
        known.setdefault(line.get("id"), "updated" in line)
    return dataclasses.replace(
        changes,
        added=tuple(e for e in changes.added if not known[e["id"]]),
        updated=tuple((None, e) for e in changes.added if known[e["id"]]),
    )


def read_memory(data: bytes | None) -> list[dict[str, Any]]:
    """The entries of a memory log version (bad lines are skipped, as on every read)."""
    return memory_log.parse(data)[0] if data else []


# -- brain.json -----------------------------------------------------------------------


def read_state(data: bytes | None, where: str) -> dict[str, Any]:
    """A brain.json version; a missing or empty one is the empty state."""
    if not data or not data.strip():
        return project_state.ordered({})
    return project_state.loads(data, Path(where))


# -- all three ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class BrainChanges:
    """What changed in the brain files. Empty (false) when nothing did."""

    state: tuple[project_state.Change, ...] = ()
    entries: EntryChanges = EntryChanges()
    memory: MemoryChanges = MemoryChanges()
    #: (file name, the error) for each version that could not be read
    unreadable: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.state or self.entries or self.memory or self.unreadable)

    def __add__(self, other: BrainChanges) -> BrainChanges:
        return _concat(self, other)  # type: ignore[no-any-return]

    def summary(self) -> str:
        """One line: ``+2 decisions, ~1 fact, +5 observations, compacted 40 -> 1 summary,
        +3 learnings, 1 tombstone``; empty when nothing changed."""
        return summarize(self)

    def to_dict(self) -> dict[str, Any]:
        e, m = self.entries, self.memory
        return {
            "summary": self.summary(),
            "brain.json": [{**c.to_dict(), "item": c.item} for c in self.state],
            "brain.md": {
                "added": [x.to_dict() for x in e.added],
                "removed": [x.to_dict() for x in e.removed],
                "edited": [{"old": a.to_dict(), "new": b.to_dict()} for a, b in e.edited],
                "compacted": [x.to_dict() for x in e.compacted],
                "summaries": [x.to_dict() for x in e.summaries],
            },
            "memory.jsonl": {
                "added": list(m.added),
                "updated": [{"old": a, "new": b} for a, b in m.updated],
                "tombstoned": [{"entry": a, "tombstone": t} for a, t in m.tombstoned],
                "removed": list(m.removed),
            },
            "unreadable": [{"file": name, "error": error} for name, error in self.unreadable],
        }


def file_changes(
    kind: str, old: bytes | None, new: bytes | None, old_where: str, new_where: str
) -> BrainChanges:
    """The changes between two versions of one brain file (None: missing, so empty).

    `kind` is what `kind_of` returns; `old_where` and `new_where` name the versions in
    the `CorruptFileError` raised when one cannot be read.
    """
    match kind:
        case "brain.json":
            before, after = read_state(old, old_where), read_state(new, new_where)
            return BrainChanges(state=tuple(project_state.diff(before, after)))
        case "brain.md":
            return BrainChanges(
                entries=entry_changes(read_entries(old, old_where), read_entries(new, new_where))
            )
        case "memory.jsonl":
            return BrainChanges(memory=memory_changes(read_memory(old), read_memory(new)))
    return BrainChanges()


def compare(
    old: Mapping[str, bytes | None],
    new: Mapping[str, bytes | None],
    old_label: str,
    new_label: str,
) -> BrainChanges:
    """The changes between two versions of every brain file: `old` and `new` map each of
    `BRAIN_FILES` to its bytes (missing or None: the file does not exist). The labels
    (``HEAD``, ``:`` for the index, empty for the working tree) name the versions in errors.
    """
    total = BrainChanges()
    for path in BRAIN_FILES:
        kind = kind_of(path)
        assert kind is not None
        total += file_changes(
            kind,
            old.get(path),
            new.get(path),
            f"{old_label}:{path}" if old_label else path,
            f"{new_label}:{path}" if new_label else path,
        )
    return total


# -- the summary line ------------------------------------------------------------------

_STATE_NOUNS = {
    "decisions": "decision",
    "keyFiles": "key file",
    "knownIssues": "known issue",
    "facts": "fact",
    "preferences": "preference",
    "nextSteps": "next step",
    "activeState.currentGoal": "goal",
    "activeState.inProgress": "in-progress item",
    "activeState.blockers": "blocker",
    "activeState.recentlyCompleted": "completed item",
}
_MARKS = {"add": "+", "change": "~", "remove": "-"}
_ORDER = "+~-"


def _plural(noun: str, n: int) -> str:
    if n == 1:
        return noun
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith("s") else "s")


def _state_noun(path: str) -> str:
    head = re.split(r"[.\[]", path, maxsplit=1)[0]
    if head == "activeState":
        return _STATE_NOUNS.get(".".join(path.split(".")[:2]), "active state field")
    return _STATE_NOUNS.get(head, head)


def _state_items(changes: Iterable[project_state.Change]) -> list[tuple[str, str]]:
    """(mark, noun) once per item: a decision whose why and when changed is one change."""
    items: dict[tuple[str, ...], tuple[str, str]] = {}
    for change in changes:
        noun = _state_noun(change.path)
        if change.item is not None and change.path in project_state.KEYED_LISTS:
            key: tuple[str, ...] = (change.path, change.item)
            mark = _MARKS[change.op]
        elif change.item is not None:  # a field of a decision, key file or known issue
            key, mark = (noun, change.item), "~"
        else:
            value = change.old if change.op == "remove" else change.new
            key, mark = (change.op, change.path, _canon(value)), _MARKS[change.op]
        items.setdefault(key, (mark, noun))
    return list(items.values())


def _label(entry: BrainEntry) -> str:
    return entry.label.lower()


def summarize(changes: BrainChanges) -> str:
    """`BrainChanges.summary`: counts per kind, file by file (brain.json, brain.md, the
    memory log), additions before changes before removals; the same kind in two files
    (a decision in brain.json and one in brain.md) is counted once."""
    counts: dict[tuple[str, str], int] = {}

    def count(items: Iterable[tuple[str, str]]) -> None:
        for item in sorted(items, key=lambda i: _ORDER.find(i[0])):
            counts[item] = counts.get(item, 0) + 1

    e, m = changes.entries, changes.memory
    count(_state_items(changes.state))
    count(
        [("+", _label(x)) for x in e.added]
        + [("~", _label(new)) for _, new in e.edited]
        + [("-", _label(x)) for x in e.removed]
    )
    if e.summaries:
        counts[("compacted", "")] = 0
    count(
        [("+", str(x.get("type"))) for x in m.added]
        + [("~", str(new.get("type"))) for _, new in m.updated]
        + [("-", str(x.get("type"))) for x in m.removed]
    )
    if m.tombstoned:
        counts[("x", "tombstone")] = len(m.tombstoned)
    parts = []
    for (mark, noun), n in counts.items():
        if mark == "compacted":
            k = len(e.summaries)
            parts.append(f"compacted {len(e.compacted)} -> {k} {_plural('summary', k)}")
        elif mark == "x":
            parts.append(f"{n} {_plural(noun, n)}")
        else:
            parts.append(f"{mark}{n} {_plural(noun, n)}")
    parts += [f"{name} unreadable" for name, _ in changes.unreadable]
    return ", ".join(parts)


# -- every item: text, markdown --------------------------------------------------------


def _brief(text: str, limit: int = 100) -> str:
    line = " ".join(str(text).split())
    if not line:
        return "(empty)"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _first_line(text: str) -> str:
    return next((line for line in text.split("\n") if line.strip()), "")


def _edit(old: str, new: str) -> str:
    """The first line that differs, old -> new (the first lines are often the same)."""
    olds, news = old.split("\n"), new.split("\n")
    for n in range(max(len(olds), len(news))):
        a = olds[n] if n < len(olds) else ""
        b = news[n] if n < len(news) else ""
        if a != b:
            return f"{_brief(a)} -> {_brief(b)}"
    return "(same text)"


def _heading(entry: BrainEntry) -> str:
    stamp = format_timestamp(entry.timestamp) if entry.timestamp else "(no time)"
    return f"{entry.label} — {stamp}"


def detail_lines(changes: BrainChanges) -> list[tuple[str, list[str]]]:
    """(brain file, one line per item) for each file with changes, in `BRAIN_FILES` order."""
    from ..memory.tool import summary as memory_text

    e, m = changes.entries, changes.memory
    state_lines = [c.describe() for c in changes.state]
    md_lines = [f"+ {_heading(x)}: {_brief(_first_line(x.content))}" for x in e.added]
    md_lines += [f"~ {_heading(b)}: {_edit(a.content, b.content)}" for a, b in e.edited]
    md_lines += [f"- {_heading(x)}: {_brief(_first_line(x.content))}" for x in e.removed]
    if e.summaries:
        into = ", ".join(_heading(x) for x in e.summaries)
        n = len(e.compacted)
        md_lines.append(f"compacted {n} {_plural('entry', n)} into {into}")

    def ref(entry: Mapping[str, Any]) -> str:
        return f"{entry.get('type')} {entry.get('id')}"

    memory_lines = [f"+ {ref(x)}: {_brief(memory_text(dict(x)))}" for x in m.added]
    for old, new in m.updated:
        was = f"{_brief(memory_text(old))} -> " if old is not None else ""
        memory_lines.append(f"~ {ref(new)}: {was}{_brief(memory_text(new))}")
    for _, tomb in m.tombstoned:
        target = f"{tomb.get('target_type')} {tomb.get('target_id')}"
        memory_lines.append(f"x {target}: tombstoned ({_brief(str(tomb.get('reason', '')))})")
    memory_lines += [f"- {ref(x)}: {_brief(memory_text(dict(x)))}" for x in m.removed]

    unreadable: dict[str, list[str]] = {}
    for name, error in changes.unreadable:
        unreadable.setdefault(name, []).append(f"! unreadable: {error}")
    out = []
    for path, lines in zip(BRAIN_FILES, (state_lines, md_lines, memory_lines), strict=True):
        lines = lines + unreadable.get(PurePosixPath(path).name, [])
        if lines:
            out.append((path, lines))
    return out


def render_text(changes: BrainChanges) -> str:
    """Every item, file by file, then the summary line; ``no changes`` when empty."""
    if not changes:
        return "no changes to the brain files\n"
    out = []
    for path, lines in detail_lines(changes):
        out.append(path)
        out += [f"  {line}" for line in lines]
    out += ["", changes.summary()]
    return "\n".join(out) + "\n"


# What could make a line of brain text render as something else: inline markup, HTML and
# entities, GFM tables and strikethrough; GitHub's mentions (@name), issue links (#12)
# and emoji (:name:).
_MD_SPECIAL = re.compile(r"[\\`*_\[\]<&|~]|@(?=\w)|#(?=\d)|:(?=[A-Za-z][\w+-]*:)")


def _md(text: str) -> str:
    """`text` shown literally inside a markdown paragraph or list item."""
    text = _MD_SPECIAL.sub(lambda m: "\\" + m[0], text)
    # A leading + or - would start a nested list.
    return "\\" + text if text[:1] in ("+", "-") else text


def render_markdown(changes: BrainChanges, title: str) -> str:
    """A pull-request comment: a heading with `title` (the compared revisions), the
    summary in bold, then every item under its file."""
    out = [f"### Brain changes: {_md(title)}", ""]
    if not changes:
        return "\n".join([*out, "No changes to the brain files."]) + "\n"
    out += [f"**{_md(changes.summary())}**", ""]
    for path, lines in detail_lines(changes):
        out += [f"#### {_TITLES[PurePosixPath(path).name]} (`{path}`)", ""]
        out += [f"- {_md(line)}" for line in lines]
        out.append("")
    return "\n".join(out)

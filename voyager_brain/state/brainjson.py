"""brain.json: the project state (seed 000) and the per-field rules that merge every save.

The file keeps the seed's field names, casing, nesting and order, pretty-printed with two
spaces and a final newline, so the same state always gives the same bytes. The merge rules
are the table `MERGE_RULES`, read by the one function `merge`; compare it line by line with
the seed's "Merge Behavior Summary".

Standard library only: session start reads this file.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

from .. import conflicts
from ..errors import CorruptFileError, StateError
from ..timestamps import format_timestamp
from ..value import Record, Value
from .validate import as_json, validate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The schema version written in new files (the value the original tool writes).
SCHEMA_VERSION = "1.0.2"
RECENTLY_COMPLETED_KEEP = 10


def _deepcopy(value: Any) -> Any:
    # copy (with weakref) is imported when a merge needs it: a session start reads
    # brain.json but never merges.
    from copy import deepcopy

    return deepcopy(value)


class Strategy(enum.Enum):
    UNION = "union, order kept"
    UNION_DEDUP = "union, deduplicated ignoring case and whitespace"
    REPLACE = "replace"
    DEEP_MERGE = "deep merge"
    UPSERT = "upsert by key"
    RECENT = "union, keep the most recent"


class Rule(Record):
    path: str
    strategy: Strategy
    key: str | None = None  # UPSERT: the field that identifies an item
    keep: int | None = None  # RECENT: how many items stay


#: Seed 000's "Merge Behavior Summary", row by row.
MERGE_RULES: tuple[Rule, ...] = (
    Rule("facts.stack", Strategy.UNION),
    Rule("facts.architecture", Strategy.REPLACE),
    Rule("facts.environment", Strategy.DEEP_MERGE),
    Rule("facts.custom", Strategy.UNION_DEDUP),
    Rule("decisions", Strategy.UPSERT, key="what"),
    Rule("activeState.currentGoal", Strategy.REPLACE),
    Rule("activeState.inProgress", Strategy.REPLACE),
    Rule("activeState.blockers", Strategy.REPLACE),
    Rule("activeState.recentlyCompleted", Strategy.RECENT, keep=RECENTLY_COMPLETED_KEEP),
    Rule("keyFiles", Strategy.UPSERT, key="path"),
    Rule("knownIssues", Strategy.UPSERT, key="issue"),
    Rule("preferences", Strategy.DEEP_MERGE),
    Rule("nextSteps", Strategy.REPLACE),
)
KEYED_LISTS = {rule.path: rule.key for rule in MERGE_RULES if rule.key}
#: Written by voyager-brain itself, not taken from an update.
MANAGED = ("version", "lastUpdated", "sessionCount")


def empty_state(project: str, now: datetime) -> dict[str, Any]:
    """A new brain.json: every field of the seed, with empty values."""
    return {
        "version": SCHEMA_VERSION,
        "project": project,
        "lastUpdated": format_timestamp(now),
        "sessionCount": 0,
        "facts": {"stack": [], "architecture": "", "environment": {}, "custom": []},
        "decisions": [],
        "activeState": {
            "currentGoal": "",
            "inProgress": [],
            "blockers": [],
            "recentlyCompleted": [],
        },
        "keyFiles": [],
        "knownIssues": [],
        "preferences": {"style": "", "constraints": [], "communication": ""},
        "nextSteps": [],
    }


# -- merging --------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _canon(value: Any) -> str:
    """A JSON value's identity: unlike Python's ==, true is not 1 and {"a": 1} is not
    {"a": true}."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _same(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same JSON (`_canon`), without serializing the
    common case: values of one type, compared part by part."""
    if a is _MISSING or b is _MISSING:
        return a is b
    kind = type(a)
    if kind is not type(b) or kind is float:
        return _canon(a) == _canon(b)  # true is not 1, 1.0 is not 1; -0.0, NaN
    if kind is dict:
        return bool(a.keys() == b.keys()) and all(_same(a[k], b[k]) for k in a)
    if kind is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if kind in (str, int, bool, type(None)):
        return bool(a == b)
    return _canon(a) == _canon(b)


def _dedup(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    seen: set[str] = set()
    for item in items:
        key = _canon(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _union(old: list[Any], new: list[Any]) -> list[Any]:
    return _dedup(old + [_fresh(item) for item in new])


def _fresh(value: Any) -> Any:
    """A copy of an update's value as a merge stores it: lists without duplicates, at
    every depth, so that merging the same value again changes nothing."""
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return _dedup([_fresh(item) for item in value])
    return value


def _union_dedup(old: list[str], new: list[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for item in old + new:
        if _norm(item) not in seen:
            seen.add(_norm(item))
            out.append(item)
    return out


def _recent(old: list[Any], new: list[Any], keep: int) -> list[Any]:
    # An item completed again moves to the newest position (the end).
    fresh = _dedup(new)
    again = {_canon(item) for item in fresh}
    return ([item for item in _dedup(old) if _canon(item) not in again] + fresh)[-keep:]


def _deep_merge(old: Any, new: Any) -> Any:
    if isinstance(old, dict) and isinstance(new, dict):
        out = dict(old)
        for key, value in new.items():
            out[key] = _deep_merge(old[key], value) if key in old else _fresh(value)
        return out
    if isinstance(old, list) and isinstance(new, list):
        return _union(old, new)
    return _fresh(new)


def _upsert(old: list[dict[str, Any]], new: list[dict[str, Any]], key: str) -> list[Any]:
    out: list[dict[str, Any]] = []
    where: dict[str, int] = {}
    for item in [*old, *new]:
        k = item[key]
        if k in where:
            # The update's fields win; fields it omits are kept.
            out[where[k]] = {**out[where[k]], **_deepcopy(item)}
        else:
            where[k] = len(out)
            out.append(_deepcopy(item))
    return out


def _apply(rule: Rule, old: Any, new: Any) -> Any:
    match rule.strategy:
        case Strategy.REPLACE:
            return _deepcopy(new)
        case Strategy.UNION:
            return _union(list(old or []), list(new))
        case Strategy.UNION_DEDUP:
            return _union_dedup(list(old or []), list(new))
        case Strategy.DEEP_MERGE:
            return _deep_merge(old if old is not None else {}, new)
        case Strategy.UPSERT:
            assert rule.key is not None
            return _upsert(list(old or []), list(new), rule.key)
        case Strategy.RECENT:
            assert rule.keep is not None
            return _recent(list(old or []), list(new), rule.keep)


def _lookup(data: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


_RULE_PATHS = {rule.path for rule in MERGE_RULES}
_RULE_PARENTS = {rule.path.split(".")[0] for rule in MERGE_RULES if "." in rule.path}


def merge(
    state: Mapping[str, Any], update: Mapping[str, Any], *, now: datetime, new_session: bool
) -> dict[str, Any]:
    """`state` with `update` merged in by `MERGE_RULES`; neither argument is changed.

    A field absent from the update is untouched. Fields the seed does not define are
    replaced by the update's value (other tools may add them). `version`, `lastUpdated`
    and `sessionCount` are managed: `lastUpdated` becomes `now`, and `sessionCount` goes up
    by one when `new_session`. `project` in an update replaces the stored name.
    """
    result = _deepcopy(dict(state))
    for rule in MERGE_RULES:
        present, value = _lookup(update, rule.path)
        if not present:
            continue
        parent_path, _, leaf = rule.path.rpartition(".")
        parent = result.setdefault(parent_path, {}) if parent_path else result
        parent[leaf] = _apply(rule, parent.get(leaf), value)
    for key, value in update.items():
        if key in MANAGED or key in _RULE_PATHS:
            continue
        if key in _RULE_PARENTS and isinstance(value, dict):
            parent = result.setdefault(key, {})
            for sub, sub_value in value.items():
                if f"{key}.{sub}" not in _RULE_PATHS:
                    parent[sub] = _deepcopy(sub_value)
        elif key not in _RULE_PARENTS:
            result[key] = _deepcopy(value)
    result["lastUpdated"] = format_timestamp(now)
    result["sessionCount"] = int(result.get("sessionCount", 0)) + (1 if new_session else 0)
    _complete_items(result, now)
    return ordered(result)


#: What an item of a list field gets for a field llm-brain requires and the update left
#: out (or null): llm-brain's validator refuses the whole file otherwise. A decision's
#: `when` is the day of the save.
ITEM_DEFAULTS: dict[str, dict[str, Any]] = {
    "decisions": {"why": "", "when": None, "reversible": True},
    "keyFiles": {"role": ""},
    "knownIssues": {"workaround": "", "severity": "medium"},
}


def _complete_items(state: dict[str, Any], now: datetime) -> None:
    for field, defaults in ITEM_DEFAULTS.items():
        items = state.get(field)
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            for key, default in defaults.items():
                if item.get(key) is None:
                    item[key] = now.date().isoformat() if key == "when" else default


def ordered(state: Mapping[str, Any]) -> dict[str, Any]:
    """`state` with the seed's fields in the seed's order, missing ones filled in empty,
    and any other fields after them in the order they came."""
    template = empty_state("", datetime(2000, 1, 1))
    out: dict[str, Any] = {}
    for key, default in template.items():
        value = state.get(key, default)
        if isinstance(default, dict) and isinstance(value, dict):
            value = {**{k: value.get(k, v) for k, v in default.items()}, **value}
        out[key] = value
    for key, value in state.items():
        if key not in out:
            out[key] = value
    return out


def dumps(state: Mapping[str, Any]) -> str:
    """The file's text: two-space indent, UTF-8 as is (a lone surrogate escaped), a final
    newline."""
    from ..jsonfile import dumps as json_text

    return json_text(state, indent=2) + "\n"


def loads(data: bytes, path: Path) -> dict[str, Any]:
    """Read brain.json. Raises `CorruptFileError` when the bytes are not JSON (naming the
    file and line) or the document breaks the schema (naming the file, the line where
    the field starts, when it can be found, and the field); the file is never rewritten
    in that state."""
    from ..jsonfile import JSONTextError, decode
    from ..jsonfile import loads as read_json

    data = data.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark some editors add
    conflicts.check(data, path)  # a merge's markers are never read as content
    try:
        text = decode(data)
        document = read_json(text)
    except JSONTextError as exc:
        raise CorruptFileError(path, exc.detail, exc.line) from None
    try:
        validate(document, "brain.json")
    except StateError as exc:
        # Imported here: the scan runs only when an error is reported.
        from .positions import value_line

        field_line = value_line(text, exc.field) if exc.field else None
        detail = str(exc).removeprefix("brain.json: ")
        raise CorruptFileError(path, detail, field_line) from None
    return ordered(document)


# -- what changed ---------------------------------------------------------------------

_MISSING: Any = object()


class Change(Value):
    """One difference between two states: `op` is add, remove or change.

    `item` is the merge key of the decision, key file or known issue the change is in
    (added, removed, or a field of it changed); it is not part of equality.
    """

    __slots__ = ("item", "new", "old", "op", "path")
    _fields = ("op", "path", "old", "new", "item")
    _compared = ("op", "path", "old", "new")
    op: str
    path: str
    old: Any
    new: Any
    item: str | None

    def __init__(
        self, op: str, path: str, old: Any = None, new: Any = None, item: str | None = None
    ) -> None:
        self._assign(op, path, old, new, item)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.path, "old": self.old, "new": self.new}

    def describe(self) -> str:
        """One line for people: ``+ decisions: Use PostgreSQL over MongoDB``."""
        mark = {"add": "+", "remove": "-", "change": "~"}[self.op]
        if self.op == "change":
            return f"{mark} {self.path}: {_brief(self.old)} -> {_brief(self.new)}"
        value = self.new if self.op == "add" else self.old
        key = KEYED_LISTS.get(self.path)
        if key and isinstance(value, dict) and key in value:
            value = value[key]  # an item is named by its merge key
        return f"{mark} {self.path}: {_brief(value)}"


def _brief(value: Any) -> str:
    if value == "" or value is None:
        return "(empty)"
    text = value if isinstance(value, str) else as_json(value)
    return text if len(text) <= 100 else text[:99] + "…"


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """What changed from `before` to `after`, apart from lastUpdated and sessionCount.
    Items of decisions, keyFiles and knownIssues are matched by their merge keys."""
    changes: list[Change] = []
    for key in dict.fromkeys([*before, *after]):
        if key not in ("lastUpdated", "sessionCount"):
            changes.extend(_diff(key, before.get(key, _MISSING), after.get(key, _MISSING)))
    return changes


def _diff(path: str, old: Any, new: Any, item: str | None = None) -> Iterator[Change]:
    if _same(old, new):
        return
    if old is _MISSING or new is _MISSING:
        yield Change(
            "add" if old is _MISSING else "remove",
            path,
            None if old is _MISSING else old,
            None if new is _MISSING else new,
            item,
        )
    elif isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*old, *new]):
            yield from _diff(f"{path}.{key}", old.get(key, _MISSING), new.get(key, _MISSING), item)
    elif path in KEYED_LISTS and isinstance(old, list) and isinstance(new, list):
        key = KEYED_LISTS[path]
        olds = {item.get(key): item for item in old if isinstance(item, dict)}
        news = {item.get(key): item for item in new if isinstance(item, dict)}
        for k in dict.fromkeys([*olds, *news]):
            if k not in olds:
                yield Change("add", path, None, news[k], _item_key(k))
            elif k not in news:
                yield Change("remove", path, olds[k], None, _item_key(k))
            else:
                yield from _diff(f"{path}[{k}]", olds[k], news[k], _item_key(k))
    elif isinstance(old, list) and isinstance(new, list):
        olds_set, news_set = {_canon(x) for x in old}, {_canon(x) for x in new}
        added = [x for x in new if _canon(x) not in olds_set]
        removed = [x for x in old if _canon(x) not in news_set]
        yield from (Change("add", path, None, x, item) for x in added)
        yield from (Change("remove", path, x, None, item) for x in removed)
        if not added and not removed:
            yield Change("change", path, old, new, item)  # same items, new order
    else:
        yield Change("change", path, old, new, item)


def _item_key(key: Any) -> str:
    return key if isinstance(key, str) else as_json(key)


# -- the value handed to Python callers -----------------------------------------------


class ProjectState(Record):
    """The project state: brain.json's document, read-only, with typed shortcuts.

    `data` has the file's own field names (camelCase); treat it as read-only.
    """

    data: Mapping[str, Any]

    @property
    def project(self) -> str:
        return str(self.data.get("project", ""))

    @property
    def session_count(self) -> int:
        return int(self.data.get("sessionCount", 0))

    @property
    def last_updated(self) -> str:
        return str(self.data.get("lastUpdated", ""))

    @property
    def facts(self) -> Mapping[str, Any]:
        return self.data["facts"]  # type: ignore[no-any-return]

    @property
    def decisions(self) -> list[dict[str, Any]]:
        return self.data["decisions"]  # type: ignore[no-any-return]

    @property
    def active_state(self) -> Mapping[str, Any]:
        return self.data["activeState"]  # type: ignore[no-any-return]

    @property
    def key_files(self) -> list[dict[str, Any]]:
        return self.data["keyFiles"]  # type: ignore[no-any-return]

    @property
    def known_issues(self) -> list[dict[str, Any]]:
        return self.data["knownIssues"]  # type: ignore[no-any-return]

    @property
    def preferences(self) -> Mapping[str, Any]:
        return self.data["preferences"]  # type: ignore[no-any-return]

    @property
    def next_steps(self) -> list[str]:
        return self.data["nextSteps"]  # type: ignore[no-any-return]

    def to_json(self) -> str:
        return dumps(self.data)

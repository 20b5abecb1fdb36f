"""The `brain` tool of seed 001, as one function: ``brain_tool(action, **params)``.

Actions: add, update, remove, list, decay, task_done, task_clear, reminder_run. Every
action returns a dict with ``ok`` and a ``message`` in the seed's wording
(``Removed learning a1b2c3d4: This repo uses pnpm not npm``), plus what it touched
(``entries``). The CLI's ``voyager-brain brain action=...`` and an MCP server are thin
wrappers around it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime

from ..config import Config, load_config
from ..errors import EntryError
from . import log, rank, schedule
from .store import PERSONAL, PROJECT, MemoryStore, Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ACTIONS = ("add", "update", "remove", "list", "decay", "task_done", "task_clear", "reminder_run")
#: The field whose text stands for an entry in messages.
_SUMMARY_FIELD = {
    "behavior": "text",
    "learning": "text",
    "preference": "text",
    "reminder": "text",
    "task": "description",
    "context": "content",
}
_TEXT_FIELDS = ("text", "description", "content", "value", "key", "path", "category", "project")
_CONTROL = ("action", "store", "verbose", "filter", "query", "reason", "result", "error")


def summary(entry: dict[str, Any]) -> str:
    """The text that stands for an entry in a message."""
    field = _SUMMARY_FIELD.get(str(entry.get("type")))
    if field:
        return str(entry.get(field, ""))
    if entry.get("type") in ("identity", "user", "meta"):
        return f"{entry.get('key')} = {entry.get('value')}"
    if entry.get("type") == "tombstone":
        return f"removes {entry.get('target_type')} {entry.get('target_id')}"
    return ""


def _line(entry: dict[str, Any]) -> str:
    return f"[{entry['type']} {entry['id']}] {summary(entry)}"


def _result(
    message: str, entries: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"ok": True, "message": message, "entries": entries or [], **extra}


def _bool(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise EntryError(f"{field}: expected true or false, got {value!r}")


def brain_tool(
    action: str,
    *,
    cwd: str = ".",
    clock: Callable[[], datetime] | None = None,
    config: Config | None = None,
    **params: Any,
) -> dict[str, Any]:
    """Run one action of the brain tool with the seed's parameters, as seen from `cwd`.

    Settings (decay thresholds, redaction, lock timeout) come from `config`, else from
    config.toml. Raises `EntryError` (a `BrainError`) with one line for a bad action or
    parameter.
    """
    store = MemoryStore(cwd, clock=clock)
    if config is None:
        config = load_config(store.top / ".voyager" if store.top else None)
    store.redact = config.redact_secrets
    store.lock_timeout = config.lock_timeout_seconds
    store.seed_personal()
    handlers: dict[str, Callable[[MemoryStore, dict[str, Any]], dict[str, Any]]] = {
        "add": _add,
        "update": _update,
        "remove": _remove,
        "list": _list,
        "task_done": _task_done,
        "task_clear": _task_clear,
        "reminder_run": _reminder_run,
    }
    if action == "decay":
        with store.exclusive():
            return _decay(store, config.decay_after_days, config.decay_min_score)
    handler = handlers.get(action)
    if handler is None:
        raise EntryError(f"action: expected one of {', '.join(ACTIONS)}, got {action!r}")
    if action == "list":
        return handler(store, params)
    # Read, check and write under the logs' locks, as the seed's tool does.
    with store.exclusive():
        return handler(store, params)


# -- add ------------------------------------------------------------------------------


def _new_entry(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    type_ = params.get("type")
    fields = {k: v for k, v in params.items() if k not in (*_CONTROL, "type", "id")}
    entry: dict[str, Any] = {"type": type_}
    if type_ == "task":
        entry |= {
            "description": None,
            "status": "pending",
            "priority": "normal",
            "due": None,
            "tags": [],
            "completedAt": None,
        }
    elif type_ == "reminder":
        entry |= {
            "text": None,
            "cadence": None,
            "enabled": True,
            "priority": "normal",
            "tags": [],
            "last_run": None,
            "next_due": None,
            "last_result": None,
            "last_error": None,
        }
    elif type_ == "learning":
        entry |= {"text": None, "source": "manual"}
    entry |= fields
    if "tags" in fields:
        entry["tags"] = schedule.normalize_tags(fields["tags"])
    if "cadence" in fields:
        entry["cadence"] = schedule.parse_cadence(fields["cadence"])
    if "enabled" in fields:
        entry["enabled"] = _bool(fields["enabled"], "enabled")
    if "priority" in fields and fields["priority"] not in schedule.PRIORITIES:
        allowed = ", ".join(schedule.PRIORITIES)
        raise EntryError(f"priority: expected one of {allowed}, got {fields['priority']!r}")
    entry["id"] = params.get("id") or log.new_id(entry)
    entry["created"] = store.now()
    return {"id": entry.pop("id"), **entry}


def _add(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    type_ = str(params.get("type", ""))
    target = store.store_for(type_, params.get("store"))
    entry = _new_entry(store, params)
    if type_ == "learning" and target == PROJECT and "scope" not in params:
        entry["scope"] = "project"
        entry["projectPath"] = str(store.top)
    log.validate(entry, f"add {type_}")
    snapshot = store.snapshot()
    if type_ in ("learning", "preference"):
        same_type = snapshot.state.live(type_)
        found = rank.check_duplicate(str(entry["text"]), same_type)
        if found.kind == "duplicate":
            return {
                "ok": False,
                "message": f"Duplicate {type_}: already stored",
                "entries": [found.existing],
            }
        if found.kind == "supersedes" and found.existing is not None:
            old = found.existing
            newer = {**old, "text": entry["text"], "updated": store.now()}
            written = store.write([newer], snapshot.origin.get(old["id"], target))
            # The reply says what was stored (redacted), never what was given.
            return _result(
                f"Updated {type_} {old['id']}: {summary(written[0])} (supersedes: {old['text']})",
                written,
                superseded=old,
            )
    key_field = log.NATURAL_KEYS.get(type_)
    if key_field is not None and "id" not in params:
        entry["id"] = _keyed_id(store, snapshot, entry, key_field, target)
    existed = entry["id"] in snapshot.state.entries
    if existed:
        entry["updated"] = entry["created"]
        entry["created"] = snapshot.state.entries[entry["id"]].get("created", entry["created"])
        if params.get("store") is None:  # updated where it is, unless a log is named
            target = snapshot.origin.get(entry["id"], target)
    written = store.write([entry], target)
    verb = "Updated" if existed else "Added"
    return _result(f"{verb} {type_} {entry['id']}: {summary(written[0])}", written, store=target)


def _keyed_id(
    store: MemoryStore, snapshot: Snapshot, entry: dict[str, Any], key_field: str, target: str
) -> str:
    """The id of a keyed entry (identity, user, meta, context): the one already stored
    under the same key, so that adding it again overwrites it as the seed says, else
    sha256 of the key. A context path bound for the project log counts relative to the
    repository top, as it is stored, so that every clone computes the same id."""
    type_, value = str(entry["type"]), entry[key_field]
    stored = wanted = value
    if target == PROJECT and key_field == log.PATH_FIELDS.get(type_) and store.top:
        stored = store.project_path(value)  # as the project log keeps it
        # Live project entries hold their paths resolved against this clone's top.
        wanted = os.path.normpath(os.path.join(store.top, stored))
    for live in snapshot.state.live(type_):
        if live.get(key_field) in (value, wanted):
            return str(live["id"])
    return log.deterministic_id(type_, stored)


# -- update / remove ------------------------------------------------------------------


def _find(store: MemoryStore, params: dict[str, Any]) -> tuple[dict[str, Any], str]:
    snapshot = store.snapshot()
    entry_id = params.get("id")
    if entry_id is not None:
        entry = snapshot.state.entries.get(str(entry_id))
        if entry is None:
            raise EntryError(f"id: no entry {entry_id!r} in the memory logs")
        return entry, snapshot.origin[entry["id"]]
    type_ = params.get("type")
    key_field = log.NATURAL_KEYS.get(str(type_))
    if key_field is None or key_field not in params:
        raise EntryError(
            "remove needs id=..., or type= with its natural key "
            "(identity/user/meta: key=..., context: path=...)"
        )
    wanted = str(params[key_field])
    for entry in snapshot.state.live(str(type_)):
        if entry.get(key_field) == wanted:
            return entry, snapshot.origin[entry["id"]]
    raise EntryError(f"{key_field}: no {type_} entry with {key_field} {wanted!r}")


def _update(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    if "id" not in params:
        raise EntryError("update needs id=...")
    entry, origin = _find(store, params)
    changes = {k: v for k, v in params.items() if k not in (*_CONTROL, "id", "type", "created")}
    if "tags" in changes:
        changes["tags"] = schedule.normalize_tags(changes["tags"])
    if "cadence" in changes:
        changes["cadence"] = schedule.parse_cadence(changes["cadence"])
    if "enabled" in changes:
        changes["enabled"] = _bool(changes["enabled"], "enabled")
    updated = {**entry, **changes, "updated": store.now()}
    log.validate(updated, f"update {entry['id']}")
    written = store.write([updated], origin)
    return _result(f"Updated {entry['type']} {entry['id']}: {summary(written[0])}", written)


def _tombstone(store: MemoryStore, entry: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        "id": log.random_id(),
        "type": "tombstone",
        "target_id": entry["id"],
        "target_type": entry["type"],
        "reason": reason,
        "created": store.now(),
    }


def _remove(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    entry, origin = _find(store, params)
    tomb = _tombstone(store, entry, str(params.get("reason") or "removed"))
    store.write([tomb], origin)
    return _result(f"Removed {entry['type']} {entry['id']}: {summary(entry)}", [entry])


# -- list -----------------------------------------------------------------------------


def _list(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    entries = store.snapshot().state.live(params.get("type"))
    if params.get("filter"):
        entries = [e for e in entries if schedule.matches_filter(e, str(params["filter"]))]
    query = str(params.get("query") or "").casefold()
    if query:
        entries = [
            e for e in entries if any(query in str(e.get(f, "")).casefold() for f in _TEXT_FIELDS)
        ]
    verbose = _bool(params.get("verbose", False), "verbose")
    if verbose:
        lines = [json.dumps(e, ensure_ascii=False) for e in entries]
    else:
        lines = [_line(e) for e in entries]
    message = "\n".join(lines) if lines else "No entries found"
    return _result(message, entries)


# -- decay, tasks, reminders ----------------------------------------------------------


def _decay(store: MemoryStore, after_days: int, min_score: int) -> dict[str, Any]:
    # The view, not a snapshot: decay runs at session start, whose context reads the
    # same view next (its fold is not copied, and the tombstones are applied as lines).
    view = store.view()
    stale = view.stale_learnings(store.clock(), str(store.cwd), after_days, min_score)
    for name in (PERSONAL, PROJECT):
        tombs = [_tombstone(store, e, "decay") for e in stale if view.origin(e["id"]) == name]
        if tombs:
            store.write(tombs, name)
    noun = "learning" if len(stale) == 1 else "learnings"
    return _result(f"Decayed {len(stale)} {noun}", stale)


def _task_done(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    entry, origin = _find(store, {"id": params.get("id")} if "id" in params else {})
    if entry["type"] != "task":
        raise EntryError(f"id: {entry['id']} is a {entry['type']}, not a task")
    done = {**schedule.complete_task(entry, store.clock()), "updated": store.now()}
    written = store.write([done], origin)
    return _result(f"Completed task {entry['id']}: {summary(entry)}", written)


def _task_clear(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    snapshot = store.snapshot()
    done = [e for e in snapshot.state.live("task") if e.get("status") == "done"]
    for name in (PERSONAL, PROJECT):
        tombs = [
            _tombstone(store, e, "task_clear") for e in done if snapshot.origin[e["id"]] == name
        ]
        if tombs:
            store.write(tombs, name)
    noun = "task" if len(done) == 1 else "tasks"
    return _result(f"Cleared {len(done)} completed {noun}", done)


def _reminder_run(store: MemoryStore, params: dict[str, Any]) -> dict[str, Any]:
    if "id" not in params or "result" not in params:
        raise EntryError("reminder_run needs id=... and result=ok|error|skipped")
    entry, origin = _find(store, {"id": params["id"]})
    if entry["type"] != "reminder":
        raise EntryError(f"id: {entry['id']} is a {entry['type']}, not a reminder")
    ran = schedule.record_run(entry, str(params["result"]), store.clock(), params.get("error"))
    written = store.write([{**ran, "updated": store.now()}], origin)
    note = f" ({params['error']})" if params.get("error") else ""
    return _result(
        f"Recorded {params['result']} for reminder {entry['id']}: {summary(entry)}{note}; "
        f"next due {ran.get('next_due')}",
        written,
    )

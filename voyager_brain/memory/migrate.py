"""Bringing in a legacy memory folder: separate core, memory, context and tasks files.

Older rho installs kept ``core.jsonl``, ``memory.jsonl``, ``context.jsonl`` and
``tasks.jsonl`` side by side. `migrate` folds them into the personal log, once: a meta
entry (``legacy_migration``) marks it done, and the legacy files are never changed. It
only runs when asked (``voyager-brain memory migrate DIR``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..errors import EntryError
from . import log
from .lines import parse_objects
from .store import PERSONAL, MemoryStore

LEGACY_FILES = ("core.jsonl", "memory.jsonl", "context.jsonl", "tasks.jsonl")
MARKER_KEY = "legacy_migration"


@dataclasses.dataclass(frozen=True, slots=True)
class MigrationReport:
    imported: int
    bad_lines: int
    files: tuple[str, ...]


def _infer_type(entry: dict[str, Any], filename: str) -> str | None:
    """The type of a legacy line that does not say it, from its file and fields."""
    if filename == "tasks.jsonl":
        return "task"
    if filename == "context.jsonl":
        return "context"
    if filename == "core.jsonl":
        if entry.get("category") in ("do", "dont", "value"):
            return "behavior"
        return "identity" if "key" in entry else None
    if filename == "memory.jsonl":
        return "preference" if "category" in entry else "learning"
    return None


def migrate(store: MemoryStore, folder: Path) -> MigrationReport:
    """Append the legacy files' entries to the personal log and mark it done.

    Raises `EntryError` when the folder holds none of the legacy files, or when the
    migration already ran.
    """
    present = [name for name in LEGACY_FILES if (folder / name).is_file()]
    if not present:
        raise EntryError(f"{folder}: none of {', '.join(LEGACY_FILES)} found")
    # The marker is checked and written under the logs' locks: two runs at once would
    # both find it missing and bring everything in twice.
    with store.exclusive():
        return _migrate(store, folder, present)


def _migrate(store: MemoryStore, folder: Path, present: list[str]) -> MigrationReport:
    marker_id = log.deterministic_id("meta", MARKER_KEY)
    if marker_id in store.snapshot().state.entries:
        raise EntryError(
            f"{store.personal}: the legacy memory was already migrated "
            f"(meta {MARKER_KEY}); remove that entry to run it again"
        )
    now = store.now()
    lines: list[dict[str, Any]] = []
    bad = 0
    for name in present:
        raw, skipped = parse_objects((folder / name).read_bytes())
        bad += skipped
        for entry in raw:
            entry = dict(entry)
            type_ = entry.get("type") or _infer_type(entry, name)
            if type_ is None:
                bad += 1
                continue
            entry["type"] = type_
            entry.setdefault("created", now)
            entry.setdefault("id", log.new_id(entry))
            try:
                log.validate(entry, f"{folder / name}")
            except EntryError:
                bad += 1
                continue
            lines.append(entry)
    lines.append(
        {
            "id": marker_id,
            "type": "meta",
            "key": MARKER_KEY,
            "value": f"{len(lines)} entries from {folder}",
            "created": now,
        }
    )
    store.write(lines, PERSONAL)
    return MigrationReport(len(lines) - 1, bad, tuple(present))

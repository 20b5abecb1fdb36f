"""What the ways in (the command line, the MCP server) do with the session brain and the
project state, as the data they report: the status at a glance (`voyager-brain status
--json`), an entry added (`add --json`), a partial brain.json saved with what changed
(`save --json`). Each interface checks its own arguments, in its own words, first."""

from __future__ import annotations

from .. import repo
from ..state.brainjson import Change, diff
from ..timestamps import format_timestamp
from ..value import Record
from .manager import BrainManager
from .model import ENTRY_TYPES, BrainEntry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# -- status -------------------------------------------------------------------------------


def status_report(bm: BrainManager) -> dict[str, Any]:
    """Everything `voyager-brain status` shows, as plain data (what ``--json`` prints):
    brain.md against its compaction budget, entries by type, git, and `state_summary`."""
    state = bm.load()
    by_type = dict.fromkeys(ENTRY_TYPES, 0)
    for entry in state.entries:
        by_type[entry.type] += 1
    status = bm.get_status()
    tokens = -(-len(state.content) // bm.config.chars_per_token)
    budget = bm.config.compact_budget_tokens
    return {
        "path": str(status.path),
        "exists": status.path.exists(),
        "project": bm.project,
        "branch": repo.current_branch(bm.top),
        "size_bytes": status.size_bytes,
        "tokens": tokens,
        "budget_tokens": budget,
        "budget_used": round(tokens / budget, 3),
        "entries": {"total": status.entry_count, **by_type},
        "last_updated": format_timestamp(state.last_updated) if state.last_updated else None,
        "last_compaction": (
            format_timestamp(status.last_compaction) if status.last_compaction else None
        ),
        "uncommitted": repo.brain_files_dirty(bm.top),
        "state": state_summary(bm),
        # ``file: key``: command keys of an untrusted config.toml (`voyager-brain trust`).
        "ignored_keys": list(bm.config.ignored_keys),
    }


def state_summary(bm: BrainManager) -> dict[str, Any]:
    """brain.json at a glance: items per section, open blockers, key files gone missing."""
    st = bm.state
    return {
        "path": str(bm.state_path),
        "exists": bm.state_path.exists(),
        "session_count": st.session_count,
        "last_updated": st.last_updated,
        "counts": {
            "stack": len(st.facts.get("stack", [])),
            "custom_facts": len(st.facts.get("custom", [])),
            "decisions": len(st.decisions),
            "in_progress": len(st.active_state.get("inProgress", [])),
            "key_files": len(st.key_files),
            "known_issues": len(st.known_issues),
            "next_steps": len(st.next_steps),
        },
        "current_goal": st.active_state.get("currentGoal") or None,
        "blockers": list(st.active_state.get("blockers", [])),
        "missing_key_files": [f["path"] for f in st.key_files if not (bm.top / f["path"]).exists()],
    }


# -- an entry added to brain.md -----------------------------------------------------------


class EntryAdded(Record):
    """An entry added to brain.md: whether it is new, the file, and the entry as stored
    (redacted; when it was already there, that earlier copy)."""

    added: bool
    path: Path
    entry: BrainEntry

    def to_dict(self) -> dict[str, Any]:
        """What `voyager-brain add --json` prints."""
        return {"added": self.added, "path": str(self.path), "entry": self.entry.to_dict()}


def add_entry(bm: BrainManager, entry_type: str, text: str, source: str | None) -> EntryAdded:
    """Add an entry of `entry_type` stamped now to brain.md and save it."""
    bm.load()
    count = len(bm.entries)
    stamped = BrainEntry(type=entry_type, content=text, timestamp=bm.clock(), source=source)
    bm.update(stamped)
    added = len(bm.entries) > count
    # The stored entry (redacted); when it was already there, that earlier copy.
    entry = next(
        e
        for e in reversed(bm.entries)
        if (e.type, e.timestamp) == (stamped.type, stamped.timestamp)
    )
    bm.persist()
    return EntryAdded(added, bm.path, entry)


# -- a partial brain.json saved -----------------------------------------------------------


class StateSaved(Record):
    """A partial brain.json merged and saved: what changed, the fields brain.json does
    not define (as the caller's validation found them), and the state's counters after."""

    changes: tuple[Change, ...]
    unknown_fields: list[str]
    session_count: int
    last_updated: str

    def to_dict(self) -> dict[str, Any]:
        """What `voyager-brain save --json` prints."""
        return {
            "changes": [c.to_dict() for c in self.changes],
            "unknown_fields": self.unknown_fields,
            "session_count": self.session_count,
            "last_updated": self.last_updated,
        }


def save_state(bm: BrainManager, update: Any, unknown: list[str]) -> StateSaved:
    """Merge `update` (a partial brain.json, already validated: `unknown` are its fields
    brain.json does not define) into the project state by the per-field rules, write it,
    and tell what changed."""
    bm.load()
    before = bm.state.data
    changes = diff(before, bm.merge_state(update).data)
    bm.persist()
    final = bm.state
    return StateSaved(tuple(changes), unknown, final.session_count, final.last_updated)

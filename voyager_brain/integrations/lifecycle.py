"""Seed 002's lifecycle behind every agent's hooks, in agent-neutral terms.

==============  ===============================================================
action          what it does
==============  ===============================================================
session_start   load; decay stale learnings once a day; the budgeted context
                (cached for the next start)
turn_end        a loop_status entry for the turn (turn number, session, files
                changed, the last reply); persist; auto-memory (detached, once a
                minute at most)
compact         compact brain.md; auto-memory from the transcript (detached)
session_end     persist; count the session in brain.json; refresh the exports
                `auto_export` names; commit the brain files when `auto_commit` is
                on; auto-memory (detached)
==============  ===============================================================

A session is the agent's own session id: its turns are counted in
``.voyager/cache/sessions.json`` (ignored by git), and brain.json's sessionCount goes up
once per session. Automatic compaction waits for a compaction hook or the session's end.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .. import repo, storage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .hookio import HookCall, Limit


def _manager(cwd: str, auto_compact: bool = False) -> Any:
    from ..config import Config, load_config
    from ..session.manager import BrainManager

    where = Path(cwd)
    top = repo.find_top(where) or where
    config: Config = load_config(top / ".voyager")
    if not auto_compact:
        config = config._replace(auto_compact=False)
    return BrainManager(where, config=config)


def _session_record(
    voyager_dir: Path, session_id: str, change: Callable[[dict[str, Any]], Any]
) -> Any:
    """Apply `change` to this session's record in the cache, under its lock; return
    what `change` returns."""
    path = voyager_dir / "cache" / "sessions.json"
    with storage.locked(path):
        try:
            sessions = json.loads(storage.read_bytes(path) or b"")
        except ValueError:
            sessions = {}
        record = sessions.setdefault(session_id, {"turns": 0, "counted": False})
        result = change(record)
        storage.atomic_write(path, json.dumps(sessions, indent=1).encode())
    return result


def _next_turn(record: dict[str, Any]) -> int:
    record["turns"] += 1
    return int(record["turns"])


#: Auto-memory after a turn runs at most this often per session (turns come fast; each
#: pass reads the whole transcript). Compaction and session end always run it.
EXTRACT_EVERY_SECONDS = 60


def _extraction_due(record: dict[str, Any]) -> bool:
    import time

    now = time.time()
    if now - float(record.get("extracted_at", 0)) < EXTRACT_EVERY_SECONDS:
        return False
    record["extracted_at"] = now
    return True


def _first_count(record: dict[str, Any]) -> bool:
    first = not record["counted"]
    record["counted"] = True
    return first


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _daily_decay(bm: Any) -> None:
    """Decay stale learnings at the first session start of the day. Housekeeping: where
    it cannot write (a read-only checkout, a full disk) the start goes on without it,
    says so on stderr, and the next start tries again."""
    from ..memory.store import MemoryStore
    from ..memory.tool import brain_tool

    if MemoryStore(bm.root, clock=bm.clock).decay_due():
        try:
            brain_tool("decay", cwd=str(bm.root), clock=bm.clock, config=bm.config)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"voyager-brain: decay skipped: {where}{exc.strerror or exc}", file=sys.stderr)


def session_start(call: HookCall, limit: Limit | None = None) -> str:
    """The context to inject, built and cached for the next start (`hooks` serves a
    start from the cache when nothing changed), within `limit`: what the agent keeps
    whole."""
    from ..context import cache as context_cache
    from ..memory import cache as fold_cache

    # The fold caches are written after the output is out (`__main__` flushes them).
    fold_cache.defer_saves()
    bm = _manager(call.cwd)
    _daily_decay(bm)
    before = context_cache.fingerprint(bm.root, None)
    doc = bm.context_document(explain=False)
    context_cache.store(bm.root, None, before, doc.text, doc.valid_until, doc.paths_checked)
    text = str(doc.text)
    # A smaller budget until the document fits: its own cost, scaled down (the budget
    # counts four characters a token; must-know lines may go past it).
    for _ in range(3):
        if limit is None or limit.holds(text):
            return text
        size = limit.measure(text)
        budget = max(50, len(text) // 4 * limit.size * 9 // (size * 10))
        text = str(bm.context_document(budget, explain=False).text)
    if limit is not None and not limit.holds(text):  # must-know lines alone go past it
        note = f"\n(cut to the {limit.size:,} {limit.unit} this agent keeps)\n"
        while text and not limit.holds(text + note):
            text = text[: text.rfind("\n", 0, len(text) - 1) + 1]
        text = text.rstrip("\n") + note
    return text


def turn_end(call: HookCall, source: str) -> None:
    """A loop_status entry for the turn; `source` names the agent in it."""
    bm = _manager(call.cwd)
    if not bm.voyager_dir.is_dir():
        return  # not a voyager-brain project: nothing to record
    session = call.session or "unknown"
    turn = _session_record(bm.voyager_dir, session, _next_turn)
    lines = [f"Turn: {turn}", f"Session: {session}"]
    changed = [p for p in repo.changed_files(bm.top) if not p.startswith(".voyager/")]
    if changed:
        shown = ", ".join(changed[:10]) + (
            f" (+{len(changed) - 10} more)" if len(changed) > 10 else ""
        )
        lines.append(f"Files changed: {shown}")
    if call.reply:
        reply: str | None = call.reply
    else:  # read from the agent's log: its readers are imported only then
        from ..transcripts import last_reply

        reply = last_reply(call.transcript)
    if reply:
        lines.append(f"Last reply: {_one_line(reply)}")
    from ..session.model import BrainEntry

    bm.load()
    bm.update(BrainEntry("loop_status", "\n".join(lines), source=source))
    bm.persist()
    if _session_record(bm.voyager_dir, session, _extraction_due):
        _extract_detached(bm, call.transcript)


def compact(call: HookCall) -> None:
    bm = _manager(call.cwd, auto_compact=True)
    if bm.voyager_dir.is_dir():
        bm.load()
        bm.compact()
        # What the agent is about to forget: the transcript before its compaction.
        _extract_detached(bm, call.transcript)


def compact_due(call: HookCall) -> None:
    """Before a compaction that may not happen (Gemini CLI's PreCompress comes before
    every request): brain.md compacted only when over its budget, as any save compacts
    it, and auto-memory from the transcript at most once a minute, as after a turn."""
    bm = _manager(call.cwd, auto_compact=True)
    if not bm.voyager_dir.is_dir():
        return
    bm.load()
    bm.persist()
    if _session_record(bm.voyager_dir, call.session or "unknown", _extraction_due):
        _extract_detached(bm, call.transcript)


def session_end(call: HookCall) -> None:
    bm = _manager(call.cwd, auto_compact=True)
    if not bm.voyager_dir.is_dir():
        return
    bm.load()
    if _session_record(bm.voyager_dir, call.session or "unknown", _first_count):
        bm.merge_state({})  # counts this session once in brain.json
    bm.persist()
    try:
        if bm.config.auto_export:
            _refresh_exports(bm)
        if bm.config.auto_commit:
            from ..git.autocommit import commit_brain_files

            commit_brain_files(bm.top)
    finally:
        _extract_detached(bm, call.transcript)


def _refresh_exports(bm: Any) -> None:
    """The exports config.toml names (`auto_export`), before the brain files are
    committed; the hook fails open, so a bad name or broken markers are one line each."""
    from ..context.exports import TARGETS, export
    from ..errors import BrainError

    context = None
    for target in (t.strip() for t in bm.config.auto_export.split(",")):
        if not target:
            continue
        if target not in TARGETS:
            sys.stderr.write(f"voyager-brain: auto_export: unknown target {target!r}\n")
            continue
        try:
            context = context if context is not None else bm.context()
            export(bm.top, target, context)
        except BrainError as exc:
            sys.stderr.write(f"voyager-brain: auto_export: {exc}\n")


def _extract_detached(bm: Any, transcript: str | None) -> None:
    """Auto-memory in a detached process: agents kill slow session-end hooks."""
    import subprocess

    from ..memory.extract import enabled

    if not enabled(bm.config) or not transcript or not os.path.isfile(transcript):
        return
    subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", "memory", "extract", transcript],
        cwd=bm.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

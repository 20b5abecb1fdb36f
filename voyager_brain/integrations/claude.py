"""Claude Code lifecycle hooks: ``voyager-brain hook claude EVENT``.

=============  ==================  ============================================
hook event     seed 002 lifecycle  what it does
=============  ==================  ============================================
SessionStart   session_start       load(); print the context as additionalContext
Stop           turn_end            update() with a loop_status entry; persist();
                                   auto-memory (detached, once a minute at most)
PreCompact     session_compact     compact(); auto-memory (detached)
SessionEnd     session_end         persist(); count the session in brain.json;
                                   refresh the exports auto_export names; commit
                                   the brain files when auto_commit is on;
                                   auto-memory (detached)
=============  ==================  ============================================

The tool-call events (PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit:
the guard rules and the session history of seed 003) are in `claude_guard`; Stop and
SessionEnd also close the session there.

Each hook is its own process, reading the hook's JSON from stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``). A session is Claude Code's
``session_id``: its turns are counted in ``.voyager/cache/sessions.json`` (ignored by
git), and brain.json's sessionCount goes up once per session. Automatic compaction waits
for PreCompact or the session's end.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from .. import repo, storage
from . import claude_guard
from .cached import session_start_output
from .hookio import HookInputError, read_payload

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


EVENTS = {
    "session-start": "SessionStart",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
__all__ = ["EVENTS", "HANDLERS", "HookInputError", "read_payload", "run"]
SOURCE = "claude-code"


def _manager(payload: Mapping[str, Any], auto_compact: bool = False) -> Any:
    from ..config import Config, load_config
    from ..session.manager import BrainManager

    cwd = Path(str(payload.get("cwd") or os.getcwd()))
    top = repo.find_top(cwd) or cwd
    config: Config = load_config(top / ".voyager")
    if not auto_compact:
        config = config._replace(auto_compact=False)
    return BrainManager(cwd, config=config)


def _sessions_file(voyager_dir: Path) -> Path:
    return voyager_dir / "cache" / "sessions.json"


def _session_record(
    voyager_dir: Path, session_id: str, change: Callable[[dict[str, Any]], Any]
) -> Any:
    """Apply `change` to this session's record in the cache, under its lock; return
    what `change` returns."""
    path = _sessions_file(voyager_dir)
    with storage.locked(path):
        try:
            sessions = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
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


def last_assistant_text(payload: Mapping[str, Any]) -> str | None:
    """The last assistant message: from the payload when given, else the transcript."""
    given = payload.get("last_assistant_message")
    if isinstance(given, str) and given.strip():
        return given
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        f.seek(0, 2)
        f.seek(max(0, f.tell() - 256_000))  # the tail holds the last message
        lines = f.read().split(b"\n")
    for raw in reversed(lines):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                c.get("text", "")
                for c in content
                if isinstance(c, dict) and c.get("type") == "text"
            ]
            if any(texts):
                return "\n".join(texts)
    return None


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _daily_decay(bm: Any) -> None:
    """Decay stale learnings at the first session start of the day."""
    from ..memory.store import MemoryStore
    from ..memory.tool import brain_tool

    if MemoryStore(bm.root, clock=bm.clock).decay_due():
        brain_tool("decay", cwd=str(bm.root), clock=bm.clock, config=bm.config)


# -- the four hooks -------------------------------------------------------------------


def session_start(payload: Mapping[str, Any], out: TextIO) -> None:
    from ..context import cache as context_cache

    bm = _manager(payload)
    _daily_decay(bm)
    before = context_cache.fingerprint(bm.root, None)
    doc = bm.context_document(explain=False)
    context_cache.store(bm.root, None, before, doc.text, doc.valid_until, doc.paths_checked)
    out.write(session_start_output(doc.text))


def stop(payload: Mapping[str, Any], out: TextIO) -> None:
    bm = _manager(payload)
    if not bm.voyager_dir.is_dir():
        return  # not a voyager-brain project: nothing to record
    session = str(payload.get("session_id") or "unknown")
    turn = _session_record(bm.voyager_dir, session, _next_turn)
    lines = [f"Turn: {turn}", f"Session: {session}"]
    changed = [p for p in repo.changed_files(bm.top) if not p.startswith(".voyager/")]
    if changed:
        shown = ", ".join(changed[:10]) + (
            f" (+{len(changed) - 10} more)" if len(changed) > 10 else ""
        )
        lines.append(f"Files changed: {shown}")
    reply = last_assistant_text(payload)
    if reply:
        lines.append(f"Last reply: {_one_line(reply)}")
    from ..session.model import BrainEntry

    bm.load()
    bm.update(BrainEntry("loop_status", "\n".join(lines), source=SOURCE))
    bm.persist()
    if _session_record(bm.voyager_dir, session, _extraction_due):
        _extract_detached(bm, payload.get("transcript_path"))


def pre_compact(payload: Mapping[str, Any], out: TextIO) -> None:
    bm = _manager(payload, auto_compact=True)
    if bm.voyager_dir.is_dir():
        bm.load()
        bm.compact()
        # What the agent is about to forget: the transcript before its compaction.
        _extract_detached(bm, payload.get("transcript_path"))


def session_end(payload: Mapping[str, Any], out: TextIO) -> None:
    bm = _manager(payload, auto_compact=True)
    if not bm.voyager_dir.is_dir():
        return
    bm.load()
    session = str(payload.get("session_id") or "unknown")
    if _session_record(bm.voyager_dir, session, _first_count):
        bm.merge_state({})  # counts this session once in brain.json
    bm.persist()
    try:
        if bm.config.auto_export:
            _refresh_exports(bm)
        if bm.config.auto_commit:
            from ..git.autocommit import commit_brain_files

            commit_brain_files(bm.top)
    finally:
        _extract_detached(bm, payload.get("transcript_path"))


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


def _extract_detached(bm: Any, transcript: Any) -> None:
    """Auto-memory in a detached process: agents kill slow session-end hooks."""
    import subprocess

    from ..memory.extract import enabled

    if not enabled(bm.config) or not isinstance(transcript, str):
        return
    if not os.path.isfile(transcript):
        return
    subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", "memory", "extract", transcript],
        cwd=bm.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


HANDLERS: dict[str, Callable[[Mapping[str, Any], TextIO], None]] = {
    "session-start": session_start,
    "stop": stop,
    "pre-compact": pre_compact,
    "session-end": session_end,
}


def run(
    event: str, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr
) -> int:
    """Run one hook. Always returns 0: a hook must never break the agent."""
    if event in claude_guard.EVENTS:
        return claude_guard.run(event, stdin, stdout, stderr)
    try:
        handler = HANDLERS.get(event)
        if handler is None:
            known = ", ".join([*EVENTS, *claude_guard.EVENTS])
            raise HookInputError(f"unknown event {event!r}; expected one of {known}")
        payload = read_payload(stdin)
    except Exception as exc:  # any failure: one line on stderr, never a broken agent
        _report(event, exc, stderr)
        return 0
    try:
        handler(payload, stdout)
    except Exception as exc:
        _report(event, exc, stderr)
    if event in ("stop", "session-end"):
        # The session in the history (seed 003) ends, whatever happened to brain.md.
        try:
            from .claude_guard import close_session

            close_session(payload, "completed")
        except Exception as exc:
            _report(event, exc, stderr)
    return 0


def _report(event: str, exc: BaseException, stderr: TextIO) -> None:
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    stderr.write(f"voyager-brain hook claude {event}: {message}\n")

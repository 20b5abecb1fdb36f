"""Importing a Claude Code transcript (a session's JSON-lines file) into history.db.

Claude Code writes one JSON object per line to
``~/.claude/projects/<folder>/<session id>.jsonl``. The import reads the ``user`` and
``assistant`` entries and writes the same rows the hooks write as a session runs
(`record`'s conventions), so hooks and import fill one history whichever comes first:

- an ``assistant`` entry is one ``assistant`` message (its text blocks; thinking is
  left out, and an entry with neither text nor a tool call is skipped), and each
  ``tool_use`` block one tool call (``tool_calls.external_id`` = the block's ``id``);
- a ``user`` entry whose content is text is the user's prompt: one ``user`` message, and
  the session's task when it has none;
- a ``user`` entry carrying ``tool_result`` blocks is not a message: each result goes on
  the tool call of the same ``tool_use_id`` (output redacted and cut, ``is_error`` gives
  ``success`` 0), unless that call already has an output (the PostToolUse hook, or an
  earlier import, recorded it);
- skipped: every other entry type (``summary``, ``system``, ``file-history-snapshot``,
  ``queue-operation``, ...), and user text that Claude Code wrote rather than the user:
  ``isMeta`` entries, compaction summaries, subagent prompts (``isSidechain``), slash
  command and ``!`` shell wrappers (``<command-name>``, ``<local-command-stdout>``, ...);
- a line that is not a JSON object with a usable ``message`` is counted as bad (a torn
  last line of a transcript still being written is one); the import goes on.

Every message carries its entry's ``uuid`` (``messages.external_id``): an entry already
imported is left alone, so importing a file twice, or a growing file again, adds
nothing. Rows the hooks wrote are adopted rather than written twice:

- an assistant entry whose tool call was recorded by the PreToolUse hook (under a
  placeholder message without an ``external_id``) takes over that placeholder: its
  ``external_id``, content and time become the entry's;
- a tool call found under another entry's message (the hook hung it under the latest
  message, which the transcript splits into one entry per content block) is moved under
  its own entry's message, so the rows end up as an import alone would write them;
- a tool call the hook recorded without the transcript's id (Gemini CLI and Copilot
  give their hooks no id, Cursor's transcripts have none) is found by its tool and
  input: the session's oldest under a placeholder (`hook_call`); it is moved under the
  entry's message, and takes the entry's id when it had none;
- a prompt adopts the session's oldest ``user`` message without an ``external_id`` and
  with the same stored (redacted) content.

The session is the entries' ``sessionId`` (else the file's name), in the project of the
first entry's ``cwd`` (its repository top); it starts at its first entry's time. A
session the import creates is ``completed`` at its last entry's time; one the hooks
created keeps the status they gave it.

The file is read line by line, in batches of about `BATCH_BYTES`. A batch is parsed,
and its tool outputs redacted, before its transaction begins; then it is written in one
transaction. No row is ever half-written, and the write lock is held only while rows
are written: the hooks, which write on every tool call with a few seconds' busy
timeout, get it between two batches. If an import fails part-way, what it committed
is complete, and importing the file again finishes it.

Standard library only.
"""

from __future__ import annotations

import os
import re
import sqlite3
from datetime import datetime

from .. import cjson, confine, transcripts
from ..errors import HistoryError
from ..value import Record
from . import record
from .db import sql_error, transaction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

#: A transcript is written in one transaction per this many bytes of it (about).
BATCH_BYTES = 1 << 20
#: At most this many values in one ``IN (...)`` (old SQLite builds allow 999).
IN_LIST = 500

_ISO_MILLIS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

#: The entry types that are conversation; everything else is skipped.
CONVERSATION = ("user", "assistant")
#: User text that Claude Code wrote itself, around slash commands and ``!`` commands.
WRAPPERS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)


class ImportReport(Record):
    """What importing one transcript did."""

    path: str
    #: The row id of the (first) session the entries belong to; None without entries.
    session: int | None = None
    #: The agent's id of that session.
    session_external_id: str | None = None
    lines: int = 0
    messages_added: int = 0
    #: Messages the hooks wrote (a prompt, a tool call's placeholder) that the import
    #: completed instead of adding another.
    messages_adopted: int = 0
    tool_calls_added: int = 0
    #: Tool calls the hooks had recorded, found by their tool-use id.
    tool_calls_adopted: int = 0
    results_recorded: int = 0
    #: Results whose call already had an output (from the hook or an earlier import).
    results_known: int = 0
    #: Results for a tool-use id the history does not know.
    results_unmatched: int = 0
    #: Entries whose uuid was already imported.
    entries_known: int = 0
    entries_skipped: int = 0
    bad_lines: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self._asdict())


def import_transcript(
    db: sqlite3.Connection,
    path: str,
    *,
    output_limit: int = record.OUTPUT_LIMIT,
    cwd: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch_bytes: int = BATCH_BYTES,
) -> ImportReport:
    """Import the Claude Code transcript at `path` (see the module's docstring).

    `cwd` is the working folder of a session whose entries name none (default: the
    current folder). `progress` is called with (bytes read, file size) after each
    transaction, one per `batch_bytes` of the file. Raises `HistoryError` for a file
    that cannot be read or a database that cannot be written (what was committed
    before stays, complete).
    """
    full = os.path.abspath(path)
    try:
        handle = confine.open_regular(full)  # closed below, after the loop
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read the transcript: {exc.strerror or exc}") from None
    database = str(db.execute("PRAGMA database_list").fetchone()[2] or "history.db")
    file_time = record.now(os.fstat(handle.fileno()).st_mtime)
    state = _Import(db, full, output_limit, cwd or os.getcwd(), file_time)
    try:
        with handle:
            total = os.fstat(handle.fileno()).st_size
            done = 0
            for read, batch in transcripts.batches(handle, batch_bytes, state.default_session):
                lines = state.prepare(batch)  # outside the transaction: slow
                with transaction(db):
                    state.write(lines)
                done += read
                if progress is not None:
                    progress(done, total)
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read the transcript: {exc.strerror or exc}") from None
    except sqlite3.Error as exc:
        raise sql_error(database, exc) from None
    return ImportReport(full, state.first_session, state.first_external_id, **state.counts)


def history_time(value: str) -> str | None:
    """An ISO 8601 UTC time (``2025-06-02T18:46:59.937Z``) as a history time
    (``2025-06-02 18:46:59.937``); None when it is not one."""
    # Claude Code writes milliseconds and Z; that form is rewritten in place (strptime
    # costs more than the rest of an entry's bookkeeping), any other goes the long way.
    if _ISO_MILLIS.fullmatch(value):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return None
        return f"{value[:10]} {value[11:23]}"
    moment = record.seconds(value)
    return None if moment is None else record.now(moment)


def _blocks(content: Any) -> list[dict[str, Any]] | None:
    """A message's content as blocks (a string is one text block); None when it is
    neither a string nor a list."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return None


def _text(blocks: list[dict[str, Any]]) -> str:
    parts = [
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n\n".join(part for part in parts if part.strip())


def _result_text(block: dict[str, Any]) -> str:
    """A tool result's content as text: a string as it is, text blocks joined, an image
    as ``[image]``."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, dict) and item.get("type"):
            parts.append(f"[{item['type']}]")
    return "\n".join(parts)


def _duration(entry: dict[str, Any]) -> int | None:
    """The tool's duration when Claude Code recorded one with the result."""
    result = entry.get("toolUseResult")
    if isinstance(result, dict):
        for key in ("durationMs", "totalDurationMs"):
            value = result.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                return int(value)
    return None


def _tool_use(block: dict[str, Any]) -> bool:
    name = block.get("name")
    return block.get("type") == "tool_use" and isinstance(name, str) and bool(name)


def _is_prompt(entry: dict[str, Any], text: str) -> bool:
    """Whether user text is what the user typed (see the module's docstring)."""
    if entry.get("isMeta") or entry.get("isCompactSummary") or entry.get("isSidechain"):
        return False
    if entry.get("isVisibleInTranscriptOnly"):
        return False
    return bool(text.strip()) and not text.lstrip().startswith(WRAPPERS)


class _Line(Record):
    """A conversation entry, parsed: ``assistant``, ``prompt``, ``results``, or ``skip``
    (an entry of the session that holds nothing to store)."""

    kind: str
    entry: dict[str, Any]
    uuid: str
    blocks: list[dict[str, Any]]
    #: For ``results``: the output to store per tool-use id, redacted and cut already
    #: (those whose call had an output when the batch was read are left out).
    outputs: dict[str, str]


class _Import:
    """The state of one import: counts, the sessions met, and per transaction what the
    hooks left to adopt."""

    def __init__(
        self, db: sqlite3.Connection, path: str, limit: int, cwd: str, file_time: str
    ) -> None:
        self.db = db
        self.path = path
        self.limit = limit
        self.cwd = cwd
        self.counts = {
            name: 0
            for name in ImportReport._fields
            if name not in ("path", "session", "session_external_id")
        }
        self.first_session: int | None = None
        self.first_external_id: str | None = None
        # The agent's session id -> row id.
        self.sessions: dict[str, int] = {}
        # Row id -> (first, last) entry time seen in this file.
        self.span: dict[int, tuple[str, str]] = {}
        self.default_session = os.path.splitext(os.path.basename(path))[0]
        self.last_session: str | None = None
        self.last_time = file_time
        # Per transaction: the entries already imported, a session's prompts from the
        # hook not adopted yet, by content, and the tool calls this transaction added
        # that have no result yet (tool-use id -> row id: their result needs no lookup).
        self.known: set[str] = set()
        self.prompts: dict[int, dict[str, list[int]]] = {}
        self.added_calls: dict[str, int] = {}
        # A session's calls the hooks hung under a placeholder, by tool and input.
        self.hooked: dict[int, dict[tuple[str, str | None], list[tuple[int, int, bool]]]] = {}

    # -- before the transaction: parsing, and redacting the outputs ----------------------

    def prepare(self, batch: list[bytes]) -> list[_Line]:
        lines = [line for raw in batch if (line := self.parse(raw)) is not None]
        wanted = [
            str(b["tool_use_id"])
            for line in lines
            if line.kind == "results"
            for b in line.blocks
            if b.get("type") == "tool_result" and b.get("tool_use_id")
        ]
        # Outputs the hooks (or an earlier import) recorded are not redacted again.
        recorded = self.existing(
            "SELECT external_id FROM tool_calls WHERE output IS NOT NULL AND external_id IN",
            wanted,
        )
        for line in lines:
            if line.kind != "results":
                continue
            for block in line.blocks:
                use_id = block.get("tool_use_id")
                if block.get("type") == "tool_result" and use_id and use_id not in recorded:
                    line.outputs[str(use_id)] = record.clean_output(_result_text(block), self.limit)
        return lines

    def parse(self, raw: bytes) -> _Line | None:
        """The entry on one line; None (counted) when it is blank, bad or not
        conversation."""
        self.counts["lines"] += 1
        if not raw.strip():
            return None
        try:
            entry = cjson.loads_bytes(raw)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, torn, nested too deep
            entry = None
        if isinstance(entry, dict) and b"\\u" in raw:
            from ..untrusted import may_hold_surrogates, scrub_json

            if may_hold_surrogates(raw.decode("utf-8", "replace")):
                # Ids and texts go into SQLite, which stores UTF-8 only: a lone
                # surrogate becomes U+FFFD, as it does from a hook's stdin.
                entry = scrub_json(entry)
        if not isinstance(entry, dict):
            self.counts["bad_lines"] += 1
            return None
        kind = entry.get("type")
        if kind not in CONVERSATION:
            self.counts["entries_skipped"] += 1
            return None
        message = entry.get("message")
        blocks = _blocks(message.get("content")) if isinstance(message, dict) else None
        uuid = entry.get("uuid")
        if blocks is None or not isinstance(uuid, str) or not uuid:
            self.counts["bad_lines"] += 1
            return None
        if kind == "assistant":
            said = _text(blocks) or any(_tool_use(b) for b in blocks)
            kind = "assistant" if said else "skip"  # thinking only, or an empty turn
        elif any(b.get("type") == "tool_result" for b in blocks):
            kind = "results"
        else:
            kind = "prompt" if _is_prompt(entry, _text(blocks)) else "skip"
        return _Line(kind, entry, uuid, blocks, {})

    def existing(self, query: str, ids: Iterable[str]) -> set[str]:
        """The ids `query` (``SELECT external_id ... IN``) finds, looked up in groups."""
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        for start in range(0, len(wanted), IN_LIST):
            group = wanted[start : start + IN_LIST]
            marks = ", ".join("?" * len(group))
            found.update(str(r[0]) for r in self.db.execute(f"{query} ({marks})", group))
        return found

    # -- in the transaction --------------------------------------------------------------

    def write(self, lines: list[_Line]) -> None:
        # A hook may have written since the last transaction: read its rows afresh.
        self.prompts.clear()
        self.added_calls.clear()
        self.hooked.clear()
        self.known = self.existing(
            "SELECT external_id FROM messages WHERE external_id IN",
            (line.uuid for line in lines if line.kind in ("assistant", "prompt")),
        )
        for line in lines:
            stamp = self.time_of(line.entry)
            session = self.session(line.entry, stamp)
            if line.kind == "skip":
                self.counts["entries_skipped"] += 1
            elif line.kind == "results":
                self.results(line)
            elif line.uuid in self.known:
                self.counts["entries_known"] += 1
            else:
                self.known.add(line.uuid)
                if line.kind == "assistant":
                    self.assistant(session, line, stamp)
                else:
                    self.prompt(session, line, stamp)
        for session, (first, last) in self.span.items():
            self.db.execute(
                "UPDATE sessions SET started_at = ? WHERE id = ?"
                " AND (started_at IS NULL OR started_at > ?)",
                (first, session, first),
            )
            self.db.execute(
                "UPDATE sessions SET ended_at = ? WHERE id = ? AND status != 'active'"
                " AND (ended_at IS NULL OR ended_at < ?)",
                (last, session, last),
            )

    def time_of(self, entry: dict[str, Any]) -> str:
        """The entry's time in the history's format; an entry without one takes the
        time of the one before (of the file, for the first), keeping the order."""
        value = entry.get("timestamp")
        if isinstance(value, str):
            stamp = history_time(value)
            if stamp is not None:
                self.last_time = stamp
        return self.last_time

    def session(self, entry: dict[str, Any], stamp: str) -> int:
        """The row id of the entry's session (added when new), its times noted."""
        external = entry.get("sessionId")
        if not isinstance(external, str) or not external:
            external = self.last_session or self.default_session
        self.last_session = external
        session = self.sessions.get(external)
        if session is None:
            session = self.sessions[external] = self.open_session(external, entry, stamp)
            if self.first_session is None:
                self.first_session, self.first_external_id = session, external
        first, last = self.span.get(session, (stamp, stamp))
        self.span[session] = (min(first, stamp), max(last, stamp))
        return session

    def open_session(self, external: str, entry: dict[str, Any], stamp: str) -> int:
        row = self.db.execute(
            "SELECT id FROM sessions WHERE external_id = ?", (external,)
        ).fetchone()
        if row is not None:
            # The hooks' session (its project is known): the transcript path is filled
            # in when they did not give it.
            return record.session_id(self.db, external, 0, transcript_path=self.path)
        cwd = entry.get("cwd")
        folder = cwd if isinstance(cwd, str) and cwd else self.cwd
        project = record.project_id(self.db, record.project_root(folder))
        assert project is not None  # created when missing
        session = record.session_id(
            self.db, external, project, transcript_path=self.path, started_at=stamp
        )
        # Nothing but the transcript says this session exists: it ended at its last
        # entry (`write` moves the end along as entries come).
        self.db.execute(
            "UPDATE sessions SET status = 'completed', ended_at = ? WHERE id = ?",
            (stamp, session),
        )
        return session

    def prompt(self, session: int, line: _Line, stamp: str) -> None:
        text = _text(line.blocks)
        stored = record.clean_message(text)
        waiting = self.hook_prompts(session).get(stored)
        if waiting:
            self.adopt(waiting.pop(0), line.uuid, stored, stamp)
            return
        record.add_message(self.db, session, "user", text, timestamp=stamp, external_id=line.uuid)
        self.counts["messages_added"] += 1

    def hook_prompts(self, session: int) -> dict[str, list[int]]:
        """The session's prompts written by the hook and not adopted yet, oldest first."""
        waiting = self.prompts.get(session)
        if waiting is None:
            waiting = {}
            for row in self.db.execute(
                "SELECT id, content FROM messages WHERE session_id = ? AND role = 'user'"
                " AND external_id IS NULL AND content IS NOT NULL ORDER BY timestamp, id",
                (session,),
            ):
                waiting.setdefault(row[1], []).append(int(row[0]))
            self.prompts[session] = waiting
        return waiting

    def adopt(self, message: int, uuid: str, content: str | None, stamp: str) -> None:
        # `content` is stored as given: it is redacted already.
        self.db.execute(
            "UPDATE messages SET external_id = ?, content = ?, timestamp = ? WHERE id = ?",
            (uuid, content, stamp, message),
        )
        self.counts["messages_adopted"] += 1

    def assistant(self, session: int, line: _Line, stamp: str) -> None:
        uses = [b for b in line.blocks if _tool_use(b)]
        content = _text(line.blocks) or None
        existing = self.recorded_calls([str(b.get("id") or "") for b in uses])
        placeholder = next((m for _, m, ext in existing.values() if ext is None), None)
        if placeholder is not None:
            stored = record.clean_message(content) if content else None
            self.adopt(placeholder, line.uuid, stored, stamp)
            message = placeholder
        else:
            message = record.add_message(
                self.db, session, "assistant", content, timestamp=stamp, external_id=line.uuid
            )
            self.counts["messages_added"] += 1
        for use in uses:
            use_id = str(use.get("id") or "") or None
            found = existing.get(use_id) if use_id else None
            found = found or self.hook_call(session, use, use_id)
            if found is None:
                # Not recorded: `recorded_calls` just looked, in this transaction.
                call = record.insert_tool_call(
                    self.db,
                    message,
                    use["name"],
                    record.clean_json(use.get("input")),
                    external_id=use_id,
                    timestamp=stamp,
                )
                if use_id:
                    self.added_calls[use_id] = call
                self.counts["tool_calls_added"] += 1
                continue
            self.counts["tool_calls_adopted"] += 1
            call, under, _ = found
            if under != message:
                self.db.execute(
                    "UPDATE tool_calls SET message_id = ? WHERE id = ?", (message, call)
                )
                # The hooks' placeholder, left with nothing in it.
                self.db.execute(
                    "DELETE FROM messages WHERE id = ? AND external_id IS NULL AND content IS"
                    " NULL AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE message_id = ?)",
                    (under, under),
                )

    def hook_call(
        self, session: int, use: dict[str, Any], use_id: str | None
    ) -> tuple[int, int, str | None] | None:
        """The session's oldest call of this tool and input that the hooks recorded and
        no entry has taken (it is under the hooks' placeholder message): one without an
        id (Gemini CLI and Copilot give their hooks none; it takes the entry's), or any,
        for an entry without an id (Cursor's transcripts have none)."""
        hooked = self.hooked.get(session)
        if hooked is None:  # read once a transaction: few rows, found by their message
            hooked = self.hooked[session] = {}
            for row in self.db.execute(
                "SELECT tc.id, tc.message_id, tc.tool, tc.input, tc.external_id IS NULL"
                " FROM messages m JOIN tool_calls tc ON tc.message_id = m.id"
                " WHERE m.session_id = ? AND m.external_id IS NULL AND m.role = 'assistant'"
                " ORDER BY tc.timestamp, tc.id",
                (session,),
            ):
                hooked.setdefault((row[2], row[3]), []).append((row[0], row[1], bool(row[4])))
        waiting = hooked.get((use["name"], record.clean_json(use.get("input")))) or []
        found = next((c for c in waiting if c[2] or use_id is None), None)
        if found is None:
            return None
        waiting.remove(found)
        if use_id and found[2]:
            self.db.execute(
                "UPDATE tool_calls SET external_id = ? WHERE id = ?", (use_id, found[0])
            )
        return found[0], found[1], None

    def recorded_calls(self, ids: list[str]) -> dict[str | None, tuple[int, int, str | None]]:
        """The tool calls already recorded under these tool-use ids: id -> (row id, its
        message, that message's external id)."""
        wanted = [i for i in ids if i]
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self.db.execute(
            "SELECT tc.external_id, tc.id, tc.message_id, m.external_id"
            " FROM tool_calls tc JOIN messages m ON m.id = tc.message_id"
            f" WHERE tc.external_id IN ({marks})",
            wanted,
        ).fetchall()
        found = {str(r[0]): (int(r[1]), int(r[2]), r[3]) for r in rows}
        # In the order of the blocks, so that the first call's placeholder is adopted.
        return {i: found[i] for i in wanted if i in found}

    def results(self, line: _Line) -> None:
        for block in line.blocks:
            if block.get("type") != "tool_result":
                continue
            use_id = block.get("tool_use_id")
            row = None
            if isinstance(use_id, str) and use_id in self.added_calls:
                row = (self.added_calls.pop(use_id), None)  # added above, no result yet
            elif isinstance(use_id, str) and use_id:
                row = self.db.execute(
                    "SELECT id, output FROM tool_calls WHERE external_id = ?", (use_id,)
                ).fetchone()
            if row is None:
                self.counts["results_unmatched"] += 1
                continue
            output = line.outputs.get(use_id) if isinstance(use_id, str) else None
            # A hook may have recorded it since the batch was read: the first one stands.
            if row[1] is not None or output is None:
                self.counts["results_known"] += 1
                continue
            self.db.execute(
                "UPDATE tool_calls SET output = ?, success = ?,"
                " duration_ms = COALESCE(?, duration_ms) WHERE id = ?",
                (output, 0 if block.get("is_error") is True else 1, _duration(line.entry), row[0]),
            )
            self.counts["results_recorded"] += 1

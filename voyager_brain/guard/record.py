"""Writing the history as an agent works: projects, sessions, messages, tool calls.

The hooks write here as events arrive, and the transcript import writes the same rows
(`voyager_brain.guard.transcript`), so both follow one set of conventions:

- a project is the repository top of the agent's working folder (else the folder),
  resolved to an absolute path; its name is the folder's name;
- a session is found by the agent's session id (``sessions.external_id``);
- a user prompt from a hook is a ``user`` message without an ``external_id``; the import
  later adopts it (sets the transcript entry's uuid) instead of adding a second one;
- a tool call from a hook hangs under the session's latest message when that is an
  ``assistant`` one, else under a new empty ``assistant`` message, adopted the same way;
- a tool call is found by the agent's tool-use id (``tool_calls.external_id``);
- every stored text is redacted, and tool outputs are cut to `OUTPUT_LIMIT` bytes; a
  lone surrogate (which SQLite cannot store) becomes U+FFFD, and a tool input nested
  deeper than `untrusted.STORED_DEPTH` keeps the strings of its deepest levels as lists;
- times are UTC ``YYYY-MM-DD HH:MM:SS.fff`` (SQLite's ``CURRENT_TIMESTAMP`` format, with
  milliseconds), so they sort as text with the defaults.

History is append-only: nothing here deletes a row. Standard library only.
"""

from __future__ import annotations

import os
import time

from .. import cjson
from ..redact import redact, redact_json
from ..untrusted import scrub, shallow

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

#: Tool outputs are stored up to this many bytes (UTF-8), with a marker saying so.
OUTPUT_LIMIT = 4096
#: A message (a prompt, an assistant's text) is stored up to this many bytes, with the
#: same marker: a pasted log of a hundred megabytes is not kept whole.
MESSAGE_LIMIT = 256 << 10
#: Of a long tool output only the first `limit` bytes are kept, so only the lines that
#: hold them and this many characters more are redacted (see `clean_output`)...
REDACT_MARGIN = 256
#: ... unless the line goes on for longer than this: then all of it is.
LONGEST_LINE = 65536


def now(clock: float | None = None) -> str:
    """`clock` (seconds since the epoch, default now) as a history time."""
    moment = time.time() if clock is None else clock
    whole = int(moment)
    millis = round((moment - whole) * 1000)
    if millis == 1000:
        whole, millis = whole + 1, 0
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(whole)) + f".{millis:03d}"


def seconds(stamp: str) -> float | None:
    """A history time (with or without milliseconds, or ISO 8601 with ``T``/``Z``) as
    seconds since the epoch; None when it is not one."""
    import calendar

    text = stamp.strip().replace("T", " ").rstrip("Z")
    whole, _, fraction = text.partition(".")
    try:
        parsed = time.strptime(whole[:19], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    digits = "".join(ch for ch in fraction if ch.isdigit())
    return calendar.timegm(parsed) + (float("0." + digits) if digits else 0.0)


def truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """`text` cut to at most `limit` UTF-8 bytes (plus a marker naming the full size)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", "ignore")
    return f"{kept}\n[truncated: {len(data)} bytes in all]"


def clean_text(text: str) -> str:
    """What is stored of a text: redacted, lone surrogates replaced."""
    return redact(scrub(text))


def clean_message(text: str) -> str:
    """What is stored of a message: `clean_output` at `MESSAGE_LIMIT` (redacted, lone
    surrogates replaced, cut with a marker past the limit)."""
    return clean_output(text, MESSAGE_LIMIT)


def clean_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """What is stored of a tool's output: redacted, then cut to `limit` bytes, redacting
    only what is kept.

    Redaction costs about a microsecond a character and outputs can be megabytes, of
    which `limit` bytes are kept. Secrets do not span lines (a private key block does,
    and an unterminated one is redacted to the end of the text), so redacting the
    output up to the end of the line that holds its `limit`-th character, and a little
    more, gives the same first `limit` bytes as redacting all of it. When no line ends
    near there, or redaction shrank the window below `limit` bytes, all of it is
    redacted. The marker names the size of the whole output as received.
    """
    text = scrub(text)
    start = limit + REDACT_MARGIN
    end = text.find("\n", start, start + LONGEST_LINE) if len(text) > start else -1
    if end < 0:
        return truncate(clean_text(text), limit)
    data = clean_text(text[: end + 1]).encode("utf-8", "replace")
    if len(data) <= limit:
        return truncate(clean_text(text), limit)
    kept = data[:limit].decode("utf-8", "ignore")
    # The marker of `record.truncate`, with the size of the whole output.
    return f"{kept}\n[truncated: {len(text.encode('utf-8', 'replace'))} bytes in all]"


def clean_json(value: Any) -> str:
    """What is stored of a JSON value (a tool's input): redacted, compact, keys kept in
    the agent's order; lone surrogates replaced, and levels deeper than the writers'
    recursion reaches kept as the lists of their strings (`untrusted.shallow`)."""
    try:
        text = cjson.dumps(redact_json(value), ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        text = cjson.dumps(redact_json(shallow(value)), ensure_ascii=False, separators=(",", ":"))
    # Written as they are (ensure_ascii off), lone surrogates are found in the text.
    return scrub(text)


def project_root(cwd: str) -> str:
    """The project a working folder belongs to: its repository top, else the folder."""
    from ..worktree import find_top

    folder = os.path.realpath(cwd)
    top = find_top(folder)
    return os.path.realpath(top) if top else folder


def project_id(db: sqlite3.Connection, path: str, *, create: bool = True) -> int | None:
    """The id of the project at `path` (absolute), added when missing and `create`."""
    row = db.execute("SELECT id FROM projects WHERE path = ?", (path,)).fetchone()
    if row is not None:
        return int(row[0])
    if not create:
        return None
    name = os.path.basename(path.rstrip("/")) or path
    cur = db.execute("INSERT INTO projects (path, name) VALUES (?, ?)", (path, name))
    return int(cur.lastrowid or 0)


def session_id(
    db: sqlite3.Connection,
    external_id: str,
    project: int,
    *,
    transcript_path: str | None = None,
    started_at: str | None = None,
) -> int:
    """The row id of the agent's session `external_id`, added (active) when missing; a
    transcript path learned later is filled in."""
    row = db.execute(
        "SELECT id, transcript_path FROM sessions WHERE external_id = ?", (external_id,)
    ).fetchone()
    if row is not None:
        if transcript_path and not row[1]:
            db.execute(
                "UPDATE sessions SET transcript_path = ? WHERE id = ?", (transcript_path, row[0])
            )
        return int(row[0])
    cur = db.execute(
        "INSERT INTO sessions (project_id, external_id, transcript_path, started_at, status)"
        " VALUES (?, ?, ?, ?, 'active')",
        (project, external_id, transcript_path, started_at or now()),
    )
    return int(cur.lastrowid or 0)


def session_in(
    db: sqlite3.Connection,
    external_id: str,
    project: str,
    transcript_path: str | None = None,
    started_at: str | None = None,
) -> int:
    """The row id of the agent's session `external_id` in the project at `project`
    (both added when missing, the session as started at `started_at`, default now):
    what every hook event starts from."""
    pid = project_id(db, project)
    assert pid is not None
    return session_id(db, external_id, pid, transcript_path=transcript_path, started_at=started_at)


def add_message(
    db: sqlite3.Connection,
    session: int,
    role: str,
    content: str | None,
    *,
    timestamp: str | None = None,
    external_id: str | None = None,
) -> int:
    """Append a message to `session`; the content is redacted. A user prompt becomes the
    session's task when it has none."""
    stored = clean_message(content) if content is not None else None
    return insert_message(db, session, role, stored, timestamp=timestamp, external_id=external_id)


def insert_message(
    db: sqlite3.Connection,
    session: int,
    role: str,
    stored: str | None,
    *,
    timestamp: str | None = None,
    external_id: str | None = None,
) -> int:
    """`add_message` with its content cleaned already (`clean_message`)."""
    cur = db.execute(
        "INSERT INTO messages (session_id, role, content, timestamp, external_id)"
        " VALUES (?, ?, ?, ?, ?)",
        (session, role, stored, timestamp or now(), external_id),
    )
    if role == "user" and stored and stored.strip():
        db.execute(
            "UPDATE sessions SET task = ? WHERE id = ? AND task IS NULL",
            (first_line(stored), session),
        )
    return int(cur.lastrowid or 0)


def first_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def current_assistant_message(db: sqlite3.Connection, session: int, at: str | None = None) -> int:
    """The message a new tool call hangs under: the session's latest message (up to
    `at`, a queued call's time, when given) if it is the assistant's, else a new, empty
    assistant message (at `at`)."""
    until, params = ("", (session,)) if at is None else (" AND timestamp <= ?", (session, at))
    row = db.execute(
        f"SELECT id, role FROM messages WHERE session_id = ?{until}"
        " ORDER BY timestamp DESC, id DESC LIMIT 1",
        params,
    ).fetchone()
    if row is not None and row[1] == "assistant":
        return int(row[0])
    return insert_message(db, session, "assistant", None, timestamp=at)


def add_tool_call(
    db: sqlite3.Connection,
    message: int,
    tool: str,
    tool_input: Any,
    *,
    external_id: str | None = None,
    timestamp: str | None = None,
) -> int:
    """Record a tool call (its input redacted). A call already recorded under the same
    tool-use id is returned as it is: hooks and the import fill one row."""
    if external_id:
        known = find_tool_call(db, external_id)
        if known is not None:
            return known
    return insert_tool_call(
        db, message, tool, clean_json(tool_input), external_id=external_id, timestamp=timestamp
    )


def insert_tool_call(
    db: sqlite3.Connection,
    message: int,
    tool: str,
    stored_input: str,
    *,
    external_id: str | None = None,
    timestamp: str | None = None,
) -> int:
    """A new tool call row, its input cleaned already (`clean_json`)."""
    cur = db.execute(
        "INSERT INTO tool_calls (message_id, tool, input, timestamp, external_id)"
        " VALUES (?, ?, ?, ?, ?)",
        (message, tool, stored_input, timestamp or now(), external_id),
    )
    return int(cur.lastrowid or 0)


def find_tool_call(db: sqlite3.Connection, external_id: str) -> int | None:
    """The row id of the tool call the agent calls `external_id`, if recorded."""
    row = db.execute("SELECT id FROM tool_calls WHERE external_id = ?", (external_id,)).fetchone()
    return int(row[0]) if row is not None else None


def set_tool_result(
    db: sqlite3.Connection,
    tool_call: int,
    output: str | None,
    *,
    success: bool,
    duration_ms: int | None = None,
    limit: int = OUTPUT_LIMIT,
) -> None:
    """The tool's result on its row: output redacted and cut to `limit` bytes, success,
    duration (when known, and not already recorded)."""
    stored = clean_output(output, limit) if output is not None else None
    store_tool_result(db, tool_call, stored, success=success, duration_ms=duration_ms)


def store_tool_result(
    db: sqlite3.Connection,
    tool_call: int,
    stored: str | None,
    *,
    success: bool,
    duration_ms: int | None = None,
) -> None:
    """`set_tool_result` with the output cleaned already (`clean_output`)."""
    db.execute(
        "UPDATE tool_calls SET output = ?, success = ?,"
        " duration_ms = COALESCE(?, duration_ms) WHERE id = ?",
        (stored, 1 if success else 0, duration_ms, tool_call),
    )


def end_session(
    db: sqlite3.Connection, session: int, status: str = "completed", at: str | None = None
) -> None:
    """Close a session: ``ended_at`` and ``status`` (completed or abandoned)."""
    db.execute(
        "UPDATE sessions SET ended_at = ?, status = ? WHERE id = ?", (at or now(), status, session)
    )


def reopen_session(db: sqlite3.Connection, session: int) -> None:
    """A session closed by the agent's Stop goes on: active again, no end time."""
    db.execute(
        "UPDATE sessions SET status = 'active', ended_at = NULL"
        " WHERE id = ? AND status != 'active'",
        (session,),
    )


def add_trigger(
    db: sqlite3.Connection,
    rule: int,
    tool_call: int,
    action: str,
    reasoning: str | None = None,
    *,
    timestamp: str | None = None,
) -> int:
    """Record that `rule` matched `tool_call` and what was done (block, warn or log)."""
    cur = db.execute(
        "INSERT INTO rule_triggers (rule_id, tool_call_id, action_taken, llm_reasoning,"
        " timestamp) VALUES (?, ?, ?, ?, ?)",
        (rule, tool_call, action, reasoning, timestamp or now()),
    )
    return int(cur.lastrowid or 0)

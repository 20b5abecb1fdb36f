"""The key queries of seed 003 over history.db, as plain dicts.

Each function is one of the seed's queries (or the list of sessions they start from),
with the seed's column names; what they add is named after the table it comes from
(``project_path``, ``rule_id``). Texts are returned as stored: redacted, tool outputs
cut, a tool call's ``input`` the JSON text of its arguments. Standard library only.
"""

from __future__ import annotations

import sqlite3

from ..errors import HistoryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SESSION_COLUMNS = """
    s.id, s.project_id, p.path AS project_path, p.name AS project_name, s.task,
    s.started_at, s.ended_at, s.status, s.external_id, s.transcript_path,
    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS message_count,
    (SELECT COUNT(*) FROM tool_calls tc JOIN messages m ON m.id = tc.message_id
        WHERE m.session_id = s.id) AS tool_call_count,
    (SELECT COUNT(*) FROM rule_triggers rt JOIN tool_calls tc ON tc.id = rt.tool_call_id
        JOIN messages m ON m.id = tc.message_id WHERE m.session_id = s.id) AS trigger_count
"""


def _dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def sessions(
    db: sqlite3.Connection, project_path: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """Sessions, newest first: the session's columns, its project's path and name, and
    how many messages, tool calls and rule triggers it has. `project_path` (as stored:
    absolute, the repository top) keeps one project's."""
    where = "WHERE p.path = ?" if project_path is not None else ""
    params: list[Any] = [project_path] if project_path is not None else []
    tail = ""
    if limit is not None:
        tail = "LIMIT ?"
        params.append(limit)
    return _dicts(
        db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions s JOIN projects p ON p.id = s.project_id"
            f" {where} ORDER BY s.started_at DESC, s.id DESC {tail}",
            params,
        )
    )


def row_id(text: str) -> int | None:
    """`text` as a row id when it is one SQLite can hold: ASCII digits ("²" is a digit to
    str.isdigit, not to int()), at most 19 of them and below 2**63 (past that int() or
    SQLite refuses it: a ValueError or an OverflowError); else None."""
    if text.isascii() and text.isdigit() and len(text) <= 19 and int(text) < 2**63:
        return int(text)
    return None


def find_session(db: sqlite3.Connection, ref: str) -> dict[str, Any]:
    """The session `ref` names: a row id (digits), else the agent's session id, or
    the start of one when only one session's id starts so (as in `sessions`).

    Raises `HistoryError` when no session, or more than one, matches."""
    base = f"SELECT {_SESSION_COLUMNS} FROM sessions s JOIN projects p ON p.id = s.project_id"
    ref = ref.strip()
    number = row_id(ref)
    if number is not None:
        found = _dicts(db.execute(f"{base} WHERE s.id = ?", (number,)))
        if found:
            return found[0]
    found = _dicts(db.execute(f"{base} WHERE s.external_id = ?", (ref,)))
    if found:
        return found[0]
    if ref:
        pattern = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        found = _dicts(
            db.execute(f"{base} WHERE s.external_id LIKE ? ESCAPE '\\' LIMIT 2", (pattern,))
        )
        if len(found) == 1:
            return found[0]
        if found:
            raise HistoryError(
                f"session {ref!r} is ambiguous: more than one session id starts with it"
            )
    shown = ref if len(ref) <= 80 else ref[:80] + "…"
    raise HistoryError(
        f"no session {shown!r} in the history (give a row id or a session id from"
        " `voyager-brain history sessions`)"
    )


def session_history(db: sqlite3.Connection, session_id: int) -> list[dict[str, Any]]:
    """Seed query "Session history with tool calls": the session's messages in order
    (``id``, ``session_id``, ``role``, ``content``, ``timestamp``, ``external_id``),
    each with its ``tool_calls`` in order (``id``, ``tool``, ``input``, ``output``,
    ``success``, ``duration_ms``, ``timestamp``, ``external_id``), each with the rule
    ``triggers`` it set off (``rule_id``, ``description``, ``action_taken``,
    ``llm_reasoning``, ``timestamp``)."""
    messages = _dicts(
        db.execute(
            "SELECT m.id, m.session_id, m.role, m.content, m.timestamp, m.external_id"
            " FROM messages m WHERE m.session_id = ? ORDER BY m.timestamp, m.id",
            (session_id,),
        )
    )
    calls = _dicts(
        db.execute(
            "SELECT tc.id, tc.message_id, tc.tool, tc.input, tc.output, tc.success,"
            " tc.duration_ms, tc.timestamp, tc.external_id"
            " FROM tool_calls tc JOIN messages m ON m.id = tc.message_id"
            " WHERE m.session_id = ? ORDER BY tc.timestamp, tc.id",
            (session_id,),
        )
    )
    triggers = _dicts(
        db.execute(
            "SELECT rt.id, rt.tool_call_id, rt.rule_id, r.description, rt.action_taken,"
            " rt.llm_reasoning, rt.timestamp"
            " FROM rule_triggers rt JOIN rules r ON r.id = rt.rule_id"
            " JOIN tool_calls tc ON tc.id = rt.tool_call_id"
            " JOIN messages m ON m.id = tc.message_id"
            " WHERE m.session_id = ? ORDER BY rt.timestamp, rt.id",
            (session_id,),
        )
    )
    by_call: dict[int, list[dict[str, Any]]] = {}
    for trigger in triggers:
        by_call.setdefault(trigger["tool_call_id"], []).append(trigger)
    by_message: dict[int, list[dict[str, Any]]] = {}
    for call in calls:
        call["triggers"] = by_call.get(call["id"], [])
        by_message.setdefault(call["message_id"], []).append(call)
    for message in messages:
        message["tool_calls"] = by_message.get(message["id"], [])
    return messages


def session_triggers(db: sqlite3.Connection, session_id: int) -> list[dict[str, Any]]:
    """Seed query "Rules triggered in a session": per trigger, in order, the rule's
    ``description``, ``action_taken``, the call's ``tool`` and ``input``, and
    ``rule_id``, ``llm_reasoning``, ``timestamp``, ``tool_call_id``."""
    return _dicts(
        db.execute(
            "SELECT r.description, rt.action_taken, tc.tool, tc.input,"
            " rt.rule_id, rt.llm_reasoning, rt.timestamp, rt.tool_call_id"
            " FROM rule_triggers rt"
            " JOIN rules r ON rt.rule_id = r.id"
            " JOIN tool_calls tc ON rt.tool_call_id = tc.id"
            " JOIN messages m ON tc.message_id = m.id"
            " WHERE m.session_id = ? ORDER BY rt.timestamp, rt.id",
            (session_id,),
        )
    )


def rule_origin(db: sqlite3.Connection, rule_id: int) -> dict[str, Any] | None:
    """Seed query "Find which message created a rule": the rule's columns, the
    message's ``content`` and its session's ``task`` (and ``session_id``, the
    message's ``role`` and ``message_timestamp``); None when the rule was not made from
    a message (or its message is gone). Raises `HistoryError` for an unknown rule."""
    if db.execute("SELECT 1 FROM rules WHERE id = ?", (rule_id,)).fetchone() is None:
        raise HistoryError(f"no rule {rule_id} in the history")
    found = _dicts(
        db.execute(
            "SELECT r.*, m.content, s.task, m.session_id, m.role,"
            " m.timestamp AS message_timestamp"
            " FROM rules r"
            " JOIN messages m ON r.source_message_id = m.id"
            " JOIN sessions s ON m.session_id = s.id"
            " WHERE r.id = ?",
            (rule_id,),
        )
    )
    return found[0] if found else None

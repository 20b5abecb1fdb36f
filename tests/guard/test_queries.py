"""The seed's key queries over a real history.db: an imported transcript, rules, and the
triggers the tool-call check records."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from voyager_brain.errors import HistoryError
from voyager_brain.guard import record
from voyager_brain.guard.db import open_database, transaction
from voyager_brain.guard.queries import (
    find_session,
    rule_origin,
    session_history,
    session_triggers,
    sessions,
)
from voyager_brain.guard.transcript import import_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
SESSION = "3f7a9c1e-52d4-4b8e-9a0f-6c2d1e8b7a45"
BASH_ID = "toolu_01D1eAf5gHi7jKl9mNo1pQr3"
WRITE_ID = "toolu_01E2fBg6hIj8kLm0nOp2qRs4"

#: The columns of the seed's tables (seed 003), which the queries keep.
MESSAGE_COLUMNS = {"id", "session_id", "role", "content", "timestamp"}
TOOL_CALL_COLUMNS = {"tool", "input", "output", "success", "duration_ms", "timestamp"}
SESSION_COLUMNS = {"id", "project_id", "task", "started_at", "ended_at", "status"}
RULE_COLUMNS = {
    "id",
    "rule_set_id",
    "type",
    "pattern",
    "description",
    "tool",
    "action",
    "active",
    "priority",
    "problem",
    "solution",
    "source_message_id",
    "created_at",
}


@pytest.fixture
def db(tmp_path: Path, repo: Path) -> Iterator[sqlite3.Connection]:
    """The recorded transcript imported, two rules fired on its Bash call and one on its
    Write call; a rule made from the session's first prompt."""
    conn = open_database(str(tmp_path / "history.db"))
    text = (FIXTURES / "history-transcript.jsonl").read_text().replace("CWD", str(repo))
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text(text)
    import_transcript(conn, str(path))
    prompt = conn.execute("SELECT id FROM messages WHERE role = 'user' ORDER BY id").fetchone()
    with transaction(conn):
        block = add_rule(conn, "Never pip install into the system Python", "block", prompt[0])
        warn = add_rule(conn, "Ask before new dependencies", "warn")
        log = add_rule(conn, "New files in src/", "log")
        bash = call_id(conn, BASH_ID)
        record.add_trigger(conn, warn, bash, "warn", timestamp="2025-06-02 18:47:15.900")
        record.add_trigger(conn, block, bash, "block", timestamp="2025-06-02 18:47:15.901")
        record.add_trigger(
            conn, log, call_id(conn, WRITE_ID), "log", "shares: src, new file", timestamp=None
        )
    yield conn
    conn.close()


def add_rule(
    db: sqlite3.Connection, description: str, action: str, source: int | None = None
) -> int:
    cur = db.execute(
        "INSERT INTO rules (description, action, pattern, source_message_id) VALUES (?, ?, ?, ?)",
        (description, action, "pip install", source),
    )
    return int(cur.lastrowid or 0)


def call_id(db: sqlite3.Connection, external_id: str) -> int:
    return int(
        db.execute("SELECT id FROM tool_calls WHERE external_id = ?", (external_id,)).fetchone()[0]
    )


def add_session(db: sqlite3.Connection, external_id: str, folder: Path, started_at: str) -> int:
    with transaction(db):
        project = record.project_id(db, record.project_root(str(folder)))
        assert project is not None
        return record.session_id(db, external_id, project, started_at=started_at)


# -- sessions ---------------------------------------------------------------------------


def test_sessions_have_the_seed_columns_their_project_and_counts(
    db: sqlite3.Connection, repo: Path
) -> None:
    [row] = sessions(db)
    assert set(row) >= SESSION_COLUMNS
    assert row["project_path"] == os.path.realpath(repo) and row["project_name"] == "project"
    assert row["task"].startswith("Add rate limiting to the orders endpoint")
    assert (row["message_count"], row["tool_call_count"], row["trigger_count"]) == (11, 6, 3)
    assert (row["external_id"], row["status"]) == (SESSION, "completed")


def test_sessions_newest_first_by_project_and_limited(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    add_session(db, "later-in-repo", repo, "2025-07-01 09:00:00.000")
    add_session(db, "earlier-elsewhere", elsewhere, "2025-01-01 09:00:00.000")
    assert [s["external_id"] for s in sessions(db)] == [
        "later-in-repo",
        SESSION,
        "earlier-elsewhere",
    ]
    mine = sessions(db, project_path=os.path.realpath(repo))
    assert [s["external_id"] for s in mine] == ["later-in-repo", SESSION]
    assert [s["external_id"] for s in sessions(db, limit=1)] == ["later-in-repo"]
    assert sessions(db, project_path="/nowhere") == []
    assert sessions(db)[0]["message_count"] == 0


def test_a_session_is_found_by_row_id_by_agent_id_or_its_start(
    db: sqlite3.Connection, repo: Path
) -> None:
    assert find_session(db, "1")["external_id"] == SESSION
    assert find_session(db, SESSION)["id"] == 1
    assert find_session(db, "3f7a9c1e")["id"] == 1
    add_session(db, "3f7a0000-other", repo, "2025-07-01 09:00:00.000")
    with pytest.raises(HistoryError, match="ambiguous"):
        find_session(db, "3f7a")


@pytest.mark.parametrize("ref", ["42", "no-such-session", "", "%", "9" * 26, "9" * 5000])
def test_an_unknown_session_is_one_line(db: sqlite3.Connection, ref: str) -> None:
    with pytest.raises(HistoryError) as caught:
        find_session(db, ref)
    message = str(caught.value)
    assert message.startswith(f"no session {ref[:20]!r}"[:-1]) and "\n" not in message
    assert "' in the history" in message and len(message) < 300  # a long one is cut short


# -- session history, triggers, rule origin ---------------------------------------------


def test_session_history_is_the_messages_in_order_with_their_calls_and_triggers(
    db: sqlite3.Connection,
) -> None:
    messages = session_history(db, 1)
    assert len(messages) == 11
    assert all(set(m) >= MESSAGE_COLUMNS for m in messages)
    assert [m["timestamp"] for m in messages] == sorted(m["timestamp"] for m in messages)
    calls = [c for m in messages for c in m["tool_calls"]]
    assert all(set(c) >= TOOL_CALL_COLUMNS for c in calls)
    assert [c["tool"] for c in calls] == ["Read", "Grep", "Glob", "Bash", "Write", "Edit"]
    bash = next(m for m in messages if any(c["tool"] == "Bash" for c in m["tool_calls"]))
    assert bash["content"].startswith("There is no limiter yet.")
    [call] = bash["tool_calls"]
    assert json.loads(call["input"])["command"].startswith("python -c")
    assert call["success"] == 0 and "ModuleNotFoundError" in call["output"]
    assert [(t["action_taken"], t["description"]) for t in call["triggers"]] == [
        ("warn", "Ask before new dependencies"),
        ("block", "Never pip install into the system Python"),
    ]
    assert session_history(db, 99) == []


def test_session_triggers_have_the_seed_columns(db: sqlite3.Connection) -> None:
    triggers = session_triggers(db, 1)
    assert [(t["action_taken"], t["tool"]) for t in triggers] == [
        ("warn", "Bash"),
        ("block", "Bash"),
        ("log", "Write"),
    ]
    assert {"description", "action_taken", "tool", "input"} <= set(triggers[0])
    assert {"rule_id", "llm_reasoning", "timestamp"} <= set(triggers[0])
    assert triggers[2]["llm_reasoning"] == "shares: src, new file"
    assert json.loads(triggers[2]["input"])["file_path"].endswith("ratelimit.py")
    assert session_triggers(db, 99) == []


def test_rule_origin_is_the_message_and_task_that_made_the_rule(db: sqlite3.Connection) -> None:
    origin = rule_origin(db, 1)
    assert origin is not None
    assert set(origin) >= RULE_COLUMNS
    assert origin["description"] == "Never pip install into the system Python"
    assert origin["content"].startswith("Add rate limiting to the orders endpoint")
    assert origin["task"] == origin["content"]  # the session's first prompt
    assert (origin["session_id"], origin["role"]) == (1, "user")
    assert rule_origin(db, 2) is None  # made by hand, from no message
    with pytest.raises(HistoryError, match="no rule 77"):
        rule_origin(db, 77)


@pytest.mark.parametrize("ref", ["9" * 26, "9" * 5000, "-1", "0"])
def test_a_number_no_session_has_is_no_session(db: sqlite3.Connection, ref: str) -> None:
    """Past SQLite's 64-bit integers (OverflowError) or int()'s digits (ValueError): the
    same "no session" as any unknown id, naming at most 80 characters of it."""
    with pytest.raises(HistoryError, match=r"^no session ") as info:
        find_session(db, ref)
    assert len(str(info.value)) < 200

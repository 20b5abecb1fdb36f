"""history.db: the seed's schema column for column, its migrations, and databases we
must not touch."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from voyager_brain.errors import HistoryError
from voyager_brain.guard import db as gdb

# The seed's tables: column -> (type, NOT NULL, default, primary key).
SEED: dict[str, dict[str, tuple[str, int, str | None, int]]] = {
    "rule_sets": {
        "id": ("INTEGER", 0, None, 1),
        "name": ("TEXT", 1, None, 0),
        "description": ("TEXT", 0, None, 0),
        "created_at": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
    },
    "rules": {
        "id": ("INTEGER", 0, None, 1),
        "rule_set_id": ("INTEGER", 0, None, 0),
        "type": ("TEXT", 0, "'regex'", 0),
        "pattern": ("TEXT", 0, None, 0),
        "description": ("TEXT", 1, None, 0),
        "tool": ("TEXT", 0, None, 0),
        "action": ("TEXT", 0, "'block'", 0),
        "active": ("INTEGER", 0, "1", 0),
        "priority": ("INTEGER", 0, "0", 0),
        "problem": ("TEXT", 0, None, 0),
        "solution": ("TEXT", 0, None, 0),
        "source_message_id": ("INTEGER", 0, None, 0),
        "created_at": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
    },
    "projects": {
        "id": ("INTEGER", 0, None, 1),
        "path": ("TEXT", 1, None, 0),
        "name": ("TEXT", 0, None, 0),
        "rule_set_id": ("INTEGER", 0, None, 0),
        "created_at": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
    },
    "sessions": {
        "id": ("INTEGER", 0, None, 1),
        "project_id": ("INTEGER", 1, None, 0),
        "task": ("TEXT", 0, None, 0),
        "started_at": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
        "ended_at": ("DATETIME", 0, None, 0),
        "status": ("TEXT", 0, "'active'", 0),
    },
    "messages": {
        "id": ("INTEGER", 0, None, 1),
        "session_id": ("INTEGER", 1, None, 0),
        "role": ("TEXT", 1, None, 0),
        "content": ("TEXT", 0, None, 0),
        "timestamp": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
    },
    "tool_calls": {
        "id": ("INTEGER", 0, None, 1),
        "message_id": ("INTEGER", 1, None, 0),
        "tool": ("TEXT", 1, None, 0),
        "input": ("TEXT", 0, None, 0),
        "output": ("TEXT", 0, None, 0),
        "success": ("INTEGER", 0, "1", 0),
        "duration_ms": ("INTEGER", 0, None, 0),
        "timestamp": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
    },
    "rule_triggers": {
        "id": ("INTEGER", 0, None, 1),
        "rule_id": ("INTEGER", 1, None, 0),
        "tool_call_id": ("INTEGER", 1, None, 0),
        "action_taken": ("TEXT", 1, None, 0),
        "llm_reasoning": ("TEXT", 0, None, 0),
        "timestamp": ("DATETIME", 0, "CURRENT_TIMESTAMP", 0),
    },
}
# The seed's foreign keys: table -> {(column, referenced table, referenced column)}.
FOREIGN_KEYS = {
    "rules": {
        ("rule_set_id", "rule_sets", "id"),
        ("source_message_id", "messages", "id"),
        ("source_session_id", "sessions", "id"),  # Causeway's
    },
    "projects": {("rule_set_id", "rule_sets", "id")},
    "sessions": {("project_id", "projects", "id")},
    "messages": {("session_id", "sessions", "id")},
    "tool_calls": {("message_id", "messages", "id"), ("blocked_by_rule_id", "rules", "id")},
    "rule_triggers": {("rule_id", "rules", "id"), ("tool_call_id", "tool_calls", "id")},
}
# The only additions: nullable columns for the agents' own ids, and Causeway's columns
# (issue 28: history.db is a superset of its schema), two of them with its default 0.
ADDED = {
    "sessions": {"external_id", "transcript_path"},
    "messages": {"external_id"},
    "tool_calls": {"external_id", "error_message", "blocked_by_rule_id"},
    "rules": {"source_session_id", "color", "metadata", "patterns", "llm_review", "prompt", "hard"},
}
CAUSEWAY_DEFAULTS = {("rules", "llm_review"): "0", ("rules", "hard"): "0"}
CAUSEWAY_TABLES = {"migrations", "settings", "traces"}


def columns(db: sqlite3.Connection, table: str) -> dict[str, tuple[str, int, str | None, int]]:
    return {r[1]: (r[2], r[3], r[4], r[5]) for r in db.execute(f"PRAGMA table_info({table})")}


def check_schema(db: sqlite3.Connection) -> None:
    for table, expected in SEED.items():
        found = columns(db, table)
        assert {c: found[c] for c in expected} == expected, table
        extra = set(found) - set(expected)
        assert extra == ADDED.get(table, set()), table
        assert all(
            found[c][1] == 0 and found[c][2] == CAUSEWAY_DEFAULTS.get((table, c)) for c in extra
        ), table
        keys = {(r[3], r[2], r[4]) for r in db.execute(f"PRAGMA foreign_key_list({table})")}
        assert keys == FOREIGN_KEYS.get(table, set()), table
    assert list(columns(db, "lexical_rule_embeddings")) == ["rule_id", "embedding"]
    # The seed's rule_embeddings is a sqlite-vec table or none, never a plain table of
    # that name (Causeway's vector search fails on one, and its hook then blocks).
    model = db.execute("SELECT sql FROM sqlite_master WHERE name = 'rule_embeddings'").fetchone()
    if gdb.vec_available(sqlite3.connect(":memory:")):
        assert "vec0" in model[0]
    else:
        assert model is None


def test_a_new_database_has_the_seed_tables_exactly(tmp_path: Path) -> None:
    db = gdb.open_database(str(tmp_path / "history.db"))
    check_schema(db)
    assert db.execute("PRAGMA user_version").fetchone()[0] == gdb.SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert [tuple(r) for r in db.execute("SELECT name, description FROM rule_sets")] == [
        ("default", "Default rule set")
    ]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables = {t for t in tables if not t.startswith("rule_embeddings")}  # sqlite-vec's
    assert tables == {*SEED, "lexical_rule_embeddings", *CAUSEWAY_TABLES}


def test_session_ids_are_unique_and_message_ids_may_repeat(tmp_path: Path) -> None:
    db = gdb.open_database(str(tmp_path / "history.db"))
    db.execute("INSERT INTO projects (path) VALUES ('/p')")
    db.execute("INSERT INTO sessions (project_id, external_id) VALUES (1, 's')")
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO sessions (project_id, external_id) VALUES (1, 's')")
    # Many rows without an agent id are fine.
    db.execute("INSERT INTO sessions (project_id) VALUES (1)")
    db.execute("INSERT INTO sessions (project_id) VALUES (1)")
    # A message's is not unique, as in Causeway, whose transcript logger stores an entry
    # found in two sessions' transcripts under both (our import never adds one twice).
    for session in (1, 2):
        db.execute(
            "INSERT INTO messages (session_id, external_id, role) VALUES (?, 'u1', 'user')",
            (session,),
        )
    plan = db.execute("EXPLAIN QUERY PLAN SELECT id FROM messages WHERE external_id = 'u1'")
    assert "messages_external_id" in str([tuple(r) for r in plan])


def test_foreign_keys_are_enforced(tmp_path: Path) -> None:
    db = gdb.open_database(str(tmp_path / "history.db"))
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO messages (session_id, role) VALUES (42, 'user')")


def make_v0(path: Path) -> None:
    """The original tool's first database: rules without rule_set_id, problem,
    solution or source_message_id, and rule_embeddings."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE rules (
            id INTEGER PRIMARY KEY,
            type TEXT DEFAULT 'regex',
            pattern TEXT,
            description TEXT NOT NULL,
            tool TEXT,
            action TEXT DEFAULT 'block',
            active INTEGER DEFAULT 1,
            priority INTEGER DEFAULT 0,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE rule_embeddings (rule_id INTEGER PRIMARY KEY, embedding BLOB);
        INSERT INTO rules (pattern, description, tool, action, priority, created_at)
            VALUES ('rm -rf /', 'Never delete root', 'Bash', 'block', 10, '2025-01-02 03:04:05');
        INSERT INTO rules (pattern, description, action, active)
            VALUES ('console\\.log', 'No console.log', 'warn', 0);
        INSERT INTO rules (type, description) VALUES ('semantic', 'use uv instead of pip');
        INSERT INTO rule_embeddings VALUES (3, zeroblob(1536));
        """
    )
    db.commit()
    db.close()


def test_a_v0_database_migrates_in_place_with_every_rule_kept(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    make_v0(path)
    before = [tuple(r) for r in sqlite3.connect(path).execute("SELECT * FROM rules ORDER BY id")]
    db = gdb.open_database(str(path))
    check_schema(db)
    after = db.execute(
        "SELECT id, type, pattern, description, tool, action, active, priority, created_at,"
        " rule_set_id, problem, solution, source_message_id FROM rules ORDER BY id"
    ).fetchall()
    assert [tuple(r)[:9] for r in after] == before
    assert all(tuple(r)[9:] == (None, None, None, None) for r in after)
    assert db.execute("SELECT name FROM rule_sets").fetchall()[0][0] == "default"
    # The semantic rule's lexical vector, made afresh; the plain table (which only an
    # earlier version of ours makes: the original tool's is sqlite-vec's) is gone.
    assert [tuple(r) for r in db.execute("SELECT rule_id FROM lexical_rule_embeddings")] == [(3,)]
    assert db.execute("PRAGMA user_version").fetchone()[0] == gdb.SCHEMA_VERSION


def fake_vec0_table(path: Path) -> None:
    """Make rule_embeddings a vec0 virtual table, as the original tool's and Causeway's
    databases have, without sqlite-vec (so that no connection here can read it)."""
    db = sqlite3.connect(path)
    db.execute("DROP TABLE IF EXISTS rule_embeddings")
    db.execute("PRAGMA writable_schema = ON")
    db.execute(
        "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES"
        " ('table', 'rule_embeddings', 'rule_embeddings', 0, 'CREATE VIRTUAL TABLE"
        " rule_embeddings USING vec0(rule_id INTEGER PRIMARY KEY, embedding FLOAT[384])')"
    )
    db.commit()
    db.close()


def test_a_vec0_table_we_cannot_load_is_left_alone(tmp_path: Path) -> None:
    # The original tool's rule_embeddings is a sqlite-vec virtual table; without the
    # extension it cannot be read, but nothing else may break.
    path = tmp_path / "history.db"
    make_v0(path)
    fake_vec0_table(path)
    opened = gdb.open_database(str(path))
    assert opened.execute("SELECT COUNT(*) FROM rules").fetchone()[0] == 3
    assert opened.execute("PRAGMA user_version").fetchone()[0] == gdb.SCHEMA_VERSION


def test_a_later_database_of_the_original_tool_migrates_too(tmp_path: Path) -> None:
    # Its later versions added columns and tables of their own: they stay.
    path = tmp_path / "history.db"
    make_v0(path)
    db = sqlite3.connect(path)
    db.executescript(
        """
        ALTER TABLE rules ADD COLUMN problem TEXT;
        ALTER TABLE rules ADD COLUMN color TEXT;
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE rule_sets (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
            description TEXT, created_at DATETIME DEFAULT CURRENT_TIMESTAMP);
        INSERT INTO rule_sets (name) VALUES ('python-strict');
        UPDATE rules SET color = '#ff0000', problem = 'p' WHERE id = 1;
        """
    )
    db.commit()
    db.close()
    opened = gdb.open_database(str(path))
    row = opened.execute("SELECT color, problem FROM rules WHERE id = 1").fetchone()
    assert tuple(row) == ("#ff0000", "p")
    names = [r[0] for r in opened.execute("SELECT name FROM rule_sets ORDER BY id")]
    assert names == ["python-strict", "default"]


def test_a_newer_database_is_refused_and_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE future (x)")
    db.execute(f"PRAGMA user_version = {gdb.SCHEMA_VERSION + 1}")
    db.close()
    before = path.read_bytes()
    with pytest.raises(HistoryError, match="newer than this voyager-brain"):
        gdb.open_database(str(path))
    assert path.read_bytes() == before


def test_a_corrupt_database_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(HistoryError, match=r"history\.db: not a SQLite database"):
        gdb.open_database(str(path))
    assert path.read_bytes() == b"garbage" * 1000


def test_processes_opening_a_new_database_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    code = (
        "import sys; from voyager_brain.guard import db;"
        " d = db.open_database(sys.argv[1]); print(d.execute('PRAGMA user_version').fetchone()[0])"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outputs == [str(gdb.SCHEMA_VERSION)] * 6
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM rule_sets").fetchone()[0] == 1


def test_connect_gives_one_connection_per_thread(tmp_path: Path) -> None:
    import threading

    path = str(tmp_path / "history.db")
    here = gdb.connect(path)
    assert gdb.connect(path) is here
    seen: list[sqlite3.Connection] = []
    thread = threading.Thread(target=lambda: seen.append(gdb.connect(path)))
    thread.start()
    thread.join()
    assert seen[0] is not here
    gdb.close_all()
    assert gdb.connect(path) is not here
    gdb.close_all()


def test_a_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    db = gdb.open_database(str(tmp_path / "history.db"))
    with pytest.raises(sqlite3.IntegrityError), gdb.transaction(db):
        db.execute("INSERT INTO projects (path) VALUES ('/a')")
        db.execute("INSERT INTO projects (path) VALUES ('/a')")
    assert db.execute("SELECT COUNT(*) FROM projects").fetchone()[0] == 0


def test_doctor_names_a_corrupt_history(repo: Path, isolated_env: Path) -> None:
    from conftest import run_cli

    (isolated_env / "history.db").write_bytes(b"garbage" * 1000)
    done = run_cli("doctor", cwd=repo)
    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() if "history.db" in x)
    assert line.startswith("FAIL") and "not a SQLite database" in line


def test_a_table_dropped_by_another_tool_is_one_line_and_doctor_makes_it_again(
    repo: Path, isolated_env: Path
) -> None:
    """A history.db at our schema version without its rules table: every command that
    needs it says so in one line (not "no such table" from deep in a query), the
    tool-call hook fails open, and `doctor --repair` makes the table again, empty."""
    from conftest import run_cli

    assert (
        run_cli("rules", "add", "--pattern", "rm -rf", "--description", "x", cwd=repo).returncode
        == 0
    )
    db = sqlite3.connect(isolated_env / "history.db")
    db.execute("DROP TABLE rules")
    db.commit()
    db.close()
    said = "history.db: no table rules (changed by hand or by another tool)"
    for args in (("rules", "list"), ("rules", "add", "--pattern", "x", "--description", "y")):
        done = run_cli(*args, cwd=repo)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == 1 and said in done.stderr, done.stderr
    hook = run_cli(
        "hook",
        "claude",
        "pre-tool-use",
        cwd=repo,
        input='{"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}',
    )
    assert (hook.returncode, hook.stdout) == (0, "") and said in hook.stderr
    doctor = run_cli("doctor", cwd=repo)
    assert doctor.returncode == 1 and said in doctor.stdout
    repaired = run_cli("doctor", "--repair", cwd=repo)
    assert "no table rules: made again, empty" in repaired.stdout, repaired.stdout
    assert run_cli("rules", "list", cwd=repo).stdout == "no rules\n"
    tables = sqlite3.connect(isolated_env / "history.db").execute("SELECT name FROM sqlite_master")
    assert gdb.TABLES - {row[0] for row in tables} == set()

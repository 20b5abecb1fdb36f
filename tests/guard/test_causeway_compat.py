"""history.db and Causeway (github.com/codimusmaximus/causeway at d346605, the current form of
the original guard tool): our database holds every column and table Causeway's code uses,
and a rule Causeway wrote with its regexes in `patterns` (a JSON list, any one matching,
case-insensitive) is enforced here.

The Causeway database below is made by hand from the DDL in its db.py: its `rules` table
as `init_db` leaves it after its own migrations.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from conftest import run_cli

from voyager_brain.guard import db as gdb

CAUSEWAY_RULES = """CREATE TABLE rules (
    id INTEGER PRIMARY KEY, type TEXT DEFAULT 'regex', pattern TEXT,
    description TEXT NOT NULL, tool TEXT, action TEXT DEFAULT 'block',
    active INTEGER DEFAULT 1, priority INTEGER DEFAULT 0,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP, problem TEXT, solution TEXT,
    rule_set_id INTEGER REFERENCES rule_sets(id), source_message_id INTEGER,
    source_session_id INTEGER, color TEXT, metadata TEXT, patterns TEXT,
    llm_review INTEGER DEFAULT 0, prompt TEXT, hard INTEGER DEFAULT 0)"""


def test_our_database_has_what_causeways_code_uses(tmp_path: Path) -> None:
    db = gdb.open_database(str(tmp_path / "history.db"))

    def columns(table: str) -> set[str]:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}

    rules = {"source_session_id", "color", "metadata", "patterns", "llm_review", "prompt", "hard"}
    assert rules <= columns("rules")
    assert {"error_message", "blocked_by_rule_id"} <= columns("tool_calls")
    assert columns("settings") == {"key", "value"}
    assert {"hook_type", "tool_name", "decision", "matched_rule_ids", "duration_ms"} <= columns(
        "traces"
    )
    # What Causeway's transcript logger inserts (columns named, as it names them).
    db.execute("INSERT INTO projects (path, name) VALUES ('/p', 'p')")
    db.execute("INSERT INTO sessions (project_id) VALUES (1)")
    db.execute("INSERT INTO messages (session_id, role, content) VALUES (1, 'user', 'hi')")
    db.execute(
        "INSERT INTO tool_calls (message_id, tool, input, output, success, error_message,"
        " blocked_by_rule_id) VALUES (1, 'Bash', '{}', '', 0, 'exit 3', NULL)"
    )
    db.execute(
        "INSERT INTO traces (hook_type, tool_name, decision)"
        " VALUES ('pre_tool_use', 'Bash', 'allow')"
    )


def test_a_causeway_rule_with_only_patterns_is_enforced_and_shown(
    repo: Path, isolated_env: Path
) -> None:
    path = isolated_env / "history.db"
    raw = sqlite3.connect(path)
    raw.execute(CAUSEWAY_RULES)
    raw.execute(
        "INSERT INTO rules (type, pattern, patterns, description, tool, action, active)"
        " VALUES ('regex', NULL, ?, 'No force pushes', 'Bash', 'block', 1)",
        (json.dumps([r"git\s+push\s+.*--force", r"git\s+push\s+-f\b"]),),
    )
    raw.commit()
    raw.close()
    payload = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "cwd": str(repo),
    }
    verdicts = {}
    for command in ("git push origin main --force", "GIT PUSH -f origin", "git push origin"):
        done = run_cli(
            "hook",
            "claude",
            "pre-tool-use",
            cwd=repo,
            input=json.dumps({**payload, "tool_input": {"command": command}}),
        )
        assert done.returncode == 0, done.stderr
        verdicts[command] = "deny" in done.stdout
    # Any one of the patterns, ignoring case, as Causeway matches them.
    assert verdicts == {
        "git push origin main --force": True,
        "GIT PUSH -f origin": True,
        "git push origin": False,
    }
    listed = run_cli("rules", "list", cwd=repo, env={"VOYAGER_HOME": os.environ["VOYAGER_HOME"]})
    assert "No force pushes" in listed.stdout and "None" not in listed.stdout


def test_patterns_that_are_not_json_or_do_not_compile_match_nothing() -> None:
    from voyager_brain.guard.rules import with_patterns

    assert with_patterns(None, "not json") is None
    assert with_patterns("^x", '["("]') == "^x"  # Causeway: the whole list counts as no match
    assert with_patterns(None, '"rm -rf"') == "(?i:(?:rm -rf))"  # one value: a list of one
    assert with_patterns("^x", '["a", "b"]') == "(?:^x)|(?i:(?:a)|(?:b))"

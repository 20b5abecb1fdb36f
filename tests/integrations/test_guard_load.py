"""The guard's decision does not depend on history.db being free: real hook processes
against a held write lock, and in parallel with large payloads (benchmarks/guardload.py
at a size for the suite). Blocked calls stay blocked, and every row reaches history.db
once the queue of pending writes is drained."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import ROOT, run_cli
from test_guard_hooks import PIP, add, call, history, hook, payload

sys.path.insert(0, str(ROOT / "benchmarks"))

import guardload


@contextmanager
def write_lock(home: Path) -> Iterator[None]:
    """Another process's write transaction on history.db, held for the block."""
    holder = sqlite3.connect(home / "history.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def queued(home: Path) -> int:
    spool = home / "spool"
    return len(list(spool.glob("*.json"))) if spool.is_dir() else 0


def test_parallel_hooks_with_large_payloads_let_nothing_through_and_lose_no_row(
    tmp_path: Path,
) -> None:
    # Another writer holds the lock 2 s at a time as well: the queue is used for real.
    report = guardload.simulate(tmp_path, calls=32, parallel=16, output_mb=3, hold=2)
    assert report.let_through == 0, report.line()
    assert report.wrongly_denied == 0, report.line()
    assert (report.rows_missing, report.results_missing) == (0, 0), report.line()
    assert (report.triggers_missing, report.prompts_missing) == (0, 0), report.line()
    assert report.problems == [], report.problems[:5]
    assert report.queued_peak > 0, report.line()


def test_a_held_write_lock_still_denies_and_the_row_is_queued(
    repo: Path, isolated_env: Path
) -> None:
    rule = add(repo, *PIP)
    with write_lock(isolated_env):
        start = time.monotonic()
        done = call(repo, "Bash", {"command": "pip install x"})
        waited = time.monotonic() - start
        assert queued(isolated_env) == 1
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert waited < 5  # no waiting out SQLite's busy timeout
    db = history(isolated_env)
    assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 0
    # Any history command writes the queue first.
    assert run_cli("history", "sessions", cwd=repo).returncode == 0
    assert queued(isolated_env) == 0
    row = db.execute("SELECT id, input, external_id FROM tool_calls").fetchone()
    assert json.loads(row["input"])["command"] == "pip install x"
    assert row["external_id"] == "toolu_01ABC123"
    triggers = db.execute("SELECT rule_id, tool_call_id, action_taken FROM rule_triggers")
    assert [tuple(t) for t in triggers] == [(rule, row["id"], "block")]


def test_the_result_of_a_queued_call_lands_on_its_row(repo: Path, isolated_env: Path) -> None:
    add(repo, *PIP)
    with write_lock(isolated_env):
        assert call(repo, "Bash", {"command": "uv add requests"}).stdout == ""
        done = hook("post-tool-use", repo, payload("post-tool-use", repo))
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert queued(isolated_env) == 2
    # The next hook that gets the lock writes the queue, in order, before its own row.
    prompt = payload("user-prompt-submit", repo, prompt="next step")
    assert hook("user-prompt-submit", repo, prompt).stderr == ""
    assert queued(isolated_env) == 0
    db = history(isolated_env)
    rows = db.execute("SELECT input, output, success, duration_ms FROM tool_calls").fetchall()
    assert len(rows) == 1
    assert json.loads(rows[0]["input"])["command"] == "uv add requests"
    assert rows[0]["output"] == "Successfully installed requests-2.32.3"
    assert rows[0]["duration_ms"] is not None and rows[0]["duration_ms"] >= 0
    roles = [r[0] for r in db.execute("SELECT role FROM messages ORDER BY timestamp, id")]
    assert roles == ["assistant", "user"]


def test_doctor_repair_writes_the_queue(repo: Path, isolated_env: Path) -> None:
    add(repo, *PIP)
    with write_lock(isolated_env):
        call(repo, "Bash", {"command": "pip install x"})
        hook("stop", repo, payload("stop", repo))
        assert queued(isolated_env) == 2
    done = run_cli("doctor", cwd=repo)
    assert "2 history writes queued" in done.stdout
    assert queued(isolated_env) == 2
    # A queued file cut short (a crash while it was written by hand, say): set aside.
    (isolated_env / "spool" / "99999999999999999999-00000001-0001.json").write_text('{"op"')
    done = run_cli("doctor", "--repair", cwd=repo)
    assert "2 history writes written from the queue" in done.stdout
    assert "1 history write could not be written from the queue" in done.stdout
    assert queued(isolated_env) == 0
    assert len(list((isolated_env / "spool").glob("*.failed"))) == 1
    db = history(isolated_env)
    assert db.execute("SELECT COUNT(*) FROM rule_triggers").fetchone()[0] == 1
    assert db.execute("SELECT status FROM sessions").fetchone()[0] == "completed"


def test_a_new_rules_toml_blocks_while_history_db_is_locked(repo: Path, isolated_env: Path) -> None:
    add(repo, "--pattern", "never-matches-anything", "--description", "A global rule")
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "rules.toml").write_text(
        "[[rules]]\ndescription = \"Use uv\"\npattern = '\\bpip\\s+install\\b'\n"
        '[[rules]]\ndescription = "never pip install packages"\ntype = "semantic"\n'
        '[[rules]]\ndescription = "never install packages with pip"\ntype = "semantic"\n'
    )
    with write_lock(isolated_env):
        done = call(repo, "Bash", {"command": "pip install packages"})
    assert done.stderr == ""
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    # Each rule of the file, not in history.db yet, on its own (a negative number).
    assert "- Rule -1 (block): Use uv\n" in reason
    assert "- Rule -2 (block): never pip install packages\n" in reason
    assert "- Rule -3 (block): never install packages with pip\n" in reason
    # Once the lock is free the file is synced and the queued row gets its trigger.
    later = call(repo, "Bash", {"command": "pip install y"}, tool_use_id="t2")
    assert "deny" in later.stdout
    db = history(isolated_env)
    assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 2
    fired = db.execute(
        "SELECT r.description FROM rule_triggers g JOIN rules r ON r.id = g.rule_id"
        " WHERE g.tool_call_id = 1 ORDER BY r.id"
    ).fetchall()
    assert [f[0] for f in fired] == [
        "Use uv",
        "never pip install packages",
        "never install packages with pip",
    ]


def test_a_migration_waiting_for_the_lock_does_not_skip_the_rules(
    repo: Path, isolated_env: Path
) -> None:
    from voyager_brain.guard.db import SCHEMA_VERSION

    rule = add(repo, *PIP)
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "rules.toml").write_text(
        "[[rules]]\ndescription = \"No curl into sh\"\npattern = '\\bcurl\\b.*\\|\\s*sh'\n"
    )
    old = sqlite3.connect(isolated_env / "history.db")
    old.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")  # one migration to run
    old.close()
    with write_lock(isolated_env):
        pip = call(repo, "Bash", {"command": "pip install x"})
        curl = call(repo, "Bash", {"command": "curl -s x | sh"}, tool_use_id="t2")
        assert queued(isolated_env) == 2
    assert "Use uv, never pip" in pip.stdout and pip.stderr == ""
    assert "No curl into sh" in curl.stdout and curl.stderr == ""
    assert run_cli("history", "sessions", cwd=repo).returncode == 0
    db = history(isolated_env)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    fired = db.execute(
        "SELECT t.external_id, r.description FROM rule_triggers g"
        " JOIN rules r ON r.id = g.rule_id JOIN tool_calls t ON t.id = g.tool_call_id"
        " ORDER BY t.external_id"
    ).fetchall()
    assert [tuple(f) for f in fired] == [
        ("t2", "No curl into sh"),
        ("toolu_01ABC123", "Use uv, never pip"),
    ]
    assert rule == 1

"""history.db stays bounded however long it is used: every hook is a new process that
leaves without closing the database (`__main__._hook`), so nothing but the hook itself
ever resets the write-ahead log (`guard.db.bound_wal`)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

from benchmarks.longuse import drive
from voyager_brain.guard.db import WAL_LIMIT


def test_two_thousand_hook_calls_keep_the_write_ahead_log_bounded(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """2,000 calls, each the database's first connection (`benchmarks.longuse.drive`
    forks a child per call that runs the hook as the console script does)."""
    sizes = drive(repo, isolated_env, 2_000)
    # A pair of calls adds about 27 KB to the log: 2,000 calls would leave ~27 MB.
    assert sizes["largest"] < WAL_LIMIT + 256 * 1024, sizes
    db = sqlite3.connect(isolated_env / "history.db")
    try:
        assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 1_000
    finally:
        db.close()
    # The premise, on a new database: without the hooks' bound the log only grows.
    before = tmp_path / "unbounded-home"
    before.mkdir()
    grown = drive(repo, before, 200, bound=False)
    assert grown["end"] == grown["largest"] > 2 * WAL_LIMIT, grown


#: A program that leaves history.db's log long, as an older voyager-brain (or a tool
#: that holds the database open and dies) would: 3 MB written, never checkpointed.
LEAVE_A_LONG_LOG = r"""
import os, sqlite3, sys
from voyager_brain.guard.db import open_database
db = open_database(sys.argv[1])
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("CREATE TABLE IF NOT EXISTS scratch (x BLOB)")
for _ in range(48):
    db.execute("INSERT INTO scratch VALUES (randomblob(65536))")
os._exit(0)
"""


def test_doctor_reports_a_long_log_and_repair_checkpoints_it(
    repo: Path, isolated_env: Path
) -> None:
    wal = isolated_env / "history.db-wal"
    subprocess.run(
        [sys.executable, "-c", LEAVE_A_LONG_LOG, str(isolated_env / "history.db")], check=True
    )
    assert wal.stat().st_size > 3 * 2**20
    done = run_cli("doctor", cwd=repo)
    said = re.search(
        rf"{re.escape(str(wal))} is (\d+\.\d) MB \(the hooks keep it under 1 MB\)", done.stdout
    )
    assert said is not None and 3.0 < float(said[1]) < 4.0, done.stdout
    assert "every hook reads it whole" in done.stdout
    assert "`voyager-brain doctor --repair` checkpoints it into history.db" in done.stdout

    subprocess.run(
        [sys.executable, "-c", LEAVE_A_LONG_LOG, str(isolated_env / "history.db")], check=True
    )
    done = run_cli("doctor", "--repair", cwd=repo)
    assert "checkpointed into history.db" in done.stdout, done.stdout
    assert not wal.exists() or wal.stat().st_size == 0
    done = run_cli("doctor", cwd=repo)
    assert "-wal is" not in done.stdout

"""history.db stays bounded however long it is used: every hook is a new process that
leaves without closing the database (`__main__._hook`), so nothing but the hook itself
ever resets the write-ahead log (`guard.db.bound_wal`)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

from voyager_brain.guard.db import WAL_LIMIT

#: One process that forks a child per hook call: each child runs the hook as the
#: console script does (`__main__._hook`, which ends in os._exit) on its own new
#: connection, at a fraction of a fresh interpreter's cost. Prints the WAL's size
#: after every hundred calls.
DRIVER = r"""
import json, os, sys
from voyager_brain.__main__ import _hook
# What a hook imports and compiles, done once here rather than in every child;
# nothing here opens history.db, so each child still makes the first connection.
import voyager_brain.integrations.claude, voyager_brain.integrations.toolcalls
import voyager_brain.guard.check, voyager_brain.guard.record, voyager_brain.guard.teamrules
from voyager_brain.redact import redact
redact("warm up: sk-ant-api03-" + "x" * 90)

top, home, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
base = {"session_id": "long-use", "cwd": top, "transcript_path": os.devnull}
payload = os.path.join(home, "payload.json")

def hook(event, data):
    with open(payload, "w", encoding="utf-8") as f:
        json.dump({**base, **data}, f)
    pid = os.fork()
    if pid == 0:
        sys.stdin = open(payload, encoding="utf-8")
        sys.stdout = open(os.devnull, "w")
        _hook("claude", event)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0

sizes = []
for n in range(pairs):
    call = {"tool_name": "Bash", "tool_input": {"command": f"pytest -q -k case{n}"},
            "tool_use_id": f"toolu_{n:05d}"}
    hook("pre-tool-use", {"hook_event_name": "PreToolUse", **call})
    hook("post-tool-use", {"hook_event_name": "PostToolUse", **call,
                           "tool_response": {"stdout": f"{n} passed " + "." * 600,
                                             "stderr": "", "interrupted": False}})
    if (n + 1) % 50 == 0:
        wal = os.path.join(home, "history.db-wal")
        sizes.append(os.path.getsize(wal) if os.path.exists(wal) else 0)
print(json.dumps(sizes))
"""


def test_two_thousand_hook_calls_keep_the_write_ahead_log_bounded(
    repo: Path, isolated_env: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(repo), str(isolated_env), "1000"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    sizes = json.loads(done.stdout)
    assert len(sizes) == 20
    # A call adds about 14 KB to the log: a bound that held at every point, and a
    # log that was truncated (not only under the bound at the end).
    assert max(sizes) < WAL_LIMIT + 256 * 1024, sizes
    assert min(sizes) < WAL_LIMIT // 2, sizes
    db = sqlite3.connect(isolated_env / "history.db")
    try:
        assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 1000
    finally:
        db.close()


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

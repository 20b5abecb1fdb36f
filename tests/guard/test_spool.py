"""guard.spool: the hooks' history writes queued while history.db is busy, over a real
history.db: written in order, twice without effect, a broken one set aside."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from voyager_brain.guard import record, spool
from voyager_brain.guard.db import close_all, connect, transaction
from voyager_brain.guard.rules import add_rule


@pytest.fixture
def db(tmp_path: Path) -> sqlite3.Connection:
    yield connect(str(tmp_path / "history.db"))
    close_all()


def ops(tmp_path: Path, tool_use_id: str | None) -> list[spool.Op]:
    where = dict(project=str(tmp_path), session="s1", transcript=None)
    prompt = spool.prompt_op(**where, prompt="install it")
    check = spool.check_op(
        **where,
        tool="Bash",
        tool_input={"command": "pip install x"},
        tool_use_id=tool_use_id,
        triggers=[{"rule": 1, "key": None, "action": "block", "reasoning": None}],
    )
    result = spool.result_op(
        **where,
        tool="Bash",
        tool_input={"command": "pip install x"},
        tool_use_id=tool_use_id,
        output="done",
        success=True,
        duration_ms=None,
    )
    # The result comes from a later process (a call without an id is found by its time).
    result["at"] = record.now(time.time() + 1)
    return [
        prompt,
        check,
        result,
        spool.close_op(**where, status="completed"),
    ]


def counts(db: sqlite3.Connection) -> tuple[int, ...]:
    return tuple(
        db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        for table in ("sessions", "messages", "tool_calls", "rule_triggers")
    )


@pytest.mark.parametrize("tool_use_id", ["toolu_1", None])
def test_applying_the_queue_twice_changes_nothing(
    db: sqlite3.Connection, tmp_path: Path, tool_use_id: str | None
) -> None:
    add_rule(db, description="Use uv", pattern=r"\bpip\s+install\b")
    path = str(tmp_path / "history.db")
    for op in ops(tmp_path, tool_use_id):
        spool.enqueue(op, path)
    files = spool.pending(path)
    assert len(files) == 4
    # A replayer that commits, then dies before removing the files: the next one
    # writes them again.
    for _ in range(2):
        with transaction(db):
            assert len(spool._replay(db, spool.pending(path))) == 4
    once = counts(db)
    # A result goes on its call's row, found by its id, or without one (Gemini CLI,
    # Copilot) by its tool and input: one call, one row, as without a queue.
    assert once == (1, 2, 1, 1)
    assert spool.drain(path) == (4, [])
    assert counts(db) == once and spool.pending(path) == []
    assert db.execute("SELECT status FROM sessions").fetchone()[0] == "completed"


def test_queued_operations_are_written_in_order(db: sqlite3.Connection, tmp_path: Path) -> None:
    path = str(tmp_path / "history.db")
    first, *_, close = ops(tmp_path, "t1")
    spool.enqueue(close, path)
    spool.enqueue(first, path)  # the user writes again after the turn's end
    spool.drain(path)
    row = db.execute("SELECT status, ended_at FROM sessions").fetchone()
    assert tuple(row) == ("active", None)


def test_a_broken_operation_is_set_aside_and_the_others_written(
    db: sqlite3.Connection, tmp_path: Path
) -> None:
    path = str(tmp_path / "history.db")
    good = ops(tmp_path, "t1")[0]
    spool.enqueue({"op": "prompt", "at": "x"}, path)  # no session: cannot be written
    spool.enqueue(good, path)
    folder = Path(spool.folder(path))
    (folder / "00000000000000000000-00000001-0001.json").write_text('{"op": "pro')  # cut short
    written, failed = spool.drain(path)
    assert written == 1 and len(failed) == 2
    assert all(".failed" in line for line in failed)
    assert len(spool.failed(path)) == 2 and spool.pending(path) == []
    assert db.execute("SELECT content FROM messages").fetchone()[0] == "install it"


def test_a_write_when_the_lock_is_free_writes_the_queue_first(
    db: sqlite3.Connection, tmp_path: Path
) -> None:
    path = str(tmp_path / "history.db")
    prompt, check, result, _ = ops(tmp_path, "t1")
    spool.enqueue(prompt, path)
    spool.enqueue(check, path)
    row = spool.write(result, db_path=path)
    assert row is not None and spool.pending(path) == []
    stored = db.execute("SELECT input, output FROM tool_calls WHERE id = ?", (row,)).fetchone()
    assert json.loads(stored[0]) == {"command": "pip install x"} and stored[1] == "done"


def test_a_held_lock_queues_within_the_wait(db: sqlite3.Connection, tmp_path: Path) -> None:
    path = str(tmp_path / "history.db")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert spool.write(ops(tmp_path, "t1")[0], wait=0.1, db_path=path) is None
    finally:
        holder.execute("ROLLBACK")
    assert len(spool.pending(path)) == 1


def test_a_long_queue_is_written_a_batch_per_hook_and_order_kept(
    db: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spool, "REPLAY_BATCH", 2)
    add_rule(db, description="Use uv", pattern=r"\bpip\s+install\b")
    path = str(tmp_path / "history.db")
    prompt, check, result, close = ops(tmp_path, "t1")
    for op in (prompt, check, result):
        spool.enqueue(op, path)
    # Two written, one left: the hook's own operation (the turn's end) queues behind it.
    assert spool.write(close, db_path=path) is None
    assert len(spool.pending(path)) == 2
    assert counts(db) == (1, 2, 1, 1)
    assert db.execute("SELECT output FROM tool_calls").fetchone()[0] is None
    spool.drain(path)
    assert db.execute("SELECT output FROM tool_calls").fetchone()[0] == "done"
    assert db.execute("SELECT status FROM sessions").fetchone()[0] == "completed"

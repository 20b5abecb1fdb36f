"""The hooks' history writes, made without waiting: written at once when history.db's
write lock comes within `WRITE_WAIT`, else queued and written by the next writer.

A hook's decision is made before anything is written; a write that fails (locked, slow,
a disk error) must neither change it nor lose the row. So each hook's rows are one
operation, a JSON object with every text already cleaned (redacted, cut: the slow part,
done before the lock is asked for), of four kinds:

- ``check``: a checked tool call and each rule that fired (by id; a rules.toml rule not
  yet synced, by its type, pattern, description and tool), with the role guard's denial
  as its failed result;
- ``result``: a tool's result (on the row of its call, found by the tool-use id);
- ``prompt``: a user's message (the session opened again);
- ``close``: a session's end.

`write` tries one write transaction that first writes the queue, then the operation.
When it cannot, the operation goes to the queue: ``spool/`` beside history.db, one file
per operation named by the time it was queued (``<ns>-<pid>-<n>.json``), written under a
temporary name and renamed, so a reader sees all of it or nothing. The queue is written
in name order by the next hook that gets the lock, by every ``history`` command, and by
``doctor --repair`` (`drain`); each operation in a savepoint: one that fails for another
reason than a lock is set aside as ``.failed`` (and reported by ``doctor``), so it never
blocks the others. Files are removed after the commit; writing one twice changes nothing
(a call is found by its tool-use id, else by its session, time, tool and input; a
trigger, a message, a session's end likewise), so a crash between commit and removal
costs nothing either.

Operations carry their own times: a row written late sorts where it happened.

Standard library only: every tool-call hook writes through this.
"""

from __future__ import annotations

import os

from .. import cjson
from ..errors import HistoryError
from ..paths import history_file
from . import record
from .db import BUSY_TIMEOUT, connect, sqlite3, transaction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Op = dict[str, Any]

#: How long a hook waits for history.db's write lock before queueing (seconds).
WRITE_WAIT = 1.0
#: How many queued operations a hook writes before its own, at most: a long queue (a
#: history.db that was broken for days) is written a batch per hook, so no hook holds
#: the lock for long; while some are left, the hook's own operation queues behind them.
REPLAY_BATCH = 100
FOLDER = "spool"
SUFFIX = ".json"
FAILED = ".failed"


def folder(db_path: str | None = None) -> str:
    """The queue of `db_path` (history.db by default): ``spool/`` beside it."""
    return os.path.join(os.path.dirname(db_path or history_file()), FOLDER)


# -- operations (cleaned before any lock is asked for) ---------------------------------


def check_op(
    *,
    project: str,
    session: str,
    transcript: str | None,
    tool: str,
    tool_input: Any,
    tool_use_id: str | None,
    triggers: list[dict[str, Any]],
    denial: str | None = None,
    limit: int = record.OUTPUT_LIMIT,
) -> Op:
    return {
        "op": "check",
        "at": record.now(),
        "project": project,
        "session": session,
        "transcript": transcript,
        "tool": tool,
        "input": record.clean_json(tool_input),
        "tool_use_id": tool_use_id,
        "triggers": triggers,
        "output": record.clean_output(denial, limit) if denial is not None else None,
    }


def result_op(
    *,
    project: str,
    session: str,
    transcript: str | None,
    tool: str,
    tool_input: Any,
    tool_use_id: str | None,
    output: str | None,
    success: bool,
    duration_ms: int | None,
    limit: int = record.OUTPUT_LIMIT,
    settle: bool = False,
) -> Op:
    """A tool's result; to `settle` is to give it only to a recorded call without one."""
    return {
        **({"settle": True} if settle else {}),
        "op": "result",
        "at": record.now(),
        "project": project,
        "session": session,
        "transcript": transcript,
        "tool": tool,
        "input": record.clean_json(tool_input if tool_input is not None else {}),
        "tool_use_id": tool_use_id,
        "output": record.clean_output(output, limit) if output is not None else None,
        "success": success,
        "duration_ms": duration_ms,
    }


def prompt_op(*, project: str, session: str, transcript: str | None, prompt: str) -> Op:
    return {
        "op": "prompt",
        "at": record.now(),
        "project": project,
        "session": session,
        "transcript": transcript,
        "text": record.clean_message(prompt),
    }


def close_op(*, project: str, session: str, transcript: str | None, status: str) -> Op:
    return {
        "op": "close",
        "at": record.now(),
        "project": project,
        "session": session,
        "transcript": transcript,
        "status": status,
    }


# -- writing ---------------------------------------------------------------------------


class Queued(HistoryError):
    """The operation is queued, not written, for a reason the user should hear of (a
    history.db that is corrupt or newer than this code; not a lock, which passes)."""


def write(op: Op, *, wait: float = WRITE_WAIT, db_path: str | None = None) -> int | None:
    """Write the queue, then `op`, in one transaction; queue `op` instead when that
    fails. The row id of a call (``check``, ``result``) when written, None when queued
    because history.db was busy (the lock not free within `wait` seconds). `Queued`
    when it was queued for another reason; `HistoryError` when it could be neither
    written nor queued."""
    try:
        db = connect(db_path, timeout=wait)
        with transaction(db, wait=wait):
            queue = pending(db_path)
            done = _replay(db, queue[:REPLAY_BATCH])
            behind = len(queue) > REPLAY_BATCH
            row = None if behind else apply(db, op)
        if behind:
            enqueue(op, db_path)  # in order, behind what is still queued
    except Exception as exc:
        try:
            where = enqueue(op, db_path)
        except OSError as spool_exc:
            raise HistoryError(
                f"history not written ({one_line(exc)}) nor queued ({spool_exc})"
            ) from None
        if busy(exc):
            return None
        raise Queued(f"{one_line(exc)}; queued in {os.path.dirname(where)}") from None
    _remove(done)
    return row


def busy(exc: BaseException) -> bool:
    """Whether `exc` says history.db's lock was held past the wait."""
    text = str(exc)
    return "locked" in text or "busy" in text


def one_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def drain(db_path: str | None = None, *, wait: float = BUSY_TIMEOUT) -> tuple[int, list[str]]:
    """Write every queued operation (a history command, ``doctor --repair``): how many
    were written, and one line per operation set aside as failed."""
    if not pending(db_path):
        return 0, []
    db = connect(db_path)
    failed: list[str] = []
    with transaction(db, wait=wait):
        done = _replay(db, pending(db_path), failed)
    _remove(done)
    return len(done), failed


def pending(db_path: str | None = None) -> list[str]:
    """The queued operations' files, in the order they are written."""
    return _listed(db_path, SUFFIX)


def failed(db_path: str | None = None) -> list[str]:
    """The operations set aside because writing them failed."""
    return _listed(db_path, FAILED)


def _listed(db_path: str | None, suffix: str) -> list[str]:
    try:
        names = os.listdir(folder(db_path))
    except OSError:
        return []
    return [os.path.join(folder(db_path), n) for n in sorted(names) if n.endswith(suffix)]


_counter = [0]


def enqueue(op: Op, db_path: str | None = None) -> str:
    """Put `op` in the queue: written whole under a temporary name, then renamed."""
    import time

    where = folder(db_path)
    os.makedirs(where, mode=0o700, exist_ok=True)
    if os.path.islink(where):
        raise OSError(f"{where}: a symbolic link; the queue must be a folder of its own")
    _counter[0] += 1
    name = f"{time.time_ns():020d}-{os.getpid():08d}-{_counter[0]:04d}"
    temporary = os.path.join(where, f".{name}.tmp")
    data = cjson.dumps(op, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        final = os.path.join(where, name + SUFFIX)
        os.replace(temporary, final)
    except BaseException:
        _ignoring(OSError, os.unlink, temporary)
        raise
    return final


def _replay(
    db: sqlite3.Connection, paths: list[str], failures: list[str] | None = None
) -> list[str]:
    """Apply the queued operations at `paths` inside the caller's transaction, in
    order; the files applied (removed by the caller after its commit)."""
    done: list[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                op = cjson.loads(f.read())
        except FileNotFoundError:
            continue  # written and removed by another writer meanwhile
        except (OSError, ValueError) as exc:
            _set_aside(path, f"unreadable: {exc}", failures)
            continue
        db.execute("SAVEPOINT queued")
        try:
            apply(db, op)
        except Exception as exc:
            db.execute("ROLLBACK TO queued")
            db.execute("RELEASE queued")
            if isinstance(exc, sqlite3.OperationalError) and busy(exc):
                raise
            _set_aside(path, str(exc), failures)
            continue
        db.execute("RELEASE queued")
        done.append(path)
    return done


def _set_aside(path: str, why: str, failures: list[str] | None) -> None:
    _ignoring(OSError, os.replace, path, path[: -len(SUFFIX)] + FAILED)
    if failures is not None:
        failures.append(f"{path}: {why}; set aside as {os.path.basename(path)[:-5]}{FAILED}")


def _remove(paths: list[str]) -> None:
    for path in paths:
        _ignoring(FileNotFoundError, os.unlink, path)


def _ignoring(error: type[OSError], action: Any, *args: str) -> None:
    """`action(*args)`, `error` ignored: contextlib.suppress without importing contextlib
    (most of a millisecond on the path of every tool call)."""
    try:  # noqa: SIM105 (see above)
        action(*args)
    except error:
        pass


# -- applying one operation ------------------------------------------------------------


def apply(db: sqlite3.Connection, op: Op) -> int | None:
    """Write one operation (inside the caller's transaction); the call's row id for a
    ``check`` or ``result``. Applying it twice changes nothing."""
    kind = op["op"]
    sid = record.session_in(db, op["session"], op["project"], op.get("transcript"), op["at"])
    if kind == "close":
        record.end_session(db, sid, op["status"], at=op["at"])
        return None
    if kind == "prompt":
        record.reopen_session(db, sid)
        seen = db.execute(
            "SELECT 1 FROM messages WHERE session_id = ? AND role = 'user' AND timestamp = ?"
            " AND content IS ?",
            (sid, op["at"], op["text"]),
        ).fetchone()
        if seen is None:
            record.insert_message(db, sid, "user", op["text"], timestamp=op["at"])
        return None
    if kind == "check":
        record.reopen_session(db, sid)
    call = _find_call(db, sid, op)
    if op.get("settle") and (
        call is None
        or db.execute("SELECT output FROM tool_calls WHERE id = ?", (call,)).fetchone()[0]
        is not None
    ):
        return call  # not recorded, or its result is known: nothing to settle
    duration = op.get("duration_ms")
    if call is None:
        message = record.current_assistant_message(db, sid, op["at"])
        call = record.insert_tool_call(
            db,
            message,
            op["tool"],
            op["input"],
            external_id=op.get("tool_use_id"),
            timestamp=op["at"],
        )
    elif kind == "result" and duration is None:
        started = db.execute("SELECT timestamp FROM tool_calls WHERE id = ?", (call,)).fetchone()
        begun, ended = record.seconds(str(started[0])), record.seconds(op["at"])
        if begun is not None and ended is not None and ended >= begun:
            duration = round((ended - begun) * 1000)
    if kind == "check":
        for trigger in op["triggers"]:
            _add_trigger(db, call, trigger, op)
        if op.get("output") is not None:
            record.store_tool_result(db, call, op["output"], success=False)
    else:
        record.store_tool_result(
            db, call, op["output"], success=bool(op["success"]), duration_ms=duration
        )
    return call


def _find_call(db: sqlite3.Connection, session: int, op: Op) -> int | None:
    """The row of the operation's call: by the agent's tool-use id, else (a call the
    agent gives no id: Gemini CLI's, Copilot's) by its tool and input in the session: a
    check's own row by its time; a result's, the latest such call before it that has no
    result yet, or has this one (applied before)."""
    if op.get("tool_use_id"):
        return record.find_tool_call(db, op["tool_use_id"])
    same = (
        "SELECT t.id FROM tool_calls t JOIN messages m ON m.id = t.message_id"
        " WHERE t.external_id IS NULL AND m.session_id = ? AND t.tool = ? AND t.input IS ?"
    )
    if op["op"] == "check":
        row = db.execute(
            same + " AND t.timestamp = ?", (session, op["tool"], op["input"], op["at"])
        )
    else:
        row = db.execute(
            same + " AND t.timestamp <= ? AND (t.output IS NULL OR t.output IS ?)"
            " ORDER BY t.timestamp DESC, t.id DESC LIMIT 1",
            (session, op["tool"], op["input"], op["at"], op["output"]),
        )
    found = row.fetchone()
    return int(found[0]) if found is not None else None


def _add_trigger(db: sqlite3.Connection, call: int, trigger: dict[str, Any], op: Op) -> None:
    rule = _rule_of(db, trigger, op["project"])
    if rule is None:
        return  # the rule is gone since (removed from rules.toml): the call stays
    seen = db.execute(
        "SELECT 1 FROM rule_triggers WHERE rule_id = ? AND tool_call_id = ? AND action_taken = ?",
        (rule, call, trigger["action"]),
    ).fetchone()
    if seen is None:
        record.add_trigger(
            db, rule, call, trigger["action"], trigger.get("reasoning"), timestamp=op["at"]
        )


def _rule_of(db: sqlite3.Connection, trigger: dict[str, Any], project: str) -> int | None:
    if trigger.get("rule"):
        found = db.execute("SELECT id FROM rules WHERE id = ?", (trigger["rule"],)).fetchone()
        return int(found[0]) if found is not None else None
    # A rules.toml rule the check read from the file (history.db was busy): the file is
    # synced now, in this transaction, and the rule found by what makes it the same.
    from .teamrules import find_team_rule, sync_in

    key = tuple(trigger["key"])
    rule = find_team_rule(db, project, key)
    if rule is None:
        sync_in(db, project)
        rule = find_team_rule(db, project, key)
    return rule

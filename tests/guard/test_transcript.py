"""Importing Claude Code transcripts into history.db: real files, a real SQLite database,
and the hooks' writes made with the same `record` helpers the hooks use."""

from __future__ import annotations

import itertools
import json
import os
import random
import sqlite3
import string
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import run_cli
from hypothesis import example, given, settings
from hypothesis import strategies as st

from voyager_brain.errors import HistoryError
from voyager_brain.guard import record
from voyager_brain.guard.db import open_database, transaction
from voyager_brain.guard.record import clean_output
from voyager_brain.guard.transcript import import_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
SESSION = "3f7a9c1e-52d4-4b8e-9a0f-6c2d1e8b7a45"
FIRST_PROMPT = "Add rate limiting to the orders endpoint: 100 requests a minute per API key."
READ_ID = "toolu_01A8bXc2dEf4gHi6jKl8mNo0"
GREP_ID = "toolu_01B9cYd3eFg5hIj7kLm9nOp1"
GLOB_ID = "toolu_01C0dZe4fGh6iJk8lMn0oPq2"
BASH_ID = "toolu_01D1eAf5gHi7jKl9mNo1pQr3"
EDIT_ID = "toolu_01F3gCh7iJk9lMn1oPq3rSt5"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = open_database(str(tmp_path / "history.db"))
    yield conn
    conn.close()


def fixture_lines(top: Path, cwd: Path | None = None) -> list[str]:
    """The recorded transcript, run in `cwd` (default `top`) of the project `top`."""
    text = (FIXTURES / "history-transcript.jsonl").read_text()
    text = text.replace('"cwd":"CWD"', f'"cwd":"{cwd or top}"').replace("CWD", str(top))
    return text.splitlines(keepends=True)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def rows(db: sqlite3.Connection, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in db.execute(sql, params)]


def everything(db: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the history holds (but when a project row was made: the wall clock)."""
    tables = ("sessions", "messages", "tool_calls", "rule_triggers")
    found = {t: rows(db, f"SELECT * FROM {t} ORDER BY id") for t in tables}
    found["projects"] = rows(db, "SELECT id, path, name, rule_set_id FROM projects ORDER BY id")
    return found


def call(db: sqlite3.Connection, external_id: str) -> sqlite3.Row:
    found = db.execute("SELECT * FROM tool_calls WHERE external_id = ?", (external_id,))
    row: sqlite3.Row = found.fetchone()
    return row


# -- the recorded transcript ------------------------------------------------------------


def test_the_recorded_transcript_becomes_messages_tool_calls_and_results(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", fixture_lines(repo))
    report = import_transcript(db, str(path))
    assert report._asdict() == {
        "path": str(path),
        "session": 1,
        "session_external_id": SESSION,
        "lines": 25,
        "messages_added": 11,
        "messages_adopted": 0,
        "tool_calls_added": 6,
        "tool_calls_adopted": 0,
        "results_recorded": 6,
        "results_known": 0,
        "results_unmatched": 0,
        "entries_known": 0,
        "entries_skipped": 8,
        "bad_lines": 0,
    }
    messages = rows(db, "SELECT role, content FROM messages ORDER BY timestamp, id")
    assert messages[0] == ("user", FIRST_PROMPT)
    assert messages[1] == ("assistant", "I'll start by reading the orders router.")
    assert messages[2] == ("assistant", None)  # the Read call's own entry: no text
    assert messages[8] == ("user", "Yes, and return 429 with a Retry-After header.")
    assert [r[0] for r in messages].count("user") == 2
    tools = rows(
        db,
        "SELECT m.external_id, tc.tool, tc.success FROM tool_calls tc"
        " JOIN messages m ON m.id = tc.message_id ORDER BY tc.timestamp, tc.id",
    )
    assert [t[1:] for t in tools] == [
        ("Read", 1),
        ("Grep", 1),
        ("Glob", 1),
        ("Bash", 0),
        ("Write", 1),
        ("Edit", 1),
    ]
    # Each call hangs under the entry that made it (one entry per tool_use block).
    assert tools[0][0] == "a41f2b7e-2222-4c1d-8e02-000000000007"
    assert tools[2][0] == "a41f2b7e-2222-4c1d-8e02-000000000010"


def test_a_tool_result_lands_on_the_call_of_its_tool_use_id(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    import_transcript(db, str(write(tmp_path / "t.jsonl", fixture_lines(repo))))
    read = call(db, READ_ID)
    assert json.loads(read["input"]) == {"file_path": f"{repo}/src/orders/routes.py"}
    assert "router = APIRouter()" in read["output"] and read["success"] == 1
    # The results of Grep and Glob came back in the other order; each found its call.
    assert call(db, GLOB_ID)["duration_ms"] == 38  # toolUseResult.durationMs
    assert call(db, GREP_ID)["duration_ms"] is None
    bash = call(db, BASH_ID)
    assert bash["success"] == 0  # is_error: true
    assert bash["output"].endswith("ModuleNotFoundError: No module named 'redis'")
    # A result given as a list of text blocks.
    write_call = db.execute("SELECT output FROM tool_calls WHERE tool = 'Write'").fetchone()
    assert write_call[0] == f"File created successfully at: {repo}/src/orders/ratelimit.py"


def test_importing_twice_adds_nothing(db: sqlite3.Connection, repo: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", fixture_lines(repo))
    import_transcript(db, str(path))
    before = everything(db)
    again = import_transcript(db, str(path))
    assert everything(db) == before
    assert (again.messages_added, again.tool_calls_added, again.results_recorded) == (0, 0, 0)
    assert (again.entries_known, again.results_known, again.session) == (11, 6, 1)


def test_entries_that_are_not_conversation_are_skipped(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    report = import_transcript(db, str(write(tmp_path / "t.jsonl", fixture_lines(repo))))
    # summary, queue-operation, file-history-snapshot, system; the isMeta caveat, the
    # /model command and its output; the entry that holds only thinking.
    assert report.entries_skipped == 8
    stored = " ".join(str(r[0]) for r in rows(db, "SELECT content FROM messages"))
    for left_out in ("Caveat", "<command-name>", "local-command", "Auto-update", "probably"):
        assert left_out not in stored


def test_bad_lines_are_counted_and_the_rest_imported(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    lines = fixture_lines(repo)
    torn = lines[-1][: len(lines[-1]) // 2]  # a writer caught mid-line
    bad = [
        "not json at all\n",
        "[1, 2, 3]\n",
        '{"type": "user", "uuid": "u-x", "message": "not an object"}\n',
        '{"type": "assistant", "message": {"content": []}}\n',  # no uuid
    ]
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        "".join(lines[:8] + bad + lines[8:-1]).encode() + b"\xff\xfe broken \n" + torn.encode()
    )
    report = import_transcript(db, str(path))
    assert report.bad_lines == 6
    assert report.messages_added == 10  # all but the torn last one
    # The writer finishes its line: the next import takes the entry it holds.
    write(path, lines)
    assert import_transcript(db, str(path)).messages_added == 1


def test_the_task_is_the_first_prompt_the_user_typed(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    import_transcript(db, str(write(tmp_path / "t.jsonl", fixture_lines(repo))))
    assert rows(db, "SELECT task FROM sessions") == [(FIRST_PROMPT,)]


def test_the_project_is_the_repository_top_of_the_working_folder(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    (repo / "src").mkdir()
    path = write(tmp_path / "t.jsonl", fixture_lines(repo, cwd=repo / "src"))
    import_transcript(db, str(path))
    assert rows(db, "SELECT path, name FROM projects") == [(os.path.realpath(repo), "project")]


def test_the_session_row(db: sqlite3.Connection, repo: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", fixture_lines(repo))
    import_transcript(db, os.path.relpath(path))
    session = db.execute("SELECT * FROM sessions").fetchone()
    assert session["external_id"] == SESSION
    assert session["transcript_path"] == str(path)  # absolute
    assert session["started_at"] == "2025-06-02 18:46:59.937"  # its first entry
    # Only the transcript knows of it: it ended with its last entry.
    assert (session["status"], session["ended_at"]) == ("completed", "2025-06-02 18:48:10.455")


def test_an_old_transcript_without_times_or_folders(db: sqlite3.Connection, tmp_path: Path) -> None:
    """Entries after the first carry no sessionId, none a timestamp or a cwd."""
    report = import_transcript(db, str(FIXTURES / "transcript.jsonl"), cwd=str(tmp_path))
    assert (report.messages_added, report.tool_calls_added, report.results_recorded) == (3, 1, 1)
    assert report.session_external_id == "9b1c2f7e-4d3a-4e55-9a61-0c8f2d7b1a10"
    assert rows(db, "SELECT path FROM projects") == [(os.path.realpath(tmp_path),)]
    assert rows(db, "SELECT output FROM tool_calls") == [("node-version: 18",)]
    times = {r[0] for r in rows(db, "SELECT timestamp FROM messages")}
    assert len(times) == 1  # the file's time, for lack of any other
    ordered = rows(db, "SELECT external_id FROM messages ORDER BY timestamp, id")
    assert ordered == [("u1",), ("a1",), ("a2",)]


def test_a_file_that_cannot_be_read_is_one_line(db: sqlite3.Connection, tmp_path: Path) -> None:
    with pytest.raises(HistoryError) as caught:
        import_transcript(db, str(tmp_path / "missing.jsonl"))
    assert str(caught.value) == (
        f"{tmp_path / 'missing.jsonl'}: cannot read the transcript: No such file or directory"
    )


def test_a_result_for_an_unknown_call_is_counted(db: sqlite3.Connection, tmp_path: Path) -> None:
    entry = {
        "type": "user",
        "uuid": "u-1",
        "sessionId": "s-1",
        "timestamp": "2025-06-02T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope"}]},
    }
    path = write(tmp_path / "t.jsonl", [json.dumps(entry) + "\n"])
    report = import_transcript(db, str(path), cwd=str(tmp_path))
    assert (report.results_unmatched, report.messages_added) == (1, 0)


def test_a_failed_import_leaves_no_row_half_written(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    path = write(tmp_path / "t.jsonl", fixture_lines(repo))
    # A database that refuses one write, as a full disk would.
    db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON tool_calls WHEN NEW.tool = 'Edit'"
        " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    with pytest.raises(HistoryError, match="database or disk is full"):
        import_transcript(db, str(path))
    # The file fits in one transaction: none of it was written.
    assert everything(db) == {t: [] for t in everything(db)}
    db.execute("DROP TRIGGER refuse")
    report = import_transcript(db, str(path))
    assert (report.messages_added, report.tool_calls_added) == (11, 6)


def test_one_transaction_per_entry_writes_the_same_rows(repo: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", fixture_lines(repo))
    seen: list[tuple[int, int]] = []
    with closing_db(tmp_path / "a.db") as one, closing_db(tmp_path / "b.db") as many:
        import_transcript(one, str(path))
        import_transcript(many, str(path), batch_bytes=1, progress=lambda *p: seen.append(p))
        assert everything(one) == everything(many)
    size = path.stat().st_size
    assert len(seen) == 25 and seen[-1] == (size, size)


# -- hooks and import fill one history ----------------------------------------------------


def tool_use(lines: list[str], tool_use_id: str) -> tuple[str, Any, str]:
    """The tool, input and id of a tool call in the transcript, as its hook gets them."""
    for line in lines:
        for block in json.loads(line).get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("id") == tool_use_id:
                return block["name"], block["input"], tool_use_id
    raise LookupError(tool_use_id)


def hook_session(db: sqlite3.Connection, cwd: Path, transcript: Path | None = None) -> int:
    """What every hook does first: the project of its folder, the agent's session."""
    project = record.project_id(db, record.project_root(str(cwd)))
    assert project is not None
    return record.session_id(
        db, SESSION, project, transcript_path=str(transcript) if transcript else None
    )


def hook_prompt(db: sqlite3.Connection, cwd: Path, prompt: str) -> None:
    """UserPromptSubmit, as record.py says the hook writes it."""
    with transaction(db):
        record.add_message(db, hook_session(db, cwd), "user", prompt)


def hook_pre_tool_use(
    db: sqlite3.Connection, cwd: Path, tool: str, tool_input: Any, tool_use_id: str
) -> int:
    """PreToolUse: the call under the current assistant message."""
    with transaction(db):
        message = record.current_assistant_message(db, hook_session(db, cwd))
        return record.add_tool_call(db, message, tool, tool_input, external_id=tool_use_id)


def hook_post_tool_use(db: sqlite3.Connection, tool_use_id: str, output: str, ok: bool) -> None:
    with transaction(db):
        record.set_tool_result(db, call(db, tool_use_id)["id"], output, success=ok)


def test_hooks_first_then_the_import_adopts_their_rows(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    lines = fixture_lines(repo)
    hook_prompt(db, repo, FIRST_PROMPT)
    read = hook_pre_tool_use(db, repo, *tool_use(lines, READ_ID))
    hook_post_tool_use(db, READ_ID, "from the hook", True)
    # Grep and Glob hang under the same placeholder: it is the latest message.
    hook_pre_tool_use(db, repo, *tool_use(lines, GREP_ID))
    hook_pre_tool_use(db, repo, *tool_use(lines, GLOB_ID))
    path = write(tmp_path / "t.jsonl", lines)
    report = import_transcript(db, str(path))
    assert (report.messages_adopted, report.messages_added) == (2, 9)
    assert (report.tool_calls_adopted, report.tool_calls_added) == (3, 3)
    assert (report.results_known, report.results_recorded) == (1, 5)
    assert rows(db, "SELECT COUNT(*) FROM messages WHERE external_id IS NULL") == [(0,)]
    assert call(db, READ_ID)["id"] == read and call(db, READ_ID)["output"] == "from the hook"
    # The same messages, and each call under its own entry, as an import alone writes.
    with closing_db(tmp_path / "alone.db") as alone:
        import_transcript(alone, str(path))
        # The first output written stands: the hook's.
        alone.execute(
            "UPDATE tool_calls SET output = 'from the hook' WHERE external_id = ?", (READ_ID,)
        )
        assert conversation(db) == conversation(alone)
        assert session_row(db) == session_row(alone)
    # The hooks opened the session: it stays as they say (active until their Stop).
    assert rows(db, "SELECT status, ended_at FROM sessions") == [("active", None)]
    assert rows(db, "SELECT transcript_path FROM sessions") == [(str(path),)]


def test_import_first_then_the_hook_does_not_write_twice(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    lines = fixture_lines(repo)
    edit = next(i for i, line in enumerate(lines) if EDIT_ID in line)
    path = write(tmp_path / "t.jsonl", lines[: edit + 1])  # the Edit's entry is written...
    import_transcript(db, str(path))
    before = everything(db)
    # ... then Claude Code runs the PreToolUse hook for it.
    edit_call = hook_pre_tool_use(db, repo, *tool_use(lines, EDIT_ID))
    assert everything(db) == before  # the same row, nothing added
    hook_post_tool_use(db, EDIT_ID, "edited (hook)", True)
    report = import_transcript(db, str(write(path, lines)))
    assert (report.messages_added, report.tool_calls_added, report.results_recorded) == (1, 0, 0)
    assert call(db, EDIT_ID)["id"] == edit_call
    assert call(db, EDIT_ID)["output"] == "edited (hook)"
    assert rows(db, "SELECT COUNT(*) FROM messages") == [(11,)]
    assert rows(db, "SELECT COUNT(*) FROM tool_calls") == [(6,)]


def test_a_hook_prompt_is_adopted_once_per_entry(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    """The same words typed twice: each entry adopts one of the hook's messages."""
    hook_prompt(db, repo, "continue")
    hook_prompt(db, repo, "continue")
    entries = [
        {
            "type": "user",
            "uuid": f"u{i}",
            "sessionId": SESSION,
            "cwd": str(repo),
            "timestamp": f"2025-06-02T10:00:0{i}.000Z",
            "message": {"role": "user", "content": "continue"},
        }
        for i in (1, 2, 3)
    ]
    path = write(tmp_path / "t.jsonl", [json.dumps(e) + "\n" for e in entries])
    report = import_transcript(db, str(path))
    assert (report.messages_adopted, report.messages_added) == (2, 1)
    assert rows(db, "SELECT external_id FROM messages ORDER BY timestamp, id") == [
        ("u1",),
        ("u2",),
        ("u3",),
    ]


def test_a_hook_writing_between_two_transactions_is_adopted(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    """A live session: the hook records a prompt while the import is under way."""
    base = {"sessionId": SESSION, "cwd": str(repo), "type": "user"}
    entries = [
        {
            **base,
            "uuid": "u1",
            "timestamp": "2025-06-02T10:00:01.000Z",
            "message": {"content": "one"},
        },
        {
            **base,
            "uuid": "u2",
            "timestamp": "2025-06-02T10:00:02.000Z",
            "message": {"content": "two"},
        },
    ]
    path = write(tmp_path / "t.jsonl", [json.dumps(e) + "\n" for e in entries])
    hook_prompt(db, repo, "one")

    def between(done: int, total: int) -> None:
        if done < total:  # after the first entry's transaction, before the second's
            hook_prompt(db, repo, "two")

    report = import_transcript(db, str(path), batch_bytes=1, progress=between)
    assert (report.messages_adopted, report.messages_added) == (2, 0)
    assert rows(db, "SELECT content, external_id FROM messages ORDER BY timestamp") == [
        ("one", "u1"),
        ("two", "u2"),
    ]


def closing_db(path: Path) -> Any:
    from contextlib import closing

    return closing(open_database(str(path)))


def conversation(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """The messages in order, each with its calls: what must not depend on who wrote
    first. Leaves out row ids and the hooks' own times of tool calls."""
    found = []
    for m in db.execute("SELECT * FROM messages ORDER BY timestamp, id").fetchall():
        calls = rows(
            db,
            "SELECT tool, input, output, success, duration_ms, external_id FROM tool_calls"
            " WHERE message_id = ? ORDER BY external_id",
            m["id"],
        )
        found.append((m["role"], m["content"], m["timestamp"], m["external_id"], calls))
    return found


def session_row(db: sqlite3.Connection) -> tuple[Any, ...]:
    """The session as both writers see it (its status is the hooks' when they saw it)."""
    return tuple(
        db.execute(
            "SELECT s.external_id, s.task, s.started_at, p.path"
            " FROM sessions s JOIN projects p ON p.id = s.project_id"
        ).fetchone()
    )


# -- what is stored ---------------------------------------------------------------------


def fake(prefix: str, length: int) -> str:
    """A token of a real format, made at run time (see tests/test_redact.py)."""
    rng = random.Random(prefix)
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(length))


GITHUB_TOKEN = fake("ghp_", 36)


def test_a_secret_is_stored_redacted_and_still_adopted(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    prompt = f"Use the token {GITHUB_TOKEN} to open the pull request."
    hook_prompt(db, repo, prompt)
    base = {"sessionId": SESSION, "cwd": str(repo)}
    entries = [
        {**base, "type": "user", "uuid": "u1", "message": {"content": prompt}},
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "content": [
                    {"type": "text", "text": f"Exporting {GITHUB_TOKEN}."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": f"export GITHUB_TOKEN={GITHUB_TOKEN}"},
                    },
                ]
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u2",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": f"ok {GITHUB_TOKEN}"}
                ]
            },
        },
    ]
    path = write(tmp_path / "t.jsonl", [json.dumps(e) + "\n" for e in entries])
    report = import_transcript(db, str(path))
    assert (report.messages_adopted, report.messages_added) == (1, 1)
    dump = json.dumps(everything(db))
    assert GITHUB_TOKEN not in dump
    assert dump.count("[REDACTED:github-token]") == 5  # prompt, task, text, input, output


def test_an_output_is_cut_to_the_limit(db: sqlite3.Connection, tmp_path: Path) -> None:
    output = "".join(f"line {i:05d} of the build log\n" for i in range(2000))
    base = {"sessionId": "s", "cwd": str(tmp_path)}
    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": output}
    entries = [
        {**base, "type": "assistant", "uuid": "a1", "message": {"content": [use]}},
        {**base, "type": "user", "uuid": "u1", "message": {"content": [result]}},
    ]
    path = write(tmp_path / "t.jsonl", [json.dumps(e) + "\n" for e in entries])
    import_transcript(db, str(path), output_limit=1000)
    stored = call(db, "t1")["output"]
    assert stored == output[:1000] + f"\n[truncated: {len(output)} bytes in all]"


PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + fake("MII", 60) + "\n-----END RSA PRIVATE KEY-----"
SECRETS = [GITHUB_TOKEN, f"password = {fake('', 12)}!", fake("sk-ant-api03-", 95) + "AA", PEM]


@settings(max_examples=150)
@given(
    parts=st.lists(
        st.one_of(
            st.text(alphabet=string.ascii_letters + " =:\"'/.-é😀", max_size=300),
            st.sampled_from([f" {secret} " for secret in SECRETS]),
            st.just("\n"),
        ),
        max_size=60,
    ),
    limit=st.integers(min_value=1, max_value=3000),
)
def test_an_output_keeps_what_redacting_all_of_it_keeps(parts: list[str], limit: int) -> None:
    """Redacting only the start of a long output stores the same first `limit` bytes."""
    text = "".join(parts)
    whole = record.truncate(record.clean_text(text), limit)
    mine = clean_output(text, limit)
    assert mine.split("\n[truncated: ")[0] == whole.split("\n[truncated: ")[0]
    assert ("\n[truncated: " in mine) == ("\n[truncated: " in whole)
    for secret in SECRETS:
        assert secret not in mine


# -- any order, any split: the same rows --------------------------------------------------


START = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)


class Hook(NamedTuple):
    kind: str  # prompt, pre, post
    data: dict[str, Any]


@st.composite
def conversations(draw: st.DrawFn) -> list[str | Hook]:
    """A session as Claude Code lives it: transcript lines (str) and hook runs, in the
    order they happen. A prompt's hook runs before its line is written; a tool call's
    entry is written before its PreToolUse hook, its PostToolUse hook before its result.
    Between them: entries that are not conversation, and bad lines."""
    clock = itertools.count()
    ids = itertools.count()
    events: list[str | Hook] = []

    def line(**entry: Any) -> str:
        moment = START + timedelta(seconds=next(clock))
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        return json.dumps({"sessionId": SESSION, "cwd": "CWD", "timestamp": stamp, **entry})

    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        text = draw(st.sampled_from(["continue", "fix the tests", "add a README"]))
        events.append(Hook("prompt", {"text": text}))
        events.append(line(type="user", uuid=f"u{next(ids)}", message={"content": text}))
        for _turn in range(draw(st.integers(min_value=0, max_value=3))):
            tools = [
                (f"t{next(ids)}", draw(st.sampled_from(["Bash", "Read", "Edit"])))
                for _ in range(draw(st.integers(min_value=0, max_value=3)))
            ]
            said = draw(st.sampled_from(["", "Looking.", "Next step."]))
            blocks: list[dict[str, Any]] = [{"type": "text", "text": said}] if said else []
            blocks += [
                {"type": "tool_use", "id": tid, "name": name, "input": {"n": tid}}
                for tid, name in tools
            ]
            if draw(st.booleans()):  # one entry per block, as Claude Code writes them
                for block in blocks:
                    events.append(
                        line(type="assistant", uuid=f"a{next(ids)}", message={"content": [block]})
                    )
            elif blocks:
                events.append(
                    line(type="assistant", uuid=f"a{next(ids)}", message={"content": blocks})
                )
            for tid, name in tools:
                failed = draw(st.booleans())
                events.append(Hook("pre", {"id": tid, "tool": name, "input": {"n": tid}}))
                events.append(Hook("post", {"id": tid, "output": f"out {tid}", "ok": not failed}))
                result = {"type": "tool_result", "tool_use_id": tid, "content": f"out {tid}"}
                if failed:
                    result["is_error"] = True
                events.append(
                    line(type="user", uuid=f"r{next(ids)}", message={"content": [result]})
                )
            noise = draw(st.sampled_from(["", "summary", "system", "bad"]))
            if noise == "bad":
                events.append('{"type": "assistant", "uuid": ')
            elif noise:
                events.append(json.dumps({"type": noise, "uuid": f"n{next(ids)}"}))
        events.append(
            line(
                type="assistant",
                uuid=f"a{next(ids)}",
                message={"content": [{"type": "text", "text": "Done."}]},
            )
        )
    return events


def transcript_text(events: list[str | Hook], folder: str) -> str:
    return "".join(e.replace("CWD", folder) + "\n" for e in events if isinstance(e, str))


@settings(max_examples=60)
@given(events=conversations(), data=st.data())
def test_importing_in_pieces_or_twice_writes_what_one_import_writes(
    events: list[str | Hook], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        text = transcript_text(events, folder).encode()
        path = Path(folder) / f"{SESSION}.jsonl"
        path.write_bytes(text)
        with closing_db(Path(folder) / "once.db") as once:
            import_transcript(once, str(path))
            expected = everything(once)
        # The file as a live session grows it, read at any byte, even mid-line.
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
        with closing_db(Path(folder) / "pieces.db") as pieces:
            for cut in [*cuts, len(text), len(text)]:
                path.write_bytes(text[:cut])
                import_transcript(
                    pieces, str(path), batch_bytes=data.draw(st.sampled_from([1, 300, 1 << 20]))
                )
            assert everything(pieces) == expected


@settings(max_examples=60)
@given(events=conversations(), data=st.data())
def test_hooks_and_imports_in_any_order_write_what_one_import_writes(
    events: list[str | Hook], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        path = cwd / f"{SESSION}.jsonl"
        with closing_db(cwd / "live.db") as live:
            written: list[str | Hook] = []
            for event in events:
                if isinstance(event, str):
                    written.append(event)
                elif event.kind == "prompt":
                    hook_prompt(live, cwd, event.data["text"])
                elif event.kind == "pre":
                    d = event.data
                    hook_pre_tool_use(live, cwd, d["tool"], d["input"], d["id"])
                else:
                    hook_post_tool_use(
                        live, event.data["id"], event.data["output"], event.data["ok"]
                    )
                if data.draw(st.integers(0, 4)) == 0:  # an import now and then
                    path.write_text(transcript_text(written, folder))
                    import_transcript(live, str(path))
            path.write_text(transcript_text(written, folder))
            import_transcript(live, str(path))
            with closing_db(cwd / "alone.db") as alone:
                import_transcript(alone, str(path))
                assert conversation(live) == conversation(alone)
                assert session_row(live) == session_row(alone)


@given(
    st.binary(max_size=40) | st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
@example(b'\xef\xbb\xbf{"a": 1}')  # a byte order mark
@example(b'{"a": "\\ud800"}')  # an escaped lone surrogate
@example('{"a": "\ud800"}'.encode("utf-8", "surrogatepass"))  # an encoded one
@example('{"a": 1}'.encode("utf-16"))
def test_a_line_is_read_as_json_reads_it(raw: bytes) -> None:
    from voyager_brain.cjson import loads_bytes

    def outcome(read: Any) -> str:
        try:
            return repr(read(raw))
        except ValueError as exc:
            return type(exc).__name__

    assert outcome(loads_bytes) == outcome(json.loads)


# -- hostile lines: nested past the reader, lone surrogates ---------------------------------


def _user_line(uuid: str, session: str, text: str, cwd: Path) -> str:
    entry = {
        "type": "user",
        "uuid": uuid,
        "sessionId": session,
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": str(cwd),
        "message": {"role": "user", "content": text},
    }
    return json.dumps(entry) + "\n"


def test_a_line_nested_past_the_reader_is_a_bad_line(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    path = tmp_path / "deep.jsonl"
    deep = '{"type": "user", "uuid": "u2", "message": {"content": ' + "[" * 50_000
    path.write_text(_user_line("u1", "s1", "hello", repo) + deep + "]" * 50_000 + "}}\n")
    report = import_transcript(db, str(path))
    assert (report.messages_added, report.bad_lines) == (1, 1)


def test_lone_surrogates_in_ids_and_texts_are_stored_as_u_fffd(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    path = tmp_path / "lone.jsonl"
    path.write_text(_user_line("u1\ud800", "s1\udfff", "a \ud800 b", repo))
    report = import_transcript(db, str(path))
    assert report.messages_added == 1
    row = db.execute(
        "SELECT m.content, m.external_id, s.external_id FROM messages m"
        " JOIN sessions s ON s.id = m.session_id"
    ).fetchone()
    assert tuple(row) == ("a \ufffd b", "u1\ufffd", "s1\ufffd")


def test_a_folder_with_hostile_files_imports_every_file(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "a.jsonl").write_text(
        _user_line("a1", "sa", "hello", repo) + "[" * 50_000 + "]" * 50_000 + "\n"
    )
    (folder / "b.jsonl").write_text(_user_line("b1\ud800", "sb", "x \ud800", repo))
    (folder / "c.jsonl").write_text(_user_line("c1", "sc", "plain", repo))
    done = run_cli("history", "import", str(folder), cwd=repo)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.count("+1 messages") == 3


def test_a_line_past_the_limit_is_skipped_whole_and_counted(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    from voyager_brain.transcripts import LINE_LIMIT

    path = tmp_path / "long.jsonl"
    with path.open("w") as f:
        f.write(_user_line("u1", "s1", "before", repo))
        f.write(_user_line("u2", "s1", "x" * (LINE_LIMIT + 10), repo))
        f.write(_user_line("u3", "s1", "after", repo))
    report = import_transcript(db, str(path))
    assert (report.messages_added, report.bad_lines) == (2, 1)
    contents = [row[0] for row in db.execute("SELECT content FROM messages ORDER BY id")]
    assert contents == ["before", "after"]


def test_a_long_prompt_is_stored_cut_with_a_marker(
    db: sqlite3.Connection, repo: Path, tmp_path: Path
) -> None:
    from voyager_brain.guard.record import MESSAGE_LIMIT

    text = "a pasted log line\n" * (MESSAGE_LIMIT // 9)  # about twice the limit
    path = tmp_path / "prompt.jsonl"
    path.write_text(_user_line("u1", "s1", text, repo))
    import_transcript(db, str(path))
    [stored] = [row[0] for row in db.execute("SELECT content FROM messages")]
    kept, marker = stored.rsplit("\n", 1)
    assert len(kept.encode()) <= MESSAGE_LIMIT and text.startswith(kept)
    assert marker == f"[truncated: {len(text.encode())} bytes in all]"


# -- Codex's rollout files --------------------------------------------------------------

ROLLOUT = Path(__file__).resolve().parents[1] / "fixtures" / "codex" / "rollout-session.jsonl"


def test_a_codex_rollout_imports_as_a_session_with_its_prompt_reply_and_failed_call(
    tmp_path: Path, isolated_env: Path
) -> None:
    from conftest import run_cli

    done = run_cli("history", "import", str(ROLLOUT), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(isolated_env / "history.db")
    [(external,)] = db.execute("SELECT external_id FROM sessions").fetchall()
    assert external == "01a21cf4-5ddf-74a3-89dd-21f8e360709d"
    said = db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    assert ("user", "run it") in said
    assert [c for r, c in said if r == "user"] == ["run it"]  # not Codex's own context
    call = db.execute("SELECT tool, input, output, success FROM tool_calls").fetchone()
    assert call[0] == "Bash" and json.loads(call[1]) == {"command": "echo X; exit 3"}
    assert "Process exited with code 3" in call[2] and call[3] == 0
    again = run_cli("history", "import", str(ROLLOUT), cwd=tmp_path)
    assert again.returncode == 0
    assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 1  # nothing twice


def test_auto_memory_reads_a_codex_rollout() -> None:
    from voyager_brain.memory.extract import read_conversation

    said = read_conversation(ROLLOUT.read_text())
    assert said[0] == ("user", "run it")
    assert [role for role, _ in said] == ["user", "assistant"]

"""Cursor's agent transcripts read as Claude Code transcript entries (`transcripts.cursor`):
the JSON-lines and the plain-text format, through `history import`, auto-memory and a
turn's "Last reply"."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from hypothesis import given
from hypothesis import strategies as st
from importing import import_file

from voyager_brain import transcripts
from voyager_brain.memory.extract import read_conversation
from voyager_brain.transcripts import translator
from voyager_brain.transcripts.cursor import Transcript, clock_time, text_entries

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cursor"
JSONL = FIXTURES / "agent-transcript.jsonl"
TEXT = FIXTURES / "agent-transcript.txt"
#: The hook fixtures' conversation: a transcript is named after it.
SESSION = "c5a1e7b2-3f4d-4a8e-9b6c-2d1f0e9a7b34"
LAST = "The README now says to run the tests with pytest -q."
README = "/home/user/project/README.md"
REMOVED = "The build directory is removed and all 12 tests pass."
FIRST = "I'll remove the build directory, then run the tests."
PROMPTS = [
    "Clean the build output and rerun the tests",
    "We always run pytest with -q here. Say so in the README.",
]
EDIT = {
    "file_path": README,
    "old_string": "Run the tests with pytest.",
    "new_string": "Run the tests with pytest -q.",
}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def use(call: str | None, name: str, given: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": name, "input": given}


def said(entries: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (e["type"], e["message"]["content"]) for e in entries if e["type"] in ("user", "assistant")
    ]


def test_the_json_lines_transcript_reads_as_prompts_replies_and_tool_calls() -> None:
    lines = JSONL.read_bytes().splitlines(keepends=True)
    entries = [json.loads(raw) for raw in translator(SESSION)(lines)]
    assert len(entries) == len(lines)  # one entry a line: counts stay the file's
    shell = {"cwd": "/home/user/project", "block_until_ms": 30000}
    patch = (
        "*** Begin Patch\n*** Add File: /home/user/project/CHANGELOG.md\n"
        "+- The README names pytest -q.\n*** End Patch"
    )
    assert said(entries) == [
        ("user", PROMPTS[0]),
        ("assistant", [text(FIRST)]),
        ("assistant", [use(None, "Bash", {
            "command": "rm -rf build", "description": "Remove the build output", **shell})]),
        ("assistant", [use(None, "Bash", {
            "command": "pytest -q", "description": "Run the test suite", **shell})]),
        ("assistant", [text(REMOVED)]),
        ("user", PROMPTS[1]),
        ("assistant", [text("Reading the README first."),
                       use(None, "Read", {"file_path": README})]),
        ("assistant", [use(None, "Edit", EDIT)]),
        ("assistant", [use(None, "ApplyPatch", patch)]),
        ("assistant", [text(LAST)]),
    ]  # fmt: skip
    # The file's name is the session; an entry's place in it, its id. Only a prompt has
    # a time (Cursor's <timestamp>, UTC+1); the interrupted turn's own prompt is left out.
    first, reply = entries[0], entries[1]
    assert (first["sessionId"], first["uuid"], reply["uuid"]) == (
        SESSION,
        f"{SESSION}:0",
        f"{SESSION}:1",
    )
    assert first["timestamp"] == "2026-11-25T09:15:00.000Z" and reply["timestamp"] is None
    assert first["cwd"] is None
    assert [e["type"] for e in entries[10:12]] == ["other-turn_ended", "other-None"]


def test_the_plain_text_transcript_reads_with_each_result_on_its_call() -> None:
    entries = text_entries(TEXT.read_text(), "s")
    assert entries is not None
    calls = {b["id"]: (b["name"], b["input"]) for e in entries for b in e["message"]["content"]
             if isinstance(b, dict) and b["type"] == "tool_use"}  # fmt: skip
    results = {b["tool_use_id"]: b["content"] for e in entries for b in e["message"]["content"]
               if isinstance(b, dict) and b["type"] == "tool_result"}  # fmt: skip
    assert calls == {
        "s:text-call-1": (
            "Bash",
            {"command": "rm -rf build", "description": "Remove the build output"},
        ),
        "s:text-call-2": ("Bash", {"command": "pytest -q", "description": "Run the test suite"}),
        "s:text-call-3": ("Read", {"file_path": README}),
        "s:text-call-4": ("Edit", EDIT),
    }
    # The first call's result is empty: it says nothing, and the next result is the next call's.
    assert results == {
        "s:text-call-2": "." * 12 + " " * 61 + "[100%]\n12 passed in 0.84s",
        "s:text-call-3": "# project\nRun the tests with pytest.",
        "s:text-call-4": f"The file {README} has been updated.",
    }
    texts = [c for kind, c in said(entries) if isinstance(c, str) or c[0]["type"] == "text"]
    # The replies without the thinking.
    assert texts == [PROMPTS[0], [text(FIRST)], [text(REMOVED)], PROMPTS[1], [text(LAST)]]
    assert [e["uuid"] for e in entries] == [f"s:text-{n}" for n in range(len(entries))]
    assert {e["timestamp"] for e in entries} == {None}  # this format has no clock


def test_the_plain_text_format_in_other_shapes() -> None:
    text = (
        "user:\n<timestamp>Monday, Jan 5, 2026, 12:05 AM (UTC-5)</timestamp>\n"
        "<user_query>\nquote </user_query> as I typed it\n</user_query>\n"
        "A:\n[Tool result] Shell\n  nobody asked\n[Tool call] Write\n  path: a.py\n"
        "  contents: first\n    second\n[Tool call] ApplyPatch\n  *** Begin Patch\n"
        "Done.\n"
    )
    entries = text_entries(text, None)
    assert entries is not None
    assert said(entries) == [
        ("user", "quote </user_query> as I typed it"),
        ("assistant", [{"type": "tool_use", "id": "cursor:text-call-1", "name": "Write",
                        "input": {"file_path": "a.py", "content": "first\n  second"}}]),
        ("assistant", [{"type": "tool_use", "id": "cursor:text-call-2", "name": "ApplyPatch",
                        "input": "*** Begin Patch"}]),
        ("assistant", [{"type": "text", "text": "Done."}]),
    ]  # fmt: skip
    assert entries[0]["timestamp"] == "2026-01-05T05:05:00.000Z"
    assert {e["uuid"] for e in entries} == {None}  # without the file's name, no ids
    assert text_entries("not a transcript\nuser:\n", "s") is None


def test_cursors_clock_and_prompts() -> None:
    assert clock_time("Tuesday, Jun 2, 2026, 11:20 AM (UTC+8)") == "2026-06-02T03:20:00.000Z"
    assert clock_time("Jun 2, 2026, 12:30 PM (UTC)") == "2026-06-02T12:30:00.000Z"
    assert clock_time("Friday, Jul 31, 2026, 11:12 PM (UTC+5:30)") == "2026-07-31T17:42:00.000Z"
    for wrong in ("yesterday", "Foo 2, 2026, 1:00 AM (UTC)", "Feb 30, 2026, 1:00 AM (UTC)"):
        assert clock_time(wrong) is None
    reader = Transcript()
    wrapped = "<timestamp>x</timestamp>\n<image_files>\n/tmp/a.png\n</image_files>\n"
    forked = "You are the forked subagent; continue executing your task."
    for words, prompt in [
        (wrapped + "<user_query>\nhi\n</user_query>", "hi"),
        ("<timestamp>Jun 2, 2026, 1:00 AM (UTC)</timestamp>\nplain words", "plain words"),
        (f"<user_query>\n{forked}\n</user_query>", None),
        ("Your previous response was interrupted. Continue from where you left off.", None),
        ("  ", None),
    ]:
        out = reader.entries({"role": "user", "message": {"content": words}})
        assert [e["message"]["content"] for e in out] == ([prompt] if prompt else [])


def test_only_cursors_lines_choose_the_reader() -> None:
    assert Transcript.of({"type": "turn_ended", "status": "success"}) is not None
    assert Transcript.of({"role": "user", "message": {"content": []}}) is not None
    claude = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user"}}
    for other in (claude, {"role": "user", "message": "x"}, "user:", None, [1]):
        assert Transcript.of(other) is None
    line = json.dumps(claude).encode() + b"\n"
    assert translator("s")([line]) == [line]  # Claude Code's lines pass as they are


def test_history_import_of_a_json_lines_transcript_and_again(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(JSONL, path)
    first = import_file(path, tmp_path / "home", tmp_path)
    assert (first["session_external_id"], first["messages_added"], first["tool_calls_added"]) == (
        SESSION,
        10,
        5,
    )
    assert first["bad_lines"] == 0
    db = sqlite3.connect(tmp_path / "home" / "history.db")
    assert db.execute("SELECT external_id, status, started_at FROM sessions").fetchall() == [
        (SESSION, "completed", "2026-11-25 09:15:00.000")
    ]
    prompts = db.execute(
        "SELECT content, timestamp FROM messages WHERE role = 'user' ORDER BY id"
    ).fetchall()
    assert prompts == [
        ("Clean the build output and rerun the tests", "2026-11-25 09:15:00.000"),
        ("We always run pytest with -q here. Say so in the README.", "2026-11-25 09:21:00.000"),
    ]
    calls = db.execute(
        "SELECT tool, json_extract(input, '$.command'), output FROM tool_calls ORDER BY id"
    )
    assert [c[:2] for c in calls.fetchall()] == [
        ("Bash", "rm -rf build"), ("Bash", "pytest -q"),
        ("Read", None), ("Edit", None), ("ApplyPatch", None),
    ]  # fmt: skip
    again = import_file(path, tmp_path / "home", tmp_path)
    assert (again["messages_added"], again["tool_calls_added"], again["entries_known"]) == (
        0,
        0,
        10,
    )
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (10,)


def test_history_import_of_a_plain_text_transcript_records_the_outputs(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.txt"
    shutil.copy(TEXT, path)
    first = import_file(path, tmp_path / "home", tmp_path)
    assert (first["messages_added"], first["tool_calls_added"], first["results_recorded"]) == (
        9,
        4,
        3,
    )
    db = sqlite3.connect(tmp_path / "home" / "history.db")
    calls = db.execute(
        "SELECT external_id, tool, output, success FROM tool_calls ORDER BY id"
    ).fetchall()
    assert calls[0][:3] == (f"{SESSION}:text-call-1", "Bash", None)  # its result was empty
    assert calls[1][1:] == ("Bash", "............" + " " * 61 + "[100%]\n12 passed in 0.84s", 1)
    again = import_file(path, tmp_path / "home", tmp_path)
    assert (again["messages_added"], again["tool_calls_added"], again["results_recorded"]) == (
        0,
        0,
        0,
    )


def test_an_import_after_the_hooks_adopts_their_session_and_prompt(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    payload = (
        (FIXTURES / "before-submit-prompt.json")
        .read_text()
        .replace("/home/user/project", str(repo))
    )
    hooked = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "cursor", "before-submit-prompt"],
        input=payload, cwd=repo, capture_output=True, text=True, timeout=60,
        env={**os.environ, "VOYAGER_HOME": str(home)},
    )  # fmt: skip
    assert hooked.returncode == 0, hooked.stderr
    path = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(JSONL, path)
    report = import_file(path, home, tmp_path)
    assert report["messages_adopted"] == 1 and report["messages_added"] == 9
    db = sqlite3.connect(home / "history.db")
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
    prompts = db.execute("SELECT external_id FROM messages WHERE role = 'user' ORDER BY id")
    assert prompts.fetchall() == [(f"{SESSION}:0",), (f"{SESSION}:6",)]


@pytest.mark.parametrize("path", [JSONL, TEXT], ids=["jsonl", "txt"])
def test_auto_memory_and_the_last_reply_read_the_transcript(path: Path) -> None:
    conversation = read_conversation(path.read_text())
    users = [text for role, text in conversation if role == "user"]
    assert users == [
        "Clean the build output and rerun the tests",
        "We always run pytest with -q here. Say so in the README.",
    ]
    assert conversation[-1] == ("assistant", LAST)
    assert transcripts.last_reply(str(path)) == LAST


@pytest.mark.parametrize("path", [JSONL, TEXT], ids=["jsonl", "txt"])
def test_the_stop_hook_writes_the_transcripts_last_reply(path: Path, repo: Path) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    payload = json.loads(
        (FIXTURES / "stop.json").read_text().replace("/home/user/project", str(repo))
    )
    assert "text" not in payload  # Cursor's stop carries no reply
    payload["transcript_path"] = str(path)
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "cursor", "stop"],
        input=json.dumps(payload), cwd=repo, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"Last reply: {LAST}" in (repo / ".voyager" / "brain.md").read_text()


#: Lines of the plain-text format, and of anything.
LINES = st.sampled_from(
    ["user:", "assistant:", "A:", "[Thinking] x", "[Tool call] Shell", "[Tool call]",
     "[Tool result] Shell", "[Tool result] Read", "  command: ls", "  x: {", "    more", "",
     "<user_query>", "</user_query>", "<timestamp>Jun 2, 2026, 1:00 AM (UTC)</timestamp>"]
) | st.text(max_size=30)  # fmt: skip


@given(st.text(max_size=400), st.lists(LINES, max_size=30))
def test_property_any_text_reads_without_error(text: str, lines: list[str]) -> None:
    shaped = "\n".join(lines)
    for whole in (text, "user:\n" + text, "assistant:\n" + shaped, "user:\n" + shaped):
        entries = text_entries(whole, "s")
        assert entries is None or all(e["type"] in ("user", "assistant") for e in entries)
        assert transcripts.entries(whole) is not None or not whole.startswith(("user:", "assis"))
        read_conversation(whole)
        calls = [b["id"] for e in entries or [] for b in e["message"]["content"]
                 if isinstance(b, dict) and b["type"] == "tool_use"]  # fmt: skip
        results = [b["tool_use_id"] for e in entries or [] for b in e["message"]["content"]
                   if isinstance(b, dict) and b["type"] == "tool_result"]  # fmt: skip
        assert set(results) <= set(calls) and len(set(results)) == len(results)


KEYS = st.sampled_from(["role", "message", "content", "type", "text", "name", "input", "id"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON)
def test_property_any_json_line_after_a_transcript_start_reads_without_error(value: Any) -> None:
    first = json.dumps({"role": "user", "message": {"content": "hi"}}).encode()
    for record in (value, {"role": "assistant", "message": {"content": value}}):
        out = translator("s")([first, json.dumps(record).encode()])
        assert len(out) >= 2

"""Gemini CLI's chat recordings read as Claude Code transcript entries
(`transcripts.gemini`): the JSON-lines format (Gemini CLI 0.39 on) and the JSON document
(up to 0.38), through `history import`, auto-memory and a turn's "Last reply"."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
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
from voyager_brain.transcripts.gemini import (
    Recording,
    entries_of,
    user_words,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini"
#: Gemini CLI 0.61.0's recording, and 0.38.2's, of the same scripted session.
JSONL = FIXTURES / "chat-session.jsonl"
LEGACY = FIXTURES / "chat-session-legacy.json"
SESSIONS = {
    JSONL: "4fd7d154-9a16-4721-aaef-32d9cc7163a2",
    LEGACY: "35589f05-6b1b-4666-9b88-1c133dc21323",
}
PROMPT = "Say hi with echo, then run a command that fails."
LAST = "The first command printed hi; the second one failed with exit code 3."
BOTH = pytest.mark.parametrize("path", [JSONL, LEGACY], ids=["jsonl", "json"])


def said(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["type"] in ("user", "assistant")]


def test_the_recording_reads_as_the_prompt_each_call_with_its_result_and_the_reply() -> None:
    lines = JSONL.read_bytes().splitlines(keepends=True)
    entries = [json.loads(raw) for raw in translator()(lines)]
    # Every line stands for one entry at least; a call with its result, written on one
    # line, for two.
    assert len(entries) == len(lines) + 2
    prompt, echo, echoed, fail, failed, reply = said(entries)
    # The prompt without the session-start context Gemini CLI put before it.
    assert (prompt["type"], prompt["message"]) == ("user", {"role": "user", "content": PROMPT})
    assert prompt["uuid"] == "d7d3918a-29d5-401b-a3da-63bb508220a3"
    assert {e["sessionId"] for e in said(entries)} == {SESSIONS[JSONL]}
    assert {e["cwd"] for e in said(entries)} == {None}  # the recording names no folder
    [use] = echo["message"]["content"]
    call_id = "run_shell_command__run_shell_command_1795786995716_0"
    assert use == {"type": "tool_use", "id": call_id, "name": "Bash",
                   "input": {"command": "echo hi", "description": "Say hi."}}  # fmt: skip
    assert echo["uuid"] == f"0f11cd68-43bd-4d09-b6a0-79d63e391f60/{call_id}"
    [result] = echoed["message"]["content"]
    assert result == {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": "<untrusted_context>\nOutput: hi\nProcess Group PGID: 23975\n"
        "</untrusted_context>",
        "is_error": False,
    }
    assert (echoed["uuid"], echoed["timestamp"]) == (
        f"{echo['uuid']}/result",
        "2026-11-27T13:43:16.169Z",
    )
    assert fail["message"]["content"][0]["input"]["command"] == "echo X; exit 3"
    # Gemini CLI's status says success; the shell's output says exit code 3.
    assert failed["message"]["content"][0]["is_error"] is True
    assert reply["message"]["content"] == [{"type": "text", "text": LAST}]
    assert reply["uuid"] == "f551339e-8240-4bef-8f5d-0422bbad8db1"
    # The message written again with its tool calls, the tools' answers Gemini CLI records
    # as user messages, the metadata updates: entries of types no reader keeps.
    kinds = [e["type"] for e in entries if e["type"] not in ("user", "assistant")]
    assert set(kinds) == {"other-gemini", "other-user", "other-None"}


def test_the_document_of_older_versions_reads_the_same() -> None:
    entries = transcripts.document_entries(LEGACY.read_bytes())
    assert entries is not None
    prompt, echo, echoed, _, failed, reply = entries
    assert prompt["message"]["content"] == PROMPT and prompt["sessionId"] == SESSIONS[LEGACY]
    assert echo["message"]["content"][0]["name"] == "Bash"
    assert echoed["message"]["content"][0]["content"] == "Output: hi\nProcess Group PGID: 26535"
    assert [e["message"]["content"][0]["is_error"] for e in (echoed, failed)] == [False, True]
    assert reply["message"]["content"][0]["text"] == LAST
    assert transcripts.is_document(LEGACY.read_bytes().splitlines(keepends=True)[0])


def test_what_gemini_cli_writes_itself_is_no_prompt_and_a_message_again_adds_only_news() -> None:
    reader = Recording.of({"sessionId": "s", "projectHash": "h", "startTime": "t"})
    assert reader is not None

    def user(text: str, key: str = "u") -> list[Any]:
        found = reader.entries({"id": key, "type": "user", "content": [{"text": text}]})
        return [e["message"]["content"] for e in found]

    assert user("<session_context>\nThis is the Gemini CLI.\n</session_context>", "a") == []
    assert user("<hook_context>memory</hook_context>", "b") == []  # interactive: its own turn
    assert user("<hook_context>x</hook_context>\n\n<hook_context>y</hook_context> hi", "c") == [
        "hi"
    ]
    assert user("Summary.\n<state_snapshot>\n...\n</state_snapshot>", "d") == []
    assert user("  keep my spaces ", "e") == ["  keep my spaces "]  # as the hook gets it
    assert user("again", "e") == []  # the same message written again
    answer = {"functionResponse": {"id": "c1", "name": "x", "response": {"output": "ok"}}}
    assert reader.entries({"id": "f", "type": "user", "content": [answer]}) == []
    assert reader.entries({"id": "g", "type": "info", "content": "Binary content"}) == []
    # A reply: thoughts left out; its tool calls come as they are written, each once.
    thought = {"text": "pondering", "thought": True}
    gemini = {"id": "m", "type": "gemini", "timestamp": "2026-01-01T00:00:00.000Z",
              "content": [thought, {"text": "Reading it."}]}  # fmt: skip
    [text] = reader.entries(gemini)
    assert text["message"]["content"] == [{"type": "text", "text": "Reading it."}]
    running = {
        "id": "c1",
        "name": "read_file",
        "args": {"file_path": "a.py"},
        "status": "executing",
    }
    [use] = reader.entries({**gemini, "toolCalls": [running]})
    assert (use["uuid"], use["message"]["content"][0]["name"]) == ("m/c1", "Read")
    error = {
        "functionResponse": {"id": "c1", "name": "read_file", "response": {"error": "no such file"}}
    }
    done = {
        **running,
        "status": "error",
        "result": [error],
        "timestamp": "2026-01-01T00:00:01.000Z",
    }
    [result] = reader.entries({**gemini, "toolCalls": [done]})
    assert result["message"]["content"][0] == {
        "type": "tool_result", "tool_use_id": "c1", "content": "no such file", "is_error": True
    }  # fmt: skip
    assert reader.entries({**gemini, "toolCalls": [done]}) == []
    assert reader.entries({"$set": {"sessionId": "s2"}}) == [] and reader.session == "s2"
    assert reader.entries({"$rewindTo": "m"}) == []
    synthetic = {
        "id": "n",
        "type": "gemini",
        "content": [{"text": "Got it. Thanks for the additional context!"}],
    }
    assert reader.entries(synthetic) == []  # what Gemini CLI answers a compression's summary


def test_only_a_recordings_metadata_chooses_the_reader() -> None:
    first = json.loads(JSONL.read_text().splitlines()[0])
    assert Recording.of(first) is not None
    claude = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user"}}
    message = {"id": "x", "sessionId": "s", "projectHash": "h"}
    for other in (claude, message, {"sessionId": 1, "projectHash": "h"}, "s", None, [first]):
        assert Recording.of(other) is None
        assert entries_of(other) is None
    assert entries_of(first) is None  # no messages: not a document
    # A document on one line is read by the line reader, whole.
    one_line = json.dumps(json.loads(LEGACY.read_text())).encode() + b"\n"
    [*found] = (json.loads(raw) for raw in translator()([one_line]))
    assert [e["type"] for e in found] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_user_words() -> None:
    assert user_words("plain") == "plain"
    assert user_words("<hook_context>a</hook_context>\n\nfix it") == "fix it"
    assert user_words("<hook_context>never closed") == ""
    assert user_words("fix <hook_context>a</hook_context>") == "fix <hook_context>a</hook_context>"


@BOTH
def test_history_import_of_a_recording_and_again(path: Path, repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = import_file(path, home, repo)
    assert first["session_external_id"] == SESSIONS[path]
    assert (first["messages_added"], first["tool_calls_added"], first["results_recorded"]) == (
        4,
        2,
        2,
    )
    assert first["bad_lines"] == 0
    db = sqlite3.connect(home / "history.db")
    [(external, status, folder)] = db.execute(
        "SELECT s.external_id, s.status, p.path FROM sessions s"
        " JOIN projects p ON p.id = s.project_id"
    ).fetchall()
    assert (external, status, folder) == (SESSIONS[path], "completed", str(repo))  # the --cwd's
    said = db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    assert said[0] == ("user", PROMPT) and said[-1] == ("assistant", LAST)
    calls = db.execute(
        "SELECT tool, json_extract(input, '$.command'), output, success FROM tool_calls ORDER BY id"
    )
    (echo, echo_out, echo_ok), (fail, _, fail_ok) = [c[1:] for c in calls.fetchall()]
    assert (echo, fail) == ("echo hi", "echo X; exit 3")
    assert "Output: hi" in echo_out and (echo_ok, fail_ok) == (1, 0)
    again = import_file(path, home, repo)
    assert (again["messages_added"], again["tool_calls_added"], again["results_recorded"]) == (
        0,
        0,
        0,
    )
    assert again["entries_known"] == 4
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (4,)


def hook(event: str, payload: dict[str, Any], repo: Path, home: Path | None = None) -> None:
    env = {**os.environ, **({"VOYAGER_HOME": str(home)} if home else {})}
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "gemini", event],
        input=json.dumps(payload), cwd=repo, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def payload(name: str, repo: Path, **changes: Any) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (FIXTURES / f"{name}.json").read_text().replace("/home/user/project", str(repo))
    )
    return {**found, **changes}


def test_an_import_after_the_hooks_adopts_their_session_and_prompt(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    session = SESSIONS[JSONL]
    # What `gemini -p` sends: the session-start context before the prompt.
    context = "<hook_context># Memory for project\n- CI must use Node 22\n</hook_context>\n\n"
    hook(
        "before-agent",
        payload("before-agent", repo, session_id=session, prompt=context + PROMPT),
        repo,
        home,
    )
    db = sqlite3.connect(home / "history.db")
    assert db.execute("SELECT content FROM messages").fetchall() == [(PROMPT,)]  # the user's words
    report = import_file(JSONL, home, repo)
    assert report["messages_adopted"] == 1 and report["messages_added"] == 3
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
    prompts = db.execute("SELECT external_id, content FROM messages WHERE role = 'user'").fetchall()
    assert prompts == [("d7d3918a-29d5-401b-a3da-63bb508220a3", PROMPT)]


@BOTH
def test_auto_memory_and_the_last_reply_read_the_recording(path: Path) -> None:
    conversation = read_conversation(path.read_text())
    assert [text for role, text in conversation if role == "user"] == [PROMPT]
    assert conversation[-1] == ("assistant", LAST)
    assert transcripts.last_reply(str(path)) == LAST


@BOTH
def test_the_after_agent_hook_without_a_reply_takes_the_recordings_last(
    path: Path, repo: Path
) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    # Gemini CLI sends an empty prompt_response when the turn's reply had no text.
    hook(
        "after-agent",
        payload("after-agent", repo, prompt_response="", transcript_path=str(path)),
        repo,
    )
    assert f"Last reply: {LAST}" in (repo / ".voyager" / "brain.md").read_text()


def test_the_folder_import_takes_the_recordings_of_this_version(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    shutil.copy(JSONL, chats / "session-2026-11-27T13-43-4fd7d154.jsonl")
    report = import_file(chats, tmp_path / "home", tmp_path)
    assert report["session_external_id"] == SESSIONS[JSONL]


KEYS = st.sampled_from(
    ["sessionId", "projectHash", "messages", "id", "type", "content", "text", "thought",
     "toolCalls", "name", "args", "result", "status", "functionResponse", "response",
     "output", "error", "$set", "$rewindTo", "timestamp"]
)  # fmt: skip
VALUES = st.sampled_from(["user", "gemini", "success", "error", "cancelled", "s", "h"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | VALUES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=30,
)


@given(JSON)
def test_property_any_json_value_reads_without_error(value: Any) -> None:
    document = {"sessionId": "s", "projectHash": "h", "messages": value}
    for whole in (value, document, {"sessionId": "s", "projectHash": "h", "messages": [value]}):
        entries = entries_of(whole)
        assert entries is None or all(e["type"] in ("user", "assistant") for e in entries)
    reader = Recording("s")
    for record in (
        value,
        {"id": "m", "type": "gemini", "toolCalls": value},
        {"id": "m", "type": "user", "content": value},
    ):
        if isinstance(record, dict):
            reader.entries(record)
    text = json.dumps({**document, "messages": [value]}, indent=2)  # as up to 0.38
    read_conversation(text)
    assert transcripts.document_entries(text.encode()) is not None


@given(st.binary(max_size=300), st.lists(JSON, max_size=4))
def test_property_any_bytes_as_a_recording_read_without_error(
    data: bytes, lines: list[Any]
) -> None:
    first = json.dumps({"sessionId": "s", "projectHash": "h"}).encode() + b"\n"
    body = b"".join(json.dumps(v).encode() + b"\n" for v in lines)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        for whole in (data, b"{\n" + data, first + data, first + body, b"{\n" + body):
            entries = transcripts.entries(whole.decode("utf-8", "replace"))
            assert entries is None or isinstance(entries, list)
            for _, batch in transcripts.batches(io.BytesIO(whole), 64):
                assert all(isinstance(raw, bytes) for raw in batch)
            path.write_bytes(whole)
            reply = transcripts.last_reply(str(path))
            assert reply is None or isinstance(reply, str)

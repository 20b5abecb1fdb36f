"""GitHub Copilot CLI's session logs (``events.jsonl``) read as Claude Code transcript
entries (`transcripts.copilot`), imported into the history, read by auto-memory and for a
turn's last reply. The log is the one Copilot CLI 1.0.102 wrote in a real session
(tests/fixtures/copilot/SOURCES.md)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import transcripts
from voyager_brain.integrations import copilot as hooks
from voyager_brain.memory.extract import read_conversation
from voyager_brain.transcripts import translator
from voyager_brain.transcripts.copilot import EventLog

FIXTURES = Path(__file__).parent.parent / "fixtures" / "copilot"
LOG = FIXTURES / "session-events.jsonl"
SESSION = "3f6c2a9e-8b1d-4e7a-9c55-1d2e3f4a5b6c"
PROMPTS = [
    "Create app.py printing hello, make it say hello, world, show it, then show missing.txt"
    " and list missing-dir",
    "Thanks. What does the app print now?",
]
REPLY = "It prints: hello, world"
EDIT = {"old_string": "print('hello')", "new_string": "print('hello, world')"}


def read(path: Path = LOG) -> list[dict[str, Any]]:
    lines = path.read_bytes().splitlines(keepends=True)
    entries = [json.loads(raw) for raw in translator()(lines)]
    assert len(entries) >= len(lines)  # every line stands for one entry at least
    return [e for e in entries if e["type"] in ("user", "assistant")]


def blocks(said: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The entries' content blocks of one kind, in order."""
    return [b for e in said if isinstance(e["message"]["content"], list)
            for b in e["message"]["content"] if b["type"] == kind]  # fmt: skip


def test_the_recorded_session_reads_as_prompts_calls_results_and_replies() -> None:
    said = read()
    assert all(e["sessionId"] == SESSION and e["cwd"] == "/home/user/project" for e in said)
    assert all(e["timestamp"].startswith("2026-11-27T13:42:") for e in said)
    prompts = [e["message"]["content"] for e in said if isinstance(e["message"]["content"], str)]
    assert prompts == PROMPTS
    replies = [transcripts.message_text(e["message"]) for e in said if e["type"] == "assistant"]
    assert [r for r in replies if r] == [
        "I'll create the app first.",
        "app.py now prints hello, world. missing.txt and missing-dir do not exist.",
        REPLY,
    ]
    uses = blocks(said, "tool_use")
    results = {b["tool_use_id"]: b for b in blocks(said, "tool_result")}
    assert [(u["name"], u["input"]) for u in uses] == [
        ("Write", {"file_path": "/home/user/project/app.py", "content": "print('hello')\n"}),
        ("Edit", {"file_path": "/home/user/project/app.py", **EDIT}),
        ("Bash", {"command": "cat app.py", "description": "Show the app"}),
        ("Read", {"file_path": "/home/user/project/missing.txt"}),
        ("Bash", {"command": "ls missing-dir", "description": "List a missing folder"}),
    ]
    assert [u["id"] for u in uses] == list(results)  # every call has its result, in order
    outcome = [(results[u["id"]]["is_error"], results[u["id"]]["content"]) for u in uses]
    assert outcome[0] == (False, "Created file /home/user/project/app.py with 15 characters")
    assert outcome[2] == (False, "print('hello, world')\n<shellId: 0 completed with exit code 0>")
    assert outcome[3] == (True, "Path does not exist")  # Copilot's own failure
    assert outcome[4][0] is True  # `ls` exited 2: Copilot says success, the exit code not
    ids = [e["uuid"] for e in said]
    assert len(set(ids)) == len(ids)  # the event's id, and id/call for its tool calls


def test_the_import_and_the_hooks_name_each_call_alike() -> None:
    """The log holds what each postToolUse hook was given (``hook.start``): the hook's
    reading of it and the log's own call are the same tool, input and outcome."""
    events = [json.loads(line) for line in LOG.read_text().splitlines()]
    given = [e["data"]["input"] for e in events if e["type"] == "hook.start"
             and e["data"]["hookType"] in ("postToolUse", "postToolUseFailure")]  # fmt: skip
    by_hooks = []
    for payload in given:
        event = "post-tool-use" if "toolResult" in payload else "post-tool-use-failure"
        call = hooks.read(event, payload)
        by_hooks.append((call.tool, call.tool_input, call.success))
    said = read()
    uses = blocks(said, "tool_use")
    failed = {b["tool_use_id"]: b["is_error"] for b in blocks(said, "tool_result")}
    assert by_hooks == [(u["name"], u["input"], not failed[u["id"]]) for u in uses]


def test_a_shell_command_that_exits_non_zero_is_a_failed_call_for_the_hook() -> None:
    for name, success in (("post-tool-use", True), ("post-tool-use-exit-code", False)):
        payload = json.loads((FIXTURES / f"{name}.json").read_text())
        assert hooks.read("post-tool-use", payload).success is success
    assert hooks.shell_failed("x\n<shellId: 3 completed with exit code 1>\n<sandbox is active>")
    assert not hooks.shell_failed("<shellId: 3 completed with exit code 0>")
    assert not hooks.shell_failed("printed: <shellId: 3 completed with exit code 1> inline")
    assert not hooks.shell_failed(None)


def test_history_import_of_the_log(tmp_path: Path, isolated_env: Path) -> None:
    done = run_cli("history", "import", str(LOG), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)
    assert report["session_external_id"] == SESSION and report["bad_lines"] == 0
    assert (report["tool_calls_added"], report["results_recorded"]) == (5, 5)
    db = sqlite3.connect(isolated_env / "history.db")
    [(external, status)] = db.execute("SELECT external_id, status FROM sessions").fetchall()
    assert (external, status) == (SESSION, "completed")
    said = db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    assert [c for r, c in said if r == "user"] == PROMPTS
    assert ("assistant", REPLY) in said
    calls = db.execute("SELECT tool, input, output, success, external_id FROM tool_calls"
                       " ORDER BY id").fetchall()  # fmt: skip
    assert [(c[0], c[3]) for c in calls] == [
        ("Write", 1), ("Edit", 1), ("Bash", 1), ("Read", 0), ("Bash", 0)
    ]  # fmt: skip
    assert json.loads(calls[2][1]) == {"command": "cat app.py", "description": "Show the app"}
    assert calls[2][2].startswith("print('hello, world')")
    assert calls[3][2] == "Path does not exist"
    assert all(c[4].startswith("call_") for c in calls)  # Copilot's toolCallId
    before = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("sessions", "messages", "tool_calls")]  # fmt: skip
    again = run_cli("history", "import", str(LOG), "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    [second] = json.loads(again.stdout)
    assert second["messages_added"] == second["tool_calls_added"] == 0
    after = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
             for t in ("sessions", "messages", "tool_calls")]  # fmt: skip
    assert after == before


def test_auto_memory_and_the_last_reply_read_the_log() -> None:
    said = read_conversation(LOG.read_text())
    assert [text for role, text in said if role == "user"] == PROMPTS
    assert said[-1] == ("assistant", REPLY)
    assert transcripts.last_reply(str(LOG)) == REPLY


def test_the_turns_end_writes_the_last_reply_from_the_log(repo: Path, tmp_path: Path) -> None:
    """Copilot's agentStop names the log in ``transcriptPath`` and carries no reply."""
    assert run_cli("init", cwd=repo).returncode == 0
    log = tmp_path / ".copilot" / "session-state" / SESSION / "events.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copy(LOG, log)
    payload = json.loads((FIXTURES / "agent-stop.json").read_text())
    assert "reply" not in json.dumps(payload).lower()
    payload.update(cwd=str(repo), transcriptPath=str(log))
    done = run_cli("hook", "copilot", "agent-stop", cwd=repo, input=json.dumps(payload))
    assert (done.returncode, done.stderr) == (0, "")
    brain = (repo / ".voyager" / "brain.md").read_text()
    assert "<!-- source: copilot -->" in brain and f"Last reply: {REPLY}" in brain


def test_other_files_are_not_copilot_logs() -> None:
    claude = {"type": "user", "uuid": "u", "parentUuid": None, "message": {"content": "hi"}}
    rollout = {"type": "session_meta", "payload": {"id": "s"}}
    for first in (claude, rollout, "not json", None, [1], {"type": "user.message"}):
        assert EventLog.of(first) is None
    start = json.loads(LOG.read_text().splitlines()[0])
    assert EventLog.of(start) is not None


def test_a_subagents_events_and_the_users_own_commands_are_left_out() -> None:
    log = EventLog()
    base = {"id": "e1", "timestamp": "2026-11-27T13:42:26.122Z", "parentId": None}
    prompt = {"content": "inner task"}
    assert log.entries({**base, "type": "user.message", "agentId": "a1", "data": prompt}) == []
    skill = {"content": "skill text", "source": "skill-pdf"}
    assert log.entries({**base, "type": "user.message", "data": skill}) == []
    own = {"toolCallId": "c1", "success": True, "isUserRequested": True, "result": {}}
    assert log.entries({**base, "type": "tool.execution_complete", "data": own}) == []
    typed = {"content": "go", "source": "user"}
    [entry] = log.entries({**base, "type": "user.message", "data": typed})
    assert entry["message"] == {"role": "user", "content": "go"} and entry["sessionId"] is None


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=12
)
KINDS = st.sampled_from(
    ["session.start", "session.resume", "session.context_changed", "user.message",
     "assistant.message", "tool.execution_complete", "hook.start", "abort"]
)  # fmt: skip
FIELDS = st.sampled_from(
    ["content", "toolRequests", "toolCallId", "success", "result", "error", "shellExecution",
     "context", "sessionId", "source", "agentId", "isUserRequested", "parentToolCallId"]
)  # fmt: skip
NAMED = st.sampled_from(["toolCallId", "name", "arguments", "content", "message", "cwd"])
PARTS = JSON | st.lists(st.dictionaries(NAMED, JSON | st.text(min_size=1)))
OPTIONAL = {"id": JSON | st.text(min_size=1), "parentId": JSON, "timestamp": JSON}
EVENT = st.fixed_dictionaries(
    {"type": KINDS, "data": JSON | st.dictionaries(FIELDS, PARTS)}, optional=OPTIONAL
)


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=200) | EVENT.map(lambda e: json.dumps(e).encode())))
def test_property_any_lines_after_a_session_start_read_without_error(tail: list[bytes]) -> None:
    first = LOG.read_bytes().splitlines(keepends=True)[0]
    out = translator()([first, *tail])
    assert len(out) >= 1 + len(tail)
    text = b"\n".join([first.rstrip(b"\n"), *tail]).decode("utf-8", "replace")
    transcripts.entries(text)
    read_conversation(text)

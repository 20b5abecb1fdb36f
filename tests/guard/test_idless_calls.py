"""Agents that give a tool call no id (Gemini CLI, Copilot CLI): the result the hook after
the call records goes on the row the hook before it wrote, found by session, tool and
input (`spool._find_call`), so each call is one row. Recorded payloads, real hooks."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: Per agent: the check's and the result's fixture and event, and the key of the input.
AGENTS = {
    "gemini": ("before-tool", "after-tool", "tool_input"),
    "copilot": ("pre-tool-use", "post-tool-use", "toolArgs"),
}


def _payload(agent: str, name: str, repo: Path, command: str) -> str:
    data = json.loads((FIXTURES / agent / f"{name}.json").read_text())
    data["cwd"] = str(repo)
    key = AGENTS[agent][2]
    args = {"command": command, "description": "the same before and after"}
    data[key] = args if isinstance(data[key], dict) else json.dumps(args)
    if agent == "gemini":
        data["tool_response"] = {"llmContent": f"ran {command}", "returnDisplay": ""}
    else:
        data["toolResult"] = {"resultType": "success", "textResultForLlm": f"ran {command}"}
    return json.dumps(data)


def _hook(agent: str, event: str, stdin: str, repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", agent, event],
        input=stdin, cwd=repo, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_each_call_without_an_id_is_one_row_with_its_result(
    agent: str, repo: Path, isolated_env: Path
) -> None:
    run_cli("init", cwd=repo)
    before, after, _ = AGENTS[agent]
    # The same command twice, then another: each result on its own call.
    for command in ("pytest -q", "pytest -q", "ls"):
        _hook(agent, before, _payload(agent, before, repo, command), repo)
        _hook(agent, after, _payload(agent, after, repo, command), repo)
    db = sqlite3.connect(isolated_env / "history.db")
    rows = db.execute("SELECT tool, input, output FROM tool_calls ORDER BY id").fetchall()
    assert [(tool, json.loads(given)["command"]) for tool, given, _ in rows] == [
        ("Bash", "pytest -q"), ("Bash", "pytest -q"), ("Bash", "ls"),
    ]  # fmt: skip
    assert [output for _, _, output in rows] == ["ran pytest -q", "ran pytest -q", "ran ls"]


def _copilot_calls(log: Path, repo: Path) -> list[tuple[str, str]]:
    """The (preToolUse, postToolUse) payloads Copilot CLI sends for the calls of `log`."""
    payloads, session = [], ""
    for line in log.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "session.start":
            session = event["data"]["sessionId"]
        for asked in (
            event["data"].get("toolRequests") or [] if event["type"] == "assistant.message" else []
        ):
            base = {"sessionId": session, "timestamp": 1, "cwd": str(repo),
                    "toolName": asked["name"], "toolArgs": asked["arguments"]}  # fmt: skip
            result = {"toolResult": {"resultType": "success", "textResultForLlm": "done"}}
            payloads.append((json.dumps(base), json.dumps(base | result)))
    return payloads


def _cursor_calls(log: Path, repo: Path) -> list[tuple[str, str]]:
    """The preToolUse and postToolUse payloads of the shell calls of a Cursor transcript
    (ids of their own, which the transcript does not have): the one tool whose name and
    input Cursor's hooks and its transcripts are known to share (its file tools reach
    the hooks as Write, its transcripts as StrReplace, Write, Read ...)."""
    payloads = []
    for n, line in enumerate(log.read_text().splitlines()):
        entry = json.loads(line)
        for block in (entry.get("message") or {}).get("content") or []:
            if block.get("type") == "tool_use" and block["name"] == "Shell":
                base = {"conversation_id": log.stem, "hook_event_name": "preToolUse",
                        "workspace_roots": [str(repo)], "cwd": str(repo),
                        "tool_name": block["name"], "tool_input": block["input"],
                        "tool_use_id": f"call_{n}"}  # fmt: skip
                after = base | {"hook_event_name": "postToolUse", "tool_output": "done"}
                payloads.append((json.dumps(base), json.dumps(after)))
    return payloads


@pytest.mark.parametrize(
    ("agent", "log", "calls", "others"),
    [
        ("copilot", "session-events.jsonl", _copilot_calls, 0),
        ("cursor", "agent-transcript.jsonl", _cursor_calls, 3),  # Read, Edit, ApplyPatch
    ],
)
def test_an_import_adopts_the_calls_the_hooks_recorded_without_the_transcripts_ids(
    agent: str, log: str, calls: Any, others: int, repo: Path, isolated_env: Path
) -> None:
    run_cli("init", cwd=repo)
    path = FIXTURES / agent / log
    made = calls(path, repo)
    assert made
    for before, after in made:
        _hook(agent, "pre-tool-use", before, repo)
        _hook(agent, "post-tool-use", after, repo)
    db = sqlite3.connect(isolated_env / "history.db")
    assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == len(made)
    done = run_cli("history", "import", str(path), "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)
    assert (report["tool_calls_added"], report["tool_calls_adopted"]) == (others, len(made))
    assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == len(made) + others
    # No placeholder message of the hooks is left empty.
    empty = "SELECT COUNT(*) FROM messages m WHERE role = 'assistant' AND content IS NULL"
    empty += " AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.message_id = m.id)"
    assert db.execute(empty).fetchone()[0] == 0

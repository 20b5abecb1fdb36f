"""The real Gemini CLI (npm @google/gemini-cli, pinned in .ci/run) with voyager-brain's
hooks, against a scripted Gemini API on 127.0.0.1 (`gemini_mock`), in ``gemini -p`` with
every tool call approved (``--approval-mode yolo``) and the workspace trusted
(``GEMINI_CLI_TRUST_WORKSPACE``: Gemini CLI runs a project's hooks only in a trusted
folder).

Runs when ``VOYAGER_GEMINI_CLI`` names the CLI (or ``gemini`` is on PATH); .ci/run
installs it and sets ``VOYAGER_E2E=required``, which turns the skip into a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from e2e import agent_cli, history, prepared
from gemini_mock import MockGemini, call, text

PACKAGE = "@google/gemini-cli@0.61.0"


@pytest.fixture
def gemini() -> str:
    return agent_cli("VOYAGER_GEMINI_CLI", "gemini", PACKAGE)


@pytest.fixture
def project(repo: Path) -> Path:
    return prepared(repo, "gemini")


def run_gemini(gemini: str, repo: Path, mock: MockGemini, prompt: str) -> Path:
    """``gemini -p PROMPT`` in `repo` against `mock`; Gemini CLI's home folder."""
    home = repo.parent / "gemini-home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    settings = {
        # With GOOGLE_GEMINI_BASE_URL alone Gemini CLI picks "gateway" auth, which its
        # non-interactive mode refuses: the API key's auth, sent to the mock.
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    env = {
        **os.environ,
        "HOME": str(home),
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": mock.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "NO_COLOR": "1",
        # The hooks run `voyager-brain`: this interpreter's.
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }
    # A model named: no routing request before the main loop's. No stdin: Gemini CLI
    # reads one that is not a terminal into the prompt (under pytest, the SessionStart
    # context then never reached the model).
    command = [gemini, "--approval-mode", "yolo", "-m", "gemini-2.5-pro", "-p", prompt]
    done = subprocess.run(
        command,
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return home


def answers(request: dict[str, Any]) -> list[Any]:
    """The tools' answers the model is sent (``functionResponse.response``)."""
    return [
        part["functionResponse"]["response"]
        for content in request["contents"]
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]


def recording(home: Path) -> Path:
    [found] = (home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    return found


def test_the_context_reaches_the_model_and_a_block_reaches_it_as_the_calls_answer(
    gemini: str, project: Path, isolated_env: Path
) -> None:
    script = [call("run_shell_command", {"command": "rm -rf build"}), text("Done.")]
    with MockGemini(script) as mock:
        run_gemini(gemini, project, mock, "clean the build")
        first, last = mock.requests[0], mock.requests[-1]
    assert "CI must use Node 22" in json.dumps(first["contents"])
    [blocked] = answers(last)
    assert "voyager-brain guard blocked this Bash call" in json.dumps(blocked)
    assert "Rule 1 (block): no rm -rf" in json.dumps(blocked)
    fired = history(isolated_env).execute("SELECT action_taken FROM rule_triggers").fetchall()
    assert [row[0] for row in fired] == ["block"]


def test_the_recording_imports_into_the_hooks_session(
    gemini: str, project: Path, isolated_env: Path
) -> None:
    script = [call("run_shell_command", {"command": "echo hi"}), text("It printed hi.")]
    with MockGemini(script) as mock:
        home = run_gemini(gemini, project, mock, "say hi with echo")
    path = recording(home)
    db = history(isolated_env)
    [session] = db.execute("SELECT external_id, transcript_path FROM sessions").fetchall()
    assert session["transcript_path"] == str(path)  # the hooks' transcript_path
    # The prompt the hook recorded is the user's, without the context before it.
    [prompt] = db.execute("SELECT content FROM messages WHERE role = 'user'").fetchall()
    assert prompt["content"] == "say hi with echo"
    assert "Last reply: It printed hi." in (project / ".voyager" / "brain.md").read_text()

    done = run_cli("history", "import", str(path), "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)
    assert report["session_external_id"] == session["external_id"]
    assert report["messages_adopted"] == 1  # the hook's prompt
    assert report["bad_lines"] == 0
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    calls = db.execute(
        "SELECT external_id, output, success FROM tool_calls WHERE tool = 'Bash'"
        " AND json_extract(input, '$.command') = 'echo hi' AND external_id IS NOT NULL"
    ).fetchall()
    [(external, output, success)] = calls
    assert external.startswith("run_shell_command") and "Output: hi" in output and success == 1
    again = run_cli("history", "import", str(path), "--json", cwd=project)
    [report] = json.loads(again.stdout)
    assert (report["messages_added"], report["tool_calls_added"]) == (0, 0)


def test_each_call_is_one_row_after_the_hooks_and_an_import(
    gemini: str, project: Path, isolated_env: Path
) -> None:
    """Gemini CLI's BeforeTool and AfterTool carry no tool-call id: the result finds its
    call by tool and input, and the import adopts the hooks' row the same way."""
    script = [call("run_shell_command", {"command": "echo hi"}), text("It printed hi.")]
    with MockGemini(script) as mock:
        home = run_gemini(gemini, project, mock, "say hi with echo")
    db = history(isolated_env)
    [(output,)] = db.execute("SELECT output FROM tool_calls").fetchall()
    assert output is not None and "hi" in output  # the hooks: one row, with its result
    assert run_cli("history", "import", str(recording(home)), cwd=project).returncode == 0
    rows = db.execute("SELECT tool, external_id FROM tool_calls").fetchall()
    assert len(rows) == 1 and rows[0][0] == "Bash" and rows[0][1] is not None

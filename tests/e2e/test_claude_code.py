"""The real Claude Code CLI (npm @anthropic-ai/claude-code, pinned in .ci/run) with
voyager-brain's hooks and MCP server, against a scripted model on 127.0.0.1
(`anthropic_mock`): what the model is sent, what the hooks do, what the history keeps.

Runs when ``VOYAGER_CLAUDE_CODE`` names the CLI (or ``claude`` is on PATH); .ci/run
installs it and sets ``VOYAGER_E2E=required``, which turns the skip into a failure."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from anthropic_mock import MockAnthropic, text, tool
from claude_run import run_claude, tool_results
from conftest import run_cli
from e2e import agent_cli, history, prepared

from voyager_brain.memory.tool import brain_tool


@pytest.fixture
def claude() -> str:
    return agent_cli("VOYAGER_CLAUDE_CODE", "claude", "@anthropic-ai/claude-code@2.1.197")


@pytest.fixture
def project(repo: Path) -> Path:
    return prepared(repo, "claude")


def test_the_context_reaches_the_model_and_a_block_reaches_it_as_the_tools_error(
    claude: str, project: Path, isolated_env: Path
) -> None:
    script = [tool("Bash", {"command": "rm -rf build", "description": "clean"}), text("Done.")]
    with MockAnthropic(script) as mock:
        result = run_claude(claude, project, mock.url, "clean the build")
        first, last = mock.main_requests()[0], mock.main_requests()[-1]
    # SessionStart's context is in the first request the model gets.
    assert "CI must use Node 22" in json.dumps(first)
    [blocked] = tool_results(last)
    assert blocked["is_error"] is True
    assert blocked["content"] == (
        "voyager-brain guard blocked this Bash call.\n- Rule 1 (block): no rm -rf\n"
        "  Solution: use git clean -fdx\n"
        "Do not retry the same call; follow the solution above or ask the user."
    )
    db = history(isolated_env)
    session = db.execute("SELECT * FROM sessions WHERE external_id = ?", (result["session_id"],))
    assert session.fetchone() is not None
    fired = db.execute("SELECT rule_id, action_taken FROM rule_triggers").fetchall()
    assert [tuple(row) for row in fired] == [(1, "block")]
    prompt = db.execute("SELECT content FROM messages WHERE role = 'user'").fetchone()
    assert prompt["content"] == "clean the build"


def test_a_turn_and_a_session_leave_their_record(
    claude: str, project: Path, isolated_env: Path
) -> None:
    with MockAnthropic([text("Nothing to do.")]) as mock:
        run_claude(claude, project, mock.url, "say hello")
    brain = (project / ".voyager" / "brain.md").read_text()
    assert "## Loop Status" in brain  # Stop: the turn's loop_status entry
    state = json.loads((project / ".voyager" / "brain.json").read_text())
    assert state["sessionCount"] == 1  # SessionEnd: the session counted


def test_the_mcp_servers_tools_are_offered_and_a_call_is_answered(
    claude: str, project: Path, isolated_env: Path
) -> None:
    assert run_cli("install", "mcp", "claude", cwd=project).returncode == 0
    script = [tool("mcp__voyager-brain__recall", {"query": "Node"}), text("Found it.")]
    with MockAnthropic(script) as mock:
        run_claude(
            claude, project, mock.url, "what node version?",
            "--mcp-config", ".mcp.json", "--allowedTools", "mcp__voyager-brain__recall",
        )  # fmt: skip
        first, last = mock.main_requests()[0], mock.main_requests()[-1]
    offered = {t["name"] for t in first["tools"]}
    assert {"mcp__voyager-brain__recall", "mcp__voyager-brain__save"} <= offered
    [answer] = tool_results(last)
    assert "CI must use Node 22" in json.dumps(answer["content"])
    assert not answer.get("is_error")


def test_a_warning_lets_the_call_run_and_reaches_the_model(
    claude: str, project: Path, isolated_env: Path
) -> None:
    done = run_cli(
        "rules", "add", "--pattern", r"git\s+status", "--tool", "Bash", "--action", "warn",
        "--description", "prefer git status --short", cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    script = [tool("Bash", {"command": "git status", "description": "status"}), text("Clean.")]
    with MockAnthropic(script) as mock:
        run_claude(claude, project, mock.url, "status?", "--allowedTools", "Bash(git status)")
        last = mock.main_requests()[-1]
    [ran] = tool_results(last)
    assert not ran.get("is_error") and "On branch" in json.dumps(ran["content"])
    assert "prefer git status --short" in json.dumps(last["messages"])
    fired = history(isolated_env).execute("SELECT action_taken FROM rule_triggers").fetchall()
    assert [row[0] for row in fired] == ["warn"]


def test_a_log_rule_lets_the_call_run_says_nothing_and_records_the_trigger(
    claude: str, project: Path, isolated_env: Path
) -> None:
    done = run_cli(
        "rules", "add", "--pattern", r"git\s+log", "--tool", "Bash", "--action", "log",
        "--description", "who reads the history", cwd=project,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "2", done.stderr
    call = {"command": "git log --oneline", "description": "history"}
    with MockAnthropic([tool("Bash", call), text("One commit.")]) as mock:
        result = run_claude(
            claude, project, mock.url, "history?", "--allowedTools", "Bash(git log --oneline)"
        )
        last, sent = mock.main_requests()[-1], json.dumps(mock.requests)
    [ran] = tool_results(last)
    assert not ran.get("is_error") and "initial" in json.dumps(ran["content"])
    # Nothing of the rule reaches the model, nor the user.
    assert "who reads the history" not in sent and "voyager-brain guard" not in sent
    assert "who reads the history" not in json.dumps(result)
    db = history(isolated_env)
    fired = db.execute("SELECT rule_id, action_taken FROM rule_triggers").fetchall()
    assert [tuple(row) for row in fired] == [(2, "log")]
    [row] = db.execute(
        "SELECT c.tool, c.success, c.output, c.blocked_by_rule_id FROM tool_calls c"
        " JOIN rule_triggers t ON t.tool_call_id = c.id"
    ).fetchall()
    assert (row["tool"], row["success"], row["blocked_by_rule_id"]) == ("Bash", 1, None)
    assert "initial" in row["output"]  # PostToolUse recorded the call's result


def test_compact_runs_precompact_which_compacts_the_brain(
    claude: str, project: Path, isolated_env: Path
) -> None:
    # Three turns' loop_status entries, as the Stop hook writes them.
    for turn in range(3):
        run_cli("add", "loop_status", f"Turn: {turn}", cwd=project)
    with MockAnthropic([text("Summary.")]) as mock:
        # Claude Code 2.1.197 runs PreCompact (custom_instructions null) even when it
        # finds too little to compact itself.
        run_claude(claude, project, mock.url, "/compact")
    brain = (project / ".voyager" / "brain.md").read_text()
    assert brain.count("## Loop Status") == 1  # the older ones compacted away


def test_a_context_larger_than_claude_code_keeps_reaches_it_whole(
    claude: str, project: Path, isolated_env: Path
) -> None:
    """Past 10,000 characters Claude Code 2.1.197 sends the model a 2 KB preview and a
    file's path instead of the context: the hook builds it smaller, so it arrives whole."""
    (project / ".voyager" / "config.toml").write_text("prompt_budget = 20000\n")
    words = ["alpha", "beta", "gamma", "delta", "zeta", "theta", "kappa", "sigma", "omega"]
    pick = random.Random(3)
    for i in range(80):
        said = f"Learning {i}: " + " ".join(pick.choice(words) for _ in range(30))
        brain_tool("add", cwd=str(project), type="learning", text=said)
    assert len(run_cli("context", cwd=project).stdout) > 12_000
    with MockAnthropic([text("ok")]) as mock:
        run_claude(claude, project, mock.url, "hi")
        first = json.dumps(mock.main_requests()[0])
    assert "persisted-output" not in first
    assert "## Learnings" in first and "Left out for room" in first

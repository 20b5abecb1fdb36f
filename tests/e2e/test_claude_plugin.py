"""The Claude Code plugin as a user installs it: the real CLI (npm
@anthropic-ai/claude-code, pinned in .ci/run) adds this repository's marketplace
(.claude-plugin/marketplace.json) and installs plugins/voyager-brain from it, into a home
of its own, as docs/agents/claude.md says. The project has voyager-brain's memory and a
rule but no hooks of its own: all that runs comes from the plugin. Against the scripted
model (`anthropic_mock`): the context, the MCP tools under the plugin's names, a guard
rule on one of them, the turn's record.

Runs when ``VOYAGER_CLAUDE_CODE`` names the CLI (or ``claude`` is on PATH); .ci/run
installs it and sets ``VOYAGER_E2E=required``, which turns the skip into a failure."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from anthropic_mock import MockAnthropic, text, tool
from claude_run import claude_env, run_claude, tool_results
from conftest import ROOT, run_cli
from e2e import agent_cli, history

MARKETPLACE = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
#: What `claude plugin install` takes: plugin@marketplace (voyager-brain@voyager-brain).
PLUGIN = f"{MARKETPLACE['plugins'][0]['name']}@{MARKETPLACE['name']}"
#: Claude Code 2.1.197 names a plugin's MCP tools mcp__plugin_PLUGIN_SERVER__TOOL.
TOOL = "mcp__plugin_voyager-brain_voyager-brain__"

REASON = (
    f"voyager-brain guard blocked this {TOOL}save call.\n"
    "- Rule 1 (block): the goal is the user's to set\n"
    "  Solution: ask the user for the goal\n"
    "Do not retry the same call; follow the solution above or ask the user."
)


@pytest.fixture
def claude() -> str:
    return agent_cli("VOYAGER_CLAUDE_CODE", "claude", "@anthropic-ai/claude-code@2.1.197")


def claude_ok(claude: str, repo: Path, *args: str) -> str:
    """`claude ARGS` in `repo`, in its home, which must succeed: its output."""
    done = subprocess.run(
        [claude, *args], cwd=repo, env=claude_env(repo), capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, (args, done.stdout + done.stderr)
    return done.stdout


@pytest.fixture
def project(repo: Path, claude: str) -> Path:
    """`repo` with a learning, a block rule on the MCP server's `save` written as
    docs/mcp.md says, and the plugin installed for the user from this checkout."""
    for args in (
        ["init"],
        ["brain", "action=add", "type=learning", "text=CI must use Node 22"],
        ["rules", "add", "--pattern", r"(?i)\bship\b", "--tool", "mcp__voyager-brain__save",
         "--description", "the goal is the user's to set", "--solution",
         "ask the user for the goal"],
    ):  # fmt: skip
        done = run_cli(*args, cwd=repo)
        assert done.returncode == 0, (args, done.stderr)
    added = claude_ok(claude, repo, "plugin", "marketplace", "add", str(ROOT))
    assert f"marketplace: {MARKETPLACE['name']}" in added
    assert f"installed plugin: {PLUGIN}" in claude_ok(claude, repo, "plugin", "install", PLUGIN)
    listed = claude_ok(claude, repo, "plugin", "list")
    assert PLUGIN in listed and "enabled" in listed
    # The default scope is the user's: the project has no Claude Code settings at all.
    assert not (repo / ".claude").exists() and not (repo / ".mcp.json").exists()
    return repo


def test_the_plugins_hooks_give_the_context_and_record_the_turn(
    claude: str, project: Path, isolated_env: Path
) -> None:
    with MockAnthropic([text("Hello from the plugin.")]) as mock:
        result = run_claude(claude, project, mock.url, "say hello")
        first = mock.main_requests()[0]
    assert "CI must use Node 22" in json.dumps(first)  # SessionStart's context
    brain = (project / ".voyager" / "brain.md").read_text()
    assert "## Loop Status" in brain and "Last reply: Hello from the plugin." in brain  # Stop
    state = json.loads((project / ".voyager" / "brain.json").read_text())
    assert state["sessionCount"] == 1  # SessionEnd
    db = history(isolated_env)
    session = db.execute("SELECT id FROM sessions WHERE external_id = ?", (result["session_id"],))
    assert session.fetchone() is not None
    prompt = db.execute("SELECT content FROM messages WHERE role = 'user'").fetchone()
    assert prompt["content"] == "say hello"  # UserPromptSubmit


def test_the_plugins_mcp_tools_are_offered_under_its_names_and_a_call_is_answered(
    claude: str, project: Path, isolated_env: Path
) -> None:
    script = [tool(f"{TOOL}recall", {"query": "Node"}), text("Found it.")]
    with MockAnthropic(script) as mock:
        run_claude(
            claude, project, mock.url, "what node version?", "--allowedTools", f"{TOOL}recall"
        )
        first, last = mock.main_requests()[0], mock.main_requests()[-1]
    offered = {t["name"] for t in first["tools"] if t["name"].startswith("mcp__")}
    # Claude Code 2.1.197 offered add, brain, compact, context, recall, rules_add,
    # rules_test, save and status, each under the plugin's prefix and no other.
    assert {f"{TOOL}recall", f"{TOOL}save", f"{TOOL}context"} <= offered
    assert all(name.startswith(TOOL) for name in offered), offered
    [answer] = tool_results(last)
    assert "CI must use Node 22" in json.dumps(answer["content"])
    assert not answer.get("is_error")
    calls = history(isolated_env).execute("SELECT tool, output FROM tool_calls").fetchall()
    assert [row["tool"] for row in calls] == [f"{TOOL}recall"]
    assert "CI must use Node 22" in calls[0]["output"]  # PostToolUse


def test_a_rule_on_save_blocks_the_plugins_save_and_the_model_reads_why(
    claude: str, project: Path, isolated_env: Path
) -> None:
    brain_json = project / ".voyager" / "brain.json"
    before = json.loads(brain_json.read_text())
    update = {"update": {"activeState": {"currentGoal": "Ship the plugin"}}}
    with MockAnthropic([tool(f"{TOOL}save", update), text("I will ask.")]) as mock:
        # Allowed, so that only the guard stands between the call and brain.json.
        result = run_claude(
            claude, project, mock.url, "set the goal", "--allowedTools", f"{TOOL}save"
        )
        last = mock.main_requests()[-1]
    [blocked] = tool_results(last)
    assert blocked.get("is_error") is True, blocked
    assert blocked["content"] == REASON
    assert [d["tool_name"] for d in result["permission_denials"]] == [f"{TOOL}save"]
    after = json.loads(brain_json.read_text())
    assert after["activeState"] == before["activeState"]
    assert "Ship the plugin" not in brain_json.read_text()
    fired = history(isolated_env).execute("SELECT rule_id, action_taken FROM rule_triggers")
    assert [tuple(row) for row in fired.fetchall()] == [(1, "block")]

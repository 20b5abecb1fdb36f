"""Codex's hooks around an MCP tool, with the payloads Codex CLI 0.171.0 sent for
voyager-brain's own server (tests/fixtures/codex/*-mcp.json, recorded from a real
`codex exec` against tests/e2e/openai_mock.py; see SOURCES.md there): the guard sees the
tool under Codex's name, and the history keeps what the tool answered, as text."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from conftest import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codex"


def recorded(name: str, cwd: Path, **changes: Any) -> str:
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    data.update(cwd=str(cwd), **changes)
    data.pop("transcript_path")
    return json.dumps(data)


def hook(event: str, cwd: Path, stdin: str) -> str:
    done = run_cli("hook", "codex", event, cwd=cwd, input=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout


def rows(isolated_env: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(isolated_env / "history.db")
    return db.execute("SELECT tool, output, success FROM tool_calls ORDER BY id").fetchall()


def test_a_rule_written_with_the_servers_name_blocks_codexs_call(repo: Path) -> None:
    run_cli("init", cwd=repo)
    for args in (
        ["--tool", "mcp__voyager-brain__save", "--pattern", "Write the docs"],
        ["--tool", "mcp__voyager-brain__add", "--pattern", "docs"],  # another tool
    ):
        added = run_cli("rules", "add", *args, "--description", "not now", cwd=repo)
        assert added.returncode == 0, added.stderr
    specific = json.loads(hook("pre-tool-use", repo, recorded("pre-tool-use-mcp", repo)))
    specific = specific["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    reason = specific["permissionDecisionReason"]
    assert reason.startswith(
        "voyager-brain guard blocked this mcp__voyager_brain__save call.\n- Rule 1 (block): not now"
    )
    assert "Rule 2" not in reason
    # Codex adds ". Tool: NAME" to an MCP call's reason: no period of ours before it.
    assert reason.endswith("ask the user") and not reason.endswith(".")


def test_an_mcp_tools_answer_is_kept_as_its_text(repo: Path, isolated_env: Path) -> None:
    """Codex sends the server's whole CallToolResult (`content`, `structuredContent`,
    `isError`): the history keeps the content's text, as it does for Claude Code's
    content blocks, and `isError` marks the call failed (Codex 0.171 sends no
    PostToolUse for such a call; a result in this shape from any agent is read so)."""
    run_cli("init", cwd=repo)
    hook("post-tool-use", repo, recorded("post-tool-use-mcp", repo))
    error = "voyager-brain: id: no entry 'nope' in the memory logs"
    failed = {"content": [{"type": "text", "text": error}], "isError": True}
    stdin = recorded(
        "post-tool-use-mcp", repo, tool_name="mcp__voyager_brain__brain", tool_response=failed,
        tool_input={"action": "remove", "id": "nope"}, tool_use_id="call_2",
    )  # fmt: skip
    hook("post-tool-use", repo, stdin)
    structured_only = {"content": [], "structuredContent": {"echo": "hi"}, "isError": False}
    stdin = recorded("post-tool-use-mcp", repo, tool_response=structured_only, tool_use_id="call_3")
    hook("post-tool-use", repo, stdin)
    (recall, output, success), *others = rows(isolated_env)
    assert (recall, success) == ("mcp__voyager_brain__recall", 1)
    assert output.startswith('{\n  "query": "Node",\n  "results": [\n')
    assert json.loads(output)["results"][0]["excerpt"] == "CI must use Node 22"
    assert others == [
        ("mcp__voyager_brain__brain", error, 0),
        ("mcp__voyager_brain__recall", '{"echo": "hi"}', 1),
    ]


def test_uninstall_leaves_no_half_table_codex_cannot_load(repo: Path) -> None:
    """A tool's approval (docs/agents/codex.md) is a table under ours: without ours, Codex
    0.171 refuses the whole file ("invalid transport in `mcp_servers.voyager-brain`").
    Uninstall says so and changes nothing; once the user removes it, it goes."""
    assert run_cli("install", "mcp", "codex", cwd=repo).returncode == 0
    config = repo / ".codex" / "config.toml"
    installed = config.read_text()
    approval = '\n[mcp_servers.voyager-brain.tools.save]\napproval_mode = "approve"\n'
    config.write_text(installed + approval)
    done = run_cli("install", "mcp", "codex", "--uninstall", cwd=repo)
    assert done.returncode == 2
    assert "[mcp_servers.voyager-brain.tools.save]" in done.stderr
    assert config.read_text() == installed + approval
    config.write_text(installed)
    assert run_cli("install", "mcp", "codex", "--uninstall", cwd=repo).returncode == 0
    assert not config.exists()


def test_failed_mcp_calls_are_read_from_the_rollout_at_the_turns_end(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """Codex sends no PostToolUse for an MCP call it refuses (no approval) or whose server
    answers an error: the Stop hook finds them failed in the rollout (recorded from the
    real run: rollout-mcp-failed.jsonl) and records Codex's error on their rows."""
    run_cli("init", cwd=repo)
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_bytes((FIXTURES / "rollout-mcp-failed.jsonl").read_bytes())
    session = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    where = {"session_id": session, "transcript_path": str(rollout), "cwd": str(repo)}
    calls = [("recall", {"query": "Node"}, "call_5fe57a487248"),
             ("save", {"update": {"nextSteps": ["Ship it"]}}, "call_c6dec61c6143"),
             ("recall", {"query": 5}, "call_fbeee7eb9829")]  # fmt: skip
    for name, given, call in calls:
        data = json.loads((FIXTURES / "pre-tool-use-mcp.json").read_text()) | where
        data.update(tool_name=f"mcp__voyager_brain__{name}", tool_input=given, tool_use_id=call)
        hook("pre-tool-use", repo, json.dumps(data))
        if call == "call_5fe57a487248":  # the one that worked: its PostToolUse
            answer = {"content": [{"type": "text", "text": "1 match"}], "isError": False}
            hook("post-tool-use", repo, json.dumps(data | {"tool_response": answer}))
    stop = json.loads((FIXTURES / "stop.json").read_text()) | where
    for _ in range(2):  # a second turn's end reads the same lines again: nothing changes
        hook("stop", repo, json.dumps(stop))
        recall, save, bad = rows(isolated_env)
        assert recall == ("mcp__voyager_brain__recall", "1 match", 1)
        approval = "MCP tool call requires approval, but approval policy is never"
        assert save == ("mcp__voyager_brain__save", approval, 0)
        assert bad[1].startswith("tool call error: tool call failed for `voyager-brain/recall`")
        assert "Stack backtrace" not in bad[1] and bad[2] == 0

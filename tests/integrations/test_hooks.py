"""Claude Code hooks through real processes, with recorded payloads, and the installer."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, git, run_cli

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.memory.tool import brain_tool
from voyager_brain.session.brainfile import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude"


def payload(event: str, cwd: Path) -> str:
    text = (FIXTURES / f"{event}.json").read_text()
    return text.replace("CWD", str(cwd)).replace("TRANSCRIPT", str(FIXTURES / "transcript.jsonl"))


def hook(event: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", event],
        input=payload(event, cwd) if stdin is None else stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def entries(repo: Path) -> tuple[BrainEntry, ...]:
    path = repo / ".voyager" / "brain.md"
    return parse(path.read_bytes(), path).entries


def test_session_start_prints_the_context_as_additional_context(repo: Path) -> None:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="learning", text="CI must use Node 22")
    result = hook("session-start", repo)
    assert result.returncode == 0 and result.stderr == ""
    output = json.loads(result.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    # The same document as `voyager-brain context` (apart from the time in its first line).
    assert context.split("\n", 1)[1] == BrainManager(repo).context().split("\n", 1)[1]
    assert "- CI must use Node 22" in context


def test_stop_records_a_loop_status_per_turn(repo: Path) -> None:
    run_cli("init", cwd=repo)
    (repo / "app.py").write_text("print('hi')\n")
    assert hook("stop", repo).returncode == 0
    assert hook("stop", repo).returncode == 0
    statuses = [e for e in entries(repo) if e.type == "loop_status"]
    assert [e.content.splitlines()[0] for e in statuses] == ["Turn: 1", "Turn: 2"]
    content = statuses[-1].content
    assert "Session: 9b1c2f7e-4d3a-4e55-9a61-0c8f2d7b1a10" in content
    assert "Files changed: app.py" in content
    assert "Last reply: CI pins Node 18 but the code needs Node 22" in content
    assert statuses[-1].source == "claude-code"
    # The turn counter is local: it lives in cache/, which git ignores.
    assert ".voyager/cache" not in git(repo, "status", "--porcelain", "--untracked-files=all")


def test_stop_does_not_auto_compact(repo: Path) -> None:
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text("compact_budget_tokens = 60\n")
    for _ in range(4):
        hook("stop", repo)
    assert len([e for e in entries(repo) if e.type == "loop_status"]) == 4


@pytest.mark.parametrize("instructions", ["", None], ids=["manual", "auto: null"])
def test_pre_compact_compacts(repo: Path, instructions: str | None) -> None:
    # Claude Code 2.1.197 sends `"custom_instructions": null` when it compacts by itself.
    run_cli("init", cwd=repo)
    for _ in range(3):
        hook("stop", repo)
    data = json.loads(payload("pre-compact", repo)) | {"custom_instructions": instructions}
    assert hook("pre-compact", repo, json.dumps(data)).returncode == 0
    assert len([e for e in entries(repo) if e.type == "loop_status"]) == 1


def test_geminis_pre_compress_compacts_only_a_brain_over_its_budget(repo: Path) -> None:
    """Gemini CLI 0.61 fires PreCompress before every request to the model (recorded in
    tests/e2e): a brain under its budget is left as it is, one over it compacted."""
    run_cli("init", cwd=repo)
    for _ in range(3):
        hook("stop", repo)
    before = (repo / ".voyager" / "brain.md").read_bytes()
    fixture = ROOT / "tests" / "fixtures" / "gemini" / "pre-compress.json"
    data = json.dumps(json.loads(fixture.read_text()) | {"cwd": str(repo)})
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "voyager_brain", "hook", "gemini", "pre-compress"],
            input=data, cwd=repo, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert done.stdout == "" and done.stderr == ""
        assert (repo / ".voyager" / "brain.md").read_bytes() == before
    (repo / ".voyager" / "config.toml").write_text("compact_budget_tokens = 60\n")
    subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "gemini", "pre-compress"],
        input=data, cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert len([e for e in entries(repo) if e.type == "loop_status"]) == 1


def test_session_end_in_print_mode_counts_the_session(repo: Path) -> None:
    # `claude -p` ends its sessions with the reason "other" (recorded by tests/e2e).
    run_cli("init", cwd=repo)
    data = json.loads(payload("session-end", repo)) | {"reason": "other"}
    assert hook("session-end", repo, json.dumps(data)).returncode == 0
    assert json.loads((repo / ".voyager" / "brain.json").read_text())["sessionCount"] == 1


def test_session_end_counts_the_session_once(repo: Path) -> None:
    run_cli("init", cwd=repo)
    hook("stop", repo)
    assert hook("session-end", repo).returncode == 0
    assert hook("session-end", repo).returncode == 0
    state = json.loads((repo / ".voyager" / "brain.json").read_text())
    assert state["sessionCount"] == 1
    other = payload("session-end", repo).replace("9b1c2f7e", "00000000")
    hook("session-end", repo, stdin=other)
    assert json.loads((repo / ".voyager" / "brain.json").read_text())["sessionCount"] == 2


def test_a_hook_never_breaks_the_agent(repo: Path, tmp_path: Path) -> None:
    cases = [
        ("stop", repo, "not json"),
        ("stop", repo, "[1, 2]"),
        ("session-start", tmp_path / "nowhere", None),
        ("stop", tmp_path, None),  # outside any repository
    ]
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "brain.md").write_bytes(b"\xff\xfe")  # unreadable brain
    cases.append(("session-start", repo, None))
    for event, cwd, stdin in cases:
        cwd.mkdir(exist_ok=True)
        result = hook(event, cwd, stdin)
        assert result.returncode == 0, (event, cwd, stdin)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) <= 1
    assert (repo / ".voyager" / "brain.md").read_bytes() == b"\xff\xfe"


@pytest.mark.parametrize("event", ["session-start", "stop", "pre-compact", "session-end"])
def test_no_hook_imports_click_gitpython_jinja_or_markdown_it(repo: Path, event: str) -> None:
    """Each hook's full path (no cache to serve a session start): git is a plain
    subprocess, the context templates have plain-Python renderings."""
    run_cli("init", cwd=repo)
    run_cli("add", "observation", "Something to compact and show", cwd=repo)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "voyager_brain", "hook", "claude", event],
        input=payload(event, repo),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines()}
    assert "voyager_brain.integrations.hooks" in imported
    assert not {"click", "jinja2", "markdown_it", "git", "mcp", "rich"} & imported


def test_install_claude_merges_and_is_idempotent(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "./my-own-hook.sh"}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [mine]}]}}))
    first = run_cli("install", "claude", cwd=repo)
    assert first.returncode == 0 and "installed in" in first.stdout
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["Stop"][0] == {"hooks": [mine]}
    commands = [
        h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]
    ]
    for event in ("session-start", "stop", "pre-compact", "session-end"):
        assert commands.count(f"voyager-brain hook claude {event}") == 1
    before = settings.read_bytes()
    assert "already has" in run_cli("install", "claude", cwd=repo).stdout
    assert settings.read_bytes() == before
    run_cli("install", "claude", "--uninstall", cwd=repo)
    assert json.loads(settings.read_text()) == {
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [mine]}]},
    }


def test_install_claude_user_writes_the_home_settings(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = run_cli("install", "claude", "--user", cwd=repo, env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert "SessionStart" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert not (repo / ".claude").exists()


def test_install_refuses_a_settings_file_it_cannot_read(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{broken")
    result = run_cli("install", "claude", cwd=repo)
    assert result.returncode == 2 and "settings.json:1: not valid JSON" in result.stderr
    assert settings.read_text() == "{broken"


def test_hooks_pass_the_environment_through(repo: Path) -> None:
    # The hook reads VOYAGER_HOME like every command (the agent's environment).
    run_cli("init", cwd=repo)
    assert os.environ["VOYAGER_HOME"]
    hook("session-start", repo)
    assert (Path(os.environ["VOYAGER_HOME"]) / "memory.jsonl").exists()


def test_session_start_decays_stale_learnings_once_a_day(repo: Path, isolated_env: Path) -> None:
    from datetime import UTC, datetime

    run_cli("init", cwd=repo)
    old = lambda: datetime(2020, 1, 1, tzinfo=UTC)  # noqa: E731
    brain_tool(
        "add",
        cwd=str(repo),
        clock=old,
        type="learning",
        text="Ancient fact",
        source="auto",
        store="personal",
    )
    hook("session-start", repo)
    texts = [e.get("text") for e in brain_tool("list", cwd=str(repo), type="learning")["entries"]]
    assert texts == []
    stamp = isolated_env / "cache" / "last-decay"
    assert stamp.read_text() == datetime.now(UTC).date().isoformat()
    # Later the same day: no second decay (a learning added old stays until tomorrow).
    brain_tool(
        "add",
        cwd=str(repo),
        clock=old,
        type="learning",
        text="Another old fact",
        source="auto",
        store="personal",
    )
    hook("session-start", repo)
    texts = [e.get("text") for e in brain_tool("list", cwd=str(repo), type="learning")["entries"]]
    assert texts == ["Another old fact"]


def test_install_claude_adds_only_the_settings_file_to_the_repository(repo: Path) -> None:
    """The install's lock is kept in the personal folder: beside settings.json it would
    be one more untracked file in the user's repository."""
    result = run_cli("install", "claude", cwd=repo)
    assert result.returncode == 0, result.stderr
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert status.splitlines() == ["?? .claude/settings.json"]


def test_a_hook_run_with_dash_c_works_in_that_folder(repo: Path, tmp_path: Path) -> None:
    """`voyager-brain -C DIR hook ...` with a payload that names no folder: DIR's context,
    not that of the folder the agent started the hook in."""
    run_cli("init", cwd=repo)
    run_cli("add", "observation", "only in this repository", cwd=repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_cli("-C", str(repo), "hook", "claude", "session-start", cwd=elsewhere, input="{}")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "only in this repository" in context


def test_an_mcp_tools_content_blocks_are_kept_as_their_text(repo: Path, isolated_env: Path) -> None:
    # Claude Code 2.1.197 sends an MCP tool's result as its list of content blocks.
    run_cli("init", cwd=repo)
    data = json.loads(payload("post-tool-use", repo)) | {
        "tool_name": "mcp__voyager-brain__recall",
        "tool_input": {"query": "Node"},
        "tool_response": [
            {"type": "text", "text": "CI must use Node 22"},
            {"type": "text", "text": "2 matches"},
        ],
    }
    assert hook("post-tool-use", repo, json.dumps(data)).returncode == 0
    db = sqlite3.connect(isolated_env / "history.db")
    output = db.execute("SELECT output FROM tool_calls WHERE tool LIKE 'mcp__%'").fetchone()[0]
    assert output == "CI must use Node 22\n2 matches"


def test_a_rule_on_save_denies_the_plugins_save_as_claude_code_sent_it(repo: Path) -> None:
    """The PreToolUse payload of the plugin's `save`, recorded from Claude Code 2.1.197
    (tests/fixtures/claude/README.md), against a rule written as docs/mcp.md says."""
    run_cli("init", cwd=repo)
    add = run_cli(
        "rules", "add", "--pattern", "Ship", "--tool", "mcp__voyager-brain__save",
        "--description", "the goal is the user's to set", cwd=repo,
    )  # fmt: skip
    assert add.returncode == 0, add.stderr
    done = hook("pre-tool-use", repo, payload("pre-tool-use-plugin-mcp", repo))
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "mcp__plugin_voyager-brain_voyager-brain__save" in decision["permissionDecisionReason"]


@pytest.mark.parametrize(
    ("fixture", "starts"),
    [
        ("post-tool-use-plugin-mcp", '{"changes":[{"op":"change","path":"activeState.'),
        ("post-tool-use-plugin-mcp-blocks", "# Memory for project (voyager-brain)"),
    ],
)
def test_the_plugins_mcp_results_as_claude_code_sent_them_are_kept_as_text(
    repo: Path, isolated_env: Path, fixture: str, starts: str
) -> None:
    """Claude Code 2.1.197 sends an MCP tool's result as the JSON text of its structured
    content (`save`) or as its list of content blocks (`context`): recorded payloads."""
    run_cli("init", cwd=repo)
    assert hook("post-tool-use", repo, payload(fixture, repo)).returncode == 0
    db = sqlite3.connect(isolated_env / "history.db")
    [(tool, output)] = db.execute("SELECT tool, output FROM tool_calls").fetchall()
    assert tool.startswith("mcp__plugin_voyager-brain_voyager-brain__")
    assert output.startswith(starts)


#: Words of one byte a character in UTF-8, and of two.
LATIN = "alpha beta gamma delta zeta theta kappa lambda sigma omega"
GREEK = "άλφα βήτα γάμμα δέλτα ζήτα θήτα κάππα λάμδα σίγμα ωμέγα"


def _many_learnings(repo: Path, count: int, words: str = LATIN) -> None:
    pick = random.Random(3)
    for i in range(count):
        text = f"Learning {i}: " + " ".join(pick.choice(words.split()) for _ in range(30))
        brain_tool("add", cwd=str(repo), type="learning", text=text)


def test_the_context_fits_what_claude_code_keeps_whatever_the_budget(repo: Path) -> None:
    """Claude Code 2.1.197 replaces a context over 10,000 characters with a preview and a
    file's path (tests/e2e measured it): the hook keeps under that, built or cached."""
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text("prompt_budget = 20000\n")
    _many_learnings(repo, 80)
    assert len(run_cli("context", cwd=repo).stdout) > 12_000  # what the budget alone gives
    for _ in range(2):  # built, then with the too-long document in the cache
        done = hook("session-start", repo, payload("session-start", repo))
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert 8_000 < len(context) <= 10_000
        assert "Learning" in context and "Left out for room" in context


def test_the_context_fits_the_bytes_codex_keeps(repo: Path) -> None:
    """Codex 0.171 cuts the middle out of a context over 10,000 bytes of UTF-8 (measured
    in tests/e2e): text of two bytes a letter fits in bytes, not characters."""
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text("prompt_budget = 20000\n")
    _many_learnings(repo, 80, GREEK)
    fixture = ROOT / "tests" / "fixtures" / "codex" / "session-start.json"
    data = json.dumps(json.loads(fixture.read_text()) | {"cwd": str(repo)})
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "codex", "session-start"],
        input=data, cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 8_000 < len(context.encode()) <= 10_000 and "Learning" in context


def test_a_lone_surrogate_in_the_memory_does_not_cost_codex_its_context(repo: Path) -> None:
    # A memory log may hold "\\ud800" (escaped JSON, from a hand edit or a clone): the
    # measure of the context in bytes raised, and Codex got no context at all.
    run_cli("init", cwd=repo)
    entry = {"id": "a1b2c3d4", "type": "learning", "text": "odd \ud800 learning",
             "source": "manual", "created": "2026-11-27T08:00:00.000Z", "scope": "project",
             "projectPath": "."}  # fmt: skip
    with (repo / ".voyager" / "memory.jsonl").open("a") as log:
        log.write(json.dumps(entry) + "\n")
    fixture = ROOT / "tests" / "fixtures" / "codex" / "session-start.json"
    data = json.dumps(json.loads(fixture.read_text()) | {"cwd": str(repo)})
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "codex", "session-start"],
        input=data, cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stderr == ""
    assert "odd" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_context_whose_must_know_lines_go_past_the_limit_is_cut_and_says_so(
    repo: Path,
) -> None:
    from voyager_brain.integrations.hookio import HookCall, Limit
    from voyager_brain.integrations.lifecycle import session_start
    from voyager_brain.memory import cache

    run_cli("init", cwd=repo)
    _many_learnings(repo, 5)
    try:
        text = session_start(HookCall(cwd=str(repo)), Limit(100, "bytes"))
        assert len(text.encode()) <= 100
        assert text.endswith("(cut to the 100 bytes this agent keeps)\n")
        assert len(session_start(HookCall(cwd=str(repo)))) > 1_000  # no limit, no cut
    finally:
        cache.flush_saves()  # the hook defers them to after its output: not in this process

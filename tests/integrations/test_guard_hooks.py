"""Claude Code's tool-call hooks as real processes over a real history.db: the guard's
decisions with their exact output, what is recorded, and failing open or closed.

Payloads are the recorded fixtures in tests/fixtures/claude/ (see README.md there)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, trusted

from voyager_brain.integrations.install import HOOK_TIMEOUTS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
SESSION = "9b1c2f7e-4d3a-4e55-9a61-0c8f2d7b1a10"


def payload(event: str, cwd: Path, **changes: Any) -> str:
    data = json.loads((FIXTURES / f"{event}.json").read_text())
    data["cwd"] = str(cwd)
    data["transcript_path"] = str(FIXTURES / "transcript.jsonl")
    data.update(changes)
    return json.dumps(data)


def hook(event: str, cwd: Path, stdin: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", event],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def call(repo: Path, tool: str, tool_input: dict[str, Any], **changes: Any) -> Any:
    return hook(
        "pre-tool-use",
        repo,
        payload("pre-tool-use", repo, tool_name=tool, tool_input=tool_input, **changes),
    )


def add(repo: Path, *args: str) -> int:
    done = run_cli("rules", "add", *args, cwd=repo)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def history(isolated_env: Path) -> sqlite3.Connection:
    db = sqlite3.connect(isolated_env / "history.db")
    db.row_factory = sqlite3.Row
    return db


PIP = ("--pattern", r"\bpip\s+install\b", "--description", "Use uv, never pip", "--tool", "Bash")


def test_block_prints_exactly_a_deny_with_every_rule_named(repo: Path) -> None:
    rule = add(repo, *PIP, "--problem", "pip bypasses uv.lock", "--solution", "uv add PACKAGE")
    done = call(repo, "Bash", {"command": "pip install requests"})
    assert done.returncode == 0
    assert done.stderr == ""
    reason = (
        "voyager-brain guard blocked this Bash call.\n"
        f"- Rule {rule} (block): Use uv, never pip\n"
        "  Problem: pip bypasses uv.lock\n"
        "  Solution: uv add PACKAGE\n"
        "Do not retry the same call; follow the solution above or ask the user."
    )
    expected = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    assert done.stdout == json.dumps(expected) + "\n"


def test_a_block_without_a_solution_names_none(repo: Path) -> None:
    rule = add(repo, *PIP)
    done = call(repo, "Bash", {"command": "pip install requests"})
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == (
        "voyager-brain guard blocked this Bash call.\n"
        f"- Rule {rule} (block): Use uv, never pip\n"
        "Do not retry the same call; do it another way or ask the user."
    )


def test_warn_never_decides_permission_and_tells_agent_and_user(repo: Path) -> None:
    rule = add(
        repo, "--pattern", "git push", "--description", "Pushes need a review", "--action", "warn"
    )
    done = call(repo, "Bash", {"command": "git push origin main"})
    text = (
        "voyager-brain guard warns about this Bash call.\n"
        f"- Rule {rule} (warn): Pushes need a review"
    )
    expected = {
        "systemMessage": text,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text},
    }
    assert done.returncode == 0
    assert done.stdout == json.dumps(expected) + "\n"
    assert "permissionDecision" not in done.stdout


def test_log_match_allows_silently_and_is_recorded(repo: Path, isolated_env: Path) -> None:
    rule = add(repo, "--pattern", "ls", "--description", "Count listings", "--action", "log")
    done = call(repo, "Bash", {"command": "ls -la"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    db = history(isolated_env)
    triggers = db.execute("SELECT rule_id, action_taken FROM rule_triggers").fetchall()
    assert [tuple(t) for t in triggers] == [(rule, "log")]


def test_no_match_prints_nothing_and_records_the_call(repo: Path, isolated_env: Path) -> None:
    add(repo, *PIP)
    done = call(repo, "Bash", {"command": "uv add requests"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    db = history(isolated_env)
    row = db.execute("SELECT tool, input, external_id FROM tool_calls").fetchone()
    assert row["tool"] == "Bash"
    assert json.loads(row["input"]) == {"command": "uv add requests"}
    assert row["external_id"] == "toolu_01ABC123"
    assert db.execute("SELECT COUNT(*) FROM rule_triggers").fetchone()[0] == 0
    session = db.execute("SELECT external_id, status FROM sessions").fetchone()
    assert tuple(session) == (SESSION, "active")
    project = db.execute("SELECT path, name FROM projects").fetchone()
    assert tuple(project) == (os.path.realpath(repo), repo.name)


def test_a_double_quoted_secret_in_write_content_is_caught(repo: Path) -> None:
    # In a JSON dump of the input the quotes would read \" and the pattern would miss.
    add(repo, "--pattern", 'password = "', "--description", "No literal passwords")
    content = 'DB = connect(password = "hunter2-staging")\n'
    done = call(repo, "Write", {"file_path": str(repo / "db.py"), "content": content})
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_bash_only_rule_never_sees_write_content(repo: Path) -> None:
    add(repo, *PIP)
    done = call(repo, "Write", {"file_path": "notes.md", "content": "run pip install x"})
    assert done.stdout == ""
    done = call(repo, "Bash", {"command": "pip install x"})
    assert "deny" in done.stdout


def test_edit_fields_are_matched_one_by_one(repo: Path) -> None:
    add(repo, "--pattern", "^TODO$", "--description", "No bare TODO lines", "--tool", "Edit")
    edit = {"file_path": "a.py", "old_string": "x = 1", "new_string": "TODO"}
    assert "deny" in call(repo, "Edit", edit).stdout
    edit = {"file_path": "a.py", "old_string": "x = 1", "new_string": "TODO: later"}
    assert call(repo, "Edit", edit).stdout == ""


def test_mcp_tools_expose_every_string_value(repo: Path) -> None:
    add(repo, "--pattern", "DROP TABLE", "--description", "No dropping tables")
    tool_input = {"query": {"sql": ["SELECT 1", "DROP TABLE users"]}, "limit": 5}
    assert "deny" in call(repo, "mcp__db__run", tool_input).stdout


def test_block_beats_warn_and_both_reasons_are_listed(repo: Path, isolated_env: Path) -> None:
    warn = add(repo, "--pattern", "requests", "--description", "HTTP client", "--action", "warn")
    block = add(repo, *PIP, "--priority", "5")
    done = call(repo, "Bash", {"command": "pip install requests"})
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"- Rule {block} (block): Use uv, never pip" in reason
    assert f"- Rule {warn} (warn): HTTP client" in reason
    assert reason.index(f"Rule {block}") < reason.index(f"Rule {warn}")
    db = history(isolated_env)
    rows = db.execute("SELECT rule_id, action_taken FROM rule_triggers ORDER BY rule_id")
    assert sorted(tuple(r) for r in rows) == sorted([(warn, "warn"), (block, "block")])


def test_a_rule_set_assigned_to_one_project_does_not_fire_in_another(
    repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    assert run_cli("rules", "set", "create", "python-strict", cwd=repo).returncode == 0
    assert run_cli("rules", "set", "assign", "python-strict", cwd=repo).returncode == 0
    add(repo, *PIP, "--set", "python-strict")
    assert "deny" in call(repo, "Bash", {"command": "pip install x"}).stdout
    assert call(other, "Bash", {"command": "pip install x"}, tool_use_id="t2").stdout == ""


def test_disabled_rules_do_not_fire(repo: Path) -> None:
    rule = add(repo, *PIP)
    assert run_cli("rules", "disable", str(rule), cwd=repo).returncode == 0
    assert call(repo, "Bash", {"command": "pip install x"}).stdout == ""


def test_catastrophic_pattern_decides_within_a_second(repo: Path, isolated_env: Path) -> None:
    rule = add(repo, "--pattern", "(a+)+$", "--description", "Nested repetition")
    start = time.monotonic()
    done = call(repo, "Bash", {"command": "a" * 30 + "!"})
    assert time.monotonic() - start < 1.0 + 1.0  # the interpreter's own start included
    assert done.returncode == 0
    assert done.stdout == ""  # no match: the input ends with "!"
    assert call(repo, "Bash", {"command": "aaaa"}, tool_use_id="t9").stdout != ""
    assert rule


def test_fail_open_when_the_database_is_corrupt(repo: Path, isolated_env: Path) -> None:
    (isolated_env / "history.db").write_bytes(b"this is not a database" * 200)
    done = call(repo, "Bash", {"command": "pip install x"})
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "history.db" in done.stderr and "not a SQLite database" in done.stderr


def test_fail_closed_denies_with_the_error_as_reason(repo: Path, isolated_env: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "config.toml").write_text('guard_fail = "closed"\n')
    (isolated_env / "history.db").write_bytes(b"this is not a database" * 200)
    done = call(repo, "Bash", {"command": "ls"})
    assert done.returncode == 0
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert "could not check this call" in output["permissionDecisionReason"]
    assert "not a SQLite database" in output["permissionDecisionReason"]


def test_a_locked_database_still_denies_and_queues_the_row(repo: Path, isolated_env: Path) -> None:
    # A lock is not a fault of the guard: the rules are read (WAL readers never wait),
    # the decision stands, and the row waits in the queue (tests/integrations/
    # test_guard_load.py follows it to history.db).
    add(repo, *PIP)
    holder = sqlite3.connect(isolated_env / "history.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        done = call(repo, "Bash", {"command": "pip install x"})
        waited = time.monotonic() - start
    finally:
        holder.execute("ROLLBACK")
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(list((isolated_env / "spool").glob("*.json"))) == 1
    assert waited < 30


def test_a_newer_database_is_refused_and_left_unchanged(repo: Path, isolated_env: Path) -> None:
    path = isolated_env / "history.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 999")
    db.close()
    before = path.read_bytes()
    done = call(repo, "Bash", {"command": "ls"})
    assert done.returncode == 0 and done.stdout == ""
    assert "newer than this voyager-brain" in done.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[1, 2]", json.dumps({"session_id": "s"}), json.dumps({"tool_name": "Bash"})],
)
def test_bad_stdin_allows_with_one_line_and_writes_nothing(
    repo: Path, isolated_env: Path, stdin: str
) -> None:
    add(repo, *PIP)
    done = hook("pre-tool-use", repo, stdin)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("voyager-brain hook claude")
    assert history(isolated_env).execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 0


def test_post_tool_use_records_the_result_on_the_checked_call(
    repo: Path, isolated_env: Path
) -> None:
    call(repo, "Bash", {"command": "pip install requests"})
    done = hook("post-tool-use", repo, payload("post-tool-use", repo))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    db = history(isolated_env)
    rows = db.execute("SELECT output, success, duration_ms FROM tool_calls").fetchall()
    assert len(rows) == 1
    assert rows[0]["output"] == "Successfully installed requests-2.32.3"
    assert rows[0]["success"] == 1
    assert rows[0]["duration_ms"] is not None and rows[0]["duration_ms"] >= 0


def test_post_tool_use_failure_sets_success_0(repo: Path, isolated_env: Path) -> None:
    call(repo, "Bash", {"command": "npm test"})
    hook("post-tool-use-failure", repo, payload("post-tool-use-failure", repo))
    row = history(isolated_env).execute("SELECT output, success FROM tool_calls").fetchone()
    assert tuple(row) == ("Command exited with non-zero status code 1", 0)


def test_outputs_are_truncated_and_redacted(repo: Path, isolated_env: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "config.toml").write_text("tool_output_limit = 100\n")
    token = "ghp_" + "a1B2c3D4e5" * 4
    response = {"stdout": f"export GITHUB_TOKEN={token}\n" + "x" * 500, "stderr": ""}
    hook("post-tool-use", repo, payload("post-tool-use", repo, tool_response=response))
    output = history(isolated_env).execute("SELECT output FROM tool_calls").fetchone()[0]
    assert token not in output and "[REDACTED:github-token]" in output
    assert output.endswith("bytes in all]")
    assert len(output.split("\n[truncated")[0].encode()) <= 100


def test_prompt_and_stop_record_and_close_the_session(repo: Path, isolated_env: Path) -> None:
    hook("user-prompt-submit", repo, payload("user-prompt-submit", repo))
    call(repo, "Bash", {"command": "uv add requests"})
    done = hook("stop", repo, payload("pre-tool-use", repo, hook_event_name="Stop"))
    assert done.returncode == 0
    db = history(isolated_env)
    session = db.execute("SELECT task, status, ended_at FROM sessions").fetchone()
    assert session["task"] == "Add the requests package and write a client for the API"
    assert session["status"] == "completed" and session["ended_at"]
    roles = [r[0] for r in db.execute("SELECT role FROM messages ORDER BY id")]
    assert roles == ["user", "assistant"]
    # The next call in the same session opens it again.
    call(repo, "Bash", {"command": "ls"}, tool_use_id="t3")
    status = db.execute("SELECT status, ended_at FROM sessions").fetchone()
    assert tuple(status) == ("active", None)


def test_install_adds_the_tool_hooks_with_a_matcher(repo: Path) -> None:
    assert run_cli("install", "claude", cwd=repo).returncode == 0
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    hooks = settings["hooks"]
    assert hooks["PreToolUse"] == [
        {
            "matcher": "*",
            "hooks": [
                {
                    "type": "command",
                    "command": "voyager-brain hook claude pre-tool-use",
                    "timeout": 10,
                }
            ],
        }
    ]
    assert hooks["PostToolUse"][0]["matcher"] == "*"
    assert hooks["PostToolUseFailure"][0]["matcher"] == "*"
    assert "matcher" not in hooks["UserPromptSubmit"][0]
    # Idempotent.
    before = (repo / ".claude" / "settings.json").read_text()
    assert run_cli("install", "claude", cwd=repo).returncode == 0
    assert (repo / ".claude" / "settings.json").read_text() == before


def test_a_semantic_rule_blocks_and_records_why(repo: Path, isolated_env: Path) -> None:
    rule = add(repo, "--type", "semantic", "--description", "never use pip install, use uv add")
    done = call(repo, "Bash", {"command": "pip install requests"})
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"- Rule {rule} (block): never use pip install, use uv add" in reason
    assert "Why it matched: similarity" in reason and "pip, install" in reason
    assert call(repo, "Bash", {"command": "uv add requests"}, tool_use_id="t2").stdout == ""
    db = history(isolated_env)
    reasoning = db.execute("SELECT llm_reasoning FROM rule_triggers").fetchone()[0]
    assert reasoning.startswith("similarity ") and "(lexical)" in reasoning
    stored = db.execute("SELECT length(embedding) FROM lexical_rule_embeddings").fetchone()[0]
    assert stored == 384 * 4


def test_a_secret_is_matched_raw_and_stored_redacted(repo: Path, isolated_env: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5" * 4
    rule = add(repo, "--pattern", "ghp_[A-Za-z0-9]{36}", "--description", "No tokens in files")
    content = f'GITHUB_TOKEN = "{token}"\n'
    done = call(repo, "Write", {"file_path": str(repo / "settings.py"), "content": content})
    assert f"Rule {rule} (block)" in done.stdout  # the rule saw the real value
    stored = history(isolated_env).execute("SELECT input FROM tool_calls").fetchone()[0]
    assert token not in stored and "[REDACTED:github-token]" in stored


@pytest.mark.parametrize(
    ("answer", "denied", "recorded"),
    [
        ("YES. It installs with pip.", True, "; model: YES. It installs with pip."),
        ("NO - this only prints pip's version.", False, None),
        (None, True, "; model review failed:"),  # the command fails: the match stands
    ],
)
def test_semantic_review_asks_the_model_command(
    repo: Path,
    isolated_env: Path,
    tmp_path: Path,
    answer: str | None,
    denied: bool,
    recorded: str | None,
) -> None:
    model = tmp_path / "model.py"
    body = f"print({answer!r})" if answer is not None else "raise SystemExit(3)"
    model.write_text(
        f"import sys\nprompt = sys.stdin.read()\nassert 'pip install' in prompt\n{body}\n"
    )
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "config.toml").write_text(
        f'semantic_review = true\nmodel_command = "{sys.executable} {model}"\n'
    )
    trusted(repo)
    add(repo, "--type", "semantic", "--description", "never use pip install, use uv add")
    done = call(repo, "Bash", {"command": "pip install requests"})
    assert ("deny" in done.stdout) is denied
    rows = history(isolated_env).execute("SELECT llm_reasoning FROM rule_triggers").fetchall()
    if recorded is None:
        assert rows == []
    else:
        assert rows[0][0].startswith("similarity ") and recorded in rows[0][0]


def test_a_model_slower_than_the_hooks_timeout_cannot_turn_a_block_into_an_allow(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    # The agent lets a call run when its hook passes the timeout install writes (10 s on
    # the tool-call path), so a review may not wait model_timeout_seconds (60 s here).
    model = tmp_path / "model.py"
    model.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(30)\nprint('NO')\n")
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "config.toml").write_text(
        f'semantic_review = true\nmodel_command = "{sys.executable} {model}"\n'
        "model_timeout_seconds = 60\n"
    )
    trusted(repo)
    add(repo, "--type", "semantic", "--description", "never use pip install, use uv add")
    started = time.monotonic()
    done = call(repo, "Bash", {"command": "pip install requests"})
    took = time.monotonic() - started
    assert "deny" in done.stdout
    assert took < HOOK_TIMEOUTS["tool_check"], took
    rows = history(isolated_env).execute("SELECT llm_reasoning FROM rule_triggers").fetchall()
    assert "model review failed" in rows[0][0] and "no answer within" in rows[0][0]


@pytest.mark.parametrize("new_database", [False, True])
def test_concurrent_checks_lose_nothing(
    repo: Path, isolated_env: Path, tmp_path: Path, new_database: bool
) -> None:
    # Claude Code runs the hooks of parallel tool calls at the same time; the first
    # calls of all may also be the ones that create history.db.
    if new_database:
        (repo / ".voyager").mkdir()
        (repo / ".voyager" / "rules.toml").write_text(
            "[[rules]]\ndescription = \"Use uv\"\npattern = '\\bpip\\s+install\\b'\n"
        )
    rule = 1 if new_database else add(repo, *PIP)
    inputs = []
    for n in range(8):
        path = tmp_path / f"payload-{n}.json"
        command = "pip install x" if n % 2 else "uv add x"
        path.write_text(
            payload("pre-tool-use", repo, tool_input={"command": command}, tool_use_id=f"par-{n}")
        )
        inputs.append(path.open())
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "voyager_brain", "hook", "claude", "pre-tool-use"],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=repo,
            )
            for stdin in inputs
        ]
        results = [(*p.communicate(timeout=60), p.returncode) for p in procs]
    finally:
        for stdin in inputs:
            stdin.close()
    assert [code for _, _, code in results] == [0] * 8
    assert [err for _, err, _ in results] == [""] * 8
    assert sum("deny" in out for out, _, _ in results) == 4
    db = history(isolated_env)
    calls = {r[0] for r in db.execute("SELECT external_id FROM tool_calls")}
    assert calls == {f"par-{n}" for n in range(8)}
    fired = db.execute("SELECT COUNT(*) FROM rule_triggers WHERE rule_id = ?", (rule,))
    assert fired.fetchone()[0] == 4
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1


HOOK = ("hook", "claude", "pre-tool-use")


def test_a_call_no_rule_matches_imports_neither_json_nor_re_nor_the_sqlite3_package(
    repo: Path, isolated_env: Path
) -> None:
    """The tool-call path reads and writes JSON through `cjson` and history.db through
    `_sqlite3`: the json package imports `re` (and enum, functools ...), the sqlite3
    package its date adapters (datetime): a third of the hook's time, on every call."""
    run_cli("init", cwd=repo)  # a config.toml to read, as a real project has
    add(repo, *PIP)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "voyager_brain", *HOOK],
        input=payload("pre-tool-use", repo, tool_input={"command": "npm run build"}),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert {"voyager_brain.guard.check", "voyager_brain.cjson", "_sqlite3"} <= imported
    assert not {"json", "re", "sqlite3", "datetime", "tomllib"} & imported
    calls = history(isolated_env).execute("SELECT tool, input FROM tool_calls").fetchall()
    assert [tuple(row) for row in calls] == [("Bash", '{"command":"npm run build"}')]


@pytest.mark.parametrize(
    ("agent", "event", "called"),
    [
        ("claude", "pre-tool-use", "mcp__voyager-brain__save"),
        ("claude", "pre-tool-use", "mcp__plugin_voyager-brain_voyager-brain__save"),
        ("codex", "pre-tool-use", "mcp__voyager_brain__save"),
        ("gemini", "before-tool", "mcp_voyager-brain_save"),
    ],
)
def test_a_rule_on_an_mcp_tool_blocks_it_under_the_agents_own_name(
    repo: Path, agent: str, event: str, called: str
) -> None:
    """The names each agent gives voyager-brain's own `save` tool (recorded by running
    Claude Code, with and without its plugin, and Codex; Gemini CLI's from its hooks
    reference), against a rule written as docs/mcp.md says."""
    add(repo, "--tool", "mcp__voyager-brain__save", "--pattern", "FORBIDDEN", "--description", "no")
    data = json.loads((FIXTURES.parent / agent / f"{event}.json").read_text())
    data.update(cwd=str(repo), tool_name=called, tool_input={"text": "FORBIDDEN", "kind": "x"})
    done = run_cli("hook", agent, event, cwd=repo, input=json.dumps(data))
    assert done.returncode == 0, done.stderr
    assert "deny" in done.stdout, (called, done.stdout)

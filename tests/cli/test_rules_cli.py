"""`voyager-brain rules ...` as a user runs it: real processes, a real history.db in the
test's own VOYAGER_HOME."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import cli_ok, run_cli

from voyager_brain.guard.rules import COLUMNS

PIP = ["--pattern", r"\bpip\s+install\b", "--description", "Use uv, never pip", "--tool", "Bash"]


def test_add_prints_the_id_and_json_prints_the_seed_columns(repo: Path) -> None:
    assert cli_ok(repo, "rules", "add", *PIP) == "1\n"
    data = json.loads(cli_ok(repo, "rules", "add", *PIP, "--action", "warn", "--json"))
    assert list(data) == list(COLUMNS)
    assert data["id"] == 2 and data["action"] == "warn" and data["type"] == "regex"
    assert data["rule_set_id"] is None and data["active"] == 1


def test_an_invalid_regex_is_exit_2_with_its_position(repo: Path) -> None:
    done = run_cli("rules", "add", "--pattern", "pip(install", "--description", "x", cwd=repo)
    assert done.returncode == 2
    assert done.stderr == (
        "voyager-brain: invalid regex 'pip(install': missing ), unterminated subpattern"
        " at position 3\n"
    )


def test_a_pattern_re2_cannot_run_is_added_with_its_time_limit_said(repo: Path) -> None:
    done = run_cli("rules", "add", "--pattern", "(?=(a+)+b)a", "--description", "x", cwd=repo)
    assert done.returncode == 0 and done.stdout == "1\n"
    assert "runs on Python's engine (it has a look-around), at most 0.5 s a check" in done.stderr
    assert done.stderr.count("\n") == 1


def test_an_unknown_rule_set_is_exit_2(repo: Path) -> None:
    done = run_cli("rules", "add", *PIP, "--set", "nope", cwd=repo)
    assert done.returncode == 2
    assert "no rule set named 'nope'" in done.stderr


def test_list_show_enable_disable(repo: Path) -> None:
    cli_ok(repo, "rules", "add", *PIP)
    cli_ok(
        repo, "rules", "add", "--pattern", "rm -rf", "--description", "Careful", "--action", "warn"
    )
    lines = cli_ok(repo, "rules", "list").splitlines()
    assert lines[0].split()[:3] == ["1", "block", "Bash"]
    assert "every tool" in lines[1]
    assert cli_ok(repo, "rules", "disable", "2") == "rule 2 disabled: Careful\n"
    assert [r["id"] for r in json.loads(cli_ok(repo, "rules", "list", "--json"))] == [1]
    assert [r["id"] for r in json.loads(cli_ok(repo, "rules", "list", "--all", "--json"))] == [1, 2]
    cli_ok(repo, "rules", "enable", "2")
    shown = json.loads(cli_ok(repo, "rules", "show", "1", "--json"))
    assert shown["triggers"] == 0 and shown["description"] == "Use uv, never pip"
    assert "description:" in cli_ok(repo, "rules", "show", "1")


def test_remove_deletes_a_rule_that_never_fired_and_disables_one_that_did(
    repo: Path, isolated_env: Path
) -> None:
    cli_ok(repo, "rules", "add", *PIP)
    cli_ok(repo, "rules", "add", "--pattern", "zzz", "--description", "never fired")
    stdin = json.dumps(
        {
            "session_id": "s",
            "cwd": str(repo),
            "tool_name": "Bash",
            "tool_input": {"command": "pip install x"},
            "tool_use_id": "t",
        }
    )
    assert "deny" in run_cli("hook", "claude", "pre-tool-use", cwd=repo, input=stdin).stdout
    assert cli_ok(repo, "rules", "remove", "2") == "rule 2 removed\n"
    assert cli_ok(repo, "rules", "remove", "1") == (
        "rule 1 has fired before: disabled instead of removed\n"
    )
    db = sqlite3.connect(isolated_env / "history.db")
    assert db.execute("SELECT id, active FROM rules").fetchall() == [(1, 0)]
    assert db.execute("SELECT COUNT(*) FROM rule_triggers").fetchone()[0] == 1
    done = run_cli("rules", "show", "2", cwd=repo)
    assert done.returncode == 2 and "no rule with id 2" in done.stderr


def test_rule_sets_create_assign_list(repo: Path, tmp_path: Path) -> None:
    cli_ok(repo, "rules", "set", "create", "python-strict", "--description", "For Python work")
    cli_ok(repo, "rules", "set", "assign", "python-strict")
    cli_ok(repo, "rules", "add", *PIP, "--set", "python-strict")
    sets = json.loads(cli_ok(repo, "rules", "set", "list", "--json"))
    strict = next(s for s in sets if s["name"] == "python-strict")
    assert strict["rules"] == 1 and strict["projects"] == [str(repo.resolve())]
    assert [
        r["id"] for r in json.loads(cli_ok(repo, "rules", "list", "--project", ".", "--json"))
    ] == [1]
    other = tmp_path / "other"
    other.mkdir()
    assert json.loads(cli_ok(repo, "rules", "list", "--project", str(other), "--json")) == []
    done = run_cli("rules", "set", "create", "python-strict", cwd=repo)
    assert done.returncode == 2 and "exists already" in done.stderr


def test_rules_test_shows_the_decision_and_records_nothing(repo: Path, isolated_env: Path) -> None:
    cli_ok(repo, "rules", "add", *PIP, "--solution", "uv add PACKAGE")
    out = cli_ok(repo, "rules", "test", "--tool", "Bash", "--input", '{"command": "pip install x"}')
    assert out.startswith("decision: block\n")
    assert "Solution: uv add PACKAGE" in out
    data = json.loads(
        cli_ok(
            repo,
            "rules",
            "test",
            "--tool",
            "Write",
            "--input",
            '{"content": "pip install"}',
            "--json",
        )
    )
    assert data == {"decision": "allow", "matches": []}
    db = sqlite3.connect(isolated_env / "history.db")
    assert db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0] == 0
    bad = run_cli("rules", "test", "--tool", "Bash", "--input", "{nope", cwd=repo)
    assert bad.returncode == 2 and bad.stderr.startswith("voyager-brain: --input: not valid JSON")


def test_sync_loads_rules_toml_now(repo: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "rules.toml").write_text(
        '[[rules]]\ndescription = "No force pushes"\npattern = "push --force"\n'
    )
    assert "synced" in cli_ok(repo, "rules", "sync")
    assert [r["description"] for r in json.loads(cli_ok(repo, "rules", "list", "--json"))] == [
        "No force pushes"
    ]

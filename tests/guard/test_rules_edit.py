"""`voyager-brain rules edit`: a rule changed in place (id, rule set, triggers kept), its
regexes stored as Causeway reads them (one in `pattern`, several in `patterns`), a
semantic rule's vectors made again, a team rule refused."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from conftest import run_cli

from voyager_brain.guard import db as gdb


def cli(repo: Path, *args: str) -> tuple[int, str, str]:
    done = run_cli(*args, cwd=repo, env={"VOYAGER_HOME": os.environ["VOYAGER_HOME"]})
    return done.returncode, done.stdout, done.stderr


def decision(repo: Path, command: str) -> str:
    code, out, err = cli(
        repo,
        "rules",
        "test",
        "--tool",
        "Bash",
        "--input",
        json.dumps({"command": command}),
        "--json",
    )
    assert code in (0, 1), err
    return str(json.loads(out)["decision"])


def stored(home: Path, rule_id: int) -> tuple[object, ...]:
    db = sqlite3.connect(home / "history.db")
    row = db.execute(
        "SELECT pattern, patterns, description, action, tool, priority, problem, solution"
        " FROM rules WHERE id = ?",
        (rule_id,),
    ).fetchone()
    return tuple(row)


def test_fields_change_in_place_and_history_stays(repo: Path, isolated_env: Path) -> None:
    code, out, _ = cli(
        repo,
        "rules",
        "add",
        "--pattern",
        r"rm\s+-rf",
        "--description",
        "no rm",
        "--tool",
        "Bash",
        "--problem",
        "it deletes",
        "--solution",
        "use trash",
    )
    rule = int(out)
    assert decision(repo, "rm -rf /tmp/x") == "block"
    payload = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash"}
    payload |= {"cwd": str(repo), "tool_input": {"command": "rm -rf /tmp/x"}}
    fired = run_cli("hook", "claude", "pre-tool-use", cwd=repo, input=json.dumps(payload))
    assert "deny" in fired.stdout  # the rule fires once: a trigger in the history

    code, out, err = cli(
        repo,
        "rules",
        "edit",
        str(rule),
        "--description",
        "never rm -rf",
        "--action",
        "warn",
        "--priority",
        "5",
        "--every-tool",
        "--problem",
        "",
    )
    assert code == 0, err
    assert out.split()[:3] == [str(rule), "warn", "every"]
    assert stored(isolated_env, rule) == (
        r"rm\s+-rf",
        None,
        "never rm -rf",
        "warn",
        None,
        5,
        None,
        "use trash",
    )
    assert decision(repo, "rm -rf /tmp/x") == "warn"
    code, out, _ = cli(repo, "rules", "show", str(rule), "--json")
    assert json.loads(out)["triggers"] == 1


def test_regexes_are_stored_as_causeway_reads_them(repo: Path, isolated_env: Path) -> None:
    rule = int(cli(repo, "rules", "add", "--pattern", "^ls$", "--description", "pushes")[1])
    code, _, err = cli(
        repo,
        "rules",
        "edit",
        str(rule),
        "--pattern",
        r"git\s+push\s+-f\b",
        "--pattern",
        r"git\s+push\s+.*--force\b",
    )
    assert code == 0, err
    pattern, patterns = stored(isolated_env, rule)[:2]
    # Several: Causeway's `patterns`, any one matching, ignoring case.
    assert pattern is None
    assert json.loads(str(patterns)) == [r"git\s+push\s+-f\b", r"git\s+push\s+.*--force\b"]
    assert decision(repo, "GIT PUSH -f origin") == "block"
    assert decision(repo, "git push origin main --force") == "block"
    assert decision(repo, "ls") == "allow"
    # One: the seed's `pattern`, case-sensitive; `patterns` dropped.
    assert cli(repo, "rules", "edit", str(rule), "--pattern", "^ls$")[0] == 0
    assert stored(isolated_env, rule)[:2] == ("^ls$", None)
    assert decision(repo, "GIT PUSH -f origin") == "allow"
    assert decision(repo, "ls") == "block"


def test_a_causeway_rule_with_patterns_keeps_them_when_its_text_changes(
    repo: Path, isolated_env: Path
) -> None:
    db = gdb.open_database(str(isolated_env / "history.db"))
    db.execute(
        "INSERT INTO rules (type, patterns, description, action) VALUES ('regex', ?, 'x', 'block')",
        (json.dumps(["curl .*\\| *sh"]),),
    )
    db.close()
    code, _, err = cli(repo, "rules", "edit", "1", "--description", "no curl | sh")
    assert code == 0, err
    assert stored(isolated_env, 1)[:3] == (None, '["curl .*\\\\| *sh"]', "no curl | sh")
    assert decision(repo, "CURL x | sh") == "block"


def test_a_semantic_rule_gets_its_vector_again_and_takes_no_pattern(
    repo: Path, isolated_env: Path
) -> None:
    rule = cli(repo, "rules", "add", "--type", "semantic", "--description", "never pip install")[1]
    home = isolated_env / "history.db"

    def vector() -> bytes:
        return bytes(
            sqlite3.connect(home)
            .execute(
                "SELECT embedding FROM lexical_rule_embeddings WHERE rule_id = ?", (int(rule),)
            )
            .fetchone()[0]
        )

    before = vector()
    assert cli(repo, "rules", "edit", rule.strip(), "--description", "never curl")[0] == 0
    assert vector() != before
    assert decision(repo, "curl http://x") == "block"
    code, _, err = cli(repo, "rules", "edit", rule.strip(), "--pattern", "x")
    assert code == 2 and "a semantic rule matches its description" in err


def test_bad_edits_are_one_line_and_change_nothing(repo: Path, isolated_env: Path) -> None:
    rule = cli(repo, "rules", "add", "--pattern", "^ls$", "--description", "ls")[1].strip()
    before = stored(isolated_env, int(rule))
    for args, message in (
        ((), "nothing to change: give --description"),
        (("--pattern", "("), "invalid regex '('"),
        (("--description", " "), "description: expected a non-empty text"),
        (("--tool", "Bash", "--every-tool"), "--tool and --every-tool: give one of them"),
        (("--tool", " "), "tool: expected a tool name"),
    ):
        code, _, err = cli(repo, "rules", "edit", rule, *args)
        assert code == 2 and message in err, (args, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, err = cli(repo, "rules", "edit", "99", "--action", "warn")
    assert code == 2 and "no rule with id 99" in err
    assert stored(isolated_env, int(rule)) == before


def test_a_secret_in_the_new_text_is_redacted(repo: Path, isolated_env: Path) -> None:
    rule = cli(repo, "rules", "add", "--pattern", "^ls$", "--description", "ls")[1].strip()
    token = "ghp_" + "a1B2c3D4e5" * 4
    assert cli(repo, "rules", "edit", rule, "--solution", f"use {token}")[0] == 0
    solution = str(stored(isolated_env, int(rule))[7])
    assert token not in solution and solution.startswith("use ")


def test_a_team_rule_is_changed_in_its_file(repo: Path, isolated_env: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "rules.toml").write_text(
        '[[rules]]\ndescription = "no ls"\npattern = "^ls$"\n'
    )
    assert cli(repo, "rules", "sync")[0] == 0
    rule = json.loads(cli(repo, "rules", "list", "--json")[1])[0]["id"]
    code, _, err = cli(repo, "rules", "edit", str(rule), "--action", "warn")
    assert code == 2
    assert f"rule {rule} is a team rule from" in err and "rules.toml: edit it there" in err

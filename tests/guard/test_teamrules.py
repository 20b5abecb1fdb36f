"""Team rules in a tracked .voyager/rules.toml: loaded into the project's rule set,
synced when the file changes, bad rules reported one line each."""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

from conftest import run_cli

from voyager_brain.guard import db as gdb
from voyager_brain.guard.rules import list_rules
from voyager_brain.guard.teamrules import sync_team_rules

RULES = """
[[rules]]
description = "Use uv, never pip"
pattern = '\\bpip\\s+install\\b'
tool = "Bash"
problem = "pip bypasses uv.lock"
solution = "uv add PACKAGE"

[[rules]]
description = "Pushes need review"
pattern = "git push"
action = "warn"
priority = 3
"""


_TICKS = itertools.count()


def write(repo: Path, text: str, *, settled: bool = True) -> Path:
    """rules.toml with `text`. `settled`: written a minute ago, so no longer possibly
    being written (see `SETTLE_NS`), each write a millisecond after the one before (a
    later write in the same clock tick must still count as a change)."""
    (repo / ".voyager").mkdir(exist_ok=True)
    path = repo / ".voyager" / "rules.toml"
    path.write_text(text)
    if settled:
        age(path, 60)
    return path


def age(path: Path, seconds: int) -> None:
    when = time.time_ns() - seconds * 1_000_000_000 + next(_TICKS) * 1_000_000
    os.utime(path, ns=(when, when))


def test_rules_toml_becomes_the_projects_rule_set(repo: Path, tmp_path: Path) -> None:
    write(repo, RULES)
    db = gdb.open_database(str(tmp_path / "history.db"))
    project = os.path.realpath(repo)
    assert sync_team_rules(db, project) == []
    found = list_rules(db, project=project)
    assert [(r.description, r.action, r.priority) for r in found] == [
        ("Pushes need review", "warn", 3),
        ("Use uv, never pip", "block", 0),
    ]
    name, description = db.execute(
        "SELECT rs.name, rs.description FROM projects p JOIN rule_sets rs ON p.rule_set_id = rs.id"
    ).fetchone()
    assert name == repo.name and description.startswith("team rules from ")
    assert list_rules(db, project="/elsewhere") == []


def test_a_changed_file_is_synced_and_ids_of_kept_rules_stay(repo: Path, tmp_path: Path) -> None:
    write(repo, RULES)
    db = gdb.open_database(str(tmp_path / "history.db"))
    project = os.path.realpath(repo)
    sync_team_rules(db, project)
    pip = next(r for r in list_rules(db, project=project) if "pip" in r.description)
    write(
        repo,
        RULES.split('[[rules]]\ndescription = "Pushes')[0].replace(
            'tool = "Bash"', 'tool = "Bash"\naction = "warn"'
        ),
    )
    assert sync_team_rules(db, project) == []
    found = list_rules(db, project=project)
    assert [(r.id, r.action) for r in found] == [(pip.id, "warn")]


def test_a_removed_rule_that_fired_is_disabled_not_deleted(repo: Path, tmp_path: Path) -> None:
    write(repo, RULES)
    db = gdb.open_database(str(tmp_path / "history.db"))
    project = os.path.realpath(repo)
    assert sync_team_rules(db, project) == []
    push = next(r for r in list_rules(db, project=project) if "Pushes" in r.description)
    db.execute("INSERT INTO projects (path) VALUES ('/x')")
    db.execute("INSERT INTO sessions (project_id) VALUES (1)")
    db.execute("INSERT INTO messages (session_id, role) VALUES (1, 'assistant')")
    db.execute("INSERT INTO tool_calls (message_id, tool) VALUES (1, 'Bash')")
    db.execute(
        "INSERT INTO rule_triggers (rule_id, tool_call_id, action_taken) VALUES (?, 1, 'warn')",
        (push.id,),
    )
    write(repo, "")
    sync_team_rules(db, project)
    assert db.execute("SELECT active FROM rules WHERE id = ?", (push.id,)).fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM rules").fetchone()[0] == 1


def test_a_file_still_being_written_adds_rules_but_removes_none(repo: Path, tmp_path: Path) -> None:
    """`cat > rules.toml`, an editor or `git checkout` truncate the file before they
    write it: a hook reading it then saw no rules and dropped them all, and a call they
    block went through (the parallel load test found it once in eight runs)."""
    write(repo, RULES)
    db = gdb.open_database(str(tmp_path / "history.db"))
    project = os.path.realpath(repo)
    assert sync_team_rules(db, project) == []
    before = sorted(r.description for r in list_rules(db, project=project))
    path = write(repo, "", settled=False)  # truncated a moment ago, not written yet
    assert sync_team_rules(db, project) == []
    assert sorted(r.description for r in list_rules(db, project=project)) == before
    extra = '[[rules]]\ndescription = "No sudo"\npattern = "\\bsudo\\b"\n'
    write(repo, extra, settled=False)
    assert sync_team_rules(db, project) == []  # a rule added applies at once
    assert sorted(r.description for r in list_rules(db, project=project)) == sorted(
        [*before, "No sudo"]
    )
    age(path, 10)  # the write is over: the file is what the team meant
    assert sync_team_rules(db, project) == []
    assert [r.description for r in list_rules(db, project=project)] == ["No sudo"]


def test_a_bad_rule_is_one_line_and_the_others_apply(repo: Path, tmp_path: Path) -> None:
    write(repo, RULES + '\n[[rules]]\ndescription = "Broken"\npattern = "pip(install"\n')
    db = gdb.open_database(str(tmp_path / "history.db"))
    project = os.path.realpath(repo)
    problems = sync_team_rules(db, project)
    assert len(problems) == 1
    assert problems[0].startswith(str(repo / ".voyager" / "rules.toml").replace(str(repo), project))
    assert "rule 3 ('Broken'): invalid regex" in problems[0] and "position 3" in problems[0]
    assert len(list_rules(db, project=project)) == 2


def test_bad_toml_keeps_the_rules_loaded_before(repo: Path, tmp_path: Path) -> None:
    write(repo, RULES)
    db = gdb.open_database(str(tmp_path / "history.db"))
    project = os.path.realpath(repo)
    sync_team_rules(db, project)
    write(repo, "[[rules]\ndescription = ")
    problems = sync_team_rules(db, project)
    assert len(problems) == 1 and "not valid TOML" in problems[0]
    assert len(list_rules(db, project=project)) == 2


def test_the_hook_applies_team_rules_and_reports_a_bad_one(repo: Path) -> None:
    write(repo, RULES + '\n[[rules]]\ndescription = "Broken"\naction = "explode"\npattern = "x"\n')
    stdin = json.dumps(
        {
            "session_id": "s",
            "cwd": str(repo),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "pip install x"},
            "tool_use_id": "t1",
        }
    )
    done = run_cli("hook", "claude", "pre-tool-use", cwd=repo, input=stdin)
    assert done.returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert done.stderr.count("\n") == 1
    assert "rules.toml: rule 3 ('Broken'): action: expected one of block, warn, log" in done.stderr


def test_a_user_rule_set_with_the_projects_name_is_not_overwritten(
    repo: Path, tmp_path: Path
) -> None:
    from voyager_brain.guard.rules import add_rule, create_rule_set

    db = gdb.open_database(str(tmp_path / "history.db"))
    create_rule_set(db, repo.name, "mine")
    add_rule(db, description="mine", pattern="m", rule_set=repo.name)
    write(repo, RULES)
    problems = sync_team_rules(db, os.path.realpath(repo))
    assert len(problems) == 1 and "exists and does not hold this file's rules" in problems[0]
    assert [r[0] for r in db.execute("SELECT description FROM rules")] == ["mine"]

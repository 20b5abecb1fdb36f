"""Committing the brain files at session end (auto_commit), through real git repositories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_ok, git, run_cli

BRAIN_FILES = [".voyager/brain.json", ".voyager/brain.md", ".voyager/memory.jsonl"]


def session(top: Path, session_id: str = "s1", *events: str) -> list[str]:
    """Claude Code's hooks for one session, as real processes; their stderr lines."""
    payload = json.dumps({"session_id": session_id, "cwd": str(top), "transcript_path": ""})
    errors = []
    for event in events or ("stop", "session-end"):
        done = run_cli("hook", "claude", event, cwd=top, input=payload)
        assert done.returncode == 0
        errors += done.stderr.splitlines()
    return errors


def head(top: Path) -> str:
    return git(top, "rev-parse", "HEAD").strip()


def committed_files(top: Path) -> list[str]:
    return git(top, "show", "--name-only", "--format=", "HEAD").split()


@pytest.fixture
def project(repo: Path) -> Path:
    """A repository with .voyager/ committed and auto_commit on."""
    cli_ok(repo, "init")
    (repo / ".voyager" / "config.toml").write_text("auto_commit = true\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "voyager-brain init")
    return repo


def test_session_end_commits_only_the_brain_files(project: Path) -> None:
    (project / "feature.py").write_text("staged = True\n")
    git(project, "add", "feature.py")
    (project / "README.md").write_text("# project\n\nunstaged edit\n")
    cli_ok(project, "brain", "action=add", "type=learning", "text=Tests need the DB up")
    before = head(project)

    assert session(project) == []

    assert git(project, "rev-parse", "HEAD~1").strip() == before
    assert git(project, "log", "-1", "--format=%s").strip() == (
        "brain: session 1 (+1 loop status, +1 learning)"
    )
    assert committed_files(project) == BRAIN_FILES
    # The other work is where it was: staged, and unstaged.
    assert git(project, "diff", "--cached", "--name-only").split() == ["feature.py"]
    assert git(project, "diff", "--name-only").split() == ["README.md"]
    assert git(project, "status", "--porcelain", "--", ".voyager").strip() == ""


def test_each_session_gets_its_number(project: Path) -> None:
    session(project, "first")
    session(project, "second")
    subjects = git(project, "log", "-2", "--format=%s").splitlines()
    assert subjects == ["brain: session 2 (+1 loop status)", "brain: session 1 (+1 loop status)"]


def test_auto_commit_is_off_by_default(project: Path) -> None:
    (project / ".voyager" / "config.toml").write_text("")
    git(project, "commit", "-q", "-am", "auto_commit off")
    before = head(project)
    session(project)
    assert head(project) == before
    assert git(project, "status", "--porcelain", "--", ".voyager").strip() != ""


def _conflict(top: Path, operation: str) -> None:
    """Leave `operation` stopped on a conflict in app.txt (not a brain file)."""
    (top / "app.txt").write_text("base\n")
    git(top, "add", "app.txt")
    git(top, "commit", "-q", "-m", "base")
    git(top, "checkout", "-q", "-b", "other")
    (top / "app.txt").write_text("theirs\n")
    git(top, "commit", "-q", "-am", "theirs")
    git(top, "checkout", "-q", "main")
    (top / "app.txt").write_text("ours\n")
    git(top, "commit", "-q", "-am", "ours")
    command = {
        "merge": ["merge", "other"],
        "rebase": ["rebase", "other"],
        "rebase --apply": ["rebase", "--apply", "other"],
        "cherry-pick": ["cherry-pick", "other"],
        "revert": ["revert", "--no-edit", "HEAD"],
    }[operation]
    if operation == "revert":  # make reverting "ours" conflict with a later change
        (top / "app.txt").write_text("later\n")
        git(top, "commit", "-q", "-am", "later")
        command = ["revert", "--no-edit", "HEAD~1"]
    done = subprocess.run(["git", *command], cwd=top, capture_output=True, text=True)
    assert done.returncode != 0, done.stdout  # stopped on the conflict


@pytest.mark.parametrize(
    ("operation", "marker"),
    [
        ("merge", "MERGE_HEAD"),
        ("rebase", "rebase-merge"),
        ("rebase --apply", "rebase-apply"),
        ("cherry-pick", "CHERRY_PICK_HEAD"),
        ("revert", "REVERT_HEAD"),
    ],
)
def test_nothing_is_committed_while_git_is_in_the_middle_of_something(
    project: Path, operation: str, marker: str
) -> None:
    _conflict(project, operation)
    git_dir = project / ".git"
    assert (git_dir / marker).exists()
    before = head(project)
    assert session(project) == []
    assert head(project) == before
    assert (git_dir / marker).exists()
    out = cli_ok(project, "commit")
    assert out.startswith("nothing committed: a ") and out.endswith(" is in progress\n")


def test_commit_command_and_nothing_to_commit(project: Path) -> None:
    assert cli_ok(project, "commit") == "nothing committed: the brain files have no changes\n"
    cli_ok(project, "add", "decision", "Use JWT")
    out = cli_ok(project, "commit").splitlines()
    assert out[0] == f"[{head(project)[:8]}] brain: update (+1 decision)"
    assert out[1] == "committed .voyager/brain.md"
    data = json.loads(cli_ok(project, "commit", "--json"))
    assert data == {
        "sha": None,
        "message": None,
        "files": [],
        "skipped": "the brain files have no changes",
    }


def test_brain_files_git_does_not_track_yet_are_committed(repo: Path) -> None:
    cli_ok(repo, "init")
    cli_ok(repo, "add", "observation", "First words")
    out = cli_ok(repo, "commit").splitlines()
    assert out[0].endswith("] brain: update (~1 project, +1 observation)")
    assert committed_files(repo) == [".voyager/brain.json", ".voyager/brain.md"]
    # Settings and .gitignore are not brain files: left for the user to commit.
    assert git(repo, "status", "--porcelain", "--untracked-files=all").split() == [
        "??",
        ".voyager/.gitignore",
        "??",
        ".voyager/config.toml",
    ]


def test_a_brain_file_that_cannot_be_read_is_not_committed(project: Path) -> None:
    (project / ".voyager" / "brain.json").write_text("{ broken\n")
    before = head(project)
    done = run_cli("commit", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "voyager-brain: not committing the brain files: .voyager/brain.json:1: not valid JSON"
    )
    assert head(project) == before
    # The hook says the same in one line, and never fails the agent.
    errors = session(project, "s1", "session-end")
    assert len(errors) == 1 and "brain.json" in errors[0]
    assert head(project) == before


def test_a_refused_commit_is_one_line(project: Path) -> None:
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    cli_ok(project, "add", "observation", "Hooks do not stop it")
    assert cli_ok(project, "commit").startswith("[")  # commit hooks are not run
    (project / ".git" / "index.lock").write_text("")  # another git command is running
    cli_ok(project, "add", "observation", "Locked out")
    done = run_cli("commit", cwd=project)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "git could not commit the brain files: fatal: Unable to create" in done.stderr


def test_the_session_end_hook_imports_neither_gitpython_nor_click(project: Path) -> None:
    cli_ok(project, "add", "observation", "Something to commit")
    payload = json.dumps({"session_id": "s", "cwd": str(project), "transcript_path": ""})
    code = (
        "import io, json, sys\n"
        "from voyager_brain.integrations.hooks import run\n"
        f"sys.stdin = io.StringIO({payload!r})\n"
        "run('claude', 'session-end')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('git', 'click'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert git(project, "log", "-1", "--format=%s").startswith("brain: session 1 (")

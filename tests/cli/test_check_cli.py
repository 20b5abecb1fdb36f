"""`voyager-brain check`: the pre-commit hook over the brain files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import ROOT, git, run_cli

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def brain(repo: Path) -> Path:
    assert run_cli("init", cwd=repo).returncode == 0
    assert run_cli("add", "decision", "Use PostgreSQL", cwd=repo).returncode == 0
    return repo / ".voyager" / "brain.md"


def test_clean_brain_files_pass(repo: Path) -> None:
    brain(repo)
    done = run_cli("check", cwd=repo)
    assert (done.returncode, done.stdout) == (0, "2 brain files checked: ok\n")


def test_conflict_markers_fail_with_file_and_line(repo: Path) -> None:
    path = brain(repo)
    lines = path.read_text().splitlines()
    path.write_text(
        "\n".join([*lines, "<<<<<<< HEAD", "ours", "=======", "theirs", ">>>>>>> topic"]) + "\n"
    )
    done = run_cli("check", cwd=repo)
    assert done.returncode == 1
    first = len(lines) + 1
    assert done.stdout == (
        f".voyager/brain.md:{first}: unresolved git conflict (lines {first}-{first + 4})\n"
    )


def test_a_setext_underline_is_not_a_conflict(repo: Path) -> None:
    path = brain(repo)
    path.write_text(path.read_text() + "\nTitle\n=======\n")
    assert "conflict" not in run_cli("check", cwd=repo).stdout


def test_a_secret_fails_in_every_brain_file(repo: Path) -> None:
    path = brain(repo)
    path.write_text(path.read_text() + f"\ntoken {TOKEN}\n")
    log = repo / ".voyager" / "memory.jsonl"
    entry = {"id": "x1", "type": "learning", "text": f"the key is {TOKEN}"}
    log.write_text(json.dumps(entry) + "\n")
    done = run_cli("check", "--json", cwd=repo)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    found = {(p["path"], p["message"].split(" (")[0]) for p in report["problems"]}
    assert found == {
        (".voyager/brain.md", "unredacted secret"),
        (".voyager/memory.jsonl", "unredacted secret"),
    }
    assert TOKEN not in done.stdout


def test_files_that_do_not_parse(repo: Path) -> None:
    brain(repo)
    (repo / ".voyager" / "brain.json").write_text('{"version": 1,')
    (repo / ".voyager" / "memory.jsonl").write_text('{"id": "a", "type": "learning"}\nnot json\n')
    done = run_cli("check", cwd=repo)
    assert done.returncode == 1
    assert ".voyager/brain.json:1: does not parse: " in done.stdout
    assert ".voyager/memory.jsonl:2: not a JSON object" in done.stdout


def test_only_brain_files_among_those_given_are_checked(repo: Path) -> None:
    path = brain(repo)
    path.write_text(path.read_text() + "<<<<<<< HEAD\n")
    (repo / "notes.md").write_text("<<<<<<< HEAD\n")
    assert run_cli("check", "notes.md", cwd=repo).returncode == 0
    assert run_cli("check", "notes.md", ".voyager/brain.md", cwd=repo).returncode == 1


def test_the_pre_commit_hook_definition() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "voyager-brain-check"
    assert hook["entry"] == "voyager-brain check" and hook["language"] == "python"
    assert hook["pass_filenames"] is True
    assert run_cli("check", "--help", cwd=ROOT).returncode == 0


def test_a_git_commit_of_a_conflicted_or_leaking_brain_is_stopped(repo: Path) -> None:
    """The hook as pre-commit runs it: `entry` with the staged files that match `files`."""
    [definition] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = repo / ".git" / "hooks" / "pre-commit"
    staged = "git diff --cached --name-only --diff-filter=ACM"
    hook.write_text(
        "#!/bin/sh\n"
        f"files=$({staged} | grep -E '{definition['files']}')\n"
        '[ -z "$files" ] && exit 0\n'
        f"exec {sys.executable} -m voyager_brain check $files\n"
    )
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    path = brain(repo)
    git(repo, "add", ".voyager")
    git(repo, "commit", "-q", "-m", "brain")  # clean: the hook lets it through

    def commit() -> subprocess.CompletedProcess[str]:
        git(repo, "add", ".voyager/brain.md")
        return subprocess.run(
            ["git", "commit", "-q", "-m", "change"], cwd=repo, capture_output=True, text=True,
            env=os.environ.copy(),
        )  # fmt: skip

    clean = path.read_text()
    path.write_text(clean + "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\n")
    stopped = commit()
    assert stopped.returncode != 0 and "unresolved git conflict" in stopped.stdout + stopped.stderr
    path.write_text(clean + f"\nkey {TOKEN}\n")
    stopped = commit()
    assert stopped.returncode != 0 and "unredacted secret" in stopped.stdout + stopped.stderr
    path.write_text(clean + "\nA plain note.\n")
    assert commit().returncode == 0

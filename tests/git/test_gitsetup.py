"""`install git`: the merge driver's .gitattributes lines and git config; the `doctor`
check and the `init` hint that go with them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from conftest import git, run_cli

from voyager_brain.git import setup as gitsetup

ATTRIBUTES = (
    "# voyager-brain: merge the brain files by their content (voyager-brain install git)\n"
    ".voyager/brain.md merge=voyager-brain\n"
    ".voyager/brain.json merge=voyager-brain\n"
    ".voyager/memory.jsonl merge=voyager-brain\n"
)


def config(top: Path) -> str:
    return git(top, "config", "--local", "--list")


def test_install_git_writes_both_halves_once(repo: Path) -> None:
    done = run_cli("install", "git", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        ".gitattributes: added merge=voyager-brain for .voyager/brain.md, "
        ".voyager/brain.json, .voyager/memory.jsonl",
        "git config: set merge.voyager-brain.name, merge.voyager-brain.driver (this clone only)",
        "next: commit .gitattributes; in every other clone, run voyager-brain install git",
    ]
    assert (repo / ".gitattributes").read_text() == ATTRIBUTES
    assert git(repo, "config", "merge.voyager-brain.driver").strip() == (
        "voyager-brain merge-driver %O %A %B %P"
    )
    assert gitsetup.status(repo).registered

    before = ((repo / ".gitattributes").read_bytes(), config(repo))
    (repo / "src").mkdir()
    again = run_cli("install", "git", cwd=repo / "src")  # from any folder of the repository
    assert again.stdout == "the voyager-brain merge driver is already registered; nothing to do\n"
    assert ((repo / ".gitattributes").read_bytes(), config(repo)) == before
    assert not list(repo.glob(".gitattributes*.lock"))


def test_install_git_keeps_other_attributes_and_uninstall_removes_only_ours(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.png binary\n*.sh text eol=lf")  # no final newline
    git(repo, "config", "merge.other.driver", "other %A")
    run_cli("install", "git", cwd=repo)
    assert (repo / ".gitattributes").read_text() == "*.png binary\n*.sh text eol=lf\n" + ATTRIBUTES

    done = run_cli("install", "git", "--uninstall", cwd=repo)
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == (
        "git config: removed merge.voyager-brain.name, merge.voyager-brain.driver"
    )
    assert (repo / ".gitattributes").read_text() == "*.png binary\n*.sh text eol=lf\n"
    assert "voyager-brain" not in config(repo) and "merge.other.driver=other %A" in config(repo)
    again = run_cli("install", "git", "--uninstall", cwd=repo)
    assert again.stdout == "the voyager-brain merge driver is not registered; nothing to do\n"


def test_uninstall_deletes_a_gitattributes_that_held_only_our_lines(repo: Path) -> None:
    run_cli("install", "git", cwd=repo)
    run_cli("install", "git", "--uninstall", cwd=repo)
    assert not (repo / ".gitattributes").exists()


def test_install_git_outside_a_repository_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("install", "git", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not inside a git repository" in done.stderr


def test_install_git_warns_when_git_could_not_find_the_executable(repo: Path) -> None:
    git_dir = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    done = run_cli("install", "git", cwd=repo, env={"PATH": git_dir})
    assert done.returncode == 0
    assert done.stderr.startswith("warning: `voyager-brain` is not on this PATH")


def test_init_hints_at_install_git_until_it_is_registered(repo: Path) -> None:
    hint = (
        "hint: run voyager-brain install git, so that git merges the brain files instead of "
        "conflicting"
    )
    assert run_cli("init", cwd=repo).stdout.splitlines()[-1] == hint
    run_cli("install", "git", cwd=repo)
    assert hint not in run_cli("init", cwd=repo).stdout


def test_doctor_warns_when_the_attributes_name_a_driver_this_clone_lacks(
    repo: Path, tmp_path: Path
) -> None:
    run_cli("init", cwd=repo)
    run_cli("install", "git", cwd=repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain and its merge driver")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))

    done = run_cli("doctor", "--json", cwd=clone)
    assert done.returncode == 0  # a warning, not an error
    findings = json.loads(done.stdout)["findings"]
    [warning] = [f for f in findings if "merge driver" in f["message"]]
    assert warning == {
        "level": "warning",
        "message": ".gitattributes names the voyager-brain merge driver but this clone's git "
        "config lacks it: git falls back to a line merge, with conflict markers",
        "hint": "run `voyager-brain install git` or `doctor --repair`",
        "repaired": False,
    }

    repaired = run_cli("doctor", "--repair", cwd=clone)
    assert "done  .gitattributes names the voyager-brain merge driver" in repaired.stdout
    assert gitsetup.status(clone).registered
    after = run_cli("doctor", cwd=clone).stdout
    assert "ok    git merges .voyager/brain.md, .voyager/brain.json, .voyager/memory.jsonl" in after
    assert (clone / ".gitattributes").read_text() == ATTRIBUTES  # only the config changed


def test_doctor_says_nothing_about_a_driver_nobody_asked_for(repo: Path) -> None:
    run_cli("init", cwd=repo)
    assert "merge" not in run_cli("doctor", cwd=repo).stdout

"""The brain files in git: `diff`, through real repositories and the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git, run_cli

from voyager_brain.audit import compare_versions


def cli_ok(top: Path, *args: str, input: str | None = None) -> str:
    done = run_cli(*args, cwd=top, input=input)
    assert done.returncode == 0, done.stderr
    return done.stdout


def commit_all(top: Path, message: str) -> str:
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", message)
    return git(top, "rev-parse", "HEAD").strip()


def save(top: Path, update: dict[str, object]) -> None:
    cli_ok(top, "save", input=json.dumps(update))


PG = {"what": "Use PostgreSQL over MongoDB", "why": "Data is relational", "when": "2026-02-15"}


@pytest.fixture
def project(repo: Path) -> Path:
    """A repository on main whose last commit has an initialized .voyager/."""
    cli_ok(repo, "init")
    save(repo, {"decisions": [PG], "nextSteps": ["Write integration tests"]})
    commit_all(repo, "voyager-brain init")
    return repo


def cat_file_children() -> list[str]:
    """The `git cat-file` processes this test process started and left running."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"cat-file" in cmdline:
            found.append(entry.name)
    return found


# -- diff -----------------------------------------------------------------------------


def test_diff_of_a_branch_is_from_the_merge_base_with_main(project: Path) -> None:
    git(project, "checkout", "-q", "-b", "feature")
    cli_ok(project, "add", "decision", "Cache sessions in Redis")
    save(project, {"decisions": [{**PG, "why": "Joins everywhere"}], "nextSteps": ["Ship"]})
    cli_ok(project, "brain", "action=add", "type=learning", "text=This repo uses pnpm not npm")
    commit_all(project, "feature work")
    # A later commit on main is not part of the branch's changes.
    git(project, "checkout", "-q", "main")
    cli_ok(project, "add", "observation", "Only on main")
    commit_all(project, "main moves on")
    git(project, "checkout", "-q", "feature")

    out = cli_ok(project, "diff")
    lines = out.splitlines()
    assert lines[0].startswith("main...HEAD: merge base of main and HEAD (")
    assert lines[1:5] == [
        ".voyager/brain.json",
        "  ~ decisions[Use PostgreSQL over MongoDB].why: Data is relational -> Joins everywhere",
        "  + nextSteps: Ship",
        "  - nextSteps: Write integration tests",
    ]
    assert lines[5] == ".voyager/brain.md"
    assert lines[6].startswith("  + Decision — ") and lines[6].endswith(": Cache sessions in Redis")
    assert lines[7] == ".voyager/memory.jsonl"
    assert lines[8].startswith("  + learning ") and lines[8].endswith(
        ": This repo uses pnpm not npm"
    )
    assert lines[-1] == "+1 next step, ~1 decision, -1 next step, +1 decision, +1 learning"
    assert "Only on main" not in out

    data = json.loads(cli_ok(project, "diff", "--json"))
    assert data["title"] == "main...HEAD"
    assert data["old"]["commit"] == git(project, "merge-base", "main", "HEAD").strip()
    assert data["new"] == {"label": "HEAD", "commit": git(project, "rev-parse", "HEAD").strip()}
    assert data["brain.md"]["added"][0]["content"] == "Cache sessions in Redis"
    assert data["brain.json"][0]["item"] == PG["what"]
    assert data["memory.jsonl"]["added"][0]["text"] == "This repo uses pnpm not npm"
    assert json.loads(cli_ok(project, "diff", "--format", "json")) == data


def test_diff_markdown_is_a_pull_request_comment(project: Path) -> None:
    git(project, "checkout", "-q", "-b", "feature")
    save(project, {"decisions": [{"what": "Use `uv` | not pip"}]})
    commit_all(project, "decide")
    out = cli_ok(project, "diff", "--format", "markdown")
    assert out == (
        "### Brain changes: main...HEAD\n\n"
        "**\\+1 decision**\n\n"
        "#### Project state (`.voyager/brain.json`)\n\n"
        "- \\+ decisions\\: Use \\`uv\\` \\| not pip\n"
    )


def test_diff_on_the_default_branch_shows_the_working_tree_against_head(project: Path) -> None:
    cli_ok(project, "add", "observation", "Uncommitted finding")
    out = cli_ok(project, "diff")
    assert out.splitlines()[0].startswith("HEAD -> working tree: HEAD (")
    assert "  + Observation — " in out and out.endswith("\n+1 observation\n")


def test_diff_with_no_default_branch_shows_the_working_tree_against_head(tmp_path: Path) -> None:
    top = tmp_path / "trunk-only"
    top.mkdir()
    git(top, "init", "-q", "-b", "trunk")
    cli_ok(top, "init")
    commit_all(top, "init")
    git(top, "checkout", "-q", "-b", "feature")
    cli_ok(top, "add", "observation", "Not committed")
    data = json.loads(cli_ok(top, "diff", "--json"))
    assert data["title"] == "HEAD -> working tree"
    assert data["summary"] == "+1 observation"


def test_diff_against_origin_head_in_a_clone(project: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    cli_ok(clone, "add", "reflection", "Cloned and went on")
    commit_all(clone, "work in the clone")
    data = json.loads(cli_ok(clone, "diff", "--json"))
    assert data["title"] == "origin/main...HEAD"
    assert data["summary"] == "+1 reflection"
    # On main in the clone (origin/main's branch), the working tree against HEAD.
    git(clone, "checkout", "-q", "main")
    assert json.loads(cli_ok(clone, "diff", "--json"))["title"] == "HEAD -> working tree"


def test_diff_staged_compares_the_index_with_head(project: Path) -> None:
    cli_ok(project, "add", "observation", "Staged finding")
    git(project, "add", ".voyager/brain.md")
    save(project, {"nextSteps": ["Not staged"]})
    staged = json.loads(cli_ok(project, "diff", "--staged", "--json"))
    assert staged["title"] == "HEAD -> index"
    assert staged["summary"] == "+1 observation"
    everything = json.loads(cli_ok(project, "diff", "--json"))
    assert everything["summary"] == "+1 next step, -1 next step, +1 observation"


def test_diff_ranges_two_dots_three_dots_and_one_revision(project: Path) -> None:
    first = git(project, "rev-parse", "HEAD").strip()
    cli_ok(project, "add", "observation", "Second commit")
    second = commit_all(project, "second")
    cli_ok(project, "add", "decision", "Uncommitted decision")

    def summary(*args: str) -> str:
        return str(json.loads(cli_ok(project, "diff", "--json", *args))["summary"])

    assert summary(f"{first}..{second}") == "+1 observation"
    assert summary(f"{second}..{first}") == "-1 observation"
    assert summary(f"{first}..") == "+1 observation"  # to HEAD
    assert summary(f"{first}...{second}") == "+1 observation"
    assert summary(f"{second}...{first}") == ""  # from their merge base, the first commit
    assert summary(first) == "+1 observation, +1 decision"  # against the working tree


def test_diff_exit_code(project: Path) -> None:
    assert run_cli("diff", "--exit-code", cwd=project).returncode == 0
    cli_ok(project, "add", "observation", "A change")
    done = run_cli("diff", "--exit-code", cwd=project)
    assert done.returncode == 1 and "+1 observation" in done.stdout
    assert run_cli("diff", cwd=project).returncode == 0


def test_a_file_missing_on_one_side_counts_as_empty(project: Path) -> None:
    first = git(project, "rev-list", "--max-parents=0", "HEAD").strip()  # README only
    data = json.loads(cli_ok(project, "diff", "--json", f"{first}..HEAD"))
    assert data["summary"] == "+1 decision, +1 next step, ~1 project"
    back = json.loads(cli_ok(project, "diff", "--json", f"HEAD..{first}"))
    assert back["summary"] == "~1 project, -1 decision, -1 next step"


def test_diff_in_a_repository_without_commits(tmp_path: Path) -> None:
    top = tmp_path / "fresh"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    cli_ok(top, "init")
    cli_ok(top, "add", "observation", "First words")
    assert json.loads(cli_ok(top, "diff", "--json"))["summary"] == "~1 project, +1 observation"
    assert json.loads(cli_ok(top, "diff", "--staged", "--json"))["summary"] == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope",), "voyager-brain: nope: unknown revision; expected a commit, branch or tag\n"),
        (("HEAD", "--staged"), "voyager-brain: give REV_RANGE or --staged, not both\n"),
    ],
)
def test_diff_bad_arguments_are_one_line(
    project: Path, args: tuple[str, ...], message: str
) -> None:
    done = run_cli("diff", *args, cwd=project)
    assert (done.returncode, done.stderr, done.stdout) == (2, message, "")


def test_diff_of_an_unreadable_version_names_it(project: Path) -> None:
    (project / ".voyager" / "brain.json").write_text('{"decisions": [\n<<<<<<< HEAD\n')
    commit_all(project, "a broken merge")
    done = run_cli("diff", "HEAD~1..HEAD", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("voyager-brain: HEAD:.voyager/brain.json:2: not valid JSON")
    assert len(done.stderr.splitlines()) == 1


def test_diff_outside_a_repository(tmp_path: Path) -> None:
    done = run_cli("diff", cwd=tmp_path)
    assert done.returncode == 2 and "not inside a git repository" in done.stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts processes in /proc")
def test_library_calls_leave_no_git_cat_file_running(project: Path) -> None:
    cli_ok(project, "add", "observation", "Something")
    before = cat_file_children()
    assert compare_versions(project).changes
    assert compare_versions(project, "HEAD").changes
    assert cat_file_children() == before == []

"""The brain files in git: `diff` and `log`, through real repositories and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import cli_ok, commit_all, git, run_cli

from voyager_brain.git.audit import compare_versions


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
        "- \\+ decisions: Use \\`uv\\` \\| not pip\n"
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
    assert summary(first, second) == "+1 observation"  # as `git diff A B` reads it
    assert summary(second, first) == "-1 observation"


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
        (("HEAD~1..HEAD", "HEAD"), "voyager-brain: give A..B or A B, not HEAD~1..HEAD HEAD\n"),
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
    assert done.stderr.startswith(
        "voyager-brain: HEAD:.voyager/brain.json:2: unresolved git conflict (lines 2-2)"
    )
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


# -- log ------------------------------------------------------------------------------


def log_json(top: Path, *args: str) -> list[dict[str, Any]]:
    return json.loads(cli_ok(top, "log", "--json", *args))  # type: ignore[no-any-return]


def test_log_lists_the_commits_that_changed_the_brain_with_summaries(project: Path) -> None:
    cli_ok(project, "add", "observation", "Found the flaky test")
    cli_ok(project, "add", "decision", "Quarantine flaky tests")
    first = commit_all(project, "brain: session 1")
    (project / "app.py").write_text("print('hi')\n")
    commit_all(project, "code only")  # not a brain commit: not listed
    save(project, {"decisions": [{**PG, "why": "Joins"}], "facts": {"architecture": "Monolith"}})
    cli_ok(project, "brain", "action=add", "type=learning", "text=CI needs two retries")
    second = commit_all(project, "brain: session 2")

    lines = cli_ok(project, "log").splitlines()
    assert len(lines) == 6
    assert lines[0].startswith(f"{second[:8]}  ") and lines[0].endswith("  brain: session 2")
    assert "  Test Agent  " in lines[0]
    assert lines[1] == "    ~1 fact, ~1 decision, +1 learning"
    assert lines[2].startswith(f"{first[:8]}  ") and lines[2].endswith("  brain: session 1")
    assert lines[3] == "    +1 observation, +1 decision"
    assert lines[4].endswith("  voyager-brain init")
    assert lines[5] == "    +1 decision, +1 next step, ~1 project"

    records = log_json(project)
    assert [r["sha"] for r in records[:2]] == [second, first]
    assert records[0]["summary"] == "~1 fact, ~1 decision, +1 learning"
    assert records[0]["author"] == "Test Agent" and records[0]["email"] == "agent@example.invalid"
    assert records[0]["date"][:4] == git(project, "log", "-1", "--format=%aI")[:4]
    assert records[0]["merge"] is False and records[0]["parents"] != []
    assert records[0]["files"] == [".voyager/brain.json", ".voyager/memory.jsonl"]
    assert records[1]["brain.md"]["added"][1]["content"] == "Quarantine flaky tests"


def test_log_since_limit_and_grep(project: Path) -> None:
    # Later than the fixture's own commit, whenever the tests run.
    for n, day in enumerate(("2090-01-10", "2090-02-10", "2090-03-10")):
        cli_ok(project, "add", "observation", f"Finding {n}")
        git(project, "add", "-A")
        subject = f"brain: {'Release' if n == 1 else 'session'} {n}"
        subprocess.run(
            ["git", "commit", "-q", "-m", subject],
            cwd=project,
            check=True,
            env={
                **os.environ,
                "GIT_AUTHOR_DATE": f"{day}T12:00:00Z",
                "GIT_COMMITTER_DATE": f"{day}T12:00:00Z",
            },
        )
    subjects = [r["subject"] for r in log_json(project, "--since", "2090-02-01")]
    assert subjects == ["brain: session 2", "brain: Release 1"]
    assert [r["subject"] for r in log_json(project, "--limit", "2")] == subjects
    assert [r["subject"] for r in log_json(project, "--grep", "release")] == ["brain: Release 1"]
    assert log_json(project, "--grep", "nothing like it") == []
    assert len(log_json(project)) == 4
    assert log_json(project, "--limit", "1")[0]["date"] == "2090-03-10T12:00:00+00:00"


def test_log_of_a_file_follows_it_through_a_rename(repo: Path) -> None:
    notes = repo / "notes"
    notes.mkdir()
    (notes / "brain.md").write_text(
        "# p Brain — Session Context\n\n## Observation — 2026-03-21T14:30:00Z\nKept in notes\n"
    )
    commit_all(repo, "notes: a brain of our own")
    (repo / ".voyager").mkdir()
    git(repo, "mv", "notes/brain.md", ".voyager/brain.md")
    git(repo, "commit", "-q", "-m", "move the notes into .voyager")
    cli_ok(repo, "add", "observation", "After the move")
    commit_all(repo, "brain: after the move")

    followed = log_json(repo, ".voyager/brain.md")
    assert [(r["subject"], r["summary"]) for r in followed] == [
        ("brain: after the move", "+1 observation"),
        ("move the notes into .voyager", ""),
        ("notes: a brain of our own", "+1 observation"),
    ]
    # From inside the folder, PATH is relative to it.
    assert log_json(repo / ".voyager", "brain.md") == followed
    # The folder alone: the move brought the notes' entry into .voyager.
    folder = log_json(repo)
    assert [(r["subject"], r["summary"]) for r in folder][1:] == [
        ("move the notes into .voyager", "+1 observation")
    ]
    moved = cli_ok(repo, "log", ".voyager/brain.md").splitlines()
    assert moved[3] == "    no change to the brain's content"


def test_log_shows_a_merge_by_what_it_brought(project: Path) -> None:
    git(project, "checkout", "-q", "-b", "feature")
    cli_ok(project, "add", "observation", "On the branch")
    commit_all(project, "brain: branch work")
    git(project, "checkout", "-q", "main")
    save(project, {"knownIssues": [{"issue": "Slow CI", "severity": "low"}]})
    commit_all(project, "brain: main work")
    git(project, "merge", "-q", "--no-edit", "feature")

    records = log_json(project)
    merge = records[0]
    assert merge["merge"] is True and len(merge["parents"]) == 2
    assert merge["summary"] == "+1 observation"
    assert {r["subject"] for r in records[1:3]} == {"brain: branch work", "brain: main work"}
    text = cli_ok(project, "log", "--limit", "1").splitlines()
    assert text[1] == "    merge: +1 observation"


def test_log_reports_what_is_not_brain_content(project: Path) -> None:
    config = project / ".voyager" / "config.toml"
    config.write_text(config.read_text() + "auto_compact = false\n")
    commit_all(project, "settings")
    (project / ".voyager" / "brain.json").write_text("{ not json\n")
    commit_all(project, "a broken brain.json")
    lines = cli_ok(project, "log", "--limit", "2").splitlines()
    assert lines[1] == "    brain.json unreadable"
    assert lines[3] == "    no change to the brain's content (.voyager/config.toml)"
    error = log_json(project, "--limit", "1")[0]["unreadable"][0]
    assert error["file"] == "brain.json" and "not valid JSON" in error["error"]


def test_log_without_commits_and_outside_the_repository(tmp_path: Path, project: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    assert cli_ok(fresh, "log") == ""
    done = run_cli("log", str(tmp_path), cwd=project)
    assert done.returncode == 2
    assert done.stderr == f"voyager-brain: {tmp_path}: outside the repository {project}\n"


def random_history(top: Path, seed: int, commits: int) -> None:
    """Commits of random brain changes, by the library and by hand: entries added (some
    with code fences and heading-like lines), edited, removed, compacted; brain.json
    saves; memory lines appended, updated, tombstoned, rewritten by gc."""
    import random

    from voyager_brain import BrainEntry, BrainManager
    from voyager_brain.memory import log as memory_log
    from voyager_brain.render import Templates
    from voyager_brain.session.brainfile import parse, render

    rng = random.Random(seed)
    ticks = iter(range(10**6))

    def clock() -> Any:
        from datetime import UTC, datetime, timedelta

        return datetime(2026, 3, 21, tzinfo=UTC) + timedelta(minutes=next(ticks))

    bodies = [
        "Plain finding",
        "```python\ndef f():\n    pass\n```",
        "## Observation — 2026-01-01T00:00:00Z\nlooks like a heading",
        "Opened a fence\n```\nnever closed",
        "- list\n- items\n\n> quote",
    ]
    brain = top / ".voyager" / "brain.md"
    log_path = top / ".voyager" / "memory.jsonl"
    live: list[str] = []
    for n in range(commits):
        config = {"auto_compact": False, "compact_budget_tokens": rng.choice([60, 4000])}
        bm = BrainManager(top, config=config, clock=clock)
        bm.load()
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice(["observation", "decision", "loop_status", "reflection"])
            bm.update(BrainEntry(kind, f"{rng.choice(bodies)}\n(step {n})"))
        if rng.random() < 0.3:
            bm.compact()
        if rng.random() < 0.4:
            bm.merge_state({"decisions": [{"what": f"Use {rng.choice('ABC')}", "why": str(n)}]})
        bm.persist()
        if rng.random() < 0.3 and brain.exists():  # a hand edit: reword or drop an entry
            doc = parse(brain.read_bytes(), brain)
            if doc.entries:
                entries = list(doc.entries)
                k = rng.randrange(len(entries))
                if rng.random() < 0.5:
                    entries[k] = BrainEntry(
                        entries[k].type, entries[k].content + "\nedited", entries[k].timestamp
                    )
                else:
                    del entries[k]
                brain.write_text(render(doc.replace(entries=tuple(entries)), Templates()))
        lines: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 2)):
            roll = rng.random()
            if roll < 0.2 and live:
                target = live.pop(rng.randrange(len(live)))
                lines.append(
                    {
                        "id": f"t{n}{roll}",
                        "type": "tombstone",
                        "target_id": target,
                        "target_type": "learning",
                        "reason": "x",
                        "created": "2026-03-22",
                    }
                )
            elif roll < 0.4 and live:
                lines.append(
                    {
                        "id": rng.choice(live),
                        "type": "learning",
                        "text": f"u{n}",
                        "created": "2026-03-21",
                        "updated": "2026-03-22",
                    }
                )
            else:
                live.append(f"l{n}-{len(lines)}")
                lines.append(
                    {
                        "id": live[-1],
                        "type": "learning",
                        "text": f"learned {n}",
                        "created": "2026-03-21",
                    }
                )
        if lines:
            memory_log.append(log_path, lines)
        if rng.random() < 0.1 and log_path.exists():
            memory_log.gc(log_path)
        commit_all(top, f"step {n}")


@pytest.mark.parametrize("seed", [1, 2])
def test_log_summaries_from_the_patch_equal_the_diff_of_each_commit(
    project: Path, seed: int
) -> None:
    random_history(project, seed, 25)
    for record in log_json(project):
        if len(record["parents"]) != 1:
            continue
        sha = record["sha"]
        full = compare_versions(project, f"{sha}^..{sha}").changes.to_dict()
        # What an appended update or tombstone replaced is read from the parent's log.
        assert {k: record[k] for k in full} == full, sha


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts processes in /proc")
def test_history_stopped_early_leaves_no_git_running(project: Path) -> None:
    from voyager_brain.git.audit import history

    for n in range(3):
        cli_ok(project, "add", "observation", f"Finding {n}")
        commit_all(project, f"step {n}")
    with history(project) as records:
        first = next(records)
    assert first.commit.subject == "step 2"
    with history(project) as records:
        assert len(list(records)) == 4
    assert cat_file_children() == []
    children = [p for p in Path("/proc").iterdir() if p.name.isdigit()]
    assert not any(
        b"log" in (p / "cmdline").read_bytes().split(b"\0")
        and int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()
        for p in children
        if (p / "cmdline").exists()
    )

"""`voyager-brain blame`, through real repositories and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli_ok, commit_all, git, run_cli
from test_audit import PG, cat_file_children, project, save

from voyager_brain.git.blame import blame

__all__ = ["project"]  # the fixture, shared with test_audit


def blame_json(top: Path, *args: str) -> dict[str, Any]:
    return json.loads(cli_ok(top, "blame", "--json", *args))  # type: ignore[no-any-return]


def test_blame_a_decision_a_key_file_and_a_known_issue(project: Path) -> None:
    introduced = git(project, "rev-parse", "HEAD").strip()  # the fixture saved PG
    save(project, {"keyFiles": [{"path": "src/index.ts", "role": "entry point"}]})
    save(project, {"knownIssues": [{"issue": "pg import fails in ESM", "severity": "low"}]})
    files = commit_all(project, "brain: key file and issue")
    save(project, {"decisions": [{**PG, "why": "Joins"}]})
    changed = commit_all(project, "brain: rethink the database")
    save(project, {"knownIssues": [{"issue": "pg import fails in ESM", "severity": "high"}]})

    data = blame_json(project, "decision", PG["what"])
    assert data["introduced"]["sha"] == introduced and data["introduced"]["op"] == "add"
    assert data["last_changed"]["sha"] == changed and data["last_changed"]["op"] == "change"
    assert data["present"] is True and data["uncommitted"] is None
    assert data["path"] == ".voyager/brain.json"

    text = cli_ok(project, "blame", "decision", PG["what"]).splitlines()
    assert text[0] == "decision 'Use PostgreSQL over MongoDB' (.voyager/brain.json)"
    assert text[1].startswith(f"introduced    {introduced[:8]}  ")
    assert text[1].endswith("  Test Agent  voyager-brain init")
    assert text[2].startswith(f"last changed  {changed[:8]}  ")

    key_file = blame_json(project, "keyFile", "src/index.ts")
    assert key_file["introduced"]["sha"] == files == key_file["last_changed"]["sha"]
    issue = blame_json(project, "knownissue", "pg import fails in ESM")  # any case of KIND
    assert issue["introduced"]["sha"] == files and issue["uncommitted"] == "change"
    assert cli_ok(project, "blame", "knownIssue", "pg import fails in ESM").endswith(
        "working tree  changed, not committed yet\n"
    )


def test_blame_an_entry_by_heading_or_text(project: Path) -> None:
    from voyager_brain.render import Templates
    from voyager_brain.session.brainfile import parse, render

    cli_ok(project, "add", "observation", "The cache misses on cold start")
    cli_ok(project, "add", "reflection", "Small steps worked")
    added = commit_all(project, "brain: findings")
    brain = project / ".voyager" / "brain.md"
    doc = parse(brain.read_bytes(), brain)
    first = doc.entries[0]
    edited = first.content + "\nbecause the warm-up job is off"
    from voyager_brain import BrainEntry

    doc = doc.replace(entries=(BrainEntry(first.type, edited, first.timestamp), *doc.entries[1:]))
    brain.write_text(render(doc, Templates()))
    changed = commit_all(project, "brain: explain the misses")

    heading = f"Observation — {first.key[1]}"
    by_heading = blame_json(project, "entry", heading)
    assert by_heading["key"] == heading
    assert by_heading["introduced"]["sha"] == added
    assert by_heading["last_changed"]["sha"] == changed
    assert by_heading["last_changed"]["op"] == "change"
    assert blame_json(project, "entry", f"## {heading}") == by_heading
    assert blame_json(project, "entry", f"observation {first.key[1]}") == by_heading
    assert blame_json(project, "entry", "cold start") == by_heading
    assert blame_json(project, "entry", "SMALL STEPS")["last_changed"]["sha"] == added


def test_blame_an_entry_that_was_compacted_away(project: Path) -> None:
    cli_ok(project, "add", "observation", "Old finding about the retry loop")
    added = commit_all(project, "brain: old finding")
    stamp = json.loads(cli_ok(project, "status", "--json"))["last_updated"]
    config = project / ".voyager" / "config.toml"
    config.write_text("compact_budget_tokens = 1\n")
    cli_ok(project, "compact")
    compacted = commit_all(project, "brain: compact")

    data = blame_json(project, "entry", f"Observation — {stamp}")
    assert data["introduced"]["sha"] == added
    assert data["last_changed"]["sha"] == compacted and data["last_changed"]["op"] == "remove"
    assert data["present"] is False
    lines = cli_ok(project, "blame", "entry", f"Observation — {stamp}").splitlines()
    assert lines[2].startswith(f"folded by     {compacted[:8]}  ")
    # Found by its text, now in the summary: the original's commit and the compaction's.
    folded = blame_json(project, "entry", "retry loop")
    assert folded["key"] == f"Observation — {stamp}" and folded["introduced"]["sha"] == added
    assert folded["folded_by"]["sha"] == compacted
    assert folded["folded_into"] == f"Reflection — {stamp}"


def test_blame_a_memory_through_update_and_tombstone(project: Path) -> None:
    out = cli_ok(project, "brain", "action=add", "type=learning", "text=Use pnpm")
    memory_id = out.split()[2].rstrip(":")
    added = commit_all(project, "brain: learn")
    cli_ok(project, "brain", "action=update", f"id={memory_id}", "text=Use pnpm, never npm")
    updated = commit_all(project, "brain: refine")
    data = blame_json(project, "memory", memory_id)
    assert (data["introduced"]["sha"], data["last_changed"]["sha"]) == (added, updated)
    cli_ok(project, "brain", "action=remove", f"id={memory_id}", "reason=outdated")
    removed = commit_all(project, "brain: forget")
    data = blame_json(project, "memory", memory_id)
    assert data["last_changed"]["sha"] == removed and data["present"] is False


def test_blame_through_a_merge_names_the_branch_commit(project: Path) -> None:
    git(project, "checkout", "-q", "-b", "feature")
    save(project, {"decisions": [{"what": "Use Redis for sessions"}]})
    on_branch = commit_all(project, "brain: decide on the branch")
    git(project, "checkout", "-q", "main")
    cli_ok(project, "add", "observation", "Meanwhile on main")
    commit_all(project, "brain: main")
    git(project, "merge", "-q", "--no-edit", "feature")
    data = blame_json(project, "decision", "Use Redis for sessions")
    assert data["introduced"]["sha"] == on_branch == data["last_changed"]["sha"]


def test_blame_of_something_not_committed_yet(project: Path) -> None:
    cli_ok(project, "add", "decision", "Adopt trunk-based development")
    data = blame_json(project, "entry", "trunk-based")
    assert data["introduced"] is None and data["last_changed"] is None
    assert data["uncommitted"] == "add" and data["present"] is True
    assert cli_ok(project, "blame", "entry", "trunk-based").splitlines()[1] == (
        "working tree  added, not committed yet"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("issue", "x"),
            "KIND: expected one of decision, keyFile, knownIssue, entry, memory, got 'issue'",
        ),
        (
            ("decision", "Use MySQL"),
            ".voyager/brain.json: no decision 'Use MySQL' in the working tree or its history",
        ),
        (
            ("memory", "deadbeef"),
            ".voyager/memory.jsonl: no memory 'deadbeef' in the working tree or its history",
        ),
        (
            ("entry", "Observation — 2020-01-01T00:00:00Z"),
            ".voyager/brain.md: no entry 'Observation — 2020-01-01T00:00:00Z' in the working "
            "tree or its history",
        ),
    ],
)
def test_blame_of_an_item_that_never_existed_is_one_line(
    project: Path, args: tuple[str, ...], message: str
) -> None:
    done = run_cli("blame", *args, cwd=project)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"voyager-brain: {message}\n")


def test_blame_entry_text_in_two_entries_asks_for_a_heading(project: Path) -> None:
    cli_ok(project, "add", "observation", "Flaky test in CI")
    cli_ok(project, "add", "reflection", "The flaky test again")
    done = run_cli("blame", "entry", "flaky", cwd=project)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "2 entries contain 'flaky' (Observation — " in done.stderr
    assert "give the heading of one" in done.stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts processes in /proc")
def test_blame_leaves_no_git_running(project: Path) -> None:
    assert blame(project, "decision", PG["what"]).introduced is not None
    assert cat_file_children() == []

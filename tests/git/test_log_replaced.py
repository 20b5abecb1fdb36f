"""`voyager-brain log` on memory-log updates written as appended lines: it shows the value
each update (or tombstone) replaced, read from the log as it was before the commit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import cli_ok, commit_all

from voyager_brain.git.audit import compare_versions


def brain(top: Path, *params: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(cli_ok(top, "brain", "--json", *params))
    assert result["ok"], result
    return result


def add_learning(top: Path, text: str) -> dict[str, Any]:
    entry: dict[str, Any] = brain(
        top, "action=add", "type=learning", f"text={text}", "store=project"
    )["entries"][0]
    return entry


def log_json(top: Path, *args: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(cli_ok(top, "log", "--json", *args))
    return records


def memory_lines(top: Path) -> list[dict[str, Any]]:
    text = (top / ".voyager" / "memory.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_log_shows_the_value_an_appended_update_replaced(repo: Path) -> None:
    cli_ok(repo, "init")
    entry = add_learning(repo, "The tests use npm")
    add_learning(repo, "CI runs on every push")
    commit_all(repo, "learn")
    brain(repo, "action=update", f"id={entry['id']}", "text=The tests use pnpm, not npm")
    lines = memory_lines(repo)
    # The update is an appended line: the old one is still in the file.
    assert [line["id"] for line in lines].count(entry["id"]) == 2
    sha = commit_all(repo, "correct a learning")

    record = log_json(repo, "--limit", "1")[0]
    assert record["sha"] == sha
    assert record["summary"] == "~1 learning"
    (updated,) = record["memory.jsonl"]["updated"]
    assert updated["old"] == entry
    assert updated["new"]["text"] == "The tests use pnpm, not npm"
    assert updated["new"] == lines[-1]
    # The same as comparing the two whole versions.
    full = compare_versions(repo, f"{sha}^..{sha}").changes.to_dict()
    assert record["memory.jsonl"] == full["memory.jsonl"]

    text = cli_ok(repo, "log", "--limit", "1")
    assert text.splitlines()[1:] == ["    ~1 learning"]


def test_log_folds_the_parent_version_for_several_updates_and_a_tombstone(repo: Path) -> None:
    cli_ok(repo, "init")
    first = add_learning(repo, "one")
    second = add_learning(repo, "two")
    commit_all(repo, "learn")
    brain(repo, "action=update", f"id={first['id']}", "text=one, again")
    commit_all(repo, "first update")
    # The entry's previous state is the first update, not the line it was added with.
    brain(repo, "action=update", f"id={first['id']}", "text=one, a third time")
    brain(repo, "action=update", f"id={first['id']}", "text=one, a fourth time")
    brain(repo, "action=remove", f"id={second['id']}", "reason=wrong")
    third = add_learning(repo, "three")
    sha = commit_all(repo, "more")

    memory = log_json(repo, "--limit", "1")[0]["memory.jsonl"]
    (updated,) = memory["updated"]
    assert updated["old"]["text"] == "one, again"
    assert updated["new"]["text"] == "one, a fourth time"
    (tombstoned,) = memory["tombstoned"]
    assert tombstoned["entry"] == second
    assert tombstoned["tombstone"]["target_id"] == second["id"]
    assert memory["added"] == [third]
    full = compare_versions(repo, f"{sha}^..{sha}").changes.to_dict()
    assert memory == full["memory.jsonl"]


def test_an_entry_added_and_updated_in_one_commit_is_an_addition(repo: Path) -> None:
    cli_ok(repo, "init")
    add_learning(repo, "before")
    commit_all(repo, "learn")
    entry = add_learning(repo, "new")
    brain(repo, "action=update", f"id={entry['id']}", "text=new, reworded")
    commit_all(repo, "learn and reword")
    memory = log_json(repo, "--limit", "1")[0]["memory.jsonl"]
    assert [e["text"] for e in memory["added"]] == ["new, reworded"]
    assert memory["updated"] == []

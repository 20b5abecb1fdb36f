"""`voyager-brain blame entry TEXT` for text that a compaction folded into a summary: the
commit that added the original entry, and the compaction that folded it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import cli_ok, commit_all

from voyager_brain.git.blame import blame

DISTINCTIVE = "Webhook retries double-charge when the idempotency key expires"


def blame_json(top: Path, *args: str) -> dict[str, Any]:
    return json.loads(cli_ok(top, "blame", "--json", *args))  # type: ignore[no-any-return]


def compact(top: Path) -> None:
    (top / ".voyager" / "config.toml").write_text("compact_budget_tokens = 1\n")
    cli_ok(top, "compact")


def heading_of(top: Path, text: str) -> str:
    """The heading of the live entry whose text contains `text`."""
    from voyager_brain.session.brainfile import parse
    from voyager_brain.session.model import TYPE_LABELS

    brain = top / ".voyager" / "brain.md"
    (entry,) = [e for e in parse(brain.read_bytes(), brain).entries if text in e.content]
    return f"{TYPE_LABELS[entry.type]} — {entry.key[1]}"


def test_blame_entry_text_folded_by_a_compaction(repo: Path) -> None:
    cli_ok(repo, "init")
    commit_all(repo, "voyager-brain init")
    cli_ok(repo, "add", "reflection", "Staging needs its own Stripe account")
    commit_all(repo, "brain: staging")
    cli_ok(repo, "add", "observation", DISTINCTIVE)
    original = heading_of(repo, "idempotency key")
    added = commit_all(repo, "brain: webhook finding")
    cli_ok(repo, "add", "decision", "Store idempotency keys for 48 hours")
    commit_all(repo, "brain: keep keys longer")
    compact(repo)
    summary = heading_of(repo, "double-charge")  # the text now lives in the summary
    compacted = commit_all(repo, "brain: compact")

    data = blame_json(repo, "entry", "idempotency key expires")
    assert data["key"] == original and data["present"] is False
    assert data["introduced"]["sha"] == added and data["introduced"]["op"] == "add"
    assert data["folded_by"]["sha"] == compacted and data["folded_into"] == summary
    assert data["last_changed"]["sha"] == compacted and data["last_changed"]["op"] == "remove"
    assert data["uncommitted"] is None

    lines = cli_ok(repo, "blame", "entry", "idempotency key expires").splitlines()
    assert lines[0] == f"entry {original!r} (.voyager/brain.md)"
    assert lines[1].startswith(f"introduced    {added[:8]}  ")
    assert lines[1].endswith("  Test Agent  brain: webhook finding")
    assert lines[2].startswith(f"folded by     {compacted[:8]}  ")
    assert lines[2].endswith("  Test Agent  brain: compact")
    assert lines[3].strip() == f"into the summary {summary!r}"
    # The command prints what the library renders.
    text = blame(repo, "entry", "idempotency key expires").render_text().splitlines()
    assert text == lines
    assert text[3:] == [f"{'':<13} into the summary {summary!r}"]

    # By its heading, the original entry says the same.
    assert blame_json(repo, "entry", original) == data
    # The summary itself, by its heading, is still the compaction's.
    own = blame_json(repo, "entry", summary)
    assert own["introduced"]["sha"] == compacted and own["folded_by"] is None


def test_blame_entry_text_the_summary_left_out(repo: Path) -> None:
    cli_ok(repo, "init")
    cli_ok(repo, "add", "observation", DISTINCTIVE)
    original = heading_of(repo, "idempotency key")
    added = commit_all(repo, "brain: webhook finding")
    cli_ok(repo, "add", "reflection", "Staging needs its own Stripe account")
    cli_ok(repo, "add", "decision", "Store idempotency keys for 48 hours")
    commit_all(repo, "brain: more")
    compact(repo)  # too little room: the summary lists the newer reflection only
    summary = heading_of(repo, "Stripe account")
    compacted = commit_all(repo, "brain: compact")
    assert "double-charge" not in (repo / ".voyager" / "brain.md").read_text()

    data = blame_json(repo, "entry", "double-charge")
    assert data["key"] == original and data["introduced"]["sha"] == added
    assert data["folded_by"]["sha"] == compacted and data["folded_into"] == summary


def test_blame_entry_text_folded_twice_names_the_first_compaction(repo: Path) -> None:
    cli_ok(repo, "init")
    cli_ok(repo, "add", "reflection", "Staging needs its own Stripe account")
    cli_ok(repo, "add", "observation", DISTINCTIVE)
    added = commit_all(repo, "brain: webhook finding")
    compact(repo)
    first = heading_of(repo, "double-charge")
    folded = commit_all(repo, "brain: compact")
    cli_ok(repo, "add", "decision", "Store idempotency keys for 48 hours")
    cli_ok(repo, "add", "observation", "The nightly export is slow")
    commit_all(repo, "brain: more")
    compact(repo)  # folds the first summary into a second one
    again = commit_all(repo, "brain: compact again")
    assert "## Observation" not in (repo / ".voyager" / "brain.md").read_text()  # all folded

    data = blame_json(repo, "entry", "double-charge")
    assert data["introduced"]["sha"] == added
    assert data["folded_by"]["sha"] == folded and data["folded_into"] == first
    assert data["last_changed"]["sha"] == folded != again


def test_blame_entry_text_folded_in_the_working_tree(repo: Path) -> None:
    cli_ok(repo, "init")
    cli_ok(repo, "add", "reflection", "Staging needs its own Stripe account")
    cli_ok(repo, "add", "observation", DISTINCTIVE)
    added = commit_all(repo, "brain: webhook finding")
    compact(repo)  # not committed
    summary = heading_of(repo, "double-charge")

    data = blame_json(repo, "entry", "double-charge")
    assert data["introduced"]["sha"] == added and data["present"] is False
    assert data["uncommitted"] == "remove" and data["folded_by"] is None
    assert data["folded_into"] == summary
    text = blame(repo, "entry", "double-charge").render_text().splitlines()
    assert text[2:] == [
        f"{'working tree':<13} folded into the summary {summary!r}, not committed yet"
    ]


def test_blame_entry_text_in_a_live_entry_is_unchanged(repo: Path) -> None:
    cli_ok(repo, "init")
    cli_ok(repo, "add", "observation", DISTINCTIVE)
    added = commit_all(repo, "brain: webhook finding")
    cli_ok(repo, "add", "reflection", "Staging needs its own Stripe account")
    later = commit_all(repo, "brain: staging")

    data = blame_json(repo, "entry", "idempotency key expires")
    assert data["key"] == heading_of(repo, "idempotency key")
    assert data["introduced"]["sha"] == added == data["last_changed"]["sha"]
    assert data["present"] is True and data["uncommitted"] is None
    assert data["folded_by"] is None and data["folded_into"] is None
    assert later != added
    lines = cli_ok(repo, "blame", "entry", "idempotency key expires").splitlines()
    assert len(lines) == 2 and lines[1].startswith(f"introduced    {added[:8]}  ")
    assert blame(repo, "entry", "idempotency key expires").render_text().splitlines() == lines

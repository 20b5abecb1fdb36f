"""The semantic difference between two versions of the brain files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.git.changes import (
    BRAIN_FILES,
    BrainChanges,
    EntryChanges,
    MemoryChanges,
    appended_memory_changes,
    compare,
    entry_changes,
    file_changes,
    kind_of,
    memory_changes,
    memory_changes_after,
    read_entries,
    render_markdown,
    render_text,
)
from voyager_brain.memory import log as memory_log
from voyager_brain.render import Templates
from voyager_brain.session.brainfile import BrainDocument, render
from voyager_brain.session.model import ENTRY_TYPES
from voyager_brain.state import brainjson as project_state

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def obs(n: int, text: str | None = None, type_: str = "observation") -> BrainEntry:
    return BrainEntry(type_, text or f"Observation number {n}", at(n))


def learning(id_: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "type": "learning", "text": text, "created": "2026-03-21T00:00:00Z", **extra}


def tombstone(id_: str, target: str, reason: str = "outdated") -> dict[str, Any]:
    return {
        "id": id_,
        "type": "tombstone",
        "target_id": target,
        "target_type": "learning",
        "reason": reason,
        "created": "2026-03-22T00:00:00Z",
    }


def jsonl(*entries: dict[str, Any]) -> bytes:
    return b"".join(memory_log.encode(e) for e in entries)


# -- brain.md -------------------------------------------------------------------------


def test_entries_added_and_removed_are_reported_in_file_order() -> None:
    changes = entry_changes([obs(1), obs(2)], [obs(2), obs(3), obs(4)])
    assert changes == EntryChanges(added=(obs(3), obs(4)), removed=(obs(1),))


def test_same_type_and_time_with_other_text_is_an_edit() -> None:
    before, after = obs(1, "Tests red"), obs(1, "Tests green")
    changes = entry_changes([before, obs(2)], [after, obs(2)])
    assert changes == EntryChanges(edited=((before, after),))


def test_same_time_but_another_type_is_not_an_edit() -> None:
    before, after = obs(1), obs(1, type_="decision")
    assert entry_changes([before], [after]) == EntryChanges(added=(after,), removed=(before,))


def test_entries_folded_into_a_compaction_summary_are_compacted_not_removed() -> None:
    summary = BrainEntry("reflection", "Summary of 3 earlier entries", at(3), source="compact")
    decision = obs(4, "Use JWT", "decision")
    changes = entry_changes([obs(1), obs(2), obs(3), decision], [summary, decision, obs(5)])
    assert changes == EntryChanges(
        added=(obs(5),), compacted=(obs(1), obs(2), obs(3)), summaries=(summary,)
    )
    assert BrainChanges(entries=changes).summary() == "+1 observation, compacted 3 -> 1 summary"


def test_a_summary_in_a_new_file_is_an_added_entry() -> None:
    summary = BrainEntry("reflection", "Summary", at(3), source="compact")
    assert entry_changes([], [summary]) == EntryChanges(added=(summary,))


def test_a_missing_brain_md_counts_as_empty(tmp_path: Path) -> None:
    data = render(BrainDocument(project="p", entries=(obs(1),)), Templates()).encode()
    assert file_changes("brain.md", None, data, "a", "b").entries == EntryChanges(added=(obs(1),))
    assert file_changes("brain.md", data, None, "a", "b").entries == EntryChanges(removed=(obs(1),))


_types = st.sampled_from(ENTRY_TYPES)
_texts = st.text(alphabet="ab \n#`-*>", max_size=30)


@st.composite
def entry_histories(draw: st.DrawFn) -> tuple[list[BrainEntry], list[BrainEntry], dict[str, Any]]:
    """An old list of entries, a new one made from it by random changes, and the changes."""
    slots = draw(st.lists(st.integers(0, 500), min_size=0, max_size=20, unique=True))
    old = [BrainEntry(draw(_types), draw(_texts), at(m)) for m in slots]
    fates = [draw(st.sampled_from(["keep", "remove", "edit"])) for _ in old]
    new: list[BrainEntry] = []
    removed, edited = [], []
    for entry, fate in zip(old, fates, strict=True):
        if fate == "keep":
            new.append(entry)
        elif fate == "remove":
            removed.append(entry)
        else:
            text = draw(_texts.filter(lambda t, e=entry: t.rstrip("\n") != e.content))
            after = BrainEntry(entry.type, text, entry.timestamp)
            new.append(after)
            edited.append((entry, after))
    fresh = draw(st.lists(st.integers(501, 900), max_size=8, unique=True))
    added = [BrainEntry(draw(_types), draw(_texts), at(m)) for m in fresh]
    new += added
    new = draw(st.permutations(new))
    return old, new, {"added": added, "removed": removed, "edited": edited}


@given(entry_histories())
def test_random_changes_to_entries_are_reported_exactly(
    history: tuple[list[BrainEntry], list[BrainEntry], dict[str, Any]],
) -> None:
    old, new, expected = history
    changes = entry_changes(old, new)
    key = lambda e: e.key  # noqa: E731
    assert sorted(changes.added, key=key) == sorted(expected["added"], key=key)
    assert sorted(changes.removed, key=key) == sorted(expected["removed"], key=key)
    assert sorted(changes.edited, key=lambda p: p[0].key) == sorted(
        expected["edited"], key=lambda p: p[0].key
    )
    assert not changes.compacted and not changes.summaries
    assert not entry_changes(new, new)


@given(entry_histories())
def test_entry_changes_through_the_file_format_match_the_entries(
    history: tuple[list[BrainEntry], list[BrainEntry], dict[str, Any]],
) -> None:
    old, new, _ = history
    templates = Templates()
    before = render(BrainDocument(project="p", entries=tuple(old)), templates).encode()
    after = render(BrainDocument(project="p", entries=tuple(new)), templates).encode()
    assert read_entries(after, "after") == tuple(new)
    assert file_changes("brain.md", before, after, "a", "b").entries == entry_changes(old, new)
    assert not file_changes("brain.md", after, after, "a", "b")


# -- memory.jsonl ---------------------------------------------------------------------


def test_memory_added_updated_tombstoned_and_removed() -> None:
    a, b, c = learning("aaaa0001", "A"), learning("bbbb0002", "B"), learning("cccc0003", "C")
    b2 = {**b, "text": "B, better", "updated": "2026-03-22T00:00:00Z"}
    d = learning("dddd0004", "D")
    old = [a, b, c]
    new = [a, b, b2, d, tombstone("eeee0005", "aaaa0001")]  # c deleted by hand
    changes = memory_changes(old, new)
    assert changes == MemoryChanges(
        added=(d,),
        updated=((b, b2),),
        tombstoned=((a, tombstone("eeee0005", "aaaa0001")),),
        removed=(c,),
    )
    assert BrainChanges(memory=changes).summary() == (
        "+1 learning, ~1 learning, -1 learning, 1 tombstone"
    )


def test_an_old_tombstone_is_not_reported_again() -> None:
    old = [learning("aaaa0001", "A"), tombstone("eeee0005", "aaaa0001")]
    assert not memory_changes(old, [*old, learning("bbbb0002", "B")]).tombstoned


def test_appended_lines_alone_tell_adds_updates_and_tombstones_apart() -> None:
    update = learning("bbbb0002", "B2", updated="2026-03-22T00:00:00Z")
    changes = appended_memory_changes(
        [learning("aaaa0001", "A"), update, tombstone("eeee0005", "cccc0003")]
    )
    assert changes.added == (learning("aaaa0001", "A"),)
    assert changes.updated == ((None, update),)
    assert [t["target_id"] for _, t in changes.tombstoned] == ["cccc0003"]


_ids = st.sampled_from([f"{n:08x}" for n in range(12)])


@st.composite
def memory_histories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A log and the lines the memory tool would append to it: new entries, updates
    (with ``updated``) of live ones, tombstones of live ones."""
    old: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 10))):
        old.append(learning(f"{100 + n:08x}", f"old {n}"))
    live = {e["id"]: e for e in memory_log.fold(old).entries.values()}
    appended: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 10))):
        op = draw(st.sampled_from(["add", "update", "remove"]))
        if op == "add" or not live:
            entry = learning(f"{200 + n:08x}", f"new {n}")
        elif op == "update":
            target = draw(st.sampled_from(sorted(live)))
            entry = {
                **live[target],
                "text": f"changed {n}",
                "updated": f"2026-03-23T00:00:{n:02d}Z",
            }
        else:
            target = draw(st.sampled_from(sorted(live)))
            entry = tombstone(f"{300 + n:08x}", target)
            del live[target]
            appended.append(entry)
            continue
        live[entry["id"]] = entry
        appended.append(entry)
    return old, appended


@given(memory_histories())
def test_appended_lines_give_the_same_counts_as_folding_both_versions(
    history: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    old, appended = history
    full = memory_changes(old, old + appended)
    fast = appended_memory_changes(appended)
    # An entry added then updated in the same append is one addition either way.
    assert fast.added == full.added

    def by_id(pairs: tuple[tuple[Any, dict[str, Any]], ...]) -> list[dict[str, Any]]:
        return sorted((e for _, e in pairs), key=lambda e: e["id"])

    assert by_id(fast.updated) == by_id(full.updated)
    assert [t for _, t in fast.tombstoned] == [t for _, t in full.tombstoned]
    assert not full.removed
    assert not memory_changes(old + appended, old + appended)


# -- brain.json -----------------------------------------------------------------------


def state_bytes(**fields: Any) -> bytes:
    document = project_state.ordered({"project": "p", "lastUpdated": "2026-03-21T00:00:00Z"})
    document.update(fields)
    return project_state.dumps(document).encode()


PG = {"what": "Use PostgreSQL over MongoDB", "why": "Data is relational", "when": "2026-02-15"}


def test_a_decision_with_two_fields_changed_counts_once() -> None:
    before = state_bytes(decisions=[PG])
    after = state_bytes(decisions=[{**PG, "why": "Joins", "when": "2026-03-01"}])
    changes = file_changes("brain.json", before, after, "a", "b")
    assert [c.path for c in changes.state] == [
        "decisions[Use PostgreSQL over MongoDB].why",
        "decisions[Use PostgreSQL over MongoDB].when",
    ]
    assert changes.summary() == "~1 decision"


def test_state_summary_counts_items_by_kind() -> None:
    before = state_bytes(nextSteps=["a"])
    after = state_bytes(
        decisions=[PG, {"what": "Use JWT"}],
        keyFiles=[{"path": "src/app.py", "role": "entry"}],
        facts={"stack": ["Python"], "architecture": "Monolith", "environment": {}, "custom": []},
        nextSteps=["b", "c"],
    )
    changes = file_changes("brain.json", before, after, "a", "b")
    assert changes.summary() == (
        "+1 fact, +2 decisions, +1 key file, +2 next steps, ~1 fact, -1 next step"
    )


def test_last_updated_and_session_count_alone_are_no_change() -> None:
    before = state_bytes(sessionCount=3)
    after = state_bytes(sessionCount=4, lastUpdated="2026-03-22T00:00:00Z")
    assert not file_changes("brain.json", before, after, "a", "b")


_keys = st.sampled_from(["Use A", "Use B", "Use C", "Use D", "Use E", "Use F"])


@given(
    st.dictionaries(_keys, st.text(alphabet="xyz", max_size=3), max_size=6),
    st.dictionaries(_keys, st.text(alphabet="xyz", max_size=3), max_size=6),
)
def test_decisions_added_removed_and_changed_by_their_merge_key(
    old: dict[str, str], new: dict[str, str]
) -> None:
    before = state_bytes(decisions=[{"what": k, "why": v} for k, v in old.items()])
    after = state_bytes(decisions=[{"what": k, "why": v} for k, v in new.items()])
    changes = file_changes("brain.json", before, after, "a", "b")
    added = len(new.keys() - old.keys())
    removed = len(old.keys() - new.keys())
    changed = sum(1 for k in old.keys() & new.keys() if old[k] != new[k])
    expected = [
        f"{mark}{n} decision{'s' if n > 1 else ''}"
        for mark, n in (("+", added), ("~", changed), ("-", removed))
        if n
    ]
    assert changes.summary() == ", ".join(expected)
    assert not file_changes("brain.json", after, after, "a", "b")


# -- all three, and how they are shown ---------------------------------------------------


def versions(top: Path) -> dict[str, bytes | None]:
    return {
        path: (top / path).read_bytes() if (top / path).exists() else None for path in BRAIN_FILES
    }


def test_a_real_session_gives_the_issue_s_summary_line(repo: Path) -> None:
    clock = iter(at(n) for n in range(1000))
    bm = BrainManager(repo, config={"auto_compact": False}, clock=lambda: next(clock))
    bm.load()
    for n in range(40):
        name = "".join(chr(97 + int(d)) for d in f"{n:02d}")  # no digits: no near duplicates
        bm.update(BrainEntry("observation", f"Looked at module {name} and its tests"))
    bm.merge_state({"decisions": [PG]})
    bm.persist()
    log_path = repo / ".voyager" / "memory.jsonl"
    memory_log.append(log_path, [learning("aaaa0001", "Old lesson")])
    before = versions(repo)

    bm = BrainManager(
        repo, config={"auto_compact": False, "compact_budget_tokens": 1}, clock=lambda: next(clock)
    )
    bm.load()
    report = bm.compact()
    assert report.summarized == 40
    for n in range(5):
        bm.update(BrainEntry("observation", f"New finding {n}"))
    bm.merge_state(
        {
            "decisions": [{"what": "Use JWT", "why": "stateless"}, {"what": "Use Redis"}],
            "facts": {"architecture": "Monolith"},
        }
    )
    bm.persist()
    memory_log.append(
        log_path,
        [learning(f"bbbb000{n}", f"Lesson {n}") for n in range(3)]
        + [tombstone("eeee0005", "aaaa0001")],
    )

    changes = compare(before, versions(repo), "HEAD", "")
    assert changes.summary() == (
        "+2 decisions, ~1 fact, +5 observations, compacted 40 -> 1 summary, "
        "+3 learnings, 1 tombstone"
    )
    assert not compare(before, before, "HEAD", "")

    text = render_text(changes)
    assert text.startswith(".voyager/brain.json\n  ~ facts.architecture: (empty) -> Monolith\n")
    assert "  + decisions: Use JWT\n" in text
    assert "  + Observation — 2026-03-21T15:" in text
    assert "  compacted 40 entries into Reflection — " in text
    assert "  + learning bbbb0000: Lesson 0\n" in text
    assert "  x learning aaaa0001: tombstoned (outdated)\n" in text
    assert text.endswith("\n\n" + changes.summary() + "\n")

    data = changes.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["summary"] == changes.summary()
    assert [c["item"] for c in data["brain.json"]] == [None, "Use JWT", "Use Redis"]
    assert len(data["brain.md"]["compacted"]) == 40
    assert data["memory.jsonl"]["tombstoned"][0]["entry"]["text"] == "Old lesson"


def test_markdown_escapes_what_the_brain_says() -> None:
    before = state_bytes(decisions=[{"what": "Old way"}])
    after = state_bytes(decisions=[{"what": "Use *bold* | pipes @everyone <b> #12 :tada:"}])
    changes = file_changes("brain.json", before, after, "a", "b")
    markdown = render_markdown(changes, "main...feature")
    assert markdown.startswith(
        "### Brain changes: main...feature\n\n**\\+1 decision, -1 decision**\n"
    )
    assert "#### Project state (`.voyager/brain.json`)" in markdown
    assert "- \\+ decisions: Use \\*bold\\* \\| pipes \\@everyone \\<b> \\#12 \\:tada:" in markdown
    assert "- \\- decisions: Old way" in markdown  # not a nested list
    assert render_markdown(BrainChanges(), "x").endswith("No changes to the brain files.\n")
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(markdown)
    assert (
        "<em>" not in html
        and "<b>" not in html
        and "Use *bold* | pipes @everyone &lt;b&gt; #12 :tada:" in html
    )
    assert html.count("<li>") == 2 and "<ul>\n<li>" not in html.split("<li>", 1)[1]


def test_render_text_of_nothing() -> None:
    assert render_text(BrainChanges()) == "no changes to the brain files\n"


def test_kind_of_goes_by_the_file_name() -> None:
    assert [kind_of(p) for p in BRAIN_FILES] == ["brain.json", "brain.md", "memory.jsonl"]
    assert kind_of("old/place/brain.md") == "brain.md"
    assert kind_of(".voyager/config.toml") is None


@st.composite
def any_logs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A log and lines appended to it, of any order the format allows: new entries,
    changed and unchanged rewrites, tombstones of live, dead and unknown ids, and
    entries brought back after their tombstone."""
    ids = [f"{n:08x}" for n in range(6)]

    def lines(count: int, base: int) -> list[dict[str, Any]]:
        made: list[dict[str, Any]] = []
        for n in range(count):
            target = draw(st.sampled_from(ids))
            if draw(st.integers(0, 3)) == 0:
                made.append(tombstone(f"{base + n:08x}", target))
            else:
                text = draw(st.sampled_from(["same", "other", "third"]))
                made.append(learning(target, text))
        return made

    return lines(draw(st.integers(0, 12)), 1000), lines(draw(st.integers(0, 12)), 2000)


@given(any_logs())
def test_folding_on_from_the_parent_gives_what_folding_both_versions_gives(
    history: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    old, appended = history
    before = memory_log.fold(old)
    entries, dead = dict(before.entries), dict(before.dead)
    assert memory_changes_after(before, appended) == memory_changes(old, old + appended)
    assert (before.entries, before.dead) == (entries, dead)  # the parent's fold is kept

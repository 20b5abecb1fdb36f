"""The three-way merges of brain.json, brain.md and memory.jsonl.

Named scenarios first, then for each file kind a property test over random three-way
histories built from what the product really does (saves, hand edits, compaction,
appends, tombstones, gc), merged both ways.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain.errors import CorruptFileError, MergeError
from voyager_brain.git.merge import merge_brain, merge_file, merge_memory, merge_state
from voyager_brain.memory import log
from voyager_brain.render import Templates
from voyager_brain.session import brainfile
from voyager_brain.session.brainfile import BrainDocument
from voyager_brain.session.compaction import SUMMARY_SOURCE, compact_entries
from voyager_brain.session.model import BrainEntry
from voyager_brain.session.summarizer import ExtractiveSummarizer
from voyager_brain.state import brainjson as state
from voyager_brain.state.validate import validate
from voyager_brain.timestamps import format_timestamp

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
TEMPLATES = Templates()


def both_ways(
    merge: Callable[[bytes, bytes, bytes], bytes], base: bytes, a: bytes, b: bytes
) -> bytes:
    """The merge with `a` as ours, checked to give the same bytes with `b` as ours."""
    result = merge(base, a, b)
    assert merge(base, b, a) == result
    return result


# -- brain.json: scenarios --------------------------------------------------------------


def saved(document: dict[str, Any], update: dict[str, Any], minutes: int) -> dict[str, Any]:
    return state.merge(document, update, now=T0 + timedelta(minutes=minutes), new_session=True)


def js(document: dict[str, Any]) -> bytes:
    return state.dumps(document).encode()


def merged_state(
    base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]
) -> dict[str, Any]:
    data = both_ways(merge_state, js(base), js(ours), js(theirs))
    return state.loads(data, Path("merged"))


BASE_STATE = saved(
    state.empty_state("shop", T0),
    {
        "facts": {"stack": ["Python"], "custom": ["API on port 3000"]},
        "decisions": [{"what": "Use PostgreSQL", "why": "relational", "when": "2026-03-01"}],
        "keyFiles": [{"path": "src/app.py", "role": "entry point"}],
        "nextSteps": ["write tests"],
    },
    0,
)


def test_state_additions_from_both_sides_are_kept() -> None:
    ours = saved(BASE_STATE, {"decisions": [{"what": "Use Redis", "why": "cache"}]}, 10)
    theirs = saved(BASE_STATE, {"decisions": [{"what": "Use JWT", "why": "stateless"}]}, 20)
    result = merged_state(BASE_STATE, ours, theirs)
    assert [d["what"] for d in result["decisions"]] == ["Use PostgreSQL", "Use JWT", "Use Redis"]
    assert result["sessionCount"] == 3  # 1 in the base, one more on each side
    assert result["lastUpdated"] == theirs["lastUpdated"]


def test_state_an_item_removed_on_one_side_and_unchanged_on_the_other_is_removed() -> None:
    ours = {**BASE_STATE, "decisions": [], "lastUpdated": "2026-03-21T15:00:00Z"}
    theirs = saved(BASE_STATE, {"keyFiles": [{"path": "src/db.py", "role": "pool"}]}, 20)
    result = merged_state(BASE_STATE, ours, theirs)
    assert result["decisions"] == []
    assert [f["path"] for f in result["keyFiles"]] == ["src/app.py", "src/db.py"]


def test_state_a_deletion_wins_over_a_concurrent_change() -> None:
    ours = {**BASE_STATE, "decisions": [], "lastUpdated": "2026-03-21T15:00:00Z"}
    theirs = saved(BASE_STATE, {"decisions": [{"what": "Use PostgreSQL", "why": "joins"}]}, 99)
    assert merged_state(BASE_STATE, ours, theirs)["decisions"] == []


def test_state_an_item_changed_on_both_sides_takes_the_newer_values_field_by_field() -> None:
    ours = saved(BASE_STATE, {"decisions": [{"what": "Use PostgreSQL", "why": "joins"}]}, 10)
    theirs = saved(
        BASE_STATE,
        {"decisions": [{"what": "Use PostgreSQL", "why": "ACID", "reversible": False}]},
        20,
    )
    older_change = saved(
        BASE_STATE, {"decisions": [{"what": "Use PostgreSQL", "when": "2026-04-01"}]}, 5
    )
    assert merged_state(BASE_STATE, ours, theirs)["decisions"] == [
        {"what": "Use PostgreSQL", "why": "ACID", "when": "2026-03-01", "reversible": False}
    ]
    # Fields only one side changed keep that side's change.
    assert merged_state(BASE_STATE, older_change, theirs)["decisions"] == [
        {"what": "Use PostgreSQL", "why": "ACID", "when": "2026-04-01", "reversible": False}
    ]


def test_state_replace_fields_take_the_side_that_changed_them_the_newer_when_both() -> None:
    ours = saved(BASE_STATE, {"activeState": {"currentGoal": "ship"}}, 30)
    theirs = saved(BASE_STATE, {"nextSteps": ["deploy"]}, 20)
    result = merged_state(BASE_STATE, ours, theirs)
    assert (result["activeState"]["currentGoal"], result["nextSteps"]) == ("ship", ["deploy"])
    theirs = saved(BASE_STATE, {"nextSteps": ["deploy"], "activeState": {"currentGoal": "fix"}}, 20)
    assert merged_state(BASE_STATE, ours, theirs)["activeState"]["currentGoal"] == "ship"


def test_state_unions_and_deep_merges_key_by_key() -> None:
    ours = saved(
        BASE_STATE,
        {
            "facts": {
                "stack": ["Redis"],
                "environment": {"os": "linux"},
                "custom": ["api ON port 3000"],
            }
        },
        10,
    )
    theirs = saved(
        {**BASE_STATE, "facts": {**BASE_STATE["facts"], "stack": []}},
        {"facts": {"stack": ["Go"], "environment": {"ci": "actions"}}, "preferences": {"x": [1]}},
        20,
    )
    result = merged_state(BASE_STATE, ours, theirs)
    assert result["facts"]["stack"] == ["Go", "Redis"]  # Python removed by theirs
    assert result["facts"]["environment"] == {"ci": "actions", "os": "linux"}
    assert result["facts"]["custom"] == ["API on port 3000"]  # the same fact, ignoring case
    assert result["preferences"]["x"] == [1]


def test_state_unknown_fields_are_kept() -> None:
    ours = {**saved(BASE_STATE, {}, 10), "team": {"lead": "ana"}}
    theirs = {**saved(BASE_STATE, {}, 20), "team": {"size": 4}, "notes": "hi"}
    result = merged_state(BASE_STATE, ours, theirs)
    assert (result["team"], result["notes"]) == ({"lead": "ana", "size": 4}, "hi")


def test_state_added_on_both_sides_merges_against_an_empty_base() -> None:
    ours = saved(state.empty_state("a", T0), {"facts": {"stack": ["Go"]}}, 1)
    theirs = saved(state.empty_state("a", T0), {"facts": {"stack": ["Rust"]}}, 1)
    data = both_ways(merge_state, b"", js(ours), js(theirs))
    result = state.loads(data, Path("merged"))
    assert sorted(result["facts"]["stack"]) == ["Go", "Rust"]
    assert result["sessionCount"] == 2


def test_state_equal_times_give_the_same_bytes_both_ways() -> None:
    ours = {**BASE_STATE, "nextSteps": ["a"], "lastUpdated": "2026-03-21T16:00:00Z"}
    theirs = {**BASE_STATE, "nextSteps": ["b"], "lastUpdated": "2026-03-21T16:00:00+00:00"}
    result = merged_state(BASE_STATE, ours, theirs)
    assert result["nextSteps"] in (["a"], ["b"])


def test_state_a_side_that_is_not_valid_json_is_named() -> None:
    with pytest.raises(CorruptFileError, match=r"^theirs:\.voyager/brain\.json:2: not valid JSON"):
        merge_state(js(BASE_STATE), js(BASE_STATE), b"{\n,", ".voyager/brain.json")
    with pytest.raises(CorruptFileError, match=r"^ours:brain\.json:5: sessionCount: expected"):
        merge_state(b"", js({**BASE_STATE, "sessionCount": "many"}), js(BASE_STATE))


# -- brain.md: scenarios ----------------------------------------------------------------


def md(*entries: BrainEntry, meta: dict[str, Any] | None = None, project: str = "shop") -> bytes:
    doc = BrainDocument(project=project, meta=meta or {}, entries=entries)
    return brainfile.render(doc, TEMPLATES).encode()


def entries_of(data: bytes) -> tuple[BrainEntry, ...]:
    return brainfile.parse(data, Path("brain.md")).entries


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_brain_entries_from_both_sides_ordered_by_time() -> None:
    a, b = BrainEntry("observation", "base", at(0)), BrainEntry("decision", "Use JWT", at(60))
    c, d = BrainEntry("observation", "ours", at(30)), BrainEntry("reflection", "theirs", at(90))
    result = entries_of(both_ways(merge_brain, md(a, b), md(a, b, c), md(a, b, d)))
    assert result == (a, c, b, d)


def test_brain_a_removed_or_edited_entry_stays_removed() -> None:
    a, b = BrainEntry("observation", "typo teh", at(0)), BrainEntry("observation", "gone", at(1))
    fixed = BrainEntry("observation", "typo the", at(0))
    new = BrainEntry("observation", "new", at(2))
    result = entries_of(both_ways(merge_brain, md(a, b), md(fixed, b), md(a, new)))
    assert result == (fixed, new)


def test_brain_entries_of_the_same_second_keep_their_order() -> None:
    base = BrainEntry("observation", "base", at(0))
    ours = [BrainEntry("observation", text, at(5)) for text in ("z first", "a second")]
    theirs = BrainEntry("decision", "m", at(5))
    result = entries_of(both_ways(merge_brain, md(base), md(base, *ours), md(base, theirs)))
    assert result[0] == base and [e.content for e in result if e.type == "observation"][1:] == [
        "z first",
        "a second",
    ]


def test_brain_both_sides_compacted_keep_each_summary_and_every_decision() -> None:
    old = [
        BrainEntry("observation", f"Observation {'ABCDEFGHIJKL'[n]} about the cache", at(n))
        for n in range(12)
    ]
    decision = BrainEntry("decision", "Use Redis for the cache", at(5))
    base = [*old, decision]

    def compacted(extra: BrainEntry, when: int, budget: int) -> bytes:
        entries = [*base, extra]
        result = compact_entries(
            entries,
            budget_chars=budget,
            fixed_chars=40,
            section_chars=lambda e: len(brainfile.render_section(e, TEMPLATES)) + 1,
            summarizer=ExtractiveSummarizer(),
        )
        assert result.summary is not None
        meta = {"last_compaction": format_timestamp(at(when))}
        return md(*result.entries, meta=meta)

    # Different budgets: the two compactions summarize different entries.
    ours = compacted(BrainEntry("observation", "ours adds this", at(100)), 200, 700)
    theirs = compacted(BrainEntry("observation", "theirs adds that", at(101)), 300, 500)
    data = both_ways(merge_brain, md(*base), ours, theirs)
    doc = brainfile.parse(data, Path("brain.md"))
    summaries = [e for e in doc.entries if e.source == SUMMARY_SOURCE]
    assert len(summaries) == 2
    assert decision in doc.entries
    assert doc.meta == {"last_compaction": format_timestamp(at(300))}


def test_brain_title_and_front_matter_are_three_way() -> None:
    e = BrainEntry("observation", "x", at(0))
    base = md(e, meta={"owner": "ana"})
    ours = md(e, BrainEntry("observation", "y", at(1)), meta={"owner": "ana"}, project="Shop")
    theirs = md(e, BrainEntry("observation", "z", at(2)), meta={"owner": "bo", "team": "core"})
    doc = brainfile.parse(both_ways(merge_brain, base, ours, theirs), Path("brain.md"))
    assert (doc.project, doc.meta) == ("Shop", {"owner": "bo", "team": "core"})


def test_brain_added_on_both_sides_merges_against_an_empty_base() -> None:
    a, b = BrainEntry("observation", "a", at(0)), BrainEntry("observation", "b", at(1))
    assert entries_of(both_ways(merge_brain, b"", md(a), md(b))) == (a, b)


def test_brain_a_side_that_cannot_be_read_is_named() -> None:
    with pytest.raises(CorruptFileError, match=r"^ours:\.voyager/brain\.md:1: front matter"):
        merge_brain(b"", b"---\nx: 1\n", md(), ".voyager/brain.md")
    with pytest.raises(CorruptFileError, match=r"^theirs:brain\.md:1: not valid UTF-8"):
        merge_brain(b"", md(), b"\xff")


# -- memory.jsonl: scenarios ------------------------------------------------------------


def line(entry_id: str, when: str, **fields: Any) -> dict[str, Any]:
    return {"id": entry_id, "type": "learning", "text": "t", "created": when, **fields}


def tomb(entry_id: str, target: str, when: str) -> dict[str, Any]:
    return {
        "id": entry_id,
        "type": "tombstone",
        "target_id": target,
        "target_type": "learning",
        "reason": "removed",
        "created": when,
    }


def jl(*entries: dict[str, Any]) -> bytes:
    return b"".join(log.encode(e) for e in entries)


def live(data: bytes) -> dict[str, dict[str, Any]]:
    entries, health = log.parse(data)
    assert health.bad_lines == 0
    return log.fold(entries).entries


BASE_LOG = (line("a", "2026-01-01T00:00:00.000Z"), line("b", "2026-01-01T00:00:01.000Z"))


def test_memory_base_lines_then_new_lines_by_time() -> None:
    ours = (*BASE_LOG, line("c", "2026-01-02T00:00:00.000Z"))
    theirs = (*BASE_LOG, line("d", "2026-01-01T12:00:00.000Z"))
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*ours), jl(*theirs))
    assert data == jl(*BASE_LOG, theirs[-1], ours[-1])


def test_memory_the_later_write_of_an_entry_wins() -> None:
    ours = (*BASE_LOG, {**BASE_LOG[0], "text": "ours", "updated": "2026-01-03T00:00:00.000Z"})
    theirs = (*BASE_LOG, {**BASE_LOG[0], "text": "theirs", "updated": "2026-01-02T00:00:00.000Z"})
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*ours), jl(*theirs))
    assert live(data)["a"]["text"] == "ours"


@pytest.mark.parametrize("update_time", ["2026-01-01T06:00:00.000Z", "2026-01-09T00:00:00.000Z"])
def test_memory_a_tombstone_wins_over_a_concurrent_update(update_time: str) -> None:
    ours = (*BASE_LOG, tomb("t1", "a", "2026-01-02T00:00:00.000Z"))
    theirs = (*BASE_LOG, {**BASE_LOG[0], "text": "new", "updated": update_time})
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*ours), jl(*theirs))
    assert "a" not in live(data)
    assert data.endswith(log.encode(ours[-1]))


def test_memory_a_deletion_survives_a_clock_that_went_back() -> None:
    # Ours took theirs' earlier update (stamped by a clock ahead of ours), then deleted.
    update = {**BASE_LOG[0], "text": "new", "updated": "2026-01-09T00:00:00.000Z"}
    ours = (*BASE_LOG, update, tomb("t1", "a", "2026-01-02T00:00:00.000Z"))
    theirs = (*BASE_LOG, update, line("z", "2026-01-03T00:00:00.000Z"))
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*ours), jl(*theirs))
    assert set(live(data)) == {"b", "z"}


def test_memory_a_deletion_survives_a_criss_cross_merge() -> None:
    """Found by the convergence simulation. One branch deleted `a` while another updated
    it; a merge put the tombstone after the update. Later that merge result meets a branch
    whose merge base already held the tombstone (before the update existed): the update is
    new to that merge, and must not be placed after the tombstone again."""
    deleted = tomb("t1", "a", "2026-01-02T00:00:00.000Z")
    update = {**BASE_LOG[0], "text": "new", "updated": "2026-01-03T00:00:00.000Z"}
    base = (*BASE_LOG, deleted)
    ours = (*BASE_LOG, deleted, line("c", "2026-01-04T00:00:00.000Z"))
    theirs = (*BASE_LOG, update, deleted)  # the earlier merge's result
    data = both_ways(merge_memory, jl(*base), jl(*ours), jl(*theirs))
    assert set(live(data)) == {"b", "c"}


def test_memory_a_resurrection_after_the_tombstone_stays() -> None:
    ours = (*BASE_LOG, tomb("t1", "a", "2026-01-02T00:00:00.000Z"))
    again = line("a", "2026-01-03T00:00:00.000Z", text="again")
    theirs = (*ours, again)  # theirs saw the deletion, then added the entry again
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*ours), jl(*theirs))
    assert live(data)["a"]["text"] == "again"


def test_memory_a_side_rewritten_by_gc_loses_nothing_and_undoes_no_deletion() -> None:
    base = (*BASE_LOG, {**BASE_LOG[1], "text": "b2", "updated": "2026-01-01T00:00:02.000Z"})
    ours_log = (
        *base,
        tomb("t1", "a", "2026-01-02T00:00:00.000Z"),
        line("c", "2026-01-02T00:00:01.000Z"),
    )
    ours = log.compacted_lines(log.fold(list(ours_log)))
    assert jl(*ours) != jl(*ours_log)
    theirs = (
        *base,
        {**BASE_LOG[0], "text": "a2", "updated": "2026-01-03T00:00:00.000Z"},
        line("d", "2026-01-02T00:00:05.000Z"),
    )
    data = both_ways(merge_memory, jl(*base), jl(*ours), jl(*theirs))
    result = live(data)
    assert set(result) == {"b", "c", "d"} and result["b"]["text"] == "b2"


def test_memory_the_same_line_added_on_both_sides_is_written_once() -> None:
    same = line("c", "2026-01-02T00:00:00.000Z")
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*BASE_LOG, same), jl(*BASE_LOG, same))
    assert data == jl(*BASE_LOG, same)


def test_memory_a_side_with_a_bad_line_is_refused_a_torn_last_line_that_parses_is_not() -> None:
    bad = jl(*BASE_LOG) + b"\n{not json\n"
    with pytest.raises(CorruptFileError, match=r"^theirs:memory\.jsonl:4: not a JSON object"):
        merge_memory(jl(*BASE_LOG), jl(*BASE_LOG), bad)
    torn = jl(*BASE_LOG, line("c", "2026-01-02T00:00:00.000Z"))[:-1]
    data = both_ways(merge_memory, jl(*BASE_LOG), jl(*BASE_LOG), torn)
    assert data.endswith(b"}\n") and "c" in live(data)
    # A bad line in the base is only a line: gone once a side dropped it.
    assert merge_memory(bad.replace(b"\n\n", b"\n"), jl(*BASE_LOG), jl(*BASE_LOG)) == jl(*BASE_LOG)


def test_merge_file_chooses_by_name_and_refuses_other_files() -> None:
    assert merge_file(".voyager/memory.jsonl", b"", jl(BASE_LOG[0]), jl(BASE_LOG[1])) == jl(
        *BASE_LOG
    )
    with pytest.raises(MergeError, match=r"^notes\.txt: no merge for this file"):
        merge_file("notes.txt", b"", b"", b"")


# -- brain.json: property ---------------------------------------------------------------

WORDS = ("Python", "python ", "Go", "Redis", "JWT", "日本")
KEYS = ("a", "b", "c")


def _decision(d: st.DrawFn) -> dict[str, Any]:
    item: dict[str, Any] = {"what": d(st.sampled_from(KEYS))}
    for field, values in (("why", st.sampled_from(WORDS)), ("reversible", st.booleans())):
        if d(st.booleans()):
            item[field] = d(values)
    return item


@st.composite
def state_updates(d: st.DrawFn) -> dict[str, Any]:
    """A save as an agent sends it: any subset of the fields."""
    words = st.lists(st.sampled_from(WORDS), max_size=3)
    options: dict[str, Callable[[], Any]] = {
        "facts": lambda: {
            k: v
            for k, v in {
                "stack": d(words),
                "custom": d(words),
                "architecture": d(st.sampled_from(WORDS)),
                "environment": d(
                    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(WORDS), max_size=2)
                ),
            }.items()
            if d(st.booleans())
        },
        "decisions": lambda: [_decision(d) for _ in range(d(st.integers(0, 2)))],
        "keyFiles": lambda: [
            {"path": d(st.sampled_from(KEYS)), "role": d(st.sampled_from(WORDS))}
            for _ in range(d(st.integers(0, 2)))
        ],
        "knownIssues": lambda: [
            {"issue": d(st.sampled_from(KEYS)), "severity": d(st.sampled_from(("low", "high")))}
        ],
        "activeState": lambda: {
            "currentGoal": d(st.sampled_from(WORDS)),
            "recentlyCompleted": d(st.lists(st.sampled_from("abcdefghijklmnop"), max_size=8)),
        },
        "preferences": lambda: {d(st.sampled_from(KEYS)): d(st.sampled_from([*WORDS, 1, None]))},
        "nextSteps": lambda: d(words),
        "extra": lambda: d(st.sampled_from(WORDS)),
    }
    return {name: make() for name, make in options.items() if d(st.booleans())}


KEYED = {"decisions": "what", "keyFiles": "path", "knownIssues": "issue"}


def _hand_removal(d: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    """A person deletes one item of a list or one key of an object."""
    document = json.loads(json.dumps(document))
    places: list[tuple[Any, Any]] = []
    for name in KEYED:
        places += [(document[name], n) for n in range(len(document[name]))]
    for name in ("stack", "custom"):
        places += [(document["facts"][name], n) for n in range(len(document["facts"][name]))]
    for parent in (document["facts"]["environment"], document["preferences"]):
        places += [(parent, k) for k in parent]
    if places:
        container, where = d(st.sampled_from(places))
        del container[where]
    return document


@st.composite
def state_histories(d: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    base = state.empty_state("p", T0)
    minute = 0
    for _ in range(d(st.integers(0, 3))):
        minute += 1
        base = saved(base, d(state_updates()), minute)
    sides = []
    for _ in range(2):
        side, clock = base, minute
        for _ in range(d(st.integers(0, 3))):
            if d(st.integers(0, 2)) == 0:
                side = _hand_removal(d, side)
            else:
                clock += d(st.integers(0, 2))  # the two sides' saves may share a time
                side = state.merge(
                    side,
                    d(state_updates()),
                    now=T0 + timedelta(minutes=clock),
                    new_session=d(st.booleans()),
                )
        sides.append(side)
    return base, sides[0], sides[1]


def _keys(document: dict[str, Any], name: str) -> set[str]:
    """The identities of a field's items: merge keys, list elements, object keys."""
    facts = document["facts"]
    if name in KEYED:
        return {item[KEYED[name]] for item in document[name]}
    if name == "custom":
        return {" ".join(x.split()).casefold() for x in facts["custom"]}  # the seed's dedup
    if name == "stack":
        return set(facts["stack"])
    return set(facts["environment"] if name == "environment" else document[name])


@settings(max_examples=1000)
@given(state_histories())
def test_property_state_merge(
    history: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> None:
    base, ours, theirs = history
    result = merged_state(base, ours, theirs)  # same bytes both ways; loads validates
    assert set(validate(result, "merged")) <= {"extra"}

    # Nothing lost, no deletion undone: for every union and upsert field, the result holds
    # exactly both sides' items minus those either side removed from the base.
    for name in (
        "decisions",
        "keyFiles",
        "knownIssues",
        "stack",
        "custom",
        "environment",
        "preferences",
    ):
        b, o, t = _keys(base, name), _keys(ours, name), _keys(theirs, name)
        expected = (o | t) - {k for k in b if k not in o or k not in t}
        if name == "preferences":  # llm-brain requires these: always written
            expected |= {"style", "constraints", "communication"}
        assert _keys(result, name) == expected, name

    newer, older = (ours, theirs) if ours["lastUpdated"] > theirs["lastUpdated"] else (theirs, ours)
    tie = ours["lastUpdated"] == theirs["lastUpdated"]
    for name, key in KEYED.items():
        old = {i[key]: i for i in base[name]}
        for item in result[name]:
            versions = [{i[key]: i for i in side[name]}.get(item[key]) for side in (newer, older)]
            for field, value in item.items():
                changed = [
                    v is not None and field in v and v[field] != old.get(item[key], {}).get(field)
                    for v in versions
                ]
                if changed[0] and not tie:
                    assert versions[0] is not None and value == versions[0][field]
                elif changed[1] and not changed[0]:
                    assert versions[1] is not None and value == versions[1][field]

    for path in ("nextSteps", "activeState.currentGoal", "facts.architecture"):

        def get(doc: dict[str, Any], path: str = path) -> Any:
            for part in path.split("."):
                doc = doc[part]
            return doc

        b, o, t, r = get(base), get(ours), get(theirs), get(result)
        if o == t or t == b:
            assert r == o
        elif o == b:
            assert r == t
        elif not tie:
            assert r == get(newer)
        else:
            assert r in (o, t)

    recent = [set(s["activeState"]["recentlyCompleted"]) for s in (base, ours, theirs)]
    expected_recent = (recent[1] | recent[2]) - {
        x for x in recent[0] if x not in recent[1] or x not in recent[2]
    }
    got = result["activeState"]["recentlyCompleted"]
    assert set(got) <= expected_recent and len(got) == min(10, len(expected_recent))

    assert (
        result["sessionCount"]
        == ours["sessionCount"] + theirs["sessionCount"] - base["sessionCount"]
    )
    assert result["lastUpdated"] == max(ours["lastUpdated"], theirs["lastUpdated"])


# -- brain.md: property -----------------------------------------------------------------

CONTENTS = (
    "Tests passing, 3 iterations",
    "tests passing, 4 iterations",
    "Use JWT over sessions",
    "café ☕\n- a list",
    "## Decision — 2026-01-01T00:00:00Z looks like a heading",
    "```python\nopen fence",
    "<div>html</div>",
)
ENTRY_TYPES = ("observation", "decision", "loop_status", "reflection")


@st.composite
def brain_histories(d: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """A base and two sides, each made by adding, removing and editing entries (times
    may share a second) and by compaction, which stamps last_compaction."""
    summarizer = ExtractiveSummarizer()

    def run(
        entries: list[BrainEntry], meta: dict[str, Any], project: str, clock: int, steps: int
    ) -> tuple[list[BrainEntry], dict[str, Any], str, int]:
        entries, meta = list(entries), dict(meta)
        for _ in range(steps):
            op = d(st.sampled_from(("add", "add", "add", "remove", "edit", "compact", "title")))
            if op == "add":
                clock += d(st.integers(0, 2))
                entry = BrainEntry(
                    d(st.sampled_from(ENTRY_TYPES)),
                    d(st.sampled_from(CONTENTS)),
                    at(clock),
                    d(st.sampled_from((None, "hook"))),
                )
                if entry.key not in {e.key for e in entries}:
                    entries.append(entry)
            elif op in ("remove", "edit") and entries:
                n = d(st.integers(0, len(entries) - 1))
                old = entries.pop(n)
                edited = BrainEntry(old.type, old.content + " (edited)", old.timestamp, old.source)
                if op == "edit" and edited.key not in {e.key for e in entries}:
                    entries.insert(n, edited)
            elif op == "compact":
                clock += 1
                result = compact_entries(
                    entries,
                    budget_chars=d(st.integers(150, 900)),
                    fixed_chars=60,
                    section_chars=lambda e: len(brainfile.render_section(e, TEMPLATES)) + 1,
                    summarizer=summarizer,
                )
                entries = list(result.entries)
                meta["last_compaction"] = format_timestamp(at(clock))
            elif op == "title":
                project = d(st.sampled_from(("shop", "Shop", "api")))
        return entries, meta, project, clock

    base = run([], {}, "shop", 0, d(st.integers(0, 6)))
    sides = [run(*base[:3], base[3] + d(st.integers(0, 3)), d(st.integers(0, 5))) for _ in range(2)]
    files = [
        md(*entries, meta=meta, project=project) for entries, meta, project, _ in (base, *sides)
    ]
    return files[0], files[1], files[2]


@settings(max_examples=1000)
@given(brain_histories())
def test_property_brain_merge(history: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = history
    data = both_ways(merge_brain, base, ours, theirs)
    doc = brainfile.parse(data, Path("brain.md"))
    docs = [brainfile.parse(x, Path("brain.md")) for x in history]
    b, o, t = ({e.key for e in x.entries} for x in docs)
    keys = [e.key for e in doc.entries]
    assert len(keys) == len(set(keys))
    assert set(keys) == (o | t) - {k for k in b if k not in o or k not in t}
    assert [k[1] for k in keys] == sorted(k[1] for k in keys)
    # Each side's compactions: every summary they wrote is there, with every decision.
    for side in docs[1:]:
        for entry in side.entries:
            if entry.key not in b and (entry.source == SUMMARY_SOURCE or entry.type == "decision"):
                assert entry.key in keys
    stamps = [x.meta["last_compaction"] for x in docs[1:] if "last_compaction" in x.meta]
    assert doc.meta.get("last_compaction") == (max(stamps) if stamps else None)
    titles = [x.project for x in docs]
    if titles[1] == titles[2] or titles[2] == titles[0]:
        assert doc.project == titles[1]
    elif titles[1] == titles[0]:
        assert doc.project == titles[2]


# -- memory.jsonl: property ---------------------------------------------------------------


def _stamp(ms: int) -> str:
    moment = T0 + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@st.composite
def memory_histories(d: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """A base and two sides written the way the brain tool writes: adds (random ids, or
    deterministic ones for keyed context entries, which may collide across sides),
    updates with an ``updated`` time, tombstones, and `memory gc` rewrites."""

    def run(
        name: str, lines: list[dict[str, Any]], clock: int, steps: int
    ) -> tuple[list[dict[str, Any]], int]:
        lines = list(lines)
        for n in range(steps):
            clock += d(st.integers(1, 3))
            now = _stamp(clock)
            alive = list(log.fold(lines).entries.values())
            op = d(st.sampled_from(("add", "add", "keyed", "update", "remove", "gc")))
            if op == "add":
                lines.append(
                    {
                        "id": f"{name}{n}",
                        "type": "learning",
                        "text": d(st.sampled_from(WORDS)),
                        "created": now,
                    }
                )
            elif op == "keyed":
                path = d(st.sampled_from(("src", "docs")))
                entry = {
                    "id": log.deterministic_id("context", path),
                    "type": "context",
                    "project": "p",
                    "path": path,
                    "content": d(st.sampled_from(WORDS)),
                    "created": now,
                }
                existing = log.fold(lines).entries.get(entry["id"])
                if existing is not None:
                    entry = {**entry, "created": existing["created"], "updated": now}
                lines.append(entry)
            elif op == "update" and alive:
                target = d(st.sampled_from(alive))
                lines.append({**target, "text": d(st.sampled_from(WORDS)), "updated": now})
            elif op == "remove" and alive:
                target = d(st.sampled_from(alive))
                lines.append(
                    {
                        "id": f"{name}x{n}",
                        "type": "tombstone",
                        "target_id": target["id"],
                        "target_type": target["type"],
                        "reason": "removed",
                        "created": now,
                    }
                )
            elif op == "gc":
                lines = log.compacted_lines(log.fold(lines))
        return lines, clock

    base, clock = run("b", [], 0, d(st.integers(0, 8)))
    ours, _ = run("o", base, clock, d(st.integers(0, 6)))
    theirs, _ = run("t", base, clock, d(st.integers(0, 6)))
    return jl(*base), jl(*ours), jl(*theirs)


def _write_key(entry: dict[str, Any]) -> tuple[str, str, bytes]:
    return (entry.get("updated") or entry["created"], entry["id"], log.encode(entry).strip())


@settings(max_examples=1000)
@given(memory_histories())
def test_property_memory_merge(history: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = history
    data = both_ways(merge_memory, base, ours, theirs)
    result = live(data)
    # Lines: both sides' lines, once each, minus base lines either side dropped (gc).
    base_lines, ours_lines, theirs_lines = (set(x.split(b"\n")) for x in history)
    dropped = base_lines - (ours_lines & theirs_lines)
    assert set(data.split(b"\n")) == (ours_lines | theirs_lines) - dropped
    assert len(data.split(b"\n")) == len(set(data.split(b"\n")))
    folds = [log.fold(log.parse(x)[0]) for x in history]
    fb, fo, ft = folds
    subjects = {i for f in folds for i in (*f.entries, *f.dead)}
    for subject in subjects:
        deleted = any(
            subject in f.dead and log.encode(f.dead[subject]).strip() not in base_lines
            for f in (fo, ft)
        )
        if deleted:
            assert subject not in result, "a deletion was undone"
            continue
        changed = [
            f.entries[subject]
            for f in (fo, ft)
            if subject in f.entries and f.entries[subject] != fb.entries.get(subject)
        ]
        expected = max(changed, key=_write_key) if changed else fb.entries.get(subject)
        assert result.get(subject) == expected
    if base_lines <= set(ours.split(b"\n")) and base_lines <= set(theirs.split(b"\n")):
        assert data.startswith(base)  # neither side dropped a line: the base comes first

"""Dedup, scoring, ranking and decay of learnings (seed 001), as pure functions."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.memory.rank import (
    DedupResult,
    Scorer,
    age_days,
    check_duplicate,
    decay_candidates,
    near_key,
    normalize_text,
    rank_learnings,
    score,
    top_learnings,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)
PROJECT = os.path.normpath("/srv/code/repo")


def iso(when: datetime) -> str:
    """The seed's timestamp format: milliseconds and a literal Z."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def learning(
    text: str = "This repo uses pnpm not npm",
    *,
    age: timedelta = timedelta(0),
    id_: str = "a1b2c3d4",
    **extra: Any,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": id_,
        "type": "learning",
        "text": text,
        "source": "auto",
        "created": iso(NOW - age),
    }
    entry.update(extra)
    return entry


def days(n: float) -> timedelta:
    return timedelta(days=n)


# --- normalization -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("This repo uses pnpm not npm", "this repo uses pnpm not npm"),
        ("this repo uses PNPM, not npm!", "this repo uses pnpm not npm"),
        ("  --Leading and trailing--  ", "leading and trailing"),
        ("snake_case/and\tTabs", "snake case and tabs"),
        ("Café über", "café über"),
        ("!!!", ""),
    ],
)
def test_normalize_text(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


def test_near_key_masks_digit_runs() -> None:
    assert near_key("API runs on port 8080") == "api runs on port 0"
    assert near_key("API runs on port 8080") == near_key("API runs on port 3000")
    assert near_key("node v18.2") == "node v0 0"


# --- check_duplicate -----------------------------------------------------------------------


def test_exact_duplicate_with_different_case_and_punctuation() -> None:
    stored = learning("This repo uses pnpm not npm")
    result = check_duplicate("this repo uses PNPM, not npm!", [stored])
    assert result == DedupResult("duplicate", stored)
    assert result.existing is stored


def test_port_change_supersedes() -> None:
    stored = learning("API runs on port 3000")
    result = check_duplicate("API runs on port 8080", [stored])
    assert result.kind == "supersedes"
    assert result.existing is stored


def test_long_containment_supersedes() -> None:
    short = "Use pnpm for installs in this repository always"
    long = "Use pnpm for installs in this repository always, never npm"
    assert len(normalize_text(short)) >= 30
    stored = learning(short)
    assert check_duplicate(long, [stored]) == DedupResult("supersedes", stored)
    # Either direction: the shorter restatement also supersedes the longer one.
    stored_long = learning(long)
    assert check_duplicate(short, [stored_long]) == DedupResult("supersedes", stored_long)


def test_short_containment_is_new() -> None:
    assert check_duplicate("use pnpm", [learning("pnpm")]) == DedupResult("new", None)
    assert check_duplicate("pnpm", [learning("use pnpm")]) == DedupResult("new", None)


def test_containment_needs_both_texts_long() -> None:
    long = "Always run the full test suite before pushing to main"
    assert len(normalize_text(long)) >= 30
    assert check_duplicate(long, [learning("run the full test suite")]).kind == "new"


def test_unrelated_text_is_new() -> None:
    stored = learning("This repo uses pnpm not npm")
    assert check_duplicate("Tests live under tests/", [stored]) == DedupResult("new", None)


def test_no_existing_entries_is_new() -> None:
    assert check_duplicate("anything", []) == DedupResult("new", None)


def test_exact_wins_over_near() -> None:
    near = learning("API runs on port 3000", id_="near", updated=iso(NOW))
    exact = learning("API runs on port 8080", id_="exact", age=days(300))
    result = check_duplicate("api runs on port 8080", [near, exact])
    assert result.kind == "duplicate"
    assert result.existing is exact


def test_most_recently_changed_near_match_wins() -> None:
    older = learning("API runs on port 3000", id_="older", age=days(10))
    newer = learning("API runs on port 4000", id_="newer", age=days(2))
    # `updated` counts over `created`: this one was created first but changed last.
    touched = learning("API runs on port 5000", id_="touched", age=days(50), updated=iso(NOW))
    assert check_duplicate("API runs on port 8080", [older, newer]).existing is newer
    assert check_duplicate("API runs on port 8080", [newer, older]).existing is newer
    assert check_duplicate("API runs on port 8080", [older, touched, newer]).existing is touched


def test_near_match_tie_goes_to_later_in_file() -> None:
    first = learning("API runs on port 3000", id_="first", age=days(1))
    second = learning("API runs on port 4000", id_="second", age=days(1))
    assert check_duplicate("API runs on port 8080", [first, second]).existing is second
    assert check_duplicate("API runs on port 8080", [second, first]).existing is first


def test_entries_without_text_are_skipped() -> None:
    broken = {"id": "x", "type": "learning", "created": iso(NOW)}
    assert check_duplicate("pnpm", [broken]) == DedupResult("new", None)


def test_preference_entries_dedup_the_same_way() -> None:
    pref = {
        "id": "p1",
        "type": "preference",
        "category": "Code",
        "text": "User prefers early returns over nested ifs",
        "created": iso(NOW),
    }
    result = check_duplicate("user prefers early returns, over nested IFs.", [pref])
    assert result == DedupResult("duplicate", pref)


# --- age_days ------------------------------------------------------------------------------


def test_age_from_created_in_seed_format() -> None:
    entry = {"created": "2026-05-25T00:00:00.000Z"}
    assert age_days(entry, NOW) == 7.0


def test_age_uses_updated_over_created() -> None:
    entry = {"created": "2026-01-01T00:00:00.000Z", "updated": "2026-05-31T12:00:00.000Z"}
    assert age_days(entry, NOW) == 0.5


def test_age_accepts_offsets() -> None:
    # 02:00 at +02:00 is midnight UTC.
    entry = {"created": "2026-05-31T02:00:00+02:00"}
    assert age_days(entry, NOW) == 1.0


@pytest.mark.parametrize(
    "entry",
    [
        {},
        {"created": "yesterday"},
        {"created": 12345},
        {"created": None},
    ],
)
def test_unreadable_or_missing_time_is_age_zero(entry: dict[str, Any]) -> None:
    assert age_days(entry, NOW) == 0.0


def test_unreadable_updated_falls_back_to_created() -> None:
    entry = {"created": "2026-05-25T00:00:00.000Z", "updated": "garbage"}
    assert age_days(entry, NOW) == 7.0


def test_future_time_is_age_zero() -> None:
    assert age_days({"created": "2026-07-01T00:00:00.000Z"}, NOW) == 0.0


# --- score ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (0, 10),
        (6, 10),
        (6.99, 10),
        (7, 9),
        (13, 9),
        (14, 8),
        (63, 1),
        (70, 0),
        (100, 0),
    ],
)
def test_recency_table(age: float, expected: int) -> None:
    assert score(learning(age=days(age)), NOW) == expected


@given(
    st.timedeltas(min_value=timedelta(days=-30), max_value=timedelta(days=120)),
    st.sampled_from([timedelta(0), timedelta(microseconds=1), timedelta(hours=5, minutes=30)]),
)
def test_recency_is_ten_minus_whole_weeks_exactly(age: timedelta, offset: timedelta) -> None:
    """At and around every week boundary, in any time zone, to the microsecond."""
    from datetime import timezone

    changed = (NOW - age).astimezone(timezone(offset)) if offset else NOW - age
    entry = {"type": "learning", "text": "t", "created": changed.isoformat()}
    weeks = max(age, timedelta(0)) // timedelta(days=7)
    assert score(entry, NOW) == max(0, 10 - weeks)


@pytest.mark.parametrize(
    ("cwd", "boosted"),
    [
        (PROJECT, True),
        (PROJECT + os.sep, True),
        (os.path.join(PROJECT, "src", "pkg"), True),
        (os.path.join(PROJECT, "src", "..", "docs"), True),
        (PROJECT + "-other", False),  # sibling sharing the prefix string
        (os.path.normpath("/srv/code/rep"), False),
        (os.path.normpath("/srv/code"), False),  # the parent is not inside
        (os.path.normpath("/elsewhere"), False),
        (None, False),
    ],
)
def test_project_scope_boost(cwd: str | None, boosted: bool) -> None:
    entry = learning(scope="project", projectPath=PROJECT)
    assert score(entry, NOW, cwd) == (15 if boosted else 10)


def test_project_boost_needs_project_scope() -> None:
    entry = learning(scope="global", projectPath=PROJECT)
    assert score(entry, NOW, PROJECT) == 10


def test_project_boost_needs_project_path() -> None:
    assert score(learning(scope="project"), NOW, PROJECT) == 10
    assert score(learning(scope="project", projectPath=""), NOW, ".") == 10


def test_project_path_is_normalized() -> None:
    entry = learning(scope="project", projectPath=PROJECT + os.sep + "." + os.sep)
    assert score(entry, NOW, os.path.join(PROJECT, "src")) == 15


def test_root_project_path_contains_everything() -> None:
    root = os.path.abspath(os.sep)
    entry = learning(scope="project", projectPath=root)
    assert score(entry, NOW, PROJECT) == 15


def test_manual_boost() -> None:
    assert score(learning(source="manual"), NOW) == 12
    assert score(learning(source="auto"), NOW) == 10


def test_all_boosts_stack_to_seventeen() -> None:
    entry = learning(source="manual", scope="project", projectPath=PROJECT)
    assert score(entry, NOW, PROJECT) == 17


def test_score_uses_updated() -> None:
    entry = learning(age=days(200), updated=iso(NOW - days(8)))
    assert score(entry, NOW) == 9


# --- rank_learnings ------------------------------------------------------------------------


def test_rank_by_score_descending() -> None:
    old = learning("old", id_="old", age=days(30))  # 6
    fresh = learning("fresh", id_="fresh")  # 10
    manual_old = learning("manual old", id_="manual", age=days(30), source="manual")  # 8
    ranked = rank_learnings([old, fresh, manual_old], NOW)
    assert [e["id"] for e in ranked] == ["fresh", "manual", "old"]


def test_rank_project_boost_applies_with_cwd() -> None:
    here = learning("here", id_="here", age=days(30), scope="project", projectPath=PROJECT)
    global_ = learning("global", id_="global")
    assert [e["id"] for e in rank_learnings([global_, here], NOW, PROJECT)] == ["here", "global"]
    assert [e["id"] for e in rank_learnings([global_, here], NOW)] == ["global", "here"]


def test_rank_ties_newest_created_first() -> None:
    # Same score (10): both within the first week, but created a day apart.
    older = learning("older", id_="older", age=days(3))
    newer = learning("newer", id_="newer", age=days(1))
    assert [e["id"] for e in rank_learnings([newer, older], NOW)] == ["newer", "older"]
    assert [e["id"] for e in rank_learnings([older, newer], NOW)] == ["newer", "older"]


def test_rank_tie_on_created_uses_created_not_updated() -> None:
    # Equal scores via `updated`; the tie breaks on `created`.
    a = learning("a", id_="a", age=days(100), updated=iso(NOW))
    b = learning("b", id_="b", age=days(50), updated=iso(NOW))
    assert [e["id"] for e in rank_learnings([a, b], NOW)] == ["b", "a"]


def test_rank_full_tie_later_in_input_first() -> None:
    first = learning("first", id_="first", age=days(2))
    second = learning("second", id_="second", age=days(2))
    assert [e["id"] for e in rank_learnings([first, second], NOW)] == ["second", "first"]


@given(st.lists(st.integers(0, 200), max_size=40), st.integers(0, 45))
def test_rank_with_a_limit_is_the_head_of_the_full_ranking(ages: list[int], limit: int) -> None:
    entries = [
        learning(age=days(a), source="manual" if a % 3 else "auto", text=f"t{n}")
        for n, a in enumerate(ages)
    ]
    full = rank_learnings(entries, NOW, PROJECT)
    assert rank_learnings(entries, NOW, PROJECT, limit=limit) == full[:limit]


def test_rank_empty() -> None:
    assert rank_learnings([], NOW) == []


# --- decay_candidates ----------------------------------------------------------------------


def test_decay_ninety_day_boundary() -> None:
    exactly = learning("exactly", id_="exactly", age=days(90))
    past = learning("past", id_="past", age=days(90) + timedelta(seconds=1))
    assert decay_candidates([exactly, past], NOW) == [past]


def test_decay_updated_resets_age() -> None:
    touched = learning(age=days(400), updated=iso(NOW - days(10)))
    assert decay_candidates([touched], NOW) == []


def test_decay_manual_boost_is_not_enough() -> None:
    # Past 90 days recency is 0; manual gives 2 < 3.
    entry = learning(age=days(120), source="manual")
    assert score(entry, NOW) == 2
    assert decay_candidates([entry], NOW) == [entry]


def test_decay_project_boost_exempts_in_project() -> None:
    entry = learning(age=days(120), scope="project", projectPath=PROJECT)
    assert score(entry, NOW, PROJECT) == 5
    assert decay_candidates([entry], NOW, cwd=PROJECT) == []
    # Outside the project the boost doesn't apply, so it decays.
    assert decay_candidates([entry], NOW, cwd=os.path.normpath("/elsewhere")) == [entry]


def test_decay_min_score_exemption_is_inclusive() -> None:
    entry = learning(age=days(120), source="manual")  # score 2
    assert decay_candidates([entry], NOW, min_score=2) == []
    assert decay_candidates([entry], NOW, min_score=3) == [entry]


def test_decay_custom_after_days() -> None:
    # At 40 days recency is 10 - 5 = 5; raise min_score so only age decides.
    entry = learning(age=days(40))
    assert decay_candidates([entry], NOW, after_days=30, min_score=11) == [entry]
    assert decay_candidates([entry], NOW, after_days=40, min_score=11) == []


def test_decay_preferences_and_other_types_never_decay() -> None:
    pref = {
        "id": "p1",
        "type": "preference",
        "category": "Code",
        "text": "User prefers early returns over nested ifs",
        "created": iso(NOW - days(1000)),
    }
    task = {"id": "t1", "type": "task", "text": "ship it", "created": iso(NOW - days(1000))}
    old = learning(age=days(1000))
    assert decay_candidates([pref, task, old], NOW) == [old]


def test_decay_unreadable_time_never_decays() -> None:
    entry = learning()
    entry["created"] = "not a time"
    assert decay_candidates([entry], NOW) == []


def test_decay_keeps_input_order() -> None:
    a = learning("a", id_="a", age=days(200))
    b = learning("b", id_="b", age=days(100), source="manual")
    c = learning("c", id_="c", age=days(300))
    assert [e["id"] for e in decay_candidates([b, c, a], NOW)] == ["b", "c", "a"]


# --- properties ----------------------------------------------------------------------------

learning_strategy = st.builds(
    lambda text, age_s, source, scope, updated_s: {
        "id": "x",
        "type": "learning",
        "text": text,
        "source": source,
        "scope": scope,
        "projectPath": PROJECT,
        "created": iso(NOW - timedelta(seconds=age_s)),
        **({"updated": iso(NOW - timedelta(seconds=updated_s))} if updated_s is not None else {}),
    },
    text=st.text(max_size=40),
    age_s=st.integers(min_value=-86_400, max_value=400 * 86_400),
    source=st.sampled_from(["auto", "manual"]),
    scope=st.sampled_from(["global", "project"]),
    updated_s=st.none() | st.integers(min_value=0, max_value=400 * 86_400),
)
cwd_strategy = st.sampled_from(
    [None, PROJECT, os.path.join(PROJECT, "src"), PROJECT + "-sibling", os.path.normpath("/")]
)


@given(st.text())
def test_normalize_text_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


@given(st.text())
def test_near_key_is_idempotent(text: str) -> None:
    once = near_key(text)
    assert near_key(once) == once


@given(st.text())
def test_same_text_is_always_duplicate(text: str) -> None:
    entry = learning(text)
    assert check_duplicate(text, [entry]) == DedupResult("duplicate", entry)


@given(learning_strategy, cwd_strategy)
def test_score_within_bounds(entry: dict[str, Any], cwd: str | None) -> None:
    assert 0 <= score(entry, NOW, cwd) <= 17


@given(st.lists(learning_strategy, max_size=12), cwd_strategy)
def test_rank_is_a_sorted_permutation(entries: list[dict[str, Any]], cwd: str | None) -> None:
    ranked = rank_learnings(entries, NOW, cwd)
    assert sorted(map(id, ranked)) == sorted(map(id, entries))
    scores = [score(e, NOW, cwd) for e in ranked]
    assert scores == sorted(scores, reverse=True)


@given(st.lists(learning_strategy, max_size=12), cwd_strategy)
def test_decay_candidates_are_old_low_scoring_learnings(
    entries: list[dict[str, Any]], cwd: str | None
) -> None:
    decayed = decay_candidates(entries, NOW, cwd=cwd)
    for entry in decayed:
        assert age_days(entry, NOW) > 90
        assert score(entry, NOW, cwd) < 3
    # A subsequence of the input, in order.
    remaining = iter(map(id, entries))
    assert all(any(i == j for j in remaining) for i in map(id, decayed))


_times = st.one_of(
    st.none(),
    st.just("not a time"),
    st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2026, 7, 1)).map(
        lambda d: d.isoformat()
    ),  # naive: read as UTC
    st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2026, 7, 1)).map(
        lambda d: iso(d.replace(tzinfo=UTC))
    ),
)


@given(
    st.lists(
        st.tuples(_times, _times, st.booleans(), st.sampled_from([None, PROJECT, "/elsewhere"])),
        max_size=25,
    )
)
def test_ranking_a_list_agrees_with_scoring_each_entry_alone(
    rows: list[tuple[str | None, str | None, bool, str | None]],
) -> None:
    """The list-at-a-time scoring (fast when every time is regular, entry by entry when
    one is not) ranks exactly as the one-entry definition does."""
    entries = []
    for n, (created, updated, manual, path) in enumerate(rows):
        entry: dict[str, Any] = {"id": f"{n:08x}", "type": "learning", "text": f"t{n}"}
        entry |= {"source": "manual" if manual else "auto", "scope": "project"}
        if created is not None:
            entry["created"] = created
        if updated is not None:
            entry["updated"] = updated
        if path is not None:
            entry["projectPath"] = path
        entries.append(entry)

    def created_at(entry: dict[str, Any]) -> datetime:
        try:
            when = datetime.fromisoformat(entry["created"])
        except (KeyError, ValueError):
            return datetime.min.replace(tzinfo=UTC)
        return when if when.tzinfo else when.replace(tzinfo=UTC)

    expected = sorted(
        range(len(entries)),
        key=lambda i: (score(entries[i], NOW, PROJECT), created_at(entries[i]), i),
        reverse=True,
    )
    assert rank_learnings(entries, NOW, PROJECT) == [entries[i] for i in expected]
    stale = decay_candidates(entries, NOW, cwd=PROJECT)
    assert stale == [e for e in entries if age_days(e, NOW) > 90 and score(e, NOW, PROJECT) < 3]


@given(
    st.lists(st.timedeltas(min_value=timedelta(days=-3), max_value=timedelta(days=80)), max_size=6)
)
def test_no_score_changes_before_the_next_change_and_one_does_at_it(ages: list[timedelta]) -> None:
    entries = [
        {"id": f"{n}", "type": "learning", "text": "t", "created": (NOW - a).isoformat()}
        for n, a in enumerate(ages)
    ]
    _, soonest = top_learnings(entries, NOW)
    scores_now = [score(e, NOW) for e in entries]
    if soonest is None:
        assert all(
            score(e, NOW + timedelta(days=400)) == s
            for e, s in zip(entries, scores_now, strict=True)
        )
        return
    tick = timedelta(microseconds=1)
    assert soonest > NOW
    assert [score(e, soonest - tick) for e in entries] == scores_now
    assert [score(e, soonest) for e in entries] != scores_now


@pytest.mark.parametrize(
    "odd",
    [
        {"created": "2026-02-31T00:00:00.000Z"},  # not a date
        {"created": "2026-05-01T00:00:00Z"},  # no milliseconds
        {"updated": "2026-05-01 00:00:00.000Z"},
        {"projectPath": ["not", "hashable"], "scope": "project"},
        {"source": {"un": "hashable"}},
    ],
)
def test_an_odd_entry_is_ranked_as_scoring_each_entry_alone(odd: dict[str, Any]) -> None:
    entries = [learning(f"t{n}", id_=f"{n}", age=days(n * 5)) for n in range(6)]
    entries[2] = {**entries[2], **odd}
    expected = sorted(
        range(len(entries)),
        key=lambda i: (
            score(entries[i], NOW, PROJECT),
            rank_time(entries[i]),
            i,
        ),
        reverse=True,
    )
    assert rank_learnings(entries, NOW, PROJECT) == [entries[i] for i in expected]


def rank_time(entry: dict[str, Any]) -> datetime:
    try:
        when = datetime.fromisoformat(entry["created"])
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


_scored_learning = st.fixed_dictionaries(
    {"type": st.just("learning"), "text": st.just("t")},
    optional={
        "created": st.integers(-20, 100).map(lambda d: (NOW - timedelta(days=d)).isoformat()),
        "scope": st.sampled_from(["project", "global", None, 3]),
        "projectPath": st.sampled_from(
            [PROJECT, os.path.join(PROJECT, "src"), "/elsewhere", "", None, 7, ["x"]]
        ),
        "source": st.sampled_from(["manual", "auto", None, 1]),
    },
)


@given(st.lists(_scored_learning, max_size=25), st.sampled_from([PROJECT, "/elsewhere", None]))
def test_scores_of_a_list_are_the_seed_rule_for_each(
    learnings: list[dict[str, Any]], cwd: str | None
) -> None:
    """Scored a list at a time (times parsed together, one boost per path): each score
    is still the seed's rule for that entry, whatever its fields hold."""
    scorer = Scorer(NOW, cwd)
    _, changed = scorer.times(learnings)
    for entry, got in zip(learnings, scorer.scores(learnings, changed), strict=True):
        when = datetime.fromisoformat(entry["created"]) if "created" in entry else NOW
        weeks = max(NOW - when, timedelta(0)) // timedelta(days=7)
        path = entry.get("projectPath")
        inside = (
            cwd is not None
            and isinstance(path, str)
            and path != ""
            and (cwd == path or cwd.startswith(path.rstrip(os.sep) + os.sep))
        )
        expected = (
            max(0, 10 - weeks)
            + (5 if entry.get("scope") == "project" and inside else 0)
            + (2 if entry.get("source") == "manual" else 0)
        )
        assert got == expected, entry

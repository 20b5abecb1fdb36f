"""The must-know tier of the session-start context (issue 17): every must-know line is in
before any other; when they alone overflow the budget they are shortened, then the least
important go (the oldest decisions first), and nothing else is in; --explain and --json
mark each line's tier and why."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.context.build import LEFT_OUT, SHORT_LINE, SHORTENED, build_context
from voyager_brain.context.candidates import MUST_KNOW, NEWEST_DECISIONS
from voyager_brain.memory.log import Folded, fold
from voyager_brain.memory.tool import brain_tool
from voyager_brain.state.brainjson import empty_state, merge

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CREATED = "2026-02-20T00:00:00.000Z"


def memory(*entries: dict[str, Any]) -> Folded:
    return fold([{"created": CREATED, **e} for e in entries])


def build(
    mem: Folded,
    state: dict[str, Any] | None,
    entries: tuple[BrainEntry, ...] = (),
    budget: int = 2000,
    explain: bool = True,
) -> Any:
    return build_context(
        memory=mem,
        state=state,
        entries=entries,
        cwd=Path("/srv/code/p"),
        top=None,
        project="p",
        now=NOW,
        budget_tokens=budget,
        explain=explain,
    )


def state_of(update: dict[str, Any]) -> dict[str, Any]:
    return merge(empty_state("p", NOW), update, now=NOW, new_session=False)


def _filler(n: int, what: str) -> str:
    return f"{what} {n:04d} " + "filler words that make a line of realistic length " * 2


def large_and_old() -> tuple[Folded, dict[str, Any], tuple[BrainEntry, ...], list[str]]:
    """The issue's shape: 60 decisions, 40 known issues of mixed severity, 50 key files,
    300 observations, 2,000 learnings, and the must-know lines among them (returned)."""
    severe = [
        ("critical", "Export loses cents on refunds"),
        ("high", "Nightly job runs twice after a deploy"),
        ("high", "Cache serves another tenant's totals"),
    ]
    issues: list[dict[str, Any]] = [
        {"issue": _filler(n, "issue"), "severity": ("medium", "low")[n % 2], "workaround": "w"}
        for n in range(37)
    ]
    for at, (severity, text) in zip((5, 20, 36), severe, strict=True):
        issues.insert(at, {"issue": text, "severity": severity})
    decisions = [
        {"what": _filler(n, "decision"), "why": "because", "when": f"2026-01-{n % 28 + 1:02d}"}
        for n in range(57)
    ]
    newest = ["Keep Alpha as the client", "Pin Beta to 2.x", "Drop Gamma"]
    decisions += [{"what": w, "when": f"2026-02-{10 + n}"} for n, w in enumerate(newest)]
    state = state_of(
        {
            "activeState": {
                "currentGoal": "Move billing onto the ledger",
                "blockers": ["Waiting for sandbox credentials"],
                "inProgress": ["Port the invoice job"],
            },
            "nextSteps": ["Write the reconciliation test", "Ask finance about refunds"],
            "decisions": decisions,
            "knownIssues": issues,
            "keyFiles": [{"path": f"src/mod_{n}.py", "role": "module"} for n in range(50)],
            "facts": {"custom": [_filler(n, "fact") for n in range(30)]},
            "preferences": {"style": "Small commits", "constraints": ["No new dependencies"]},
        }
    )
    start = datetime(2025, 3, 1, tzinfo=UTC)
    observations = [
        BrainEntry("observation", _filler(n, "observed"), start + timedelta(hours=n))
        for n in range(300)
    ]
    entries = (
        *observations,
        BrainEntry("reflection", "Summary: 280 entries folded", start, source="compact"),
        BrainEntry("loop_status", "Iteration 9/10: two tests red", start + timedelta(days=20)),
    )
    mem = memory(
        *({"id": f"l{n}", "type": "learning", "text": _filler(n, "learning")} for n in range(2000)),
        *(
            {"id": f"b{n}", "type": "behavior", "category": "do", "text": _filler(n, "do")}
            for n in range(30)
        ),
        {"id": "d1", "type": "behavior", "category": "dont", "text": "Force-push to main"},
        {"id": "d2", "type": "behavior", "category": "do", "text": "Always run the smoke test"},
        *(
            {"id": f"p{n}", "type": "preference", "category": "Code", "text": _filler(n, "pref")}
            for n in range(30)
        ),
        {"id": "p-rule", "type": "preference", "category": "Ops", "text": "Never deploy on Friday"},
        {"id": "r1", "type": "reminder", "text": "Rotate the API key", "due": "2026-02-01"},
        {
            "id": "t1",
            "type": "task",
            "description": "Fix payout rounding",
            "status": "pending",
            "priority": "urgent",
        },
    )
    must = [
        "Goal: Move billing onto the ledger",
        "Blocker: Waiting for sandbox credentials",
        "In progress: Port the invoice job",
        "Next: Write the reconciliation test",
        "Next: Ask finance about refunds",
        *(f"[{s}]: {t}" for s, t in severe),
        *(f"Decision: {w}" for w in newest),
        "Don't: Force-push to main",
        "Do: Always run the smoke test",
        "[Ops] Never deploy on Friday",
        "[style] Small commits",
        "[constraints] No new dependencies",
        "Reminder due: Rotate the API key",
        "Task (urgent): Fix payout rounding",
        "Loop status (2025-03-21T00:00:00Z): Iteration 9/10: two tests red",
        "Summary (2025-03-01T00:00:00Z): Summary: 280 entries folded",
    ]
    return mem, state, entries, must


def test_every_must_know_line_is_in_at_2000_tokens_beside_long_lists() -> None:
    mem, state, entries, must = large_and_old()
    doc = build(mem, state, entries)
    missing = [m for m in must if m not in doc.text]
    assert missing == []
    assert doc.tokens <= 2000 and not doc.notes
    # The long lists are cut, and say so; the rest still has its share.
    assert "more omitted)" in doc.text
    for section in ("learnings", "session", "project"):
        assert doc.left_out[section] > 0
        assert any(
            c.included and c.tier == "ranked" for c in doc.choices if c.item.section == section
        )
    # Only the newest decisions are must-know.
    must_decisions = [c for c in doc.choices if c.item.must == "decision"]
    assert len(must_decisions) == NEWEST_DECISIONS
    # The same at the benchmark's other budgets, and without --explain.
    for budget in (1000, 4000):
        assert [m for m in must if m not in build(mem, state, entries, budget).text] == []
    assert build(mem, state, entries, explain=False).text == doc.text


def test_before_the_tier_the_second_high_issue_was_crowded_out_by_decisions() -> None:
    """The issue's finding: shares per list let many decisions in and only two issues.
    Now every critical and high issue is in, wherever the list puts them."""
    mem, state, entries, _ = large_and_old()
    doc = build(mem, state, entries)
    shown = [c for c in doc.choices if c.included and c.item.ref.startswith("brain.json:known")]
    assert {c.item.must for c in shown if c.item.must} == {"critical", "high"}
    assert sum(1 for c in shown if c.item.must) == 3


def test_the_last_line_names_recall_and_counts_what_was_left_out() -> None:
    mem, state, entries, _ = large_and_old()
    doc = build(mem, state, entries)
    last = doc.text.rstrip("\n").rsplit("\n", 1)[1]
    assert last.startswith("Left out for room: ")
    assert last.endswith('Recall any of it with `voyager-brain recall "words"`.')
    assert f"learnings {doc.left_out['learnings']}" in last
    assert f"session brain {doc.left_out['session']}" in last
    counted = {
        section: sum(1 for c in doc.choices if c.item.section == section and not c.included)
        for section in doc.left_out
    }
    assert counted == dict(doc.left_out)


def _overflowing() -> tuple[Folded, dict[str, Any]]:
    long = "a known issue described at great length so that its line is long " * 3
    state = state_of(
        {
            "activeState": {"currentGoal": "Ship it " + "and more " * 30},
            "knownIssues": [{"issue": f"{n} {long}", "severity": "high"} for n in range(25)],
            "decisions": [
                {"what": f"Decision {n} " + "x" * 150, "when": f"2026-02-0{n + 1}"}
                for n in range(3)
            ],
            "facts": {"custom": ["a ranked fact"]},
        }
    )
    return memory({"id": "l1", "type": "learning", "text": "a ranked learning"}), state


def test_must_know_lines_that_overflow_are_shortened_to_one_short_line_each() -> None:
    mem, state = _overflowing()
    doc = build(mem, state, budget=700)
    must = [c for c in doc.choices if c.item.must]
    assert must and all(c.included for c in must)
    assert all(len(c.item.text) <= SHORT_LINE for c in must)
    assert any(c.reason == SHORTENED for c in must)
    assert all(c.item.text in doc.text.split("\n") for c in must)
    assert "Goal: Ship it and more" in doc.text
    assert not any(c.included for c in doc.choices if not c.item.must)
    assert any("shortened to one line" in note for note in doc.notes)
    assert doc.tokens <= 700


def test_when_shortening_is_not_enough_the_oldest_decisions_go_first() -> None:
    mem, state = _overflowing()
    # 29 must-know lines of at most 80 characters need ~600 tokens: some have to go.
    doc = build(mem, state, budget=450)
    assert doc.tokens <= 450
    dropped = [c for c in doc.choices if c.item.must and not c.included]
    assert dropped and all(c.reason == LEFT_OUT for c in dropped)
    decisions = [c for c in doc.choices if c.item.must == "decision"]
    # Decisions go before any issue.
    assert not any(c.included for c in decisions)
    assert all(c.included for c in doc.choices if c.item.must in ("goal", "critical"))
    assert "Goal: Ship it and more" in doc.text  # the most important stays
    assert not any(c.included for c in doc.choices if not c.item.must)
    assert any("left out, the least important first: decision ×3, high ×" in n for n in doc.notes)


def test_the_oldest_decisions_go_first() -> None:
    """Decisions are listed newest first; at a budget where one or two must go, they are
    the oldest."""
    mem, state = _overflowing()
    for budget, kept in ((640, [True, False, False]), (660, [True, True, False])):
        doc = build(mem, state, budget=budget)
        decisions = [c for c in doc.choices if c.item.must == "decision"]
        assert [c.item.text.split()[2] for c in decisions] == ["2", "1", "0"]  # newest first
        assert [c.included for c in decisions] == kept
        assert all(c.included for c in doc.choices if c.item.must not in ("", "decision"))
        assert f"decision ×{kept.count(False)}" in doc.notes[-1]


# -- the ledger agrees with the text, as a property --------------------------------------

_word = st.text(alphabet="abcdefgh ", min_size=1, max_size=90)
_severity = st.sampled_from(["critical", "high", "medium", "low"])


@st.composite
def brains(draw: st.DrawFn) -> tuple[Folded, dict[str, Any], tuple[BrainEntry, ...]]:
    numbered = lambda prefix, words: [f"{prefix}{n} {w}" for n, w in enumerate(words)]  # noqa: E731
    update = {
        "activeState": {
            "currentGoal": draw(_word),
            "blockers": numbered("b", draw(st.lists(_word, max_size=4))),
        },
        "nextSteps": numbered("s", draw(st.lists(_word, max_size=4))),
        "decisions": [{"what": w} for w in numbered("d", draw(st.lists(_word, max_size=8)))],
        "knownIssues": [
            {"issue": w, "severity": draw(_severity)}
            for w in numbered("i", draw(st.lists(_word, max_size=10)))
        ],
        "preferences": {"style": draw(_word)},
        "facts": {"custom": numbered("f", draw(st.lists(_word, max_size=6)))},
    }
    entries: list[dict[str, Any]] = []
    for n, (kind, text) in enumerate(
        draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["behavior", "preference", "learning", "task"]),
                    st.sampled_from(["never do x", "always y", "plain", "must z"]),
                ),
                max_size=30,
            )
        )
    ):
        entry: dict[str, Any] = {"id": f"e{n}", "type": kind}
        match kind:
            case "behavior":
                category = draw(st.sampled_from(["do", "dont", "value"]))
                entry |= {"category": category, "text": f"{kind} {n} {text}"}
            case "preference":
                entry |= {"category": "Code", "text": f"{kind} {n} {text}"}
            case "learning":
                entry |= {"text": f"{kind} {n} {text}"}
            case "task":
                priority = draw(st.sampled_from(["urgent", "low"]))
                entry |= {"description": f"t{n} {text}", "status": "pending", "priority": priority}
        entries.append(entry)
    brain = tuple(
        BrainEntry(kind, f"entry {n} {w}", datetime(2026, 2, 1, 0, n % 60, tzinfo=UTC), source)
        for n, (kind, source, w) in enumerate(
            draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(["observation", "loop_status", "reflection"]),
                        st.sampled_from([None, "compact"]),
                        _word,
                    ),
                    max_size=8,
                )
            )
        )
    )
    return memory(*entries), state_of(update), brain


@settings(max_examples=300)
@given(brains(), st.integers(min_value=60, max_value=2500))
def test_must_know_first_and_the_ledger_agrees_with_the_text(
    data: tuple[Folded, dict[str, Any], tuple[BrainEntry, ...]], budget: int
) -> None:
    mem, state, entries = data
    doc = build(mem, state, entries, budget=budget)
    assert doc.tokens <= budget
    lines = doc.text.split("\n")
    for choice in doc.choices:
        assert (choice.item.text in lines) == choice.included, choice
        assert choice.tier == ("must-know" if choice.item.must else "ranked")
        assert choice.why == MUST_KNOW.get(choice.item.must, "")
    # Nothing must-know is left out while a ranked line is in.
    if any(c.item.must and not c.included for c in doc.choices):
        assert not any(c.included and not c.item.must for c in doc.choices)
        assert doc.notes
    # Without --explain, the same document.
    quick = build(mem, state, entries, budget=budget, explain=False)
    assert quick.text == doc.text and quick.included_refs == doc.included_refs


@settings(max_examples=200)
@given(brains())
def test_at_a_budget_that_holds_them_every_must_know_line_is_whole(
    data: tuple[Folded, dict[str, Any], tuple[BrainEntry, ...]],
) -> None:
    mem, state, entries = data
    doc = build(mem, state, entries, budget=2000)
    must = [c for c in doc.choices if c.item.must]
    assert all(c.included and c.reason == "included" for c in must)
    assert not doc.notes


# -- the command line -------------------------------------------------------------------


def test_explain_and_json_mark_each_lines_tier_and_why(repo: Path) -> None:
    run_cli("init", cwd=repo)
    bm = BrainManager(repo)
    bm.merge_state(
        {
            "activeState": {"currentGoal": "Ship the wizard"},
            "knownIssues": [{"issue": "Webhook double-posts", "severity": "high"}],
            "facts": {"custom": ["Runs on Fly.io"]},
            "preferences": {"style": "Small commits"},
        }
    )
    bm.persist()
    brain_tool("add", cwd=str(repo), type="learning", text="Use pnpm")
    explained = run_cli("context", "--explain", cwd=repo).stdout
    goal = next(ln for ln in explained.splitlines() if "brain.json:currentGoal" in ln)
    assert goal.startswith("+ project") and "[must-know: the current goal]" in goal
    fact = next(ln for ln in explained.splitlines() if "facts.custom" in ln)
    assert "must-know" not in fact
    pref = next(ln for ln in explained.splitlines() if "brain.json:preferences.style" in ln)
    assert "[must-know: a preference in brain.json]" in pref
    data = json.loads(run_cli("context", "--json", cwd=repo).stdout)
    tiers = {c["ref"]: (c["tier"], c["why"]) for c in data["choices"]}
    assert tiers["brain.json:currentGoal"] == ("must-know", "the current goal")
    assert tiers["brain.json:knownIssues[Webhook double-posts]"] == (
        "must-know",
        MUST_KNOW["high"],
    )
    assert tiers["brain.json:facts.custom[0]"] == ("ranked", "")
    assert data["notes"] == [] and isinstance(data["left_out"], dict)
    assert "- [style] Small commits" in data["text"]


def test_explain_says_when_the_must_know_lines_overflow(repo: Path) -> None:
    run_cli("init", cwd=repo)
    bm = BrainManager(repo)
    long = "a known issue described at great length so that its line is long " * 3
    bm.merge_state(
        {"knownIssues": [{"issue": f"{n} {long}", "severity": "critical"} for n in range(30)]}
    )
    bm.persist()
    out = run_cli("context", "--budget", "300", "--explain", cwd=repo).stdout
    notes = [ln for ln in out.splitlines() if ln.startswith("note: ")]
    assert any("shortened to one line" in n for n in notes)
    assert any("left out, the least important first" in n for n in notes)
    assert "(left out: the must-know lines alone exceed the budget)" in out

"""The session-start context: one document from every store, within its budget, with an
explain list that agrees with the text."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.context.build import NAMES, WEIGHTS, build_context
from voyager_brain.memory.log import Folded, fold
from voyager_brain.memory.tool import brain_tool
from voyager_brain.state.brainjson import empty_state, merge

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CREATED = "2026-02-20T00:00:00.000Z"


def memory(*entries: dict[str, Any]) -> Folded:
    return fold([{"created": CREATED, **e} for e in entries])


def build(
    mem: Folded,
    state: dict[str, Any] | None = None,
    entries: tuple[BrainEntry, ...] = (),
    budget: int = 2000,
    cwd: Path = Path("/srv/code/p"),
    top: Path | None = None,
    explain: bool = True,
) -> Any:
    return build_context(
        memory=mem,
        state=state,
        entries=entries,
        cwd=cwd,
        top=top,
        project="p" if state is not None else None,
        now=NOW,
        budget_tokens=budget,
        explain=explain,
    )


def test_sections_come_in_the_documented_order() -> None:
    mem = memory(
        {"id": "i1", "type": "identity", "key": "name", "value": "rho"},
        {"id": "u1", "type": "user", "key": "editor", "value": "Neovim"},
        {"id": "b1", "type": "behavior", "category": "do", "text": "Be direct"},
        {"id": "p1", "type": "preference", "category": "Code", "text": "Early returns"},
        {
            "id": "c1",
            "type": "context",
            "project": "p",
            "path": "/srv/code/p",
            "content": "Monorepo",
        },
        {"id": "l1", "type": "learning", "text": "Uses pnpm"},
        {
            "id": "t1",
            "type": "task",
            "description": "Urgent fix",
            "status": "pending",
            "priority": "urgent",
        },
    )
    state = merge(
        empty_state("p", NOW), {"activeState": {"currentGoal": "Ship"}}, now=NOW, new_session=False
    )
    entries = (BrainEntry("loop_status", "Iteration 3/10", NOW),)
    text = build(mem, state, entries).text
    order = [
        text.index(f"## {NAMES[s]}")
        for s in (
            "identity",
            "user",
            "behavior",
            "preferences",
            "project",
            "context",
            "session",
            "due",
            "learnings",
        )
    ]
    assert order == sorted(order)
    assert text.startswith("# Memory for p (voyager-brain)")
    *_, footer, last, _ = text.split("\n")
    assert footer.endswith('`voyager-brain brain action=add type=learning text="..."` (memory).')
    assert last == 'Recall anything else from memory with `voyager-brain recall "words"`.'


def test_identity_and_user_are_sorted_by_key() -> None:
    mem = memory(
        {"id": "i2", "type": "identity", "key": "role", "value": "agent"},
        {"id": "i1", "type": "identity", "key": "name", "value": "rho"},
    )
    text = build(mem).text
    assert text.index("- name: rho") < text.index("- role: agent")


def _lines(kind: str, count: int, **fields: str) -> list[dict[str, Any]]:
    """`count` entries of one type, each a line of about 70 characters."""
    field = "text"
    return [
        {"id": f"{kind[0]}{n:03d}", "type": kind, field: f"{kind} {n:03d} " + "x" * 60, **fields}
        for n in range(count)
    ]


def _included(doc: Any, section: str) -> int:
    return sum(1 for c in doc.choices if c.included and c.item.section == section)


def test_the_seeds_sections_keep_its_weights() -> None:
    """Behavior 15, preferences 20, context 25, learnings 40 (3:4:5:8) in the seed; the
    new sections take a share of the whole beside them, learnings last."""
    assert sum(WEIGHTS.values()) == 100 and list(WEIGHTS)[-1] == "learnings"
    seeds = [WEIGHTS[s] for s in ("behavior", "preferences", "context", "learnings")]
    assert [w * 100 / sum(seeds) for w in seeds] == [15, 20, 25, 40]


def test_sections_that_are_too_long_get_their_weights_share() -> None:
    mem = memory(
        *_lines("behavior", 100, category="do"),
        *_lines("preference", 100, category="Code"),
        *_lines("learning", 100),
    )
    doc = build(mem, budget=4000)
    behavior, preferences = _included(doc, "behavior"), _included(doc, "preferences")
    assert 10 < behavior < preferences
    assert abs(preferences / behavior - WEIGHTS["preferences"] / WEIGHTS["behavior"]) < 0.15


def test_surplus_flows_to_learnings() -> None:
    """What a section leaves goes to learnings, not to the section after it."""
    learnings, preferences = _lines("learning", 200), _lines("preference", 60, category="C")
    without = build(memory(*learnings, *preferences), budget=1000)
    behaviors = _lines("behavior", 40, category="do")
    with_behaviors = build(memory(*learnings, *preferences, *behaviors), budget=1000)
    assert _included(with_behaviors, "behavior") > 0
    assert _included(without, "preferences") == _included(with_behaviors, "preferences") > 0
    assert _included(without, "learnings") > _included(with_behaviors, "learnings") > 0
    assert "(…" in without.text and "more omitted)" in without.text


def test_one_long_list_does_not_crowd_out_the_others() -> None:
    update = {
        "activeState": {"currentGoal": "Ship v1", "blockers": ["CI is red"]},
        "decisions": [
            {"what": f"Decision {n} " + "z" * 80, "when": "2026-02-01"} for n in range(100)
        ],
        "knownIssues": [{"issue": "Flaky login test", "severity": "low"}],
        "facts": {"stack": ["Python 3.11"]},
        "keyFiles": [{"path": "src/app.py", "role": "entry point"}],
    }
    state = merge(empty_state("p", NOW), update, now=NOW, new_session=False)
    text = build(memory(), state, budget=600).text
    assert "Goal: Ship v1" in text and "Blocker: CI is red" in text
    assert "Flaky login test" in text and "Python 3.11" in text and "src/app.py" in text
    assert 0 < text.count("Decision: Decision") < 100
    assert "more omitted)" in text


def test_decisions_newest_first_and_issues_by_severity() -> None:
    update = {
        "decisions": [{"what": "Old", "when": "2025-01-01"}, {"what": "New", "when": "2026-01-01"}],
        "knownIssues": [
            {"issue": "minor", "severity": "low"},
            {"issue": "fire", "severity": "critical"},
        ],
    }
    state = merge(empty_state("p", NOW), update, now=NOW, new_session=False)
    text = build(memory(), state).text
    assert text.index("Decision: New") < text.index("Decision: Old")
    assert text.index("[critical]: fire") < text.index("[low]: minor")


def test_stale_key_files_are_flagged(tmp_path: Path) -> None:
    (tmp_path / "here.py").write_text("")
    update = {"keyFiles": [{"path": "here.py"}, {"path": "gone.py", "role": "old"}]}
    state = merge(empty_state("p", NOW), update, now=NOW, new_session=False)
    text = build(memory(), state, top=tmp_path).text
    assert "Key file: here.py\n" in text
    assert "Key file: gone.py — old (missing from the working tree)" in text


def test_project_context_is_the_longest_matching_path() -> None:
    mem = memory(
        {"id": "c1", "type": "context", "project": "all", "path": "/srv/code", "content": "Outer"},
        {"id": "c2", "type": "context", "project": "p", "path": "/srv/code/p", "content": "Inner"},
        {
            "id": "c3",
            "type": "context",
            "project": "q",
            "path": "/srv/code/pq",
            "content": "Sibling",
        },
    )
    text = build(mem, cwd=Path("/srv/code/p/src")).text
    assert "Inner" in text and "Outer" not in text and "Sibling" not in text


def test_session_brain_shows_newest_loop_status_and_latest_summary() -> None:
    t = lambda m: datetime(2026, 3, 1, 10, m, tzinfo=UTC)  # noqa: E731
    entries = (
        BrainEntry("loop_status", "Iteration 1", t(0)),
        BrainEntry("reflection", "Summary of 3 earlier entries", t(1), source="compact"),
        BrainEntry("decision", "Chose JWT", t(2)),
        BrainEntry("loop_status", "Iteration 2", t(3)),
    )
    state = empty_state("p", NOW)
    text = build(memory(), state, entries).text
    assert "Loop status (2026-03-01T10:03:00Z): Iteration 2" in text
    assert "Iteration 1" not in text
    assert "Summary (2026-03-01T10:01:00Z): Summary of 3 earlier entries" in text
    assert "Decision (2026-03-01T10:02:00Z): Chose JWT" in text


# -- the budget, as a property ----------------------------------------------------------

_word = st.text(alphabet="abcdefgh ", min_size=1, max_size=60)


@st.composite
def stores(draw: st.DrawFn) -> tuple[Folded, dict[str, Any], tuple[BrainEntry, ...]]:
    entries: list[dict[str, Any]] = []
    for n, kind in enumerate(
        draw(
            st.lists(
                st.sampled_from(
                    ["identity", "user", "behavior", "preference", "learning", "context", "task"]
                ),
                max_size=40,
            )
        )
    ):
        text = f"{kind} {n} " + draw(_word)
        entry: dict[str, Any] = {"id": f"e{n}", "type": kind}
        match kind:
            case "identity" | "user":
                entry |= {"key": f"k{n}", "value": text}
            case "behavior":
                entry |= {"category": draw(st.sampled_from(["do", "dont", "value"])), "text": text}
            case "preference":
                entry |= {"category": "Code", "text": text}
            case "learning":
                entry |= {"text": text}
            case "context":
                entry |= {"project": "p", "path": "/srv/code/p", "content": text}
            case "task":
                entry |= {"description": text, "status": "pending", "priority": "urgent"}
        entries.append(entry)
    update = {
        "activeState": {
            "currentGoal": draw(_word),
            # Numbered, so that every candidate line is distinct text.
            "blockers": [f"b{n} {w}" for n, w in enumerate(draw(st.lists(_word, max_size=5)))],
        },
        "decisions": [
            {"what": f"d{n} {w}"} for n, w in enumerate(draw(st.lists(_word, max_size=8)))
        ],
        "nextSteps": [f"s{n} {w}" for n, w in enumerate(draw(st.lists(_word, max_size=5)))],
    }
    state = merge(empty_state("p", NOW), update, now=NOW, new_session=False)
    brain = tuple(
        BrainEntry(
            draw(st.sampled_from(["observation", "decision", "loop_status"])),
            f"entry {n} {w}",
            datetime(2026, 2, 1, tzinfo=UTC).replace(minute=n % 60),
        )
        for n, w in enumerate(draw(st.lists(_word, max_size=8)))
    )
    return memory(*entries), state, brain


@settings(max_examples=300)
@given(stores(), st.integers(min_value=50, max_value=3000))
def test_the_document_never_exceeds_its_budget_and_explain_agrees(
    data: tuple[Folded, dict[str, Any], tuple[BrainEntry, ...]], budget: int
) -> None:
    mem, state, entries = data
    doc = build(mem, state, entries, budget=budget)
    assert len(doc.text) <= budget * 4 and doc.tokens <= budget
    lines = doc.text.split("\n")
    for choice in doc.choices:
        assert (choice.item.text in lines) == choice.included, choice
    # Every line of an item kind in the text has its Choice.
    assert len(doc.included_refs) == sum(1 for c in doc.choices if c.included)
    # Without explain only the head of the long sections is looked at: the same text.
    quick = build(mem, state, entries, budget=budget, explain=False)
    assert quick.text == doc.text and quick.included_refs == doc.included_refs


# -- BrainManager and the CLI -----------------------------------------------------------


def test_context_combines_every_store(repo: Path) -> None:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="learning", text="This repo uses pnpm not npm")
    brain_tool("add", cwd=str(repo), type="user", key="editor", value="Neovim")
    bm = BrainManager(repo)
    bm.update(BrainEntry("decision", "Chose JWT over sessions"))
    bm.merge_state({"activeState": {"currentGoal": "Auth flow"}})
    bm.persist()
    text = BrainManager(repo).context()
    for expected in (
        "- editor: Neovim",
        "Goal: Auth flow",
        "Chose JWT over sessions",
        "- This repo uses pnpm not npm",
        "- Do: ",
    ):
        assert expected in text


def test_outside_a_voyager_repository_only_the_personal_log(tmp_path: Path, repo: Path) -> None:
    brain_tool("add", cwd=str(tmp_path), type="learning", text="Personal learning")
    text = BrainManager(tmp_path).context()
    assert text.startswith("# Memory (voyager-brain)")
    assert "Personal learning" in text and "## Project state" not in text


def test_in_a_repository_without_voyager_only_the_personal_log(repo: Path) -> None:
    brain_tool("add", cwd=str(repo), type="learning", text="Personal learning")
    out = run_cli("context", cwd=repo).stdout
    assert out.startswith("# Memory (voyager-brain)") and "Personal learning" in out
    assert "## Project state" not in out and "## Session brain" not in out
    assert not (repo / ".voyager").exists()


def test_prompt_budget_in_config_toml_sets_the_default_budget(repo: Path) -> None:
    run_cli("init", cwd=repo)
    for n in range(300):
        word = "".join(chr(ord("a") + int(d)) for d in str(n))  # no near-duplicates
        brain_tool("add", cwd=str(repo), type="learning", text=f"Learning {word} " + "x" * 50)
    config = repo / ".voyager" / "config.toml"
    default = run_cli("context", cwd=repo).stdout
    assert 7000 < len(default) <= 2000 * 4  # the seed's 2000 tokens, nearly all used
    config.write_text(config.read_text() + "\nprompt_budget = 100\n")
    small = run_cli("context", cwd=repo).stdout
    assert 300 < len(small) <= 100 * 4
    assert run_cli("context", "--budget", "150", cwd=repo).stdout != small


def test_cli_context_explain_and_json(repo: Path) -> None:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="learning", text="Deploys need a green CI")
    out = run_cli("context", cwd=repo)
    assert out.returncode == 0 and "Deploys need a green CI" in out.stdout
    explained = run_cli("context", "--budget", "60", "--explain", cwd=repo).stdout
    assert explained.rstrip().splitlines()[-1].startswith("total: ~")
    assert "(over the section's share of the budget)" in explained
    data = json.loads(run_cli("context", "--budget", "300", "--json", cwd=repo).stdout)
    assert data["tokens"] <= 300 and data["budget_tokens"] == 300
    assert all(c["text"] in data["text"].split("\n") for c in data["choices"] if c["included"])


def test_decisions_of_the_same_date_show_the_later_recorded_first() -> None:
    update = {
        "decisions": [
            {"what": "First", "when": "2026-01-01"},
            {"what": "Second", "when": "2026-01-01"},
        ]
    }
    state = merge(empty_state("p", NOW), update, now=NOW, new_session=False)
    text = build(memory(), state).text
    assert text.index("Decision: Second") < text.index("Decision: First")


def test_without_explain_only_the_head_of_a_long_log_is_looked_at() -> None:
    learnings = [
        {
            "id": f"l{n}",
            "type": "learning",
            "text": f"lesson {n}",
            "created": f"2026-01-{n % 28 + 1:02d}",
        }
        for n in range(5000)
    ]
    brain = tuple(
        BrainEntry(
            "observation", f"seen {n}", datetime(2026, 2, 1, tzinfo=UTC) + timedelta(minutes=n)
        )
        for n in range(300)
    )
    full = build(memory(*learnings), None, brain, budget=400)
    quick = build(memory(*learnings), None, brain, budget=400, explain=False)
    assert quick.text == full.text and quick.included_refs == full.included_refs
    assert len(full.choices) == 5300
    assert len(quick.choices) < 1000
    assert "more omitted)" in quick.text


def test_a_project_can_override_any_context_line(repo: Path) -> None:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="learning", text="CI must use Node 22")
    overrides = repo / ".voyager" / "templates" / "context"
    overrides.mkdir(parents=True)
    (overrides / "learning.md.j2").write_text("* {{ text | upper }}\n")
    (overrides / "title.md.j2").write_text("### {{ name }}\n")
    doc = BrainManager(repo).context_document()
    lines = doc.text.split("\n")
    assert "* CI MUST USE NODE 22" in lines and "### Learnings" in lines
    assert [c.item.text for c in doc.choices if c.included and c.item.section == "learnings"] == [
        "* CI MUST USE NODE 22"
    ]
    assert BrainManager(repo).context() == doc.text  # the quick path renders the same

    (overrides / "learning.md.j2").write_text("{{ text | nosuchfilter }}\n")
    result = run_cli("context", cwd=repo)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "learning.md.j2" in result.stderr


_session_entries = st.lists(
    st.builds(
        BrainEntry,
        type=st.sampled_from(["observation", "decision", "loop_status", "reflection"]),
        content=st.sampled_from(["Chose JWT", "a\n```\ncode", "", "Iteration 2", "x --> y"]),
        timestamp=st.sampled_from([datetime(2026, 3, 1, 10, m, tzinfo=UTC) for m in (0, 1, 2)]),
        source=st.sampled_from([None, "compact", "agent"]),
    ),
    max_size=12,
)


# One repository for every example: each writes brain.md whole before reading it.
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_session_entries, st.integers(min_value=60, max_value=600))
def test_a_session_start_reads_brain_md_lazily_to_the_same_document(
    repo: Path, isolated_env: Path, entries: list[BrainEntry], budget: int
) -> None:
    """Not loaded, the context decodes only the sections it shows; the document is the
    one a loaded manager builds."""
    from voyager_brain.render import Templates
    from voyager_brain.session.brainfile import BrainDocument, render

    (repo / ".voyager").mkdir(exist_ok=True)
    doc = BrainDocument(project="p", entries=tuple(dict.fromkeys(entries)))
    (repo / ".voyager" / "brain.md").write_text(render(doc, Templates()))
    lazy = BrainManager(repo, clock=lambda: NOW).context(budget)
    loaded = BrainManager(repo, clock=lambda: NOW)
    loaded.load()
    assert lazy == loaded.context(budget)


def test_in_the_same_second_a_decision_comes_first() -> None:
    at = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    entries = (BrainEntry("observation", "Saw the flake", at), BrainEntry("decision", "Pin it", at))
    text = build(memory(), empty_state("p", NOW), entries).text
    assert text.index("Pin it") < text.index("Saw the flake")


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(st.sampled_from(["decision", "observation", "reflection"]), st.integers(0, 4)),
        max_size=30,
    ),
    st.sampled_from([1, 2, 5, 40]),
)
def test_session_entries_come_newest_first_a_decision_first_then_file_order(
    drawn: list[tuple[str, int]], limit: int
) -> None:
    """Whether the block takes a few entries (the budget's limit) or all of them
    (--explain), the order is: newer first, at the same second a decision first, then
    the one earlier in the file."""
    from voyager_brain.context.candidates import Lines, session
    from voyager_brain.render import Templates

    t = lambda s: datetime(2026, 3, 1, 10, 0, s, tzinfo=UTC)  # noqa: E731
    entries = [BrainEntry(kind, f"entry {n}", t(s)) for n, (kind, s) in enumerate(drawn)]
    expected = sorted(
        range(len(entries)),
        key=lambda n: (-drawn[n][1], drawn[n][0] != "decision", n),
    )
    line = Lines(Templates())
    offer = session(entries, line)
    assert offer.total == len(entries) and offer.must == []
    for cap in (limit, None):
        shown = [int(item.text.rsplit("entry ", 1)[1]) for item in offer.items(cap)]
        assert shown == expected[: len(shown)]
        assert len(shown) >= min(cap or len(entries), len(entries))

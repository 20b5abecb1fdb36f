"""compact(): the rules of seed 002's session_compact, on real files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.session.brainfile import parse
from voyager_brain.session.compaction import SUMMARY_SOURCE, compact_entries, near_duplicate_key
from voyager_brain.session.summarizer import ExtractiveSummarizer

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def word(n: int) -> str:
    """A different word for each n (digits alone would make near-duplicates)."""
    return chr(65 + n // 26) + chr(65 + n % 26)


def manager(repo: Path, budget: int = 4000) -> BrainManager:
    return BrainManager(
        repo,
        config={"compact_budget_tokens": budget, "auto_compact": False},
        clock=lambda: datetime(2026, 3, 22, 9, 0, tzinfo=UTC),
    )


def write(repo: Path, entries: list[BrainEntry], budget: int = 4000) -> BrainManager:
    bm = manager(repo, budget)
    for entry in entries:
        bm.update(entry)
    bm.persist()
    return bm


def on_disk(repo: Path) -> tuple[BrainEntry, ...]:
    path = repo / ".voyager" / "brain.md"
    return parse(path.read_bytes(), path).entries


def test_only_the_newest_loop_status_is_kept(repo: Path) -> None:
    write(repo, [BrainEntry("loop_status", f"Iteration: {n}/10", at(n)) for n in range(5)])
    report = manager(repo).compact()
    assert [e.content for e in on_disk(repo)] == ["Iteration: 4/10"]
    assert (report.superseded, report.removed, report.entries_after) == (4, 4, 1)


def test_exact_and_near_duplicate_observations_keep_the_newest(repo: Path) -> None:
    write(
        repo,
        [
            BrainEntry("observation", "Tests passing, 3 iterations", at(0)),
            BrainEntry("observation", "Unrelated", at(1)),
            BrainEntry("observation", "tests  passing, 4 ITERATIONS", at(2)),
            BrainEntry("observation", "Unrelated", at(3)),
        ],
    )
    report = manager(repo).compact()
    assert [e.content for e in on_disk(repo)] == ["tests  passing, 4 ITERATIONS", "Unrelated"]
    assert report.merged == 2


def test_near_duplicate_ignores_case_whitespace_and_digits() -> None:
    assert near_duplicate_key("Port 3000\n  open") == near_duplicate_key("port 8080 open")
    assert near_duplicate_key("port open") != near_duplicate_key("port closed")


def test_decisions_are_kept_verbatim_even_when_duplicated(repo: Path) -> None:
    decisions = [BrainEntry("decision", "Use JWT", at(0)), BrainEntry("decision", "Use JWT", at(1))]
    write(repo, decisions)
    manager(repo).compact()
    assert on_disk(repo) == tuple(decisions)


def test_oldest_observations_are_summarized_until_it_fits(repo: Path) -> None:
    entries = [
        BrainEntry("observation", f"Step {word(n)}: worked on module_{word(n)}.py " * 3, at(n))
        for n in range(60)
    ]
    entries.insert(10, BrainEntry("decision", "Chose JWT over sessions", at(10)))
    write(repo, entries, budget=600)
    report = manager(repo, budget=600).compact()
    kept = on_disk(repo)
    text = (repo / ".voyager" / "brain.md").read_text()
    assert report.fits and len(text) <= 600 * 4
    assert report.tokens_after == -(-len(text) // 4)
    summaries = [e for e in kept if e.source == SUMMARY_SOURCE]
    assert len(summaries) == 1 and summaries[0].type == "reflection"
    assert BrainEntry("decision", "Chose JWT over sessions", at(10)) in kept
    # The newest observations survive verbatim; the summary covers the oldest.
    assert kept[-1] == entries[-1]
    assert summaries[0].content.startswith(f"Summary of {report.summarized} earlier entries")
    assert report.summarized + report.kept + 1 == report.entries_after + report.summarized
    assert "last_compaction: '2026-03-22T09:00:00Z'" in text


def test_summary_stands_where_the_entries_it_replaces_stood(repo: Path) -> None:
    entries = [BrainEntry("observation", f"note {word(n)} " + "y" * 200, at(n)) for n in range(30)]
    write(repo, entries, budget=700)
    manager(repo, budget=700).compact()
    kept = on_disk(repo)
    stamps = [e.timestamp for e in kept if e.timestamp]
    assert stamps == sorted(stamps)
    assert kept[0].source == SUMMARY_SOURCE


def test_compacting_twice_gives_the_same_entries_as_once(repo: Path) -> None:
    entries = [
        BrainEntry("observation", f"Observation {word(n)}: " + "z" * (n * 7), at(n))
        for n in range(50)
    ]
    entries += [BrainEntry("loop_status", f"Iteration {n}", at(60 + n)) for n in range(5)]
    write(repo, entries, budget=500)
    manager(repo, budget=500).compact()
    once = on_disk(repo)
    second = manager(repo, budget=500).compact()
    assert on_disk(repo) == once
    assert not second.changed


def test_decisions_over_budget_stop_compaction_and_are_all_kept(repo: Path) -> None:
    decisions = [BrainEntry("decision", f"Decision {n}: " + "d" * 300, at(n)) for n in range(20)]
    observations = [BrainEntry("observation", f"obs {word(n)}", at(100 + n)) for n in range(5)]
    write(repo, decisions + observations, budget=300)
    report = manager(repo, budget=300).compact()
    kept = on_disk(repo)
    assert [e for e in kept if e.type == "decision"] == decisions
    assert not report.fits
    assert report.summarized == 5
    again = manager(repo, budget=300).compact()
    assert on_disk(repo) == kept and not again.changed


def test_nothing_to_do_changes_nothing(repo: Path) -> None:
    write(repo, [BrainEntry("observation", "a", at(0)), BrainEntry("decision", "b", at(1))])
    before = (repo / ".voyager" / "brain.md").read_bytes()
    report = manager(repo).compact()
    assert not report.changed
    assert (repo / ".voyager" / "brain.md").read_bytes() == before
    assert manager(repo).get_status().last_compaction is None


def test_report_to_dict_is_json_ready(repo: Path) -> None:
    import json

    write(repo, [BrainEntry("loop_status", str(n), at(n)) for n in range(3)])
    data = manager(repo).compact().to_dict()
    assert json.loads(json.dumps(data))["superseded"] == 2
    assert data["fits"] is True


# -- the pure function, with hypothesis -----------------------------------------------------

_entries = st.lists(
    st.builds(
        BrainEntry,
        type=st.sampled_from(
            ["observation", "observation", "decision", "loop_status", "reflection"]
        ),
        content=st.text(alphabet="abc 12\n", max_size=80),
        timestamp=st.integers(0, 500).map(at),
    ),
    max_size=40,
)


def _compact(
    entries: list[BrainEntry] | tuple[BrainEntry, ...], budget: int
) -> tuple[BrainEntry, ...]:
    return compact_entries(
        entries,
        budget_chars=budget,
        fixed_chars=40,
        section_chars=lambda e: len(e.content) + 45,
        summarizer=ExtractiveSummarizer(),
    ).entries


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(_entries, st.integers(200, 3000))
def test_compaction_is_idempotent_and_keeps_every_decision(
    entries: list[BrainEntry], budget: int
) -> None:
    once = _compact(entries, budget)
    assert _compact(once, budget) == once
    assert [e for e in once if e.type == "decision"] == [e for e in entries if e.type == "decision"]
    assert sum(1 for e in once if e.type == "loop_status") == min(
        1, sum(1 for e in entries if e.type == "loop_status")
    )

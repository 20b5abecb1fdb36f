"""The offline extractive summarizer: deterministic, prose over code, within its limit."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import BrainEntry
from voyager_brain.session.summarizer import ExtractiveSummarizer, get_summarizer

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)


def entry(text: str, minutes: int = 0, source: str | None = None) -> BrainEntry:
    return BrainEntry("observation", text, T0 + timedelta(minutes=minutes), source)


def test_one_key_line_per_entry_with_its_outcome() -> None:
    text = ExtractiveSummarizer().summarize(
        [
            entry("Task: Implement auth flow\nDecision: JWT\nOutcome: Tests passing", 0),
            entry("```python\nprint('code is not a key line')\n```\nRefactored the router", 5),
        ],
        1000,
    )
    assert text == (
        "Summary of 2 earlier entries from 2026-03-21T14:30:00Z to 2026-03-21T14:35:00Z:\n"
        "- Task: Implement auth flow — Decision: JWT\n"
        "- Refactored the router"
    )


def test_duplicate_points_appear_once() -> None:
    text = ExtractiveSummarizer().summarize(
        [entry("Build green", 0), entry("build  GREEN", 1)], 500
    )
    assert text.count("- ") == 1


def test_keeps_the_newest_points_and_counts_the_rest() -> None:
    entries = [entry(f"Point number {chr(65 + n)}", n) for n in range(20)]
    text = ExtractiveSummarizer().summarize(entries, 200)
    assert len(text) <= 200
    assert text.splitlines()[-1] == "- Point number T"
    listed = [line for line in text.splitlines() if line.startswith("- Point number")]
    assert text.splitlines()[1] == f"- (…{20 - len(listed)} earlier entries not listed)"
    assert listed == [f"- Point number {chr(65 + n)}" for n in range(20 - len(listed), 20)]


def test_earlier_summaries_contribute_their_points() -> None:
    s = ExtractiveSummarizer()
    first = s.summarize([entry("Alpha done", 0), entry("Beta done", 1)], 500)
    second = s.summarize([entry(first, 2, source="compact"), entry("Gamma done", 3)], 500)
    assert second.splitlines()[1:] == ["- Alpha done", "- Beta done", "- Gamma done"]


def test_a_summary_of_summaries_drops_their_counters() -> None:
    s = ExtractiveSummarizer()
    first = s.summarize([entry(f"Point {chr(65 + n)}", n) for n in range(30)], 120)
    assert "earlier entries not listed" in first
    second = s.summarize([entry(first, 40, source="compact")], 500)
    assert "not listed" not in second


def test_get_summarizer_by_name() -> None:
    assert get_summarizer("extractive").name == "extractive"


@settings(max_examples=100)
@given(
    st.lists(st.text(st.characters(blacklist_characters="\0"), max_size=300), max_size=15),
    st.integers(60, 2000),
)
def test_never_longer_than_asked_and_deterministic(texts: list[str], limit: int) -> None:
    entries = [entry(t, n) for n, t in enumerate(texts)]
    a = ExtractiveSummarizer().summarize(entries, limit)
    assert len(a) <= limit
    assert a == ExtractiveSummarizer().summarize(entries, limit)


def _provider(code: str) -> Any:
    from voyager_brain.providers import CommandProvider

    return CommandProvider(f'{sys.executable} -c "{code}"', timeout=30)


def test_model_summarizer_uses_the_command_and_keeps_bullets() -> None:
    from voyager_brain.session.summarizer import ModelSummarizer

    answer = (
        "import sys; sys.stdin.read(); print('Auth works now'); "
        "print('## Decision — 2026-01-01T00:00:00Z')"
    )
    text = ModelSummarizer(_provider(answer)).summarize([entry("a", 0), entry("b", 5)], 500)
    assert text.splitlines() == [
        "Summary of 2 earlier entries from 2026-03-21T14:30:00Z to 2026-03-21T14:35:00Z:",
        "- Auth works now",
        "- ## Decision — 2026-01-01T00:00:00Z",
    ]


def test_model_summarizer_falls_back_to_the_extractive_summary() -> None:
    from voyager_brain.session.summarizer import ModelSummarizer

    warnings: list[str] = []
    failing = ModelSummarizer(_provider("import sys; sys.exit(1)"), warn=warnings.append)
    entries = [entry("Refactored the router", 0)]
    assert failing.summarize(entries, 500) == ExtractiveSummarizer().summarize(entries, 500)
    assert "using the extractive summary" in warnings[0]
    verbose = ModelSummarizer(_provider("print('x' * 5000)"))
    assert verbose.summarize(entries, 500) == ExtractiveSummarizer().summarize(entries, 500)


def test_compaction_with_summarizer_model_from_config(repo: Path) -> None:
    from voyager_brain import BrainManager

    code = "import sys; sys.stdin.read(); print('The old observations, in one line')"
    config = {
        "compact_budget_tokens": 200,
        "summarizer": "model",
        "model_command": f'{sys.executable} -c "{code}"',
        "auto_compact": False,
    }
    bm = BrainManager(repo, config=config)
    for n in range(30):
        bm.update(
            BrainEntry("observation", f"note {chr(65 + n)} " + "y" * 80, T0 + timedelta(minutes=n))
        )
    bm.persist()
    report = bm.compact()
    assert report.summary is not None
    assert report.summary.content.endswith("- The old observations, in one line")

"""The public continuity benchmark (issue 17): does the session-start context hold what
the next session must know, at what cost, and does recall find the one item asked for?

Continuity: five scenarios, each a function that fills a fresh git repository (brain.md,
brain.json, the project memory log, and its own personal log in a temporary
``VOYAGER_HOME``) from a seeded `random.Random` at a fixed clock, and declares its
must-know items: a label and a distinctive substring the context text must hold. What
must be known, per the issue: the current goal, open blockers, work in progress and next
steps; every known issue of severity critical or high; the newest loop status and the
latest compaction summary; the user's don't / never / always behaviors and brain.json's
preferences; due reminders and urgent tasks; the newest three decisions. Each scenario's
`BrainManager(top).context(budget)` at 1,000 / 2,000 / 4,000 tokens is searched for every
substring; its tokens are shown beside those of injecting every brain file whole
(brain.md, brain.json and both memory logs, characters / 4).

Recall: a project log of 10,000 learnings of generated text, among them one planted item
per question whose distinctive (made-up) words the question uses beside common ones:
recall@5 of `BrainManager.recall`, its warm query time in process, and the first query
after a learning was appended.
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
import statistics
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.content import (
    _stamp,
    fixed_clock,
    make_repo,
    settle,
)
from benchmarks.environment import environment
from benchmarks.plan import SEED, T0, Plan, Results, Row
from benchmarks.scenarios import (
    CONDITIONS,
    FIXES,
    PROBLEMS,
    SCENARIOS,
    MustKnow,
    Scenario,
    Words,
    add_memory,
    append_learnings,
    filler_learnings,
    learning_line,
)
from benchmarks.timing import timed
from voyager_brain import BrainManager
from voyager_brain.session.manager import ensure_layout

BUDGETS = (1_000, 2_000, 4_000)
TARGET_BUDGET = 2_000  # every must-know item is in the context at this budget ...
WHOLE_TARGET_RATIO = 0.05  # ... at no more than this fraction of the whole files (large)
RECALL_AT = 5
RECALL_WARM_TARGET_MS = 100.0
RECALL_CHANGED_TARGET_MS = 1000.0
CHARS_PER_TOKEN = 4
# -- measuring ------------------------------------------------------------------------


def personal_folder(path: Path) -> contextlib.AbstractContextManager[None]:
    """`VOYAGER_HOME` at `path` for the block: each scenario has its own personal log."""
    return environment(VOYAGER_HOME=str(path))


def whole_tokens(top: Path, home: Path) -> int:
    """Tokens of injecting every brain file whole: brain.md, brain.json and both memory
    logs, characters / 4 (rounded up, per file)."""
    files = [top / ".voyager" / name for name in ("brain.md", "brain.json", "memory.jsonl")]
    files.append(home / "memory.jsonl")
    return sum(
        math.ceil(len(path.read_text(encoding="utf-8")) / CHARS_PER_TOKEN)
        for path in files
        if path.exists()
    )


def _brain_text(top: Path, home: Path) -> str:
    files = [top / ".voyager" / name for name in ("brain.md", "brain.json", "memory.jsonl")]
    files.append(home / "memory.jsonl")
    return "\n".join(p.read_text(encoding="utf-8") for p in files if p.exists())


def bench_continuity(results: Results, plan: Plan, parent: Path) -> None:
    """Must-know recall and tokens of the session-start context, per scenario and budget;
    then recall@5 and the speed of `BrainManager.recall`."""
    for n, scenario in enumerate(SCENARIOS):
        print(f"building the continuity scenario {scenario.name} ...", flush=True)
        top = make_repo(parent, f"continuity-{n + 1}")
        home = parent / f"continuity-{n + 1}-home"
        with personal_folder(home):
            ensure_layout(top / ".voyager")
            rng = random.Random(SEED + 17 * (n + 1))
            must = scenario.build(top, rng, plan.continuity_scale)
            files = _brain_text(top, home)
            absent = [label for label, needle in must if needle not in files]
            if absent:
                raise RuntimeError(f"{scenario.name}: declared but never written: {absent}")
            whole = whole_tokens(top, home)
            for budget in BUDGETS:
                document = BrainManager(top, clock=fixed_clock).context_document(
                    budget, explain=False
                )
                missed = [label for label, needle in must if needle not in document.text]
                _add_rows(results, scenario, budget, must, missed, document.tokens, whole)
    bench_recall(results, plan, parent)


def _add_rows(
    results: Results,
    scenario: Scenario,
    budget: int,
    must: list[MustKnow],
    missed: list[str],
    tokens: int,
    whole: int,
) -> None:
    found = len(must) - len(missed)
    percent = 100.0 * found / len(must)
    size = f"{budget:,}-token budget"
    what = f"{scenario.name}: must-know recall, % ({found}/{len(must)})"
    if missed:
        shown = ", ".join(missed[:4]) + (f" and {len(missed) - 4} more" if len(missed) > 4 else "")
        what += f"; missing: {shown}"
        print(f"  continuity  {scenario.name} at {budget:,} tokens: missing {missed}", flush=True)
    at_target = budget == TARGET_BUDGET
    results.add(
        "continuity",
        Row(
            what,
            size,
            1,
            percent,
            None,
            "100%" if at_target else "-",
            found == len(must) if at_target else None,
            unit="%",
        ),
    )
    checked = at_target and scenario.large
    results.add(
        "continuity",
        Row(
            f"{scenario.name}: tokens used (floor: every brain file whole)",
            size,
            1,
            float(tokens),
            float(whole),
            f"<= {WHOLE_TARGET_RATIO:g}x floor" if checked else "-",
            tokens / whole <= WHOLE_TARGET_RATIO if checked else None,
            unit="tokens",
        ),
    )


# -- recall ---------------------------------------------------------------------------

QUESTIONS = (
    "why does the {a} {common} fail",
    "how do I fix {a} and {b} in the tests",
    "what did we learn about {b}",
    "the {a} problem with {common} again",
    "{a} {b} workaround",
)
COMMON = ("cache", "retry", "tests", "deploy", "worker", "export", "session", "timeout")


def _planted(word: Words, rng: random.Random) -> tuple[str, str]:
    """A learning with two made-up words, and a question that uses some of them."""
    a, b = word(), word()
    common = rng.choice(COMMON)
    text = (
        f"The {a} {common} {rng.choice(PROBLEMS)} {rng.choice(CONDITIONS)}; "
        f"{rng.choice(FIXES)} and check {b} first"
    )
    question = rng.choice(QUESTIONS).format(a=a, b=b, common=rng.choice(COMMON))
    return text, question


def _extend(hits: list[Any], bm: BrainManager, query: str) -> None:
    hits.extend(bm.recall(query, 1))


def bench_recall(results: Results, plan: Plan, parent: Path) -> None:
    """recall@5 over planted items in a 10,000-learning log, warm query time, and the
    first query after a learning was appended."""
    size, asked = plan.recall_items, plan.recall_questions
    print(f"building a recall project of {size:,} learnings ...", flush=True)
    top = make_repo(parent, "recall")
    home = parent / "recall-home"
    rng = random.Random(SEED + 170)
    word = Words(random.Random(SEED + 171))
    with personal_folder(home):
        ensure_layout(top / ".voyager")
        lines = filler_learnings(size - asked, rng)
        questions: list[tuple[str, str]] = []  # (question, the planted item's id)
        for n in range(asked):
            text, question = _planted(word, rng)
            stamp = _stamp(T0 - timedelta(days=rng.randint(1, 300)))
            planted = learning_line(text, stamp, size + n, rng)
            lines.insert(rng.randrange(len(lines) + 1), planted)
            questions.append((question, planted["id"]))
        append_learnings(top, lines)
        settle(top)  # the log was written a while before the session asks
        bm = BrainManager(top, clock=fixed_clock)
        label = f"{size:,} learnings, {asked} questions"

        first = timed(lambda: bm.recall(questions[0][0], RECALL_AT))
        found = sum(
            any(hit.key == wanted for hit in bm.recall(question, RECALL_AT))
            for question, wanted in questions
        )
        results.add(
            "recall",
            Row(
                f"recall@{RECALL_AT}, % of questions ({found}/{asked})",
                label,
                1,
                100.0 * found / asked,
                unit="%",
            ),
        )
        results.add("recall", Row("recall(), first query (index built)", label, 1, first))

        warm = [
            timed(functools.partial(bm.recall, question, RECALL_AT))
            for _ in range(plan.recall_runs)
            for question, _ in questions
        ]
        results.add(
            "recall",
            Row(
                "recall(), warm query (nothing changed), in process",
                label,
                len(warm),
                statistics.median(warm),
                None,
                f"< {RECALL_WARM_TARGET_MS:g} ms",
                statistics.median(warm) < RECALL_WARM_TARGET_MS,
            ),
        )

        changed = []
        for n in range(plan.recall_runs):
            new = word()
            add_memory(top, type="learning", text=f"The {new} exporter needs a fresh token ({n})")
            hits: list[Any] = []
            changed.append(timed(functools.partial(_extend, hits, bm, new)))
            if not hits or new not in hits[0].excerpt:
                raise RuntimeError(f"recall after an append: the new learning {new!r} not found")
        results.add(
            "recall",
            Row(
                "recall(), first query after appending a learning",
                label,
                len(changed),
                statistics.median(changed),
                None,
                f"< {RECALL_CHANGED_TARGET_MS:g} ms",
                statistics.median(changed) < RECALL_CHANGED_TARGET_MS,
            ),
        )

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
import os
import random
import statistics
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.content import (
    FILES,
    LIBS,
    TOPICS,
    VERBS,
    _body,
    _stamp,
    fixed_clock,
    make_repo,
    settle,
)
from benchmarks.plan import CONFIG, SEED, T0, Plan, Results, Row
from benchmarks.timing import timed
from voyager_brain import BrainEntry, BrainManager
from voyager_brain.memory import log as memory_log
from voyager_brain.memory.tool import brain_tool
from voyager_brain.session.manager import ensure_layout

BUDGETS = (1_000, 2_000, 4_000)
TARGET_BUDGET = 2_000  # every must-know item is in the context at this budget ...
WHOLE_TARGET_RATIO = 0.05  # ... at no more than this fraction of the whole files (large)
RECALL_AT = 5
RECALL_WARM_TARGET_MS = 100.0
RECALL_CHANGED_TARGET_MS = 1000.0
CHARS_PER_TOKEN = 4
NOW = fixed_clock()

MustKnow = tuple[str, str]  # a label, and a substring the context text must hold


class Scenario(NamedTuple):
    name: str
    build: Callable[[Path, random.Random, float], list[MustKnow]]
    large: bool = False  # the whole-files target applies


# -- made-up words: distinctive, in no generated filler --------------------------------

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "qu")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "n", "r", "l", "x", "th", "sk")


class Words:
    """Made-up words from a seeded generator, never the same twice."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def __call__(self) -> str:
        while True:
            word = "".join(
                self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) for _ in range(3)
            ) + self.rng.choice(_CODAS)
            if word not in self.used:
                self.used.add(word)
                return word

    def name(self) -> str:
        return self().capitalize()


# -- writing the stores ---------------------------------------------------------------


def _manager(top: Path) -> BrainManager:
    bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
    bm.load()
    return bm


def _learning(text: str, created: str, n: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": f"{rng.getrandbits(32):08x}{n:x}",
        "type": "learning",
        "text": text,
        "source": rng.choice(("manual", "manual", "auto")),
        "scope": "project",
        "projectPath": ".",
        "created": created,
    }


def _append_learnings(top: Path, lines: list[dict[str, Any]]) -> None:
    """Append learnings to the project log in one write (validated by the library)."""
    memory_log.append(top / ".voyager" / "memory.jsonl", lines)


SUBJECTS = (
    "the retry loop",
    "token refresh",
    "the schema migration",
    "the flaky CI job",
    "the cache layer",
    "rate limiting",
    "the i18n loader",
    "pagination",
    "the config loader",
    "the websocket reconnect",
    "error reporting",
    "the release script",
    "the upload worker",
    "the search index",
    "the billing export",
    "the audit log",
    "the feature flags",
    "the CSV importer",
    "the session store",
    "the health check",
)
PROBLEMS = (
    "fails",
    "times out",
    "leaks a connection",
    "double-counts rows",
    "drops the last page",
    "hangs",
    "logs the wrong user",
    "retries forever",
    "breaks on Unicode names",
    "skips the first item",
    "uses too much memory",
    "returns stale data",
)
CONDITIONS = (
    "under CI",
    "on macOS",
    "when the queue is empty",
    "after a deploy",
    "with a cold cache",
    "in the tests",
    "on the first request",
    "when two workers race",
    "with a slow database",
    "after midnight UTC",
    "behind the proxy",
    "on large files",
)
FIXES = (
    "pin the version",
    "add a timeout",
    "normalize to NFC first",
    "flush Redis between tests",
    "take the lock first",
    "convert to UTC first",
    "raise the pool size",
    "read the settings lazily",
    "retry once with backoff",
    "run it with -p no:randomly",
    "close the session in a finally",
    "sort before paging",
)


def _filler_learning(rng: random.Random) -> str:
    """A varied learning: a subject, a problem, a condition, a fix, sometimes a file."""
    text = f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(PROBLEMS)} {rng.choice(CONDITIONS)}"
    if rng.random() < 0.5:
        text += f" in `{rng.choice(FILES)}`"
    return f"{text}; {rng.choice(FIXES)} (seen {rng.randint(2, 40)} times)"


def _filler_learnings(count: int, rng: random.Random, start: int = 0) -> list[dict[str, Any]]:
    return [
        _learning(
            _filler_learning(rng),
            _stamp(T0 - timedelta(days=300) + timedelta(minutes=53 * (start + n))),
            start + n,
            rng,
        )
        for n in range(count)
    ]


def _decisions(count: int, rng: random.Random, newest: list[str]) -> list[dict[str, Any]]:
    """`count` decisions a day apart, oldest first, ending with `newest` (the newest)."""
    first = (NOW - timedelta(days=count + 1)).date()
    out = []
    for n in range(count):
        k = n - (count - len(newest))
        what = newest[k] if k >= 0 else f"Use {rng.choice(LIBS)} for {rng.choice(TOPICS)} ({n})"
        out.append(
            {
                "what": what,
                "why": f"fewer moving parts; keeps `{rng.choice(FILES)}` testable offline",
                "when": (first + timedelta(days=n)).isoformat(),
                "reversible": rng.random() < 0.5,
            }
        )
    return out


def _issues(count: int, severe: list[tuple[str, str]], rng: random.Random) -> list[dict[str, Any]]:
    """`count` known issues: `severe` ((severity, issue)) among medium and low ones, at
    random places."""
    issues = [
        {
            "issue": f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(PROBLEMS)} "
            f"{rng.choice(CONDITIONS)} ({n})",
            "workaround": rng.choice(FIXES),
            "severity": rng.choice(("medium", "low")),
        }
        for n in range(count - len(severe))
    ]
    for severity, text in severe:
        issue = {"issue": text, "workaround": rng.choice(FIXES), "severity": severity}
        issues.insert(rng.randrange(len(issues) + 1), issue)
    return issues


def _key_files(count: int) -> list[dict[str, str]]:
    roles = ("entry point", "tests", "config", "hot path", "schema", "fixtures")
    return [
        {"path": f"{file.rsplit('.', 1)[0]}_{n}.{file.rsplit('.', 1)[-1]}", "role": roles[n % 6]}
        for n, file in enumerate(FILES * (count // len(FILES) + 1))
    ][:count]


def _add(top: Path, **params: Any) -> None:
    brain_tool("add", cwd=str(top), clock=fixed_clock, **params)


def _scaled(count: int, scale: float, least: int = 1) -> int:
    return max(least, round(count * scale))


# -- the scenarios --------------------------------------------------------------------


def small_and_fresh(top: Path, rng: random.Random, scale: float) -> list[MustKnow]:
    """A project a day old: a goal, 2 decisions, 1 high issue, 5 learnings."""
    word = Words(rng)
    goal = f"Ship the {word.name()} onboarding wizard"
    decisions = [f"Store drafts in {word.name()}DB", f"Render the wizard with {word.name()}"]
    issue = f"The {word.name()} webhook double-posts on retry"
    bm = _manager(top)
    bm.merge_state(
        {
            "activeState": {"currentGoal": goal},
            "decisions": _decisions(2, rng, decisions),
            "knownIssues": [{"issue": issue, "workaround": "dedupe by id", "severity": "high"}],
        }
    )
    bm.persist()
    _append_learnings(top, _filler_learnings(5, rng))
    return [
        ("current goal", goal),
        *((f"decision {n + 1} of the newest", d) for n, d in enumerate(decisions)),
        ("known issue (high)", issue),
    ]


def large_and_old(top: Path, rng: random.Random, scale: float) -> list[MustKnow]:
    """A year of work: 60 decisions, 40 known issues (3 high or critical), 50 key files,
    300 observations in brain.md, 2,000 learnings, behaviors, a due reminder, tasks."""
    word = Words(rng)
    goal = f"Move billing onto the {word.name()} ledger before the audit"
    blocker = f"Waiting for the {word.name()} sandbox credentials"
    in_progress = [f"Port the {word()} invoice job", f"Backfill {word()} tax codes"]
    next_steps = [
        f"Write the {word()} reconciliation test",
        f"Ask finance about {word()} refunds",
        f"Switch the {word()} cron to the ledger",
    ]
    newest = [f"Keep {word.name()} as the ledger client" for _ in range(3)]
    severe = [
        ("critical", f"The {word.name()} export loses cents on refunds"),
        ("high", f"The {word.name()} job runs twice after a deploy"),
        ("high", f"The {word.name()} cache serves another tenant's totals"),
    ]
    style = f"Small commits, {word()} style imports"
    constraint = f"No new dependencies without a {word()} review"
    bm = _manager(top)
    entries = [
        BrainEntry(
            "observation",
            _body("observation", rng, n),
            T0 - timedelta(days=330) + timedelta(hours=26 * n),
            rng.choice((None, "hook", "agent")),
        )
        for n in range(_scaled(300, scale))
    ]
    for entry in entries:
        bm.update(entry)
    bm.merge_state(
        {
            "facts": {"stack": ["Python 3.12", "Django", "PostgreSQL 16", "Celery", "Redis"]},
            "decisions": _decisions(_scaled(60, scale, 3), rng, newest),
            "activeState": {
                "currentGoal": goal,
                "inProgress": in_progress,
                "blockers": [blocker],
                "recentlyCompleted": [f"{v} {t}" for v, t in zip(VERBS, TOPICS, strict=False)],
            },
            "keyFiles": _key_files(_scaled(50, scale)),
            "knownIssues": _issues(_scaled(40, scale, 3), severe, rng),
            "preferences": {"style": style, "constraints": [constraint]},
            "nextSteps": next_steps,
        }
    )
    bm.persist()
    _append_learnings(top, _filler_learnings(_scaled(2_000, scale), rng))
    # A rule is a "dont" behavior, or a behavior or preference that says never, always,
    # don't or must.
    donts = [
        f"Force-push to the {word()} branch",
        f"Edit the generated {word()} migrations by hand",
    ]
    never = f"Never run the {word()} backfill against production"
    always = f"Always run the {word()} smoke test before a release"
    for text in donts:
        _add(top, type="behavior", category="dont", text=text)
    _add(top, type="preference", category="Safety", text=never)
    _add(top, type="behavior", category="do", text=always)
    _add(top, type="behavior", category="value", text="Prefer boring technology")
    reminder = f"Rotate the {word()} API key"
    _add(top, type="reminder", text=reminder, cadence="daily 08:00")
    urgent = f"Fix the {word()} payout rounding"
    _add(top, type="task", description=urgent, priority="urgent")
    for n in range(_scaled(8, scale)):
        _add(top, type="task", description=f"Tidy {rng.choice(SUBJECTS)} ({n})", priority="low")
    return [
        ("current goal", goal),
        ("blocker", blocker),
        *((f"in progress {n + 1}", t) for n, t in enumerate(in_progress)),
        *((f"next step {n + 1}", t) for n, t in enumerate(next_steps)),
        *((f"known issue ({s}) {n + 1}", t) for n, (s, t) in enumerate(severe)),
        *((f"decision {n + 1} of the newest 3", d) for n, d in enumerate(reversed(newest))),
        *((f"don't behavior {n + 1}", t) for n, t in enumerate(donts)),
        ("never preference", never),
        ("always behavior", always),
        ("brain.json preference (style)", style),
        ("brain.json preference (constraint)", constraint),
        ("due reminder", reminder),
        ("urgent task", urgent),
    ]


def many_issues(top: Path, rng: random.Random, scale: float) -> list[MustKnow]:
    """80 known issues, 6 of them critical or high."""
    word = Words(rng)
    goal = f"Stabilize the {word.name()} release"
    severe = [
        (severity, f"The {word.name()} worker {rng.choice(PROBLEMS)}")
        for severity in ("critical", "critical", "high", "high", "high", "high")
    ]
    bm = _manager(top)
    bm.merge_state(
        {
            "activeState": {"currentGoal": goal},
            "knownIssues": _issues(_scaled(80, scale, 6), severe, rng),
        }
    )
    bm.persist()
    _append_learnings(top, _filler_learnings(_scaled(100, scale), rng))
    return [
        ("current goal", goal),
        *((f"known issue ({s}) {n + 1}", t) for n, (s, t) in enumerate(severe)),
    ]


def many_decisions(top: Path, rng: random.Random, scale: float) -> list[MustKnow]:
    """150 decisions, a day apart; the newest 3 must be known."""
    word = Words(rng)
    goal = f"Finish the {word.name()} API redesign"
    newest = [f"Version the {word.name()} endpoints in the path" for _ in range(3)]
    bm = _manager(top)
    bm.merge_state(
        {
            "activeState": {"currentGoal": goal},
            "decisions": _decisions(_scaled(150, scale, 3), rng, newest),
        }
    )
    bm.persist()
    _append_learnings(top, _filler_learnings(_scaled(100, scale), rng))
    return [
        ("current goal", goal),
        *((f"decision {n + 1} of the newest 3", d) for n, d in enumerate(reversed(newest))),
    ]


def just_compacted(top: Path, rng: random.Random, scale: float) -> list[MustKnow]:
    """A long session: 400 brain.md entries (loop statuses among them, the newest last),
    then `compact()` at the default budget."""
    word = Words(rng)
    goal = f"Land the {word.name()} search rewrite"
    status = f"Iteration 40/40: {word.name()} ranking merged, 2 tests red in the indexer"
    count = _scaled(400, scale, 100)  # enough to go over the budget: a summary
    kinds = ("observation", "decision", "loop_status", "reflection")
    start = NOW - timedelta(hours=10)
    bm = _manager(top)
    for n, kind in enumerate(rng.choices(kinds, (50, 15, 20, 15), k=count - 1)):
        bm.update(BrainEntry(kind, _body(kind, rng, n), start + timedelta(minutes=n), "hook"))
    bm.update(BrainEntry("loop_status", status, start + timedelta(minutes=count), "hook"))
    bm.merge_state({"activeState": {"currentGoal": goal}})
    bm.persist()
    bm.compact()
    summaries = [e for e in bm.entries if e.source == "compact" and e.type == "reflection"]
    if not summaries:
        raise RuntimeError(f"compacting {count} entries left no summary")
    summary = " ".join(summaries[-1].content.split())[:60]
    return [
        ("current goal", goal),
        ("newest loop status", status),
        ("compaction summary", summary),
    ]


SCENARIOS = (
    Scenario("(1) small and fresh", small_and_fresh),
    Scenario("(2) large and old", large_and_old, large=True),
    Scenario("(3) many known issues", many_issues),
    Scenario("(4) many decisions", many_decisions),
    Scenario("(5) long session, just compacted", just_compacted),
)


# -- measuring ------------------------------------------------------------------------


@contextlib.contextmanager
def personal_folder(path: Path) -> Iterator[None]:
    """`VOYAGER_HOME` at `path` for the block: each scenario has its own personal log."""
    saved = os.environ.get("VOYAGER_HOME")
    os.environ["VOYAGER_HOME"] = str(path)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("VOYAGER_HOME", None)
        else:
            os.environ["VOYAGER_HOME"] = saved


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
        lines = _filler_learnings(size - asked, rng)
        questions: list[tuple[str, str]] = []  # (question, the planted item's id)
        for n in range(asked):
            text, question = _planted(word, rng)
            stamp = _stamp(T0 - timedelta(days=rng.randint(1, 300)))
            planted = _learning(text, stamp, size + n, rng)
            lines.insert(rng.randrange(len(lines) + 1), planted)
            questions.append((question, planted["id"]))
        _append_learnings(top, lines)
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
            _add(top, type="learning", text=f"The {new} exporter needs a fresh token ({n})")
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

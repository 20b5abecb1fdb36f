"""The continuity benchmark's five scenarios (`benchmarks/continuity.py`): each a function
that fills a fresh git repository (brain.md, brain.json, the project memory log, and its
own personal log) from a seeded `random.Random` at a fixed clock, and returns its
must-know items: a label and a distinctive substring the session-start context must
hold. Made-up words (`Words`) make those substrings appear nowhere in the filler.
"""

from __future__ import annotations

import random
from collections.abc import Callable
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
)
from benchmarks.plan import CONFIG, T0
from voyager_brain import BrainEntry, BrainManager
from voyager_brain.memory import log as memory_log
from voyager_brain.memory.tool import brain_tool

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


def learning_line(text: str, created: str, n: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": f"{rng.getrandbits(32):08x}{n:x}",
        "type": "learning",
        "text": text,
        "source": rng.choice(("manual", "manual", "auto")),
        "scope": "project",
        "projectPath": ".",
        "created": created,
    }


def append_learnings(top: Path, lines: list[dict[str, Any]]) -> None:
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


def filler_learnings(count: int, rng: random.Random, start: int = 0) -> list[dict[str, Any]]:
    return [
        learning_line(
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


def add_memory(top: Path, **params: Any) -> None:
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
    append_learnings(top, filler_learnings(5, rng))
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
    append_learnings(top, filler_learnings(_scaled(2_000, scale), rng))
    # A rule is a "dont" behavior, or a behavior or preference that says never, always,
    # don't or must.
    donts = [
        f"Force-push to the {word()} branch",
        f"Edit the generated {word()} migrations by hand",
    ]
    never = f"Never run the {word()} backfill against production"
    always = f"Always run the {word()} smoke test before a release"
    for text in donts:
        add_memory(top, type="behavior", category="dont", text=text)
    add_memory(top, type="preference", category="Safety", text=never)
    add_memory(top, type="behavior", category="do", text=always)
    add_memory(top, type="behavior", category="value", text="Prefer boring technology")
    reminder = f"Rotate the {word()} API key"
    add_memory(top, type="reminder", text=reminder, cadence="daily 08:00")
    urgent = f"Fix the {word()} payout rounding"
    add_memory(top, type="task", description=urgent, priority="urgent")
    for n in range(_scaled(8, scale)):
        add_memory(
            top, type="task", description=f"Tidy {rng.choice(SUBJECTS)} ({n})", priority="low"
        )
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
    append_learnings(top, filler_learnings(_scaled(100, scale), rng))
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
    append_learnings(top, filler_learnings(_scaled(100, scale), rng))
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

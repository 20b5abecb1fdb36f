"""Reproducible benchmarks of voyager-brain's hook-path operations.

Run from the repository top::

    python benchmarks/run.py                 # full run, writes benchmarks/results.md
    python benchmarks/run.py --smoke         # tiny sizes, 1 repeat, writes to a temp file
    python benchmarks/run.py --output FILE   # write the results somewhere else

Everything happens in a temporary folder made with a real ``git init``. The brain.md files
(100 / 1,000 / 10,000 entries; 5,000 for compaction) are generated from a seeded
``random.Random`` and written by the library itself, so they are in the canonical format
and identical from run to run.

What is measured (``time.perf_counter``; every figure is the *median* of the runs shown
in the table's "runs" column, with a ``gc.collect()`` before each run):

* **load**: ``BrainManager(top).load()`` in this process. Its floor is markdown-it-py
  tokenizing the same text (``MarkdownIt("commonmark").parse(text)``), measured in the same
  run: any markdown-aware reader pays at least that. Target: load <= 0.1x the floor.
* **persist (append)**: one ``update(BrainEntry(...))`` + ``persist()`` on an already loaded
  manager, auto_compact off: the append fast path. Every run adds one entry. Its floor is
  appending the same bytes to a file with ``O_APPEND`` + ``fsync`` (what the fast path
  cannot avoid). Target: <= 50 ms. The very first call in a fresh process (which pays the
  lazy imports of the write path) is measured apart, in a subprocess; reported, no target.
* **persist (re-render)**: the same, after the file was changed on disk by someone else,
  so ``persist()`` re-reads, merges and renders the whole file. Reported, no target.
* **compaction**: ``compact()`` with the default budget (4,000 tokens) on a loaded
  5,000-entry brain. Target: <= 1 s.
* **process startup**: ``python -c pass`` (the floor) and ``python -c "import
  voyager_brain"``, as subprocesses: the fixed cost of every agent hook.
* **memory log** (``.voyager/memory.jsonl`` of 10,000 / 40,000 / 100,000 lines: mostly
  learnings, ~5% updates, ~2% tombstones, ~1% tasks; personal log in a temporary
  ``VOYAGER_HOME``). Floor: ``json.loads`` of every line of the same file.
  (a) ``log.read()`` + ``log.fold()`` in process: <= 1.3x the floor at 40,000 lines.
  (b) the whole ``voyager-brain context`` process, with no fold cache and with a warm one,
  beside a process that only parses the file: <= 1.5x at 40,000 lines. (c) scaling of (a),
  100,000 lines / 10,000: <= 11x. (d) ``BrainManager(top).context()`` after appending 10
  entries, as a fraction of the cold ``context()`` of the same log: <= 10%.
* **session-start hook**: ``voyager-brain hook claude session-start`` on a repository with
  a 10,000-line memory log, a ~1 MB brain.md and a full brain.json, beside ``python -c
  pass``: <= 10x on a first run (no caches), <= 3x when nothing changed since the last one.
* **merge driver**: the ``voyager-brain merge-driver BASE OURS THEIRS PATH`` process git
  runs, on a 10,000-entry brain.md, a brain.json of 10,000 items (decisions, key files,
  known issues) and a 10,000-line memory log, each side having added, changed and
  removed a few dozen entries since the base. Floor: a process that reads and parses
  the same three versions with voyager-brain's own parsers, the part no merge by content
  can skip. Target: <= 1 s each. The same merges in process are shown beside parsing.
* **history**: ``voyager-brain log`` (every commit with its summary) over 2,000 commits of
  brain changes, beside ``git log -p -- .voyager`` over the same history, process against
  process: <= 3x.

The exit status is non-zero only when something fails; a missed target is printed (and
listed at the end of the results file) but is not an error.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from markdown_it import MarkdownIt  # noqa: E402

import voyager_brain  # noqa: E402
from voyager_brain import BrainEntry, BrainManager, storage  # noqa: E402
from voyager_brain.git.merge import merge_file  # noqa: E402
from voyager_brain.memory import log as memory_log  # noqa: E402
from voyager_brain.memory.store import MemoryStore  # noqa: E402
from voyager_brain.paths import voyager_home  # noqa: E402
from voyager_brain.render import Templates  # noqa: E402
from voyager_brain.session import brainfile  # noqa: E402
from voyager_brain.session.brainfile import BrainDocument, render_sections  # noqa: E402
from voyager_brain.session.manager import ensure_layout  # noqa: E402
from voyager_brain.state import brainjson as state  # noqa: E402

SEED = 20260321
T0 = datetime(2026, 3, 21, tzinfo=UTC)
CONFIG = {"auto_compact": False}
PERSIST_TARGET_MS = 50.0
LOAD_TARGET_RATIO = 0.1
COMPACT_TARGET_MS = 1000.0
FOLD_TARGET_RATIO = 1.3  # read + fold vs json.loads of every line, at the target size
CONTEXT_PROCESS_TARGET_RATIO = 1.5  # `voyager-brain context` vs a parse-only process
FOLD_SCALING_TARGET = 11.0  # read + fold time at the largest size / at the smallest
INCREMENTAL_TARGET = 0.10  # context() after 10 appended entries / the cold context()
HOOK_COLD_TARGET = 10.0  # session-start hook, first run, vs `python -c pass`
HOOK_WARM_TARGET = 3.0  # the same when nothing changed since the last session start
MERGE_TARGET_MS = 1000.0  # the merge driver process, per brain file
LOG_TARGET_RATIO = 3.0  # `voyager-brain log` vs `git log -p -- .voyager`, same history
HOOK_PAYLOAD = {
    "session_id": "bench",
    "transcript_path": "",
    "hook_event_name": "SessionStart",
    "source": "startup",
}


@dataclasses.dataclass(frozen=True)
class Plan:
    """Sizes and repeat counts of one run."""

    sizes: tuple[int, ...]
    compact_size: int
    startup_runs: int
    first_call_runs: int
    memory_sizes: tuple[int, ...]
    memory_target_size: int
    hook_memory_size: int
    hook_brain_bytes: int
    hook_cold_runs: int
    hook_warm_runs: int
    merge_size: int
    merge_runs: int
    log_commits: int
    log_runs: int
    smoke: bool = False

    def load_runs(self, size: int) -> int:
        # A load of 100 entries takes about a millisecond: a scheduler hiccup is a large
        # part of one sample, and more samples cost nothing.
        return 1 if self.smoke else (21 if size <= 100 else 5 if size <= 1_000 else 3)

    def persist_runs(self, size: int) -> int:
        return 1 if self.smoke else 20

    def rerender_runs(self, size: int) -> int:
        return 1 if self.smoke else (5 if size <= 1_000 else 3)

    def compact_runs(self) -> int:
        return 1 if self.smoke else 3

    # A shared 2-core machine moves a single figure by a third from one run to the next
    # (a floor of 210 ms in one run, 310 ms in the next): the medians of the targets'
    # rows take more samples.
    def fold_runs(self, size: int) -> int:
        return 1 if self.smoke else (15 if size <= 10_000 else 7)

    def process_runs(self, size: int) -> int:
        return 1 if self.smoke else (9 if size <= 40_000 else 3)

    def incremental_runs(self, size: int) -> int:
        return 1 if self.smoke else (5 if size <= 40_000 else 3)


FULL = Plan(
    sizes=(100, 1_000, 10_000),
    compact_size=5_000,
    startup_runs=5,
    first_call_runs=3,
    memory_sizes=(10_000, 40_000, 100_000),
    memory_target_size=40_000,
    hook_memory_size=10_000,
    hook_brain_bytes=1_000_000,
    hook_cold_runs=9,  # a cold start varies a lot on a shared machine: more samples
    hook_warm_runs=9,
    merge_size=10_000,
    merge_runs=5,
    log_commits=2_000,
    log_runs=3,
)
SMOKE = Plan(
    sizes=(20,),
    compact_size=50,
    startup_runs=1,
    first_call_runs=1,
    memory_sizes=(100, 200),
    memory_target_size=200,
    hook_memory_size=200,
    hook_brain_bytes=20_000,
    hook_cold_runs=1,
    hook_warm_runs=1,
    merge_size=200,
    merge_runs=1,
    log_commits=30,
    log_runs=1,
    smoke=True,
)


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of a results table. Times in milliseconds; None shows as a dash."""

    what: str
    size: str
    runs: int
    ours_ms: float
    floor_ms: float | None = None
    target: str = "-"
    passed: bool | None = None

    @property
    def ratio(self) -> float | None:
        return None if not self.floor_ms else self.ours_ms / self.floor_ms


@dataclasses.dataclass
class Results:
    tables: dict[str, list[Row]] = dataclasses.field(default_factory=dict)

    def add(self, table: str, row: Row) -> None:
        self.tables.setdefault(table, []).append(row)
        ours = _ms(row.ours_ms)
        floor = f", floor {_ms(row.floor_ms)} ms" if row.floor_ms is not None else ""
        verdict = {True: "PASS", False: "FAIL", None: ""}[row.passed]
        print(
            f"  {table:<11} {row.what:<44} {row.size:>14}  {ours:>9} ms{floor}  {verdict}",
            flush=True,
        )
        if row.passed is False:
            print(
                f"  !! MISSED TARGET: {table}: {row.what} at {row.size}: {ours} ms, "
                f"target {row.target}"
            )

    @property
    def missed(self) -> list[tuple[str, Row]]:
        return [(t, r) for t, rows in self.tables.items() for r in rows if r.passed is False]


# -- the content ------------------------------------------------------------------------

FILES = (
    "src/auth/login.py",
    "src/auth/session.py",
    "src/api/routes.py",
    "tests/test_api.py",
    "web/components/Header.tsx",
    "internal/db/pool.go",
    "docs/guide.md",
    "Cargo.toml",
    "scripts/release.sh",
    "src/i18n/messages_fr.json",
)
TOPICS = (
    "token refresh",
    "the retry loop",
    "the schema migration",
    "the flaky CI job",
    "Unicode file names",
    "the cache layer",
    "rate limiting",
    "the i18n strings",
    "the websocket reconnect",
    "pagination",
    "the config loader",
    "error reporting",
)
VERBS = ("Implement", "Fix", "Refactor", "Investigate", "Test", "Document", "Speed up")
UNICODE = (
    "café ☕ in the fixture name",
    "naïve datetime → must be UTC",
    "✓ all green locally",
    "日本語のファイル名 breaks the glob",
    "Ünïcödé path on macOS (NFD)",
    "emoji 🚀 in a commit message",
    "Ελληνικά in the locale file",
    "a non-breaking space\u00a0in the CSV header",
)
LIBS = ("httpx", "SQLAlchemy", "pydantic", "a plain dataclass", "Redis", "SQLite", "tenacity")
STATUSES = ("in progress", "blocked on review", "tests red", "tests green", "waiting for CI")
CODE = (
    ("python", ["def backoff(attempt: int) -> float:", "    return min(2 ** attempt, 30)"]),
    ("bash", ["pytest -q -k 'auth and not slow'", "git diff --stat HEAD~1"]),
    ("json", ['{"retries": 3, "timeout_s": 2.5,', ' "locale": "fr_FR"}']),
    ("diff", ["-    timeout = 1", "+    timeout = 2.5  # CI is slow"]),
    ("go", ["if err != nil {", '\treturn fmt.Errorf("pool: %w", err)', "}"]),
)


def _code_block(rng: random.Random) -> list[str]:
    lang, lines = rng.choice(CODE)
    return [f"```{lang}", *lines, "```"]


def _body(kind: str, rng: random.Random, n: int) -> str:
    topic, file, verb = rng.choice(TOPICS), rng.choice(FILES), rng.choice(VERBS)
    if kind == "observation":
        lines = [
            f"Task: {verb} {topic} in `{file}`",
            f"- Ran `pytest -q` → {rng.randint(40, 400)} passed, {rng.randint(0, 5)} failed",
            f"- Noticed: {rng.choice(UNICODE)}",
            f"- Next: check `{rng.choice(FILES)}` line {rng.randint(1, 900)}",
        ]
        if rng.random() < 0.35:
            lines += ["", "Reproduced with:", *_code_block(rng)]
    elif kind == "decision":
        alt = rng.choice(LIBS)
        lines = [
            f"Decision: use {rng.choice(LIBS)} for {topic} (entry {n}).",
            "",
            "**Why:**",
            f"- fewer moving parts than {alt}",
            f"- keeps `{file}` testable without a network",
            f"Rejected: {alt} — {rng.choice(UNICODE)}.",
        ]
        if rng.random() < 0.2:
            lines += ["", *_code_block(rng)]
    elif kind == "loop_status":
        total = rng.randint(5, 20)
        lines = [
            f"Iteration: {rng.randint(1, total)}/{total}",
            f"Status: {rng.choice(STATUSES)}",
            f"Tests: {rng.randint(40, 400)} passed, {rng.randint(0, 9)} failed",
            f"Next step: {verb.lower()} {topic}",
        ]
    else:
        lines = [
            f"Reflection on {topic}:",
            f"1. What went well: {verb.lower()}ing `{file}` in small steps",
            f"2. What to improve: read `{rng.choice(FILES)}` before editing it",
            f"> {rng.choice(UNICODE)}",
        ]
        if rng.random() < 0.3:
            lines += ["", "Lesson: write the failing test first.", *_code_block(rng)]
    return "\n".join(lines)


def make_entries(count: int, seed: int = SEED) -> list[BrainEntry]:
    """`count` realistic entries, one minute apart from 2026-03-21T00:00:00Z."""
    rng = random.Random(seed)
    kinds = ("observation", "decision", "loop_status", "reflection")
    weights = (50, 15, 20, 15)
    return [
        BrainEntry(
            kind,
            _body(kind, rng, n),
            T0 + timedelta(minutes=n),
            rng.choice((None, None, "hook", "agent")),
        )
        for n, kind in enumerate(rng.choices(kinds, weights, k=count))
    ]


def extra_entry(n: int) -> BrainEntry:
    """A new entry stamped after every generated one (for the persist runs)."""
    return BrainEntry(
        "observation",
        f"Task: benchmark persist run {n}\n- appended by benchmarks/run.py\n- ✓ fast path",
        T0 + timedelta(days=30, minutes=n),
        "hook",
    )


# -- the repository ---------------------------------------------------------------------


def fixed_clock() -> datetime:
    return T0 + timedelta(days=60)


def make_repo(parent: Path, name: str) -> Path:
    top = parent / name
    top.mkdir()
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", str(top)],
        check=True,
        capture_output=True,
    )
    return top


def write_brain(top: Path, entries: Sequence[BrainEntry]) -> bytes:
    """brain.md with `entries`, written by the library; returns its bytes."""
    bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
    bm.load()
    for entry in entries:
        bm.update(entry)
    bm.persist()
    data = bm.path.read_bytes()
    if len(BrainManager(top, config=CONFIG).load().entries) != len(entries):
        raise RuntimeError(f"{bm.path}: wrote {len(entries)} entries, read back another count")
    return data


def restore(top: Path, data: bytes) -> None:
    (top / ".voyager" / "brain.md").write_bytes(data)


# -- the memory log ---------------------------------------------------------------------

SUBJECTS = (
    "The retry loop",
    "Token refresh",
    "The schema migration",
    "The flaky CI job",
    "The cache layer",
    "Rate limiting",
    "The i18n loader",
    "Pagination",
    "The config loader",
    "The websocket reconnect",
    "Error reporting",
    "The release script",
)
LESSONS = (
    "needs a fresh token before the second request",
    "breaks on NFD file names (macOS); normalize to NFC first",
    "must run with `pytest -p no:randomly` or the fixture order hides a leak",
    "compares naïve datetimes; convert to UTC first → off by one hour otherwise",
    "is slow under CI: timeout_s 2.5, not 1",
    "prints the café ☕ fixture as mojibake unless the handler is UTF-8",
    "goes through SQLAlchemy sessions, never raw connections",
    "retries 429s with exponential backoff capped at 30 s",
    "keeps state in Redis; flush it between tests",
    "fails on 日本語 paths with the old glob; use pathlib",
    "is covered by tests/test_api.py::test_refresh, run it first",
    "reads settings once at import; tests must monkeypatch before importing",
)
TASKS = (
    "Add a regression test for",
    "Document",
    "Profile",
    "Split the module behind",
    "Ask in review about",
)


def _stamp(moment: datetime) -> str:
    """The memory log's time format (``2026-03-21T00:00:00.000Z``)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _learning_text(rng: random.Random) -> str:
    subject, lesson = rng.choice(SUBJECTS), rng.choice(LESSONS)
    text = f"{subject} {lesson}"
    if len(text) < 60 or rng.random() < 0.5:
        longer = f"{subject} in `{rng.choice(FILES)}` {lesson}"
        if len(longer) <= 120:
            text = longer
    if len(text) < 60:
        text += f" (seen {rng.randint(2, 9)} times)"
    return text


def make_memory_lines(count: int, seed: int = SEED) -> list[dict[str, object]]:
    """`count` lines of a project memory log, in file order: mostly new learnings
    (project-scoped, ~60-120 characters of text), ~5% updates re-writing an earlier
    learning with an ``updated`` time, ~2% tombstones, ~1% tasks; 37 s apart from
    2026-03-21T00:00:00Z."""
    rng = random.Random(seed)
    used: set[str] = set()
    live: list[dict[str, object]] = []  # live learnings, for updates and tombstones

    def new_id() -> str:
        while True:
            candidate = f"{rng.getrandbits(32):08x}"
            if candidate not in used:
                used.add(candidate)
                return candidate

    lines: list[dict[str, object]] = []
    for n in range(count):
        created = _stamp(T0 + timedelta(seconds=37 * n))
        roll = rng.random()
        if roll < 0.05 and live:
            k = rng.randrange(len(live))
            live[k] = {**live[k], "text": _learning_text(rng), "updated": created}
            lines.append(live[k])
        elif roll < 0.07 and live:
            k = rng.randrange(len(live))
            target = live[k]
            live[k] = live[-1]
            live.pop()
            lines.append(
                {
                    "id": new_id(),
                    "type": "tombstone",
                    "target_id": target["id"],
                    "target_type": "learning",
                    "reason": rng.choice(("removed", "decay", "outdated")),
                    "created": created,
                }
            )
        elif roll < 0.08:
            lines.append(
                {
                    "id": new_id(),
                    "type": "task",
                    "description": f"{rng.choice(TASKS)} {rng.choice(SUBJECTS).lower()}",
                    "status": "pending",
                    "priority": rng.choice(("low", "normal", "high")),
                    "due": None,
                    "tags": [],
                    "completedAt": None,
                    "created": created,
                }
            )
        else:
            entry: dict[str, object] = {
                "id": new_id(),
                "type": "learning",
                "text": _learning_text(rng),
                "source": rng.choice(("manual", "manual", "auto")),
                "scope": "project",
                "projectPath": ".",  # relative in the project log: the repository top
                "created": created,
            }
            live.append(entry)
            lines.append(entry)
    return lines


def write_memory_log(top: Path, count: int) -> bytes:
    """``.voyager/memory.jsonl`` of `count` lines (validated by the library); its bytes."""
    lines = make_memory_lines(count)
    for n, line in enumerate(lines):
        memory_log.validate(line, f"generated line {n + 1}")
    data = b"".join(memory_log.encode(line) for line in lines)
    (top / ".voyager" / "memory.jsonl").write_bytes(data)
    return data


def make_memory_repo(parent: Path, name: str, count: int) -> tuple[Path, bytes]:
    """A git repository with ``.voyager/`` (config.toml, .gitignore) and a memory log."""
    top = make_repo(parent, name)
    ensure_layout(top / ".voyager")
    return top, write_memory_log(top, count)


def cache_folders(top: Path) -> tuple[Path, Path]:
    return top / ".voyager" / "cache", voyager_home() / "cache"


def wait_for_saves(top: Path) -> None:
    """Wait until no detached child of an earlier command is still saving a fold cache
    (it holds the cache's lock until the file is written): its save must neither land
    after a drop (the next "no caches" run would be a warm one) nor run beside the next
    timed run (a session start comes minutes after the last one, not milliseconds)."""
    for folder in cache_folders(top):
        for lock in folder.glob("*.lock"):
            with storage.locked(lock.with_suffix("")):
                pass


def drop_caches(top: Path) -> None:
    """Remove every on-disk cache a read could reuse: the project's ``.voyager/cache``
    and the personal ``$VOYAGER_HOME/cache`` (fold caches, the context cache, the
    daily-decay stamp), once no save is under way."""
    wait_for_saves(top)
    for folder in cache_folders(top):
        shutil.rmtree(folder, ignore_errors=True)


def drop_context_cache(top: Path) -> None:
    """Remove only the cached context document (the fold caches stay, once saved)."""
    wait_for_saves(top)
    (top / ".voyager" / "cache" / "context.json").unlink(missing_ok=True)


def settle(top: Path) -> None:
    """Date the inputs a minute back, as they are when a session starts: the context
    cache does not trust files modified in the last two seconds."""
    past = time.time() - 60
    inputs = [*(top / ".voyager").glob("*"), *voyager_home().glob("*")]
    for path in inputs:
        if path.is_file():
            os.utime(path, (past, past))


# -- timing -----------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds `fn()` takes, after a gc.collect()."""
    gc.collect()
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def median_of(
    runs: int, fn: Callable[[], object], setup: Callable[[], object] | None = None
) -> float:
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()
        times.append(timed(fn))
    return statistics.median(times)


Step = tuple[Callable[[], object], Callable[[], object] | None]


def medians_interleaved(runs: int, steps: Sequence[Step]) -> list[float]:
    """The median time of each `(fn, setup)` step over `runs` rounds, the steps taking turns
    within each round (so a slow spell of the machine hits ours and the floor alike)."""
    times: list[list[float]] = [[] for _ in steps]
    for _ in range(runs):
        for n, (fn, setup) in enumerate(steps):
            if setup is not None:
                setup()
            times[n].append(timed(fn))
    return [statistics.median(t) for t in times]


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.1f}"


def _size(n: int) -> str:
    return f"{n:,} entries"


def _lines(n: int) -> str:
    return f"{n:,} log lines"


# -- the benchmarks ---------------------------------------------------------------------


def bench_load(results: Results, plan: Plan, top: Path, size: int) -> None:
    path = top / ".voyager" / "brain.md"
    text = path.read_text(encoding="utf-8")
    runs = plan.load_runs(size)
    md = MarkdownIt("commonmark")
    ours, floor = medians_interleaved(
        runs,
        [(lambda: BrainManager(top, config=CONFIG).load(), None), (lambda: md.parse(text), None)],
    )
    ratio = ours / floor
    results.add(
        "load",
        Row(
            "BrainManager(top).load()",
            _size(size),
            runs,
            ours,
            floor,
            f"<= {LOAD_TARGET_RATIO}x floor",
            ratio <= LOAD_TARGET_RATIO,
        ),
    )


def bench_persist(
    results: Results, plan: Plan, top: Path, size: int, pristine: bytes, pycache: Path
) -> None:
    runs = plan.persist_runs(size)
    restore(top, pristine)
    bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
    bm.load()
    entries = iter(extra_entry(n) for n in range(10_000))

    def append_one() -> None:
        bm.update(next(entries))
        bm.persist()

    ours = median_of(runs, append_one)
    if len(bm.entries) != size + runs:
        raise RuntimeError(f"persist: expected {size + runs} entries, have {len(bm.entries)}")

    # The floor: the same bytes appended with O_APPEND + fsync, nothing else.
    chunk = render_sections([extra_entry(99_999)], Templates()).encode()
    scratch = top / ".voyager" / "floor.tmp"
    scratch.write_bytes(pristine)

    def raw_append() -> None:
        fd = os.open(scratch, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        try:
            os.write(fd, chunk)
            os.fsync(fd)
        finally:
            os.close(fd)

    floor = median_of(runs, raw_append)
    scratch.unlink()
    results.add(
        "persist",
        Row(
            "update() + persist(), append fast path",
            _size(size),
            runs,
            ours,
            floor,
            f"<= {PERSIST_TARGET_MS:.0f} ms",
            ours <= PERSIST_TARGET_MS,
        ),
    )

    # The first call in a fresh process: pays the write path's lazy imports.
    firsts = []
    for n in range(plan.first_call_runs):
        restore(top, pristine)
        firsts.append(first_call_in_subprocess(top, extra_entry(n), pycache))
    results.add(
        "persist",
        Row(
            "same, first call in a fresh process",
            _size(size),
            plan.first_call_runs,
            statistics.median(firsts),
        ),
    )

    # A full re-render: the file changed on disk, persist() must re-read, merge, render.
    # (`append_one` uses this new manager: the closure reads `bm` when it runs.)
    restore(top, pristine)
    bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
    bm.load()
    elsewhere = iter(
        render_sections([extra_entry(20_000 + n)], Templates()).encode() for n in range(10_000)
    )
    path = top / ".voyager" / "brain.md"

    def change_on_disk() -> None:
        with path.open("ab") as f:
            f.write(next(elsewhere))

    runs = plan.rerender_runs(size)
    ours = median_of(runs, append_one, setup=change_on_disk)
    if len(BrainManager(top, config=CONFIG).load().entries) != size + 2 * runs:
        raise RuntimeError("persist (re-render): entries lost in the merge")
    results.add(
        "persist",
        Row("update() + persist(), file changed on disk", _size(size), runs, ours),
    )
    restore(top, pristine)


FIRST_CALL = """\
import json, sys, time
from datetime import datetime
from voyager_brain import BrainEntry, BrainManager
top, spec = sys.argv[1], json.loads(sys.argv[2])
bm = BrainManager(top, config={"auto_compact": False})
bm.load()
entry = BrainEntry(spec["type"], spec["content"], datetime.fromisoformat(spec["timestamp"]),
                   spec["source"])
jinja_before = "jinja2" in sys.modules
start = time.perf_counter()
bm.update(entry)
bm.persist()
ms = (time.perf_counter() - start) * 1000
print(json.dumps({"ms": ms, "jinja_before": jinja_before, "jinja_after": "jinja2" in sys.modules}))
"""


def child_env(pycache: Path | None) -> dict[str, str]:
    """The environment of a child Python: this checkout first on the path, and, when
    `pycache` is given, bytecode cached there (PYTHONPYCACHEPREFIX) whatever the caller's
    PYTHONDONTWRITEBYTECODE says; without it, no bytecode is written."""
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def warm_bytecode(pycache: Path) -> None:
    """Fill `pycache` with the bytecode of everything the child processes import."""
    subprocess.run(
        [sys.executable, "-c", "import voyager_brain, jinja2, markdown_it"],
        check=True,
        env=child_env(pycache),
        cwd=ROOT,
    )


def first_call_in_subprocess(top: Path, entry: BrainEntry, pycache: Path) -> float:
    spec = json.dumps(
        {
            "type": entry.type,
            "content": entry.content,
            "timestamp": entry.timestamp.isoformat() if entry.timestamp else None,
            "source": entry.source,
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL, str(top), spec],
        capture_output=True,
        text=True,
        env=child_env(pycache),
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"first-call subprocess failed:\n{done.stderr}")
    report = json.loads(done.stdout)
    if report["jinja_after"]:
        # The built-in brain.md templates render without Jinja unless overridden.
        print("  note: the first persist() imported Jinja", report)
    return float(report["ms"])


def bench_compaction(results: Results, plan: Plan, top: Path, pristine: bytes) -> None:
    size = plan.compact_size
    counts: list[tuple[int, int]] = []
    manager: list[BrainManager] = []

    def setup() -> None:
        restore(top, pristine)
        bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
        bm.load()
        manager[:] = [bm]

    def compact() -> None:
        report = manager[0].compact()
        counts.append((report.entries_before, report.entries_after))

    runs = plan.compact_runs()
    ours = median_of(runs, compact, setup=setup)
    before, after = counts[-1]
    if len(set(counts)) != 1 or before != size:
        raise RuntimeError(f"compaction: unexpected entry counts {counts}")
    results.add(
        "compaction",
        Row(
            "compact(), default budget (4,000 tokens)",
            f"{before:,} → {after:,} entries",
            runs,
            ours,
            None,
            f"<= {COMPACT_TARGET_MS:.0f} ms",
            ours <= COMPACT_TARGET_MS,
        ),
    )
    restore(top, pristine)


def bench_startup(results: Results, plan: Plan, pycache: Path) -> None:
    def python(code: str, env: dict[str, str]) -> Callable[[], object]:
        def run() -> None:
            subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)

        return run

    runs = plan.startup_runs
    cached = child_env(pycache)
    bare = median_of(runs, python("pass", cached))
    results.add("startup", Row("python -c pass", "-", runs, bare))
    ours = median_of(runs, python("import voyager_brain", cached))
    results.add("startup", Row('python -c "import voyager_brain"', "-", runs, ours, bare))

    # voyager_brain compiled from source on every start (no .pyc could be written: a
    # read-only install, PYTHONDONTWRITEBYTECODE=1); everything else still cached.
    shutil.rmtree(pycache / Path(*ROOT.parts[1:]) / "voyager_brain", ignore_errors=True)
    uncached = {**cached, "PYTHONDONTWRITEBYTECODE": "1"}
    cold = median_of(runs, python("import voyager_brain", uncached))
    results.add(
        "startup",
        Row("same, voyager_brain without .pyc (PYTHONDONTWRITEBYTECODE)", "-", runs, cold, bare),
    )


PARSE_ONLY = (
    "import json,sys; data=open(sys.argv[1],'rb').read(); "
    "[json.loads(l) for l in data.split(b'\\n') if l]"
)


def parse_every_line(path: Path) -> list[object]:
    """The memory-log floor: read the bytes, `json.loads` every line, nothing else."""
    data = path.read_bytes()
    return [json.loads(line) for line in data.split(b"\n") if line]


def _unstamped(context: str) -> str:
    """A context document without its first line (the title, which holds the date)."""
    return context.partition("\n")[2]


def run_child(args: Sequence[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> str:
    """Run a child process, fail loudly when it fails; its stdout."""
    done = subprocess.run(
        args,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} ... failed:\n{done.stderr}")
    return done.stdout


def bench_memory(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """The memory log at session start: read + fold in process, the whole `voyager-brain
    context` process, how the fold scales, and context() after a few appended lines."""
    repos: dict[int, tuple[Path, bytes]] = {}
    for size in plan.memory_sizes:
        print(f"building a memory log of {size:,} lines ...", flush=True)
        repos[size] = make_memory_repo(parent, f"memory-{size}", size)
    target = plan.memory_target_size
    env = child_env(pycache)

    # (a) read + fold in process, cold (no cache is involved), beside json.loads.
    folds: dict[int, tuple[float, float]] = {}
    for size, (top, _) in repos.items():
        path = top / ".voyager" / "memory.jsonl"
        healths: list[memory_log.Health] = []

        def read_and_fold(path: Path = path, healths: list[memory_log.Health] = healths) -> None:
            entries, health = memory_log.read(path)
            memory_log.fold(entries)
            healths.append(health)

        runs = plan.fold_runs(size)
        ours, floor = medians_interleaved(
            runs, [(read_and_fold, None), (lambda path=path: parse_every_line(path), None)]
        )
        if healths[-1] != memory_log.Health(size, 0, False):
            raise RuntimeError(f"memory log of {size:,} lines read as {healths[-1]}")
        folds[size] = (ours, floor)
        results.add(
            "memory",
            Row(
                "log.read() + log.fold(), in process, cold",
                _lines(size),
                runs,
                ours,
                floor,
                f"<= {FOLD_TARGET_RATIO}x floor" if size == target else "-",
                ours / floor <= FOLD_TARGET_RATIO if size == target else None,
            ),
        )

    # (b) the whole `voyager-brain context` process, beside a process that only parses.
    context_cmd = [sys.executable, "-m", "voyager_brain", "context"]
    smallest = repos[min(repos)][0]
    run_child(context_cmd, env, smallest)  # warm-up: bytecode of all the command imports
    processes: dict[int, tuple[float, ...]] = {}
    for size, (top, _) in repos.items():
        path = top / ".voyager" / "memory.jsonl"
        runs = plan.process_runs(size)
        outputs: list[str] = []

        def context_process(top: Path = top, outputs: list[str] = outputs) -> None:
            outputs.append(run_child(context_cmd, env, top))

        context_process(top)  # seeds the personal log, an input of the document
        settle(top)
        # Each round: the floor; ours with no cache (removed first); ours again, now that
        # the previous run left the fold cache of the unchanged log (the cached document
        # removed); ours once more, served from the cached document.
        floor, cold, warm, hit = medians_interleaved(
            runs,
            [
                (
                    lambda path=path, top=top: run_child(
                        [sys.executable, "-c", PARSE_ONLY, str(path)], env, top
                    ),
                    None,
                ),
                (context_process, lambda top=top: drop_caches(top)),
                (context_process, lambda top=top: drop_context_cache(top)),
                (context_process, None),
            ],
        )
        if not outputs[-1].strip() or len(set(outputs)) != 1:
            raise RuntimeError(f"voyager-brain context at {size:,} lines: empty or unstable")
        processes[size] = (cold, warm, hit, floor)
    whats = (
        "no caches",
        "fold cache warm (log unchanged), no cached document",
        "cached document (nothing changed)",
    )
    for n, what in enumerate(whats):
        for size, times in processes.items():
            ours, floor = times[n], times[-1]
            results.add(
                "memory",
                Row(
                    f"`voyager-brain context` process, {what}",
                    _lines(size),
                    plan.process_runs(size),
                    ours,
                    floor,
                    f"<= {CONTEXT_PROCESS_TARGET_RATIO}x floor"
                    if size == target and n < 2
                    else "-",
                    ours / floor <= CONTEXT_PROCESS_TARGET_RATIO
                    if size == target and n < 2
                    else None,
                ),
            )

    # (c) scaling of the in-process fold: largest size / smallest, the floor's beside it.
    small, large = min(folds), max(folds)
    scale = f"{small:,} → {large:,} log lines"
    ours_scale = folds[large][0] / folds[small][0]
    results.add(
        "memory",
        Row(
            f"scaling of read + fold: {large // small}x the lines",
            scale,
            plan.fold_runs(large),
            folds[large][0],
            folds[small][0],
            f"<= {FOLD_SCALING_TARGET:g}x",
            ours_scale <= FOLD_SCALING_TARGET,
        ),
    )
    results.add(
        "memory",
        Row(
            f"scaling of the floor (json.loads): {large // small}x the lines",
            scale,
            plan.fold_runs(large),
            folds[large][1],
            folds[small][1],
        ),
    )

    # (d) context() in process after 10 appended entries, as a fraction of the cold build.
    rng = random.Random(SEED + 1)
    appended = [
        {
            "id": f"{rng.getrandbits(32):08x}",
            "type": "learning",
            "text": _learning_text(rng),
            "created": "2026-03-21T00:00:00.000Z",
        }
        for _ in range(10)
    ]
    BrainManager(smallest).context()  # warm-up: the lazy imports of context()
    for size, (_, data) in repos.items():
        runs = plan.incremental_runs(size)
        colds, incrementals = [], []
        for n in range(runs):
            # A fresh repository each time: nothing (in this process or on disk) has seen it.
            top = make_repo(parent, f"memory-{size}-incremental-{n}")
            ensure_layout(top / ".voyager")
            path = top / ".voyager" / "memory.jsonl"
            path.write_bytes(data)
            drop_caches(top)
            colds.append(timed(lambda top=top: BrainManager(top).context()))
            memory_log.append(path, appended)
            incrementals.append(timed(lambda top=top: BrainManager(top).context()))
            live = MemoryStore(top).snapshot().state.entries
            if any(entry["id"] not in live for entry in appended):
                raise RuntimeError("context() after an append: the new entries are not seen")
            shutil.rmtree(top)
        cold, incremental = statistics.median(colds), statistics.median(incrementals)
        results.add(
            "memory",
            Row(
                "context() after appending 10 entries (floor: cold context())",
                _lines(size),
                runs,
                incremental,
                cold,
                f"<= {INCREMENTAL_TARGET:g}x cold",
                incremental / cold <= INCREMENTAL_TARGET,
            ),
        )


def make_state_update() -> dict[str, object]:
    """A realistic brain.json update: 30 decisions, 20 key files, 10 known issues, facts,
    the active state, preferences and next steps."""
    rng = random.Random(SEED + 2)
    return {
        "facts": {
            "stack": ["Python 3.11", "FastAPI", "SQLAlchemy 2", "PostgreSQL 16", "Redis", "React"],
            "architecture": "An API service (FastAPI) behind nginx, a worker pool on Redis "
            "queues, a React front end; PostgreSQL for state, S3 for uploads.",
            "environment": {"ci": "GitHub Actions", "deploy": "fly.io", "node": "20"},
            "custom": [
                f"{s} {lesson}" for s, lesson in zip(SUBJECTS[:6], LESSONS[:6], strict=True)
            ],
        },
        "decisions": [
            {
                "what": f"Use {rng.choice(LIBS)} for {topic} ({n})",
                "why": f"fewer moving parts; keeps `{rng.choice(FILES)}` testable offline",
                "when": (T0 + timedelta(days=n)).date().isoformat(),
                "reversible": rng.random() < 0.5,
            }
            for n, topic in enumerate(TOPICS * 3)
        ],
        "activeState": {
            "currentGoal": "Ship the token refresh rewrite behind a feature flag",
            "inProgress": ["token refresh", "the flaky CI job"],
            "blockers": ["waiting for the staging database"],
            "recentlyCompleted": [f"{v} {t}" for v, t in zip(VERBS, TOPICS, strict=False)],
        },
        "keyFiles": [
            {"path": f"{file.rsplit('.', 1)[0]}_{n}.{file.rsplit('.', 1)[-1]}", "role": role}
            for n, (file, role) in enumerate(
                zip(FILES * 2, ["entry point", "tests", "config", "hot path"] * 5, strict=True)
            )
        ],
        "knownIssues": [
            {
                "issue": f"{rng.choice(SUBJECTS)} {rng.choice(LESSONS)} ({n})",
                "workaround": "retry once; see the runbook",
                "severity": rng.choice(("low", "medium", "high")),
            }
            for n in range(10)
        ],
        "preferences": {"style": "small commits", "constraints": ["no new deps"]},
        "nextSteps": [f"{v} {t}" for v, t in zip(VERBS, reversed(TOPICS), strict=False)],
    }


def bench_hook(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """`voyager-brain hook claude session-start` on a repository with everything full."""
    size = plan.hook_memory_size
    print(
        f"building a repository with a {size:,}-line memory log, "
        f"a ~{plan.hook_brain_bytes // 1000:,} KB brain.md and a full brain.json ...",
        flush=True,
    )
    top, _ = make_memory_repo(parent, "hook", size)
    sample = make_entries(200, seed=SEED + 3)
    per_entry = len(render_sections(sample, Templates()).encode()) / len(sample)
    count = max(10, round(plan.hook_brain_bytes / per_entry))
    brain = write_brain(top, make_entries(count))
    bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
    bm.load()
    bm.merge_state(make_state_update())
    bm.persist()
    state_bytes = bm.state_path.stat().st_size
    label = (
        f"{size:,} log lines, brain.md {len(brain) / 1e6:.2f} MB ({count:,} entries), "
        f"brain.json {state_bytes / 1000:.0f} KB"
    )

    env = child_env(pycache)
    payload = json.dumps({**HOOK_PAYLOAD, "cwd": str(top)})
    hook_cmd = [sys.executable, "-m", "voyager_brain", "hook", "claude", "session-start"]
    outputs: list[str] = []

    def hook() -> None:
        outputs.append(run_child(hook_cmd, env, top, stdin=payload))

    run_child(hook_cmd, env, top, stdin=payload)  # warm-up: bytecode of all the hook imports
    settle(top)  # the repository was written a moment ago; a session starts later

    # Each round: the floor, then (in the first hook_cold_runs rounds) a first run with
    # no caches, then a run with nothing changed since the previous one.
    bares, colds, warms = [], [], []
    for n in range(max(plan.hook_cold_runs, plan.hook_warm_runs)):
        bares.append(timed(lambda: run_child([sys.executable, "-c", "pass"], env, top)))
        if n < plan.hook_cold_runs:
            drop_caches(top)
            colds.append(timed(hook))
        if n < plan.hook_warm_runs:
            wait_for_saves(top)
            warms.append(timed(hook))
    bare, cold, warm = (statistics.median(t) for t in (bares, colds, warms))
    contexts = {
        _unstamped(json.loads(t)["hookSpecificOutput"]["additionalContext"]) for t in outputs
    }
    if len(contexts) != 1 or not contexts.pop().strip():
        raise RuntimeError("session-start hook: empty or unstable additionalContext")
    results.add(
        "hook",
        Row(
            "hook claude session-start, first run (no caches)",
            label,
            plan.hook_cold_runs,
            cold,
            bare,
            f"<= {HOOK_COLD_TARGET:g}x floor",
            cold / bare <= HOOK_COLD_TARGET,
        ),
    )
    results.add(
        "hook",
        Row(
            "same, later runs (nothing changed)",
            label,
            plan.hook_warm_runs,
            warm,
            bare,
            f"<= {HOOK_WARM_TARGET:g}x floor",
            warm / bare <= HOOK_WARM_TARGET,
        ),
    )


# -- the merge driver -------------------------------------------------------------------

PARSE_VERSIONS = """\
import sys
from pathlib import Path
from typing import Any
from voyager_brain.session import brainfile
from voyager_brain.state import brainjson as state
from voyager_brain.memory import log
kind, *paths = sys.argv[1:]
for path in map(Path, paths):
    data = path.read_bytes()
    if kind == "brain.md":
        brainfile.parse(data, path)
    elif kind == "brain.json":
        data.strip() and state.loads(data, path)
    else:
        log.parse(data)
"""


def parse_versions(kind: str, versions: Sequence[bytes]) -> None:
    """The in-process floor: what PARSE_VERSIONS does, without the process."""
    for data in versions:
        if kind == "brain.md":
            brainfile.parse(data, Path(kind))
        elif kind == "brain.json":
            state.loads(data, Path(kind))
        else:
            memory_log.parse(data)


def brain_versions(size: int) -> tuple[bytes, bytes, bytes, int]:
    """brain.md: base, ours, theirs, and the merged entry count. Each side removed every
    500th entry (its own ones) and added 30 entries."""
    base = make_entries(size)

    def side(skip: int, added: range) -> bytes:
        kept = [e for n, e in enumerate(base) if n % 500 != skip]
        doc = BrainDocument(project="bench", entries=(*kept, *map(extra_entry, added)))
        return brainfile.render(doc, Templates()).encode()

    pristine = brainfile.render(BrainDocument("bench", entries=tuple(base)), Templates())
    removed = len(range(1, size, 500)) + len(range(2, size, 500))
    return pristine.encode(), side(1, range(30)), side(2, range(100, 130)), size - removed + 60


def state_versions(size: int) -> tuple[bytes, bytes, bytes, int]:
    """brain.json with `size` items (60% decisions, 30% key files, 10% known issues):
    base, ours, theirs (each a save that changes 20 decisions and adds 20; theirs also
    removes 5 by hand), and the merged decision count."""
    rng = random.Random(SEED + 4)
    decisions = [
        {
            "what": f"Use {rng.choice(LIBS)} for {rng.choice(TOPICS)} ({n})",
            "why": f"fewer moving parts; keeps `{rng.choice(FILES)}` testable offline",
            "when": (T0 + timedelta(days=n % 300)).date().isoformat(),
            "reversible": rng.random() < 0.5,
        }
        for n in range(size * 6 // 10)
    ]
    update = {
        **make_state_update(),
        "decisions": decisions,
        "keyFiles": [
            {"path": f"src/module_{n}.py", "role": rng.choice(("entry point", "tests", "config"))}
            for n in range(size * 3 // 10)
        ],
        "knownIssues": [
            {
                "issue": f"{rng.choice(SUBJECTS)} {rng.choice(LESSONS)} ({n})",
                "severity": rng.choice(("low", "medium", "high")),
            }
            for n in range(size // 10)
        ],
    }
    base = state.merge(state.empty_state("bench", T0), update, now=T0, new_session=True)

    def side(first: int, days: int) -> dict[str, Any]:
        changed = [{**d, "why": f"revisited on day {days}"} for d in decisions[first : first + 20]]
        added = [{"what": f"New decision {days}.{n}", "why": "measured"} for n in range(20)]
        return state.merge(
            base,
            {"decisions": changed + added, "nextSteps": [f"step {days}"]},
            now=T0 + timedelta(days=days),
            new_session=True,
        )

    ours, theirs = side(0, 1), side(100, 2)
    removed = {d["what"] for d in decisions[500:505]}
    theirs["decisions"] = [d for d in theirs["decisions"] if d["what"] not in removed]
    blobs = [state.dumps(x).encode() for x in (base, ours, theirs)]
    return blobs[0], blobs[1], blobs[2], len(decisions) + 40 - len(removed)


def memory_versions(size: int) -> tuple[bytes, bytes, bytes, int]:
    """memory.jsonl: a `size`-line base and two sides that each appended 50 lines (30 new
    learnings, 15 updates, 5 tombstones); and the merged line count."""
    lines = make_memory_lines(size)
    live = [e for e in memory_log.fold(lines).live("learning")]
    start = T0 + timedelta(seconds=37 * size)

    def side(seed: int) -> bytes:
        rng = random.Random(seed)
        added: list[dict[str, object]] = []
        for n in range(50):
            now = _stamp(start + timedelta(seconds=11 * n + seed % 7))
            if n < 30:
                added.append(
                    {
                        "id": f"{rng.getrandbits(32):08x}",
                        "type": "learning",
                        "text": _learning_text(rng),
                        "created": now,
                    }
                )
            elif n < 45:
                added.append({**rng.choice(live), "text": _learning_text(rng), "updated": now})
            else:
                target = rng.choice(live)
                added.append(
                    {
                        "id": f"{rng.getrandbits(32):08x}",
                        "type": "tombstone",
                        "target_id": target["id"],
                        "target_type": "learning",
                        "reason": "removed",
                        "created": now,
                    }
                )
        return b"".join(memory_log.encode(e) for e in [*lines, *added])

    base = b"".join(memory_log.encode(e) for e in lines)
    return base, side(SEED + 5), side(SEED + 6), size + 100


def bench_merge(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """The merge driver as git runs it, per brain file, beside parsing the same versions."""
    size = plan.merge_size
    folder = parent / "merge"
    folder.mkdir()
    cases: tuple[tuple[str, Callable[[int], tuple[bytes, bytes, bytes, int]], str], ...] = (
        ("brain.md", brain_versions, _size(size)),
        ("brain.json", state_versions, f"{size:,} items"),
        ("memory.jsonl", memory_versions, _lines(size)),
    )
    for kind, make, label in cases:
        print(f"merge driver on {kind} ({label}) ...", flush=True)
        _bench_merge_of(results, plan, folder, child_env(pycache), kind, make(size), label)


def _bench_merge_of(
    results: Results,
    plan: Plan,
    folder: Path,
    env: dict[str, str],
    kind: str,
    made: tuple[bytes, bytes, bytes, int],
    label: str,
) -> None:
    *versions, expected = made
    paths = [folder / f"{kind}.{side}" for side in ("base", "ours", "theirs")]
    for path, data in zip(paths, versions, strict=True):
        path.write_bytes(data)
    driver = [sys.executable, "-m", "voyager_brain", "merge-driver", *map(str, paths)]
    driver.append(f".voyager/{kind}")
    floor = [sys.executable, "-c", PARSE_VERSIONS, kind, *map(str, paths)]

    def restore_ours() -> None:
        paths[1].write_bytes(versions[1])

    run_child(driver, env, folder)  # warm-up: bytecode of the driver's imports
    restore_ours()
    ours_ms, floor_ms = medians_interleaved(
        plan.merge_runs,
        [
            (lambda: run_child(driver, env, folder), restore_ours),
            (lambda: run_child(floor, env, folder), None),
        ],
    )
    _check_merged(kind, paths[1].read_bytes(), expected)
    results.add(
        "merge",
        Row(
            f"`voyager-brain merge-driver` process, {kind}",
            label,
            plan.merge_runs,
            ours_ms,
            floor_ms,
            f"<= {MERGE_TARGET_MS:.0f} ms",
            ours_ms <= MERGE_TARGET_MS,
        ),
    )
    real = f".voyager/{kind}"
    _check_merged(kind, merge_file(real, *versions), expected)
    in_process, parse_only = medians_interleaved(
        plan.merge_runs,
        [
            (lambda: merge_file(real, *versions), None),
            (lambda: parse_versions(kind, versions), None),
        ],
    )
    results.add(
        "merge",
        Row(f"the same merge in process, {kind}", label, plan.merge_runs, in_process, parse_only),
    )


def _check_merged(kind: str, data: bytes, expected: int) -> None:
    """The merged file reads back with the expected number of entries."""
    if kind == "brain.md":
        count = len(brainfile.parse(data, Path(kind)).entries)
    elif kind == "brain.json":
        count = len(state.loads(data, Path(kind))["decisions"])
    else:
        entries, health = memory_log.parse(data)
        count = len(entries) + health.bad_lines
    if count != expected:
        raise RuntimeError(f"merge driver, {kind}: {count} entries merged, expected {expected}")


def make_history(parent: Path, name: str, commits: int) -> Path:
    """A repository whose history is `commits` sessions of brain changes, each written by
    the library and committed (all through one ``git fast-import``): 1-3 brain.md entries
    a session, compacted at the default budget as the file grows; a brain.json save in
    half of them (a decision added or re-decided and the next steps replaced; now and
    then a key file, a known issue or a fact); 0-3 memory-log lines (learnings, updates,
    tombstones, tasks as in the memory benchmark)."""
    top = make_repo(parent, name)
    ensure_layout(top / ".voyager")
    rng = random.Random(SEED + 4)
    memory = iter(make_memory_lines(commits * 3, seed=SEED + 5))
    log_path = top / ".voyager" / "memory.jsonl"
    kinds, weights = ("observation", "loop_status", "reflection", "decision"), (55, 20, 15, 10)
    now = T0
    previous: dict[str, bytes] = {}
    importer = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=top, stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for n in range(commits):
        now += timedelta(minutes=17)
        ticks = iter(now + timedelta(seconds=s) for s in range(1000))
        bm = BrainManager(top, clock=lambda ticks=ticks: next(ticks))
        bm.load()
        for kind in rng.choices(kinds, weights, k=rng.randint(1, 3)):
            bm.update(BrainEntry(kind, _body(kind, rng, n)))
        if rng.random() < 0.5:
            update: dict[str, object] = {
                "decisions": [
                    {
                        "what": f"Use {rng.choice(LIBS)} for {rng.choice(TOPICS)}",
                        "why": f"session {n}: fewer moving parts",
                        "when": now.date().isoformat(),
                    }
                ],
                "nextSteps": [f"{rng.choice(VERBS)} {rng.choice(TOPICS)}" for _ in range(3)],
            }
            if rng.random() < 0.2:
                update["keyFiles"] = [{"path": rng.choice(FILES), "role": f"touched in {n}"}]
            if rng.random() < 0.1:
                update["knownIssues"] = [
                    {"issue": f"{rng.choice(SUBJECTS)} {rng.choice(LESSONS)}", "severity": "low"}
                ]
            if rng.random() < 0.1:
                update["facts"] = {"custom": [f"{rng.choice(SUBJECTS)} {rng.choice(LESSONS)}"]}
            bm.merge_state(update)
        bm.persist()
        lines = [next(memory) for _ in range(rng.randint(0, 3))]
        if lines:
            memory_log.append(log_path, lines)
        stamp = int(now.timestamp())
        message = f"brain: session {n + 1}".encode()
        out = importer.stdin
        out.write(b"commit refs/heads/main\n")
        for role in (b"author", b"committer"):
            out.write(role + f" Bench Agent <agent@example.invalid> {stamp} +0000\n".encode())
        out.write(f"data {len(message)}\n".encode() + message + b"\n")
        for path in sorted((top / ".voyager").glob("*")):
            if path.suffix == ".lock" or not path.is_file():
                continue
            data = path.read_bytes()
            if previous.get(path.name) != data:
                previous[path.name] = data
                out.write(f"M 100644 inline .voyager/{path.name}\ndata {len(data)}\n".encode())
                out.write(data + b"\n")
        out.write(b"\n")
    importer.stdin.close()
    if importer.wait() != 0:
        raise RuntimeError("git fast-import failed")
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=top, check=True)
    subprocess.run(["git", "gc", "-q"], cwd=top, check=True)
    return top


def bench_log(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """`voyager-brain log` over a history of brain changes, beside `git log -p`."""
    size = plan.log_commits
    print(f"building a history of {size:,} sessions of brain changes ...", flush=True)
    top = make_history(parent, "history", size)
    env = child_env(pycache)
    ours_cmd = [sys.executable, "-m", "voyager_brain", "log"]
    floor_cmd = ["git", "log", "-p", "--", ".voyager"]
    outputs: list[str] = []
    run_child(ours_cmd, env, top)  # warm-up: bytecode of GitPython and the log path
    ours, floor = medians_interleaved(
        plan.log_runs,
        [
            (lambda: outputs.append(run_child(ours_cmd, env, top)), None),
            (lambda: run_child(floor_cmd, env, top), None),
        ],
    )
    shown = [line for line in outputs[-1].splitlines() if line and not line.startswith(" ")]
    if len(shown) != size or "+" not in outputs[-1]:
        raise RuntimeError(f"voyager-brain log: {len(shown)} commits shown, expected {size}")
    results.add(
        "history",
        Row(
            "`voyager-brain log` (every commit with its summary)",
            f"{size:,} commits",
            plan.log_runs,
            ours,
            floor,
            f"<= {LOG_TARGET_RATIO:g}x floor",
            ours / floor <= LOG_TARGET_RATIO,
        ),
    )


# -- the report -------------------------------------------------------------------------

TITLES = {
    "load": "Load (session_start)",
    "persist": "Persist (turn_end / session_end)",
    "compaction": "Compaction (session_compact)",
    "startup": "Process startup (context for hook costs)",
    "memory": "Memory log: read + fold + context (session_start)",
    "hook": "Session-start hook (Claude Code)",
    "merge": "Merge driver (git merge)",
    "history": "History: `voyager-brain log`",
}
FLOORS = {
    "load": 'floor: `MarkdownIt("commonmark").parse(text)` of the same file, same run',
    "persist": "floor: appending the same bytes with `O_APPEND` + `fsync`, nothing else",
    "compaction": "no floor; entries before → after in the size column",
    "startup": "floor: `python -c pass`; bytecode cached with PYTHONPYCACHEPREFIX unless said",
    "memory": "floors: in process, `json.loads` of every line of the same file; for the "
    "process rows, a `python -c` process that only reads and parses it; for scaling, the "
    "smallest size; for the append row, the cold `context()` of the same log",
    "hook": "floor: `python -c pass` in the same environment; first run = no caches and "
    "no daily-decay stamp (removed before each run); later runs = nothing changed since "
    "(served from the cached document)",
    "merge": "floor: a process that only reads and parses the same three versions with "
    "voyager-brain's parsers (`brainfile.parse`, `state.loads`, `log.parse`); in process, "
    "the same parsing without the process",
    "history": "floor: `git log -p -- .voyager` over the same history, a process against a "
    "process, both read to the end",
}


def render_results(results: Results, plan: Plan, started: datetime, total_s: float) -> str:
    lines = [
        "# voyager-brain benchmarks",
        "",
        f"Generated by `python benchmarks/run.py{' --smoke' if plan.smoke else ''}`.",
        "",
        f"- Date (UTC): {started.strftime('%Y-%m-%d %H:%M:%S')}",
        f"- Python: {platform.python_version()} ({platform.python_implementation()})",
        f"- Platform: {platform.platform()}, {os.cpu_count()} CPUs",
        f"- voyager-brain: {voyager_brain.__version__}",
        f"- Total run time: {total_s:.1f} s",
        "",
        "Times are in milliseconds, the **median** of the runs in the `runs` column "
        "(`time.perf_counter`, `gc.collect()` before each run). `ratio` is ours / floor.",
        "",
    ]
    if plan.smoke:
        lines += [
            "**Smoke run**: tiny sizes, one run each. It checks that every benchmark runs; "
            "its figures and PASS/FAIL verdicts mean nothing.",
            "",
        ]
    for key, title in TITLES.items():
        rows = results.tables.get(key, [])
        lines += [
            f"## {title}",
            "",
            f"({FLOORS[key]})",
            "",
            "| what | size | runs | ours (ms) | floor (ms) | ratio | target | result |",
            "|---|---|---:|---:|---:|---:|---|---|",
        ]
        for row in rows:
            ratio = "-" if row.ratio is None else f"{row.ratio:.3f}x"
            verdict = {True: "PASS", False: "**FAIL**", None: "-"}[row.passed]
            lines.append(
                f"| {row.what} | {row.size} | {row.runs} | {_ms(row.ours_ms)} | "
                f"{_ms(row.floor_ms)} | {ratio} | {row.target} | {verdict} |"
            )
        lines.append("")
    lines += ["## Missed targets", ""]
    missed = results.missed
    if not missed:
        lines.append("None.")
    for table, row in missed:
        lines.append(
            f"- {table}: {row.what}, {row.size}: {_ms(row.ours_ms)} ms (target {row.target})"
        )
    return "\n".join(lines) + "\n"


# -- main -------------------------------------------------------------------------------


def run(plan: Plan) -> Results:
    results = Results()
    saved = {name: os.environ.get(name) for name in ("VOYAGER_HOME", "VOYAGER_MEMORY_PATH")}
    with tempfile.TemporaryDirectory(prefix="voyager-brain-bench-") as tmp:
        parent = Path(tmp)
        # The personal memory log (and its caches) in the temporary folder, for this
        # process and every child: the user's own ~/.voyager is never read or written.
        os.environ["VOYAGER_HOME"] = str(parent / "voyager-home")
        os.environ.pop("VOYAGER_MEMORY_PATH", None)
        try:
            _run_all(results, plan, parent)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return results


def _run_all(results: Results, plan: Plan, parent: Path) -> None:
    pycache = parent / "pycache"
    warm_bytecode(pycache)
    for size in plan.sizes:
        print(f"building a brain.md of {size:,} entries ...", flush=True)
        top = make_repo(parent, f"repo-{size}")
        pristine = write_brain(top, make_entries(size))
        bench_load(results, plan, top, size)
        bench_persist(results, plan, top, size, pristine, pycache)
    print(f"building a brain.md of {plan.compact_size:,} entries for compaction ...", flush=True)
    top = make_repo(parent, "repo-compact")
    pristine = write_brain(top, make_entries(plan.compact_size))
    bench_compaction(results, plan, top, pristine)
    print("process startup ...", flush=True)
    bench_startup(results, plan, pycache)
    bench_memory(results, plan, parent, pycache)
    bench_hook(results, plan, parent, pycache)
    bench_merge(results, plan, parent, pycache)
    bench_log(results, plan, parent, pycache)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes and one repeat (a check that everything runs)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="results file (default: benchmarks/results.md; with --smoke, a temporary file)",
    )
    args = parser.parse_args(argv)
    plan = SMOKE if args.smoke else FULL
    output: Path = args.output
    if output is None:
        if args.smoke:
            fd, name = tempfile.mkstemp(prefix="voyager-brain-bench-smoke-", suffix=".md")
            os.close(fd)
            output = Path(name)
        else:
            output = ROOT / "benchmarks" / "results.md"

    started = datetime.now(UTC)
    clock = time.perf_counter()
    results = run(plan)
    total = time.perf_counter() - clock
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_results(results, plan, started, total), encoding="utf-8")
    print(f"\nwrote {output} ({total:.1f} s)")
    missed = results.missed
    if missed:
        print(f"{len(missed)} target(s) missed:")
        for table, row in missed:
            print(
                f"  MISSED: {table}: {row.what}, {row.size}: {_ms(row.ours_ms)} ms "
                f"(target {row.target})"
            )
    else:
        print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from markdown_it import MarkdownIt  # noqa: E402

import voyager_brain  # noqa: E402
from voyager_brain import BrainEntry, BrainManager  # noqa: E402
from voyager_brain.brainfile import render_sections  # noqa: E402
from voyager_brain.render import Templates  # noqa: E402

SEED = 20260321
T0 = datetime(2026, 3, 21, tzinfo=UTC)
CONFIG = {"auto_compact": False}
PERSIST_TARGET_MS = 50.0
LOAD_TARGET_RATIO = 0.1
COMPACT_TARGET_MS = 1000.0


@dataclasses.dataclass(frozen=True)
class Plan:
    """Sizes and repeat counts of one run."""

    sizes: tuple[int, ...]
    compact_size: int
    startup_runs: int
    first_call_runs: int
    smoke: bool = False

    def load_runs(self, size: int) -> int:
        return 1 if self.smoke else (5 if size <= 1_000 else 3)

    def persist_runs(self, size: int) -> int:
        return 1 if self.smoke else 20

    def rerender_runs(self, size: int) -> int:
        return 1 if self.smoke else (5 if size <= 1_000 else 3)

    def compact_runs(self) -> int:
        return 1 if self.smoke else 3


FULL = Plan(sizes=(100, 1_000, 10_000), compact_size=5_000, startup_runs=5, first_call_runs=3)
SMOKE = Plan(sizes=(20,), compact_size=50, startup_runs=1, first_call_runs=1, smoke=True)


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


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.1f}"


def _size(n: int) -> str:
    return f"{n:,} entries"


# -- the benchmarks ---------------------------------------------------------------------


def bench_load(results: Results, plan: Plan, top: Path, size: int) -> None:
    path = top / ".voyager" / "brain.md"
    text = path.read_text(encoding="utf-8")
    runs = plan.load_runs(size)
    ours = median_of(runs, lambda: BrainManager(top, config=CONFIG).load())
    md = MarkdownIt("commonmark")
    floor = median_of(runs, lambda: md.parse(text))
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


# -- the report -------------------------------------------------------------------------

TITLES = {
    "load": "Load (session_start)",
    "persist": "Persist (turn_end / session_end)",
    "compaction": "Compaction (session_compact)",
    "startup": "Process startup (context for hook costs)",
}
FLOORS = {
    "load": 'floor: `MarkdownIt("commonmark").parse(text)` of the same file, same run',
    "persist": "floor: appending the same bytes with `O_APPEND` + `fsync`, nothing else",
    "compaction": "no floor; entries before → after in the size column",
    "startup": "floor: `python -c pass`; bytecode cached with PYTHONPYCACHEPREFIX unless said",
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
    with tempfile.TemporaryDirectory(prefix="voyager-brain-bench-") as tmp:
        parent = Path(tmp)
        pycache = parent / "pycache"
        warm_bytecode(pycache)
        for size in plan.sizes:
            print(f"building a brain.md of {size:,} entries ...", flush=True)
            top = make_repo(parent, f"repo-{size}")
            pristine = write_brain(top, make_entries(size))
            bench_load(results, plan, top, size)
            bench_persist(results, plan, top, size, pristine, pycache)
        print(
            f"building a brain.md of {plan.compact_size:,} entries for compaction ...", flush=True
        )
        top = make_repo(parent, "repo-compact")
        pristine = write_brain(top, make_entries(plan.compact_size))
        bench_compaction(results, plan, top, pristine)
        print("process startup ...", flush=True)
        bench_startup(results, plan, pycache)
    return results


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

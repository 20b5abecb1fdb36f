"""What a run measures and its targets, and the rows and results it records."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.timing import _ms

ROOT = Path(__file__).resolve().parent.parent


SEED = 20260321
T0 = datetime(2026, 3, 21, tzinfo=UTC)
CONFIG = {"auto_compact": False}
PERSIST_TARGET_MS = 50.0
LOAD_TARGET_RATIO = 0.1
COMPACT_TARGET_MS = 1000.0
FOLD_TARGET_RATIO = 1.3  # read + fold vs json.loads of every line, at the target size
CONTEXT_PROCESS_TARGET_RATIO = 1.5  # `voyager-brain context` vs a parse-only process
# read + fold time at the largest size / at the smallest, at most this many times the
# json.loads floor's own scaling in the same run (both outgrow the CPU's caches alike)
FOLD_SCALING_TARGET = 1.25
INCREMENTAL_TARGET = 0.10  # context() after 10 appended entries / the cold context()
HOOK_COLD_TARGET = 10.0  # session-start hook, first run, vs `python -c pass`
HOOK_WARM_TARGET = 3.0  # the same when nothing changed since the last session start
MERGE_TARGET_MS = 1000.0  # the merge driver process, per brain file
LOG_TARGET_RATIO = 1.5  # `voyager-brain log` vs `git log -p -- .voyager`, same history
REDACT_TRANSCRIPT_TARGET_MS = 500.0  # redact() of a 1 MB transcript, in process
REDACT_OBSERVATION_TARGET_MS = 1.0  # redact() of a 200-byte observation, in process
# A tool-call hook of every agent, 100 rules, 100k calls, vs `python -c pass` (issue 29),
# on a fresh database and after long use
GUARD_HOOK_TARGET = LONG_USE_HOOK_TARGET = 1.5
IMPORT_TARGET_RATIO = 8.0  # `history import` of a transcript vs json.loads of its lines
COMMAND_TARGET_RATIO = 4.0  # status, show, recall, rules list as processes vs python -c pass
# `voyager-brain context` at 40,000 learnings: how many times faster than Rho's own code
# in one tsx process (issue 29), with no cache and with a previous session's caches
RHO_COLD_TARGET = 20.0
RHO_CACHED_TARGET = 50.0
LONG_USE_WAL_TARGET_MB = 1.25  # history.db-wal at its largest while hooks run (1 MB + a call)
UI_PAGE_TARGET_MS = 200.0  # a dashboard page or its JSON twin, in process, warm
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
    guard_rules: int
    guard_calls: int
    guard_test_rules: int
    guard_runs: int
    guard_transcript_mb: float
    guard_import_runs: int
    pipeline_runs: int = 9
    # Continuity (issue 17): the scenarios' bulk (filler decisions, issues, entries,
    # learnings) times this; the must-know items are always all there.
    continuity_scale: float = 1.0
    recall_items: int = 10_000  # learnings in the recall project, the planted ones included
    recall_questions: int = 20
    recall_runs: int = 5  # warm rounds over every question; appends before a first query
    redact_bytes: int = 1_000_000  # the transcript redacted in one call
    redact_runs: int = 9  # x50 for the 200-byte observations
    # The dashboard (`voyager-brain ui`): the populated project's sizes (benchmarks/uidata),
    # the runs of each page, and of the first page in a new process.
    ui_entries: int = 10_000
    ui_learnings: int = 10_000
    ui_tool_calls: int = 100_000
    ui_runs: int = 9
    ui_cold_runs: int = 5
    # Long use (benchmarks/longuse.py): hook calls on one history.db, and how many of
    # them show the write-ahead log's growth without the bound.
    longuse_calls: int = 10_000
    longuse_unbounded_calls: int = 2_000
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
    guard_rules=100,
    guard_calls=100_000,
    guard_test_rules=1_000,
    guard_runs=15,
    guard_transcript_mb=50,
    guard_import_runs=5,  # a shared machine moves one run by a third
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
    guard_rules=10,
    guard_calls=500,
    guard_test_rules=30,
    guard_runs=1,
    guard_transcript_mb=0.2,
    guard_import_runs=1,
    pipeline_runs=1,
    continuity_scale=0.05,
    recall_items=300,
    recall_questions=5,
    recall_runs=1,
    redact_bytes=20_000,
    redact_runs=1,
    ui_entries=200,  # uidata.populate_small's sizes
    ui_learnings=200,
    ui_tool_calls=2_000,
    ui_runs=1,
    ui_cold_runs=1,
    longuse_calls=60,
    longuse_unbounded_calls=40,
    smoke=True,
)


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of a results table. Times in milliseconds (another `unit` for the few
    figures that are no times: percentages, tokens); None shows as a dash."""

    what: str
    size: str
    runs: int
    ours_ms: float
    floor_ms: float | None = None
    target: str = "-"
    passed: bool | None = None
    unit: str = "ms"

    @property
    def ratio(self) -> float | None:
        return None if not self.floor_ms else self.ours_ms / self.floor_ms


@dataclasses.dataclass
class Results:
    tables: dict[str, list[Row]] = dataclasses.field(default_factory=dict)

    def add(self, table: str, row: Row) -> None:
        self.tables.setdefault(table, []).append(row)
        ours = _ms(row.ours_ms)
        floor = f", floor {_ms(row.floor_ms)} {row.unit}" if row.floor_ms is not None else ""
        verdict = {True: "PASS", False: "FAIL", None: ""}[row.passed]
        print(
            f"  {table:<11} {row.what:<44} {row.size:>14}  {ours:>9} {row.unit}{floor}  {verdict}",
            flush=True,
        )
        if row.passed is False:
            print(
                f"  !! MISSED TARGET: {table}: {row.what} at {row.size}: {ours} {row.unit}, "
                f"target {row.target}"
            )

    @property
    def missed(self) -> list[tuple[str, Row]]:
        return [(t, r) for t, rows in self.tables.items() for r in rows if r.passed is False]

"""Reproducible benchmarks of voyager-brain's hook-path operations.

Run from the repository top::

    python benchmarks/run.py                 # full run (about 7 minutes on 2 cores)
    python benchmarks/run.py --write         # ... and write benchmarks/results.md
    python benchmarks/run.py --smoke         # tiny sizes, 1 repeat (targets not judged)
    python benchmarks/run.py --output FILE   # write the results somewhere else
    python benchmarks/run.py --only ui       # one family (repeatable): see FAMILIES

Without --write or --output the results go to a temporary file, so that a run never
rewrites the tracked results by surprise. The exit status is 1 when a target is missed
(0 when all are met, and always for --smoke, whose sizes are too small to judge).

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
  process: <= 1.5x.
* **guard** (seed 003): ``voyager-brain hook claude pre-tool-use`` run as agents run it
  (the console script), with 100 active regex rules and a history.db of 100,000 tool
  calls, for a call no rule matches, beside ``python -c pass``: <= 2x. Also the ``rules
  test`` process with 1,000 rules (reported), and importing a 50 MB Claude Code transcript
  in process beside ``json.loads`` of its every line (reported).
* **pipeline** (seed 004): a four-stage run of a minimal shell agent through the engine,
  beside the same four agent processes started by hand (reported: what the engine adds
  per run), and the pre-tool-use hook for an architect's Write into ``.brain/`` beside
  the same call with no pipeline role (reported: what the role guard adds).
* **MCP server**: ``voyager-brain mcp`` started as an agent starts it, until it answers
  ``initialize`` on stdio, beside ``python -c pass`` and a process that only imports the
  SDK's server: <= 1 s. Skipped when the ``mcp`` extra is not installed.
* **continuity** (issue 17): five generated projects (small and fresh; large and old;
  many known issues; many decisions; a long session just compacted), each declaring what
  the next session must know (goal, blockers, work in progress, next steps, critical
  and high issues, the newest loop status and compaction summary, the user's behaviors
  and preferences, due reminders, urgent tasks, the newest 3 decisions). At 1,000 /
  2,000 / 4,000 tokens: the share of them ``context()`` holds, and its tokens beside
  those of every brain file injected whole. Target: 100% at 2,000 tokens, and on the
  large project no more than 5% of the whole files. Also ``BrainManager.recall`` over
  10,000 learnings: recall@5 of 20 questions, each about one planted item; a warm query
  < 100 ms; the first query after a learning was appended < 1 s.

* **redaction** (issue 18): ``redact()`` in process of a 1 MB Claude Code transcript
  (the guard benchmark's, with a fake secret of another kind every ~20 KB): <= 500 ms;
  of a 200-byte observation without and with a secret: <= 1 ms each; each beside one
  ``re.search`` pass of a never-matching pattern over the same text. The import of
  ``voyager_brain.redact`` and a first redaction in a fresh process, beside ``python -c
  pass`` (reported).

* **dashboard** (``voyager-brain ui``): on a project populated by ``benchmarks/uidata.py``
  (the demo's repository grown to 10,000 brain.md entries, a full brain.json, a
  10,000-line memory log, a pipeline under way; a history.db of 100,000 tool calls in
  200 sessions of three projects, 16 rules and their triggers), each page and its JSON
  twin (``?format=json``) fetched in process with Starlette's test client, one warm-up
  then the median of 9, taking turns with the same client's GET of a static asset (the
  floor: the framework, the token check, the transport). Target: <= 200 ms each. Also
  the first page of a new app in a new process with no caches (reported).

* **long use**: a history.db of 100 rules and 100,000 tool calls takes 10,000 Claude Code
  hook calls (pre- and post-tool-use in turn, ``benchmarks/longuse.py``): the pre-tool-use
  hook at the 10th call and after the last beside ``python -c pass`` (target: 1.5x, and
  the last within 1.1x of the first), and the write-ahead log's largest size (target:
  <= 1.25 MB) beside the size it reached without the hooks' bound. Also every agent's
  tool-call hook after the last call (target: 1.5x).

* **commands**: ``status``, ``show``, ``recall`` and ``rules list`` as processes, on a
  small project (``benchmarks/commands.py``), beside ``python -c pass``: <= 4x each.

* **rho**: ``voyager-brain context`` at 40,000 learnings beside Rho's own readBrain +
  foldBrain + buildBrainPrompt in one tsx process on the same file: 20x faster with no
  cache, 50x with a previous session's caches. Runs only with ``VOYAGER_RHO_CHECKOUT`` set
  to a checkout of Rho and tsx installed (``benchmarks/rho.py``).

The exit status is non-zero only when something fails; a missed target is printed (and
listed at the end of the results file) but is not an error.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


import voyager_brain  # noqa: E402
from benchmarks.commands import bench_commands  # noqa: E402
from benchmarks.content import make_entries, make_repo, write_brain  # noqa: E402
from benchmarks.continuity import bench_continuity  # noqa: E402
from benchmarks.environment import environment  # noqa: E402
from benchmarks.guard import bench_guard  # noqa: E402
from benchmarks.history import bench_log  # noqa: E402
from benchmarks.hook import bench_hook  # noqa: E402
from benchmarks.longuse import bench_longuse  # noqa: E402
from benchmarks.mcp_server import bench_mcp  # noqa: E402
from benchmarks.memory import bench_memory  # noqa: E402
from benchmarks.merge import bench_merge  # noqa: E402
from benchmarks.pipeline import bench_pipeline  # noqa: E402
from benchmarks.plan import FULL, ROOT, SMOKE, Plan, Results  # noqa: E402
from benchmarks.redaction import bench_redaction  # noqa: E402
from benchmarks.rho import bench_rho  # noqa: E402
from benchmarks.session import (  # noqa: E402
    bench_compaction,
    bench_load,
    bench_persist,
    bench_startup,
    warm_bytecode,
)
from benchmarks.timing import _ms  # noqa: E402
from benchmarks.ui import bench_ui  # noqa: E402

# -- the report -------------------------------------------------------------------------

TITLES = {
    "load": "Load (session_start)",
    "persist": "Persist (turn_end / session_end)",
    "compaction": "Compaction (session_compact)",
    "startup": "Process startup (context for hook costs)",
    "memory": "Memory log: read + fold + context (session_start)",
    "hook": "Agent hooks: session start, stop, session end",
    "merge": "Merge driver (git merge)",
    "history": "History: `voyager-brain log`",
    "guard": "Guard rules and the session history (seed 003)",
    "pipeline": "The multi-agent pipeline (seed 004)",
    "mcp": "The MCP server (`voyager-brain mcp`)",
    "continuity": "Continuity: what the next session must know (issue 17)",
    "recall": "Recall: quality and speed of `BrainManager.recall` (issue 17)",
    "redaction": "Redaction of secrets (issue 18)",
    "ui": "Dashboard (`voyager-brain ui`)",
    "long use": "Long use: history.db after thousands of hook calls",
    "commands": "Everyday commands as processes",
    "rho": "Against Rho (seed 001's tool): the context of a large memory log",
}
FLOORS = {
    "load": 'floor: `MarkdownIt("commonmark").parse(text)` of the same file, same run',
    "persist": "floor: appending the same bytes with `O_APPEND` + `fsync`, nothing else",
    "compaction": "no floor; entries before → after in the size column",
    "startup": "floor: `python -c pass`; bytecode cached with PYTHONPYCACHEPREFIX unless said",
    "memory": "floors: in process, `json.loads` of every line of the same file; for the "
    "process rows, a `python -c` process that only reads and parses it; for scaling, the "
    "smallest size; for the append row, the cold `context()` of the same log. Read + "
    "fold scales a little past 10x because the fold is one dict by id: a bare "
    "`dict.update` of the same ids scales further by itself, once the table of the "
    "larger log outgrows the CPU's caches (the last two scaling rows); everything else "
    "per line is linear",
    "hook": "floor: `python -c pass` in the same environment; first run = no caches and "
    "no daily-decay stamp (removed before each run); later runs = nothing changed since "
    "(served from the cached document)",
    "merge": "floor: a process that only reads and parses the same three versions with "
    "voyager-brain's parsers (`brainfile.parse`, `state.loads`, `log.parse`); in process, "
    "the same parsing without the process",
    "history": "floor: `git log -p -- .voyager` over the same history, a process against a "
    "process, both read to the end",
    "guard": "floor: `python -c pass` in the same environment, taking turns with ours; the "
    "minimal hook (imports `re`, `json`, `sqlite3`, reads the payload, selects the active "
    "rules, inserts one row into the same history.db) is what any Python hook doing this "
    "job pays, and the same with the C modules those packages wrap the least it can; for "
    "the import, `json.loads` of every line of the same transcript (one untimed import "
    "first)",
    "pipeline": "floors: the same four agent processes started one after the other without "
    "the engine; for the role guard, the same hook and Write with no pipeline role",
    "mcp": "floor: `python -c pass` in the same environment, taking turns with ours and with "
    "a process that only imports the SDK's server; skipped without the `mcp` extra",
    "continuity": "not times: in the must-know rows `ours` is the percentage of the "
    "scenario's declared must-know items whose text `BrainManager.context(budget)` holds "
    "(found/declared in the what column); in the token rows `ours` is the tokens of that "
    "document and the floor the tokens of injecting every brain file whole (brain.md, "
    "brain.json, both memory logs; characters / 4), so the ratio is the share of the whole",
    "redaction": "floor: one `re.search` of a pattern that never matches (`[\\x00]`, tried "
    "at every character) over the same text, taking turns with ours; for the processes, "
    "`python -c pass` in the same environment. The transcript is the guard benchmark's, "
    "with a fake secret of another kind every ~20 KB",
    "recall": "no floor; in the recall@5 row `ours` is the percentage of questions whose "
    "planted item is among the first 5 hits (found/asked in the what column), in the "
    "other rows milliseconds",
    "ui": "floor: the same test client's GET of `/static/style.css` (Starlette, the token "
    "check by cookie, the in-process transport; no page), taking turns with ours; each page "
    "had one untimed visit first, so the app's caches hold the project as after a first "
    "look. The project is `benchmarks/uidata.py`'s, the app's clock at its present. For the "
    "first page: a new process (the app's module imported, untimed) makes the app and "
    "opens the printed link (`/?token=...`, a redirect that sets the cookie, then the "
    "page), `.voyager/cache` and `$VOYAGER_HOME/cache` removed first; its floor the same "
    "for `/static/style.css`",
    "long use": "floor: `python -c pass` in the same environment, taking turns with the hook "
    "process (the console script); the calls between the two timings are made by forked "
    "children running the hook as the console script does, each the database's first "
    "connection. The log's row has no floor: its size column says how large the same "
    "database's log grew over fewer calls with the hooks' bound skipped",
    "commands": "floor: `python -c pass` in the same environment, taking turns with each "
    "command (the console script); one untimed run of each first",
    "rho": "floor: Rho's own `readBrain` + `foldBrain` + `buildBrainPrompt` "
    "(extensions/lib/brain-store.ts, run by tsx) as one process on the same log, taking "
    "turns with ours; for ours, the caches removed before the first run of each turn, "
    "kept for the second. The target is how many times faster than the floor",
}


def render_results(
    results: Results,
    plan: Plan,
    started: datetime,
    total_s: float,
    only: Sequence[str] = (),
) -> str:
    lines = [
        "# voyager-brain benchmarks",
        "",
        f"Generated by `python benchmarks/run.py{' --smoke' if plan.smoke else ''}"
        + "".join(f" --only {name}" for name in only)
        + "`.",
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
    untitled = set(results.tables) - set(TITLES)
    if untitled:
        raise RuntimeError(f"results tables without a title in TITLES: {sorted(untitled)}")
    for key, title in TITLES.items():
        rows = results.tables.get(key, [])
        if only and not rows:
            continue  # a family that did not run
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
            f"- {table}: {row.what}, {row.size}: {_ms(row.ours_ms)} {row.unit} "
            f"(target {row.target})"
        )
    return "\n".join(lines) + "\n"


# -- main -------------------------------------------------------------------------------


def run(plan: Plan, only: Sequence[str] = ()) -> Results:
    results = Results()
    with tempfile.TemporaryDirectory(prefix="voyager-brain-bench-") as tmp:
        parent = Path(tmp)
        # The personal memory log (and its caches) in the temporary folder, for this
        # process and every child: the user's own ~/.voyager is never read or written.
        with environment(VOYAGER_HOME=str(parent / "voyager-home"), VOYAGER_MEMORY_PATH=None):
            _run_all(results, plan, parent, only)
    return results


def bench_session(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """Load, persist and compaction of brain.md files, and process startup."""
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


#: Each family of benchmarks, in the order a full run takes them (`--only NAME`).
FAMILIES: dict[str, Callable[[Results, Plan, Path, Path], None]] = {
    "session": bench_session,
    "memory": bench_memory,
    "hook": bench_hook,
    "merge": bench_merge,
    "history": bench_log,
    "guard": bench_guard,
    "pipeline": bench_pipeline,
    "mcp": bench_mcp,
    "continuity": lambda results, plan, parent, _: bench_continuity(results, plan, parent),
    "redaction": bench_redaction,
    "ui": bench_ui,
    "longuse": bench_longuse,
    "commands": bench_commands,
    "rho": bench_rho,
}


def _run_all(results: Results, plan: Plan, parent: Path, only: Sequence[str] = ()) -> None:
    pycache = parent / "pycache"
    warm_bytecode(pycache)
    for name, bench in FAMILIES.items():
        if not only or name in only:
            bench(results, plan, parent, pycache)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes and one repeat (a check that everything runs)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="write the results to benchmarks/results.md (a full run only)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="results file (default: a temporary file)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=list(FAMILIES),
        default=[],
        metavar="FAMILY",
        help=f"run only this family of benchmarks (repeatable): {', '.join(FAMILIES)}; "
        "the results then go to a temporary file unless --output is given",
    )
    args = parser.parse_args(argv)
    plan = SMOKE if args.smoke else FULL
    if args.write and (args.smoke or args.only or args.output):
        parser.error("--write writes a full run's results; it takes no --smoke, --only or --output")
    output: Path = args.output
    if args.write:
        output = ROOT / "benchmarks" / "results.md"
    elif output is None:
        fd, name = tempfile.mkstemp(prefix="voyager-brain-bench-", suffix=".md")
        os.close(fd)
        output = Path(name)

    started = datetime.now(UTC)
    clock = time.perf_counter()
    results = run(plan, args.only)
    total = time.perf_counter() - clock
    output.parent.mkdir(parents=True, exist_ok=True)
    text = render_results(results, plan, started, total, args.only)
    output.write_text(text, encoding="utf-8")
    print(f"\nwrote {output} ({total:.1f} s)")
    missed = results.missed
    if missed:
        print(f"{len(missed)} target(s) missed:")
        for table, row in missed:
            print(
                f"  MISSED: {table}: {row.what}, {row.size}: {_ms(row.ours_ms)} {row.unit} "
                f"(target {row.target})"
            )
    else:
        print("all targets met")
    if args.smoke:
        print("(a smoke run: its sizes are too small to judge the targets by)")
    return exit_status(len(missed), smoke=args.smoke)


def exit_status(missed: int, *, smoke: bool) -> int:
    """1 when a full or partial run missed a target, else 0 (a smoke run is not judged)."""
    return 1 if missed and not smoke else 0


if __name__ == "__main__":
    sys.exit(main())

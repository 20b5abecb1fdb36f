"""Against Rho, the tool behind seed 001: the context of a 40,000-learning log.

`voyager-brain context` as a whole process beside Rho's own `readBrain` + `foldBrain` +
`buildBrainPrompt` (extensions/lib/brain-store.ts) in one tsx process, on the same file
(the log keeps Rho's format). Rho is not a registry package: the family runs when
``VOYAGER_RHO_CHECKOUT`` names a checkout of github.com/mikeyobrien/rho and ``tsx`` is on
the PATH (or ``VOYAGER_BENCH_TSX`` names it): ``npm install tsx``. Otherwise it says so
and is skipped; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from pathlib import Path

from benchmarks.content import drop_caches, make_memory_repo, settle
from benchmarks.memory import run_child
from benchmarks.plan import RHO_CACHED_TARGET, RHO_COLD_TARGET, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import _lines, timed

#: Rho's three calls, timed inside its process too. Arguments: brain-store.ts, the log,
#: the working folder. A module (.mts): the store is imported with top-level await.
SCRIPT = """\
import { pathToFileURL } from "node:url";
const [store, log, cwd] = process.argv.slice(2);
const { readBrain, foldBrain, buildBrainPrompt } = await import(pathToFileURL(store).href);
const start = performance.now();
const { entries } = readBrain(log);
const prompt = buildBrainPrompt(foldBrain(entries), cwd);
console.log(JSON.stringify({ ms: performance.now() - start, entries: entries.length,
  chars: prompt.length }));
"""


def _rho() -> tuple[Path, str] | None:
    """Rho's brain-store.ts and the tsx command, when both are here."""
    checkout = os.environ.get("VOYAGER_RHO_CHECKOUT")
    tsx = os.environ.get("VOYAGER_BENCH_TSX") or shutil.which("tsx")
    if not checkout or not tsx:
        return None
    store = Path(checkout) / "extensions" / "lib" / "brain-store.ts"
    return (store, tsx) if store.is_file() else None


def bench_rho(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    found = _rho()
    if found is None:
        print(
            "skipping Rho: set VOYAGER_RHO_CHECKOUT to a checkout of github.com/mikeyobrien/rho"
            " and put tsx on the PATH (npm install tsx) to measure against it"
        )
        return
    store, tsx = found
    size = plan.memory_target_size
    print(f"against Rho: a memory log of {size:,} lines ...", flush=True)
    top, _ = make_memory_repo(parent, f"rho-{size}", size)
    log = top / ".voyager" / "memory.jsonl"
    script = parent / "rho-context.mts"
    script.write_text(SCRIPT, encoding="utf-8")
    rho = [tsx, str(script), str(store), str(log), str(top)]
    env = child_env(pycache)
    ours = [sys.executable, "-m", "voyager_brain", "context"]
    run_child(ours, env, top)  # warm-up: bytecode; seeds the personal log
    settle(top)
    inside = json.loads(run_child(rho, os.environ.copy(), top))  # warm-up: tsx's cache
    if inside["entries"] != size:
        raise RuntimeError(f"Rho read {inside['entries']} entries of {size}")
    runs = plan.process_runs(size)
    theirs, in_process, cold, cached = [], [], [], []
    for _ in range(runs):  # taking turns, so a slow spell hits both alike
        theirs.append(
            timed(lambda: in_process.append(json.loads(run_child(rho, os.environ.copy(), top))))
        )
        drop_caches(top)
        cold.append(timed(lambda: run_child(ours, env, top)))
        # What the session before left: the fold cache and the document, nothing changed.
        cached.append(timed(lambda: run_child(ours, env, top)))
    floor = statistics.median(theirs)
    lines = _lines(size)
    results.add(
        "rho", Row("Rho: readBrain + foldBrain + buildBrainPrompt, tsx process", lines, runs, floor)
    )
    results.add(
        "rho",
        Row(
            "... the same three calls inside its process",
            lines,
            runs,
            statistics.median(m["ms"] for m in in_process),
        ),
    )
    for what, times, target in (
        ("no caches", cold, RHO_COLD_TARGET),
        ("with the caches a previous session left", cached, RHO_CACHED_TARGET),
    ):
        ours_ms = statistics.median(times)
        results.add(
            "rho",
            Row(
                f"`voyager-brain context` process, {what}",
                lines,
                runs,
                ours_ms,
                floor,
                f"<= {1 / target:g}x floor ({target:g}x faster)",
                floor / ours_ms >= target,
            ),
        )

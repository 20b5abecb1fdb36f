"""The session brain: load, persist, compaction, process start-up."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from markdown_it import MarkdownIt

from benchmarks.content import extra_entry, fixed_clock, restore
from benchmarks.plan import (
    COMPACT_TARGET_MS,
    CONFIG,
    LOAD_TARGET_RATIO,
    PERSIST_TARGET_MS,
    ROOT,
    Plan,
    Results,
    Row,
)
from benchmarks.timing import _size, median_of, medians_interleaved
from voyager_brain import BrainEntry, BrainManager
from voyager_brain.render import Templates
from voyager_brain.session.brainfile import render_sections

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

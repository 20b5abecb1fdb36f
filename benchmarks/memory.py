"""The memory log: read and fold, the `context` process, incremental context."""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.content import (
    _learning_text,
    drop_caches,
    drop_context_cache,
    make_memory_repo,
    make_repo,
    settle,
)
from benchmarks.plan import (
    CONTEXT_PROCESS_TARGET_RATIO,
    FOLD_SCALING_TARGET,
    FOLD_TARGET_RATIO,
    INCREMENTAL_TARGET,
    SEED,
    Plan,
    Results,
    Row,
)
from benchmarks.session import child_env
from benchmarks.timing import _lines, medians_interleaved, timed
from voyager_brain import BrainManager
from voyager_brain.memory import log as memory_log
from voyager_brain.memory.store import MemoryStore
from voyager_brain.session.manager import ensure_layout

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
    floor_scale = folds[large][1] / folds[small][1]
    results.add(
        "memory",
        Row(
            f"scaling of read + fold: {large // small}x the lines",
            scale,
            plan.fold_runs(large),
            folds[large][0],
            folds[small][0],
            f"<= {FOLD_SCALING_TARGET:g} × the floor's scaling ({floor_scale:.2f}x)",
            ours_scale <= FOLD_SCALING_TARGET * floor_scale,
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
    # Why read + fold scales past 10x (issue 17): the fold is one dict.update by id, and
    # a bare one of the same ids into an empty dict scales further by itself, since a
    # table of 100k ids outgrows the CPU's caches. The fold alone beside it.
    alone: dict[int, tuple[float, float]] = {}
    for size in (small, large):
        entries, _ = memory_log.read(repos[size][0] / ".voyager" / "memory.jsonl")
        ids = [e["id"] for e in entries]
        fold_ms, bare_ms = medians_interleaved(
            plan.fold_runs(size),
            [
                (lambda entries=entries: memory_log.fold(entries), None),
                (lambda ids=ids, entries=entries: {}.update(zip(ids, entries, strict=True)), None),
            ],
        )
        alone[size] = (fold_ms, bare_ms)
    for n, what in enumerate(("log.fold() alone", "a bare `{}.update(zip(ids, entries))`")):
        results.add(
            "memory",
            Row(
                f"scaling of {what}: {large // small}x the lines",
                scale,
                plan.fold_runs(large),
                alone[large][n],
                alone[small][n],
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

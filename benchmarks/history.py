"""`voyager-brain log` beside `git log -p` over the same history."""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from benchmarks.content import (
    FILES,
    LESSONS,
    LIBS,
    SUBJECTS,
    TOPICS,
    VERBS,
    _body,
    make_memory_lines,
    make_repo,
)
from benchmarks.memory import run_child
from benchmarks.plan import LOG_TARGET_RATIO, SEED, T0, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import medians_interleaved
from voyager_brain import BrainEntry, BrainManager
from voyager_brain.memory import log as memory_log
from voyager_brain.session.manager import ensure_layout


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

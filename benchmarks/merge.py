"""The merge driver on each brain file."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.content import (
    FILES,
    LESSONS,
    LIBS,
    SUBJECTS,
    TOPICS,
    _learning_text,
    _stamp,
    extra_entry,
    make_entries,
    make_memory_lines,
)
from benchmarks.hook import make_state_update
from benchmarks.memory import run_child
from benchmarks.plan import MERGE_TARGET_MS, SEED, T0, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import _lines, _size, medians_interleaved
from voyager_brain.git.merge import merge_file
from voyager_brain.memory import log as memory_log
from voyager_brain.render import Templates
from voyager_brain.session import brainfile
from voyager_brain.session.brainfile import BrainDocument
from voyager_brain.state import brainjson as state

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

"""The session-start hook, cold and with nothing changed."""

from __future__ import annotations

import functools
import json
import random
import statistics
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
    drop_caches,
    fixed_clock,
    make_entries,
    make_memory_repo,
    settle,
    wait_for_saves,
    write_brain,
)
from benchmarks.memory import _unstamped, run_child
from benchmarks.plan import (
    CONFIG,
    HOOK_COLD_TARGET,
    HOOK_PAYLOAD,
    HOOK_WARM_TARGET,
    SEED,
    T0,
    Plan,
    Results,
    Row,
)
from benchmarks.session import child_env
from benchmarks.timing import timed
from voyager_brain import BrainManager
from voyager_brain.render import Templates
from voyager_brain.session.brainfile import render_sections


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
    bench_turn_hooks(results, plan, top, env, label)


#: Codex 0.171 gives a SessionEnd hook one second (docs/agents/codex.md).
SESSION_END_TARGET_MS = 1000


def bench_turn_hooks(
    results: Results, plan: Plan, top: Path, env: dict[str, str], label: str
) -> None:
    """On the same repository, beside `python -c pass`: `hook claude stop` (a turn's end:
    a loop_status entry appended to brain.md, the session closed in history.db), no
    target; `hook codex session-end` (brain.md persisted, the session counted in
    brain.json and closed), against the second Codex allows it. Auto-memory, which runs
    detached after the hook, is off; so are auto_commit and auto_export, as by default."""
    quiet = {**env, "VOYAGER_AUTO_MEMORY": "0"}
    for agent, event, fields, what, target in (
        ("claude", "stop", {"hook_event_name": "Stop", "stop_hook_active": False},
         "hook claude stop (one turn recorded)", None),
        ("codex", "session-end", {"hook_event_name": "SessionEnd", "reason": "other"},
         "hook codex session-end (the session counted and closed)", SESSION_END_TARGET_MS),
    ):  # fmt: skip
        payload = json.dumps({**HOOK_PAYLOAD, **fields, "cwd": str(top)})
        command = [sys.executable, "-m", "voyager_brain", "hook", agent, event]
        hook = functools.partial(run_child, command, quiet, top, stdin=payload)
        hook()  # warm-up
        bares, ours = [], []
        for _ in range(plan.hook_warm_runs):
            bares.append(timed(lambda: run_child([sys.executable, "-c", "pass"], env, top)))
            ours.append(timed(hook))
        took = statistics.median(ours)
        goal = f"<= {target} ms" if target else "-"
        passed = took <= target if target else None
        results.add(
            "hook",
            Row(what, label, plan.hook_warm_runs, took, statistics.median(bares), goal, passed),
        )

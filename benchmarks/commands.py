"""Everyday read commands as a person runs them: `status`, `show`, `recall`, `rules list`,
each a whole `voyager-brain` process, beside `python -c pass` (issue 29: within 4x where
their work is small).

The project is small on purpose (the commands' work is not what is measured here): a
repository after `init`, 20 brain.md entries, a brain.json with a goal and a few
decisions, 200 learnings in the project's memory log and 10 guard rules.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from benchmarks.guard import _voyager_command
from benchmarks.memory import run_child
from benchmarks.plan import COMMAND_TARGET_RATIO, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import timed

#: The commands timed, as a person types them.
COMMANDS = (
    ("status",),
    ("show",),
    ("recall", "flaky", "test"),
    ("rules", "list"),
)


def make_project(top: Path, home: Path) -> None:
    """The small project of the module's text, written through the library."""
    from voyager_brain import BrainEntry, BrainManager
    from voyager_brain.guard import db as gdb
    from voyager_brain.guard.rules import add_rule
    from voyager_brain.memory.tool import brain_tool

    run_child(["git", "init", "-q"], os.environ.copy(), top)
    env = {**child_env(None), "VOYAGER_HOME": str(home)}
    run_child([*_voyager_command(), "init"], env, top)
    bm = BrainManager(top)
    for n in range(20):
        kind = "observation" if n % 2 else "decision"
        bm.update(BrainEntry(kind, f"note {n}: the build takes {n} s", None))
    bm.persist()
    bm.merge_state(
        {
            "activeState": {"currentGoal": "ship the importer", "blockers": []},
            "decisions": [
                {"what": f"decision {n}", "why": "it is simpler", "when": "2026-11-20"}
                for n in range(5)
            ],
        }
    )
    for n in range(200):
        brain_tool("add", cwd=str(top), type="learning", text=f"lesson {n}: a flaky test {n}")
    db = gdb.open_database(str(home / "history.db"))
    for n in range(10):
        add_rule(db, description=f"rule {n}", pattern=rf"\bdanger{n}\b", tool="Bash")
    db.close()


def bench_commands(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    top, home = parent / "commands", parent / "commands-home"
    top.mkdir()
    home.mkdir()
    saved = os.environ.get("VOYAGER_HOME")
    os.environ["VOYAGER_HOME"] = str(home)
    try:
        make_project(top, home)
    finally:
        if saved is None:
            del os.environ["VOYAGER_HOME"]
        else:
            os.environ["VOYAGER_HOME"] = saved
    env = {**child_env(pycache), "VOYAGER_HOME": str(home)}
    command = _voyager_command()
    for args in COMMANDS:
        run_child([*command, *args], env, top)  # untimed: bytecode and caches
    floors: list[float] = []
    times: dict[tuple[str, ...], list[float]] = {args: [] for args in COMMANDS}
    for _ in range(plan.guard_runs):
        floors.append(timed(lambda: run_child([sys.executable, "-c", "pass"], env, top)))
        for args in COMMANDS:
            times[args].append(timed(lambda a=args: run_child([*command, *a], env, top)))  # type: ignore[misc]
    floor = statistics.median(floors)
    for args in COMMANDS:
        ours = statistics.median(times[args])
        results.add(
            "commands",
            Row(
                f"voyager-brain {' '.join(args)}",
                "20 entries, 200 learnings, 10 rules",
                plan.guard_runs,
                ours,
                floor,
                f"<= {COMMAND_TARGET_RATIO:g}x floor",
                ours / floor <= COMMAND_TARGET_RATIO,
            ),
        )

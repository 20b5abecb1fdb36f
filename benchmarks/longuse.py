"""Long use: history.db after thousands of hook calls, as months of an agent leave it.

A project whose history.db holds `plan.guard_rules` regex rules and
`plan.guard_calls` tool calls takes `plan.longuse_calls` hook calls (Claude Code's
pre-tool-use and post-tool-use, in pairs). They are driven by `drive`: one process
that forks a child per call, each child running the hook as the console script does
(`__main__._hook`, which ends in ``os._exit``) on its own new connection, so that
every call is the database's first connection, as every real hook is, at a fraction
of a new interpreter's cost.

Measured: the write-ahead log's largest size while the calls are made, against the
size it reaches when the hooks do not bound it (`guard.db.bound_wal` skipped, over
`plan.longuse_unbounded_calls` calls of a copy of the database); and the pre-tool-use
hook as a real process (the console script) at the 10th call and after the last,
each beside ``python -c pass`` measured in turns with it.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.guard import TOOL_EVENTS, _voyager_command, make_guard_database, tool_call_payload
from benchmarks.memory import run_child
from benchmarks.plan import LONG_USE_HOOK_TARGET, LONG_USE_WAL_TARGET_MB, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import timed

#: The driver (see the module's text). Arguments: the project, VOYAGER_HOME, how many
#: pairs of calls, the first call's number, and whether the hooks bound the log ("1")
#: or leave as they did before (``hooks.run``, then ``os._exit``). Prints the log's
#: largest size and its size at the end, in bytes, as JSON.
DRIVER = r"""
import json, os, sys
from voyager_brain.__main__ import _hook
from voyager_brain.integrations.hooks import run
# What a hook imports and compiles, done once here rather than in every child; nothing
# here opens history.db, so each child still makes the first connection.
import voyager_brain.integrations.claude, voyager_brain.integrations.toolcalls
import voyager_brain.guard.check, voyager_brain.guard.record, voyager_brain.guard.teamrules
from voyager_brain.redact import redact
redact("warm up: sk-ant-api03-" + "x" * 90)

top, home, pairs, first, bound = sys.argv[1:6]
base = {"session_id": "long-use", "cwd": top, "transcript_path": os.devnull}
payload = os.path.join(home, "payload.json")
wal = os.path.join(home, "history.db-wal")

def hook(event, data):
    with open(payload, "w", encoding="utf-8") as f:
        json.dump({**base, **data}, f)
    pid = os.fork()
    if pid == 0:
        sys.stdin = open(payload, encoding="utf-8")
        sys.stdout = open(os.devnull, "w")
        if bound == "1":
            _hook("claude", event)
        code = run("claude", event)
        sys.stdout.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"hook {event} failed")

def size():
    return os.path.getsize(wal) if os.path.exists(wal) else 0

largest = 0
for n in range(int(first), int(first) + int(pairs)):
    call = {"tool_name": "Bash", "tool_input": {"command": f"pytest -q -k case{n}"},
            "tool_use_id": f"toolu_long_{n:06d}"}
    hook("pre-tool-use", {"hook_event_name": "PreToolUse", **call})
    largest = max(largest, size())
    hook("post-tool-use", {"hook_event_name": "PostToolUse", **call,
                           "tool_response": {"stdout": f"{n} passed " + "." * 600,
                                             "stderr": "", "interrupted": False}})
    largest = max(largest, size())
print(json.dumps({"largest": largest, "end": size()}))
"""


def drive(
    top: Path, home: Path, calls: int, *, first: int = 0, bound: bool = True
) -> dict[str, int]:
    """`calls` hook calls (pre- and post-tool-use in turn) on `home`'s history.db for
    the project at `top`: the log's largest and final sizes in bytes."""
    pairs, limit = str(calls // 2), "1" if bound else "0"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(top), str(home), pairs, str(first), limit],
        cwd=top,
        env={**os.environ, "VOYAGER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the hook driver failed:\n{done.stderr[-3000:]}")
    sizes: dict[str, int] = json.loads(done.stdout)
    return sizes


def _hook_beside_floor(
    top: Path, env: dict[str, str], runs: int, start: int, agent: str = "claude"
) -> tuple[float, float]:
    """`agent`'s tool-call hook as a real process, and `python -c pass`, in turns:
    medians in ms."""
    hook = [*_voyager_command(), "hook", agent, TOOL_EVENTS[agent]]
    warm = json.dumps(tool_call_payload(agent, str(top), f"toolu_warm_{agent}_{start}"))
    run_child(hook, env, top, stdin=warm)  # untimed: bytecode and caches as a hook finds them
    ours, floors = [], []
    for n in range(runs):
        call = f"toolu_timed_{agent}_{start + n}"
        stdin = json.dumps(tool_call_payload(agent, str(top), call))
        floors.append(timed(lambda: run_child([sys.executable, "-c", "pass"], env, top)))
        ours.append(timed(lambda s=stdin: run_child(hook, env, top, stdin=s)))  # type: ignore[misc]
    return statistics.median(ours), statistics.median(floors)


def bench_longuse(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    top, home = parent / "longuse", parent / "longuse-home"
    top.mkdir()
    home.mkdir()
    run_child(["git", "init", "-q"], os.environ.copy(), top)
    make_guard_database(home / "history.db", plan)
    # The same database for the run without the bound.
    unbounded = parent / "longuse-unbounded-home"
    unbounded.mkdir()
    shutil.copy(home / "history.db", unbounded / "history.db")

    env = {**child_env(pycache), "VOYAGER_HOME": str(home)}
    size = f"{plan.guard_rules} rules, {plan.guard_calls:,} calls"
    target = f"<= {LONG_USE_HOOK_TARGET:g}x floor"
    drive(top, home, 10)
    early, early_floor = _hook_beside_floor(top, env, plan.guard_runs, 0)
    results.add(
        "long use",
        Row(
            "hook claude pre-tool-use at the 10th call",
            size,
            plan.guard_runs,
            early,
            early_floor,
            target,
            early / early_floor <= LONG_USE_HOOK_TARGET,
        ),
    )
    calls = plan.longuse_calls
    print(f"long use: {calls:,} hook calls ...", flush=True)
    sizes = drive(top, home, calls - 10 - plan.guard_runs, first=10)
    late, late_floor = _hook_beside_floor(top, env, plan.guard_runs, calls)
    results.add(
        "long use",
        Row(
            f"hook claude pre-tool-use at the {calls:,}th call",
            size,
            plan.guard_runs,
            late,
            late_floor,
            target,
            late / late_floor <= LONG_USE_HOOK_TARGET,
        ),
    )
    results.add(
        "long use",
        Row(
            f"... against the 10th call ({calls:,}th / 10th, each over its floor)",
            size,
            plan.guard_runs,
            (late / late_floor) / (early / early_floor),
            None,
            "<= 1.1",
            (late / late_floor) / (early / early_floor) <= 1.1,
            unit="x",
        ),
    )
    for agent, event in TOOL_EVENTS.items():
        if agent == "claude":
            continue  # timed above
        ours, floor = _hook_beside_floor(top, env, plan.guard_runs, calls, agent)
        results.add(
            "long use",
            Row(
                f"hook {agent} {event} after the {calls:,} calls",
                size,
                plan.guard_runs,
                ours,
                floor,
                target,
                ours / floor <= LONG_USE_HOOK_TARGET,
            ),
        )
    print(f"long use: {plan.longuse_unbounded_calls:,} calls without the bound ...", flush=True)
    before = drive(top, unbounded, plan.longuse_unbounded_calls, bound=False)
    mb = 2**20
    results.add(
        "long use",
        Row(
            f"history.db-wal, largest over {calls:,} calls",
            f"before: {before['largest'] / mb:.1f} MB at {plan.longuse_unbounded_calls:,}",
            1,
            sizes["largest"] / mb,
            None,
            f"<= {LONG_USE_WAL_TARGET_MB:g} MB",
            sizes["largest"] / mb <= LONG_USE_WAL_TARGET_MB,
            unit="MB",
        ),
    )

"""Guard rules and the session history (seed 003): the pre-tool-use hook, `rules test`
with many rules, and importing a large transcript."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.memory import run_child
from benchmarks.plan import GUARD_HOOK_TARGET, IMPORT_TARGET_RATIO, SEED, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import timed

#: A process that does the least a pre-tool-use hook must: import what pip's launcher and
#: the payload need, read the JSON, open history.db, read the rules, write one row.
MINIMAL = """
import re, sys, json, sqlite3, os
payload = json.loads(sys.stdin.read())
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("SELECT * FROM rules WHERE active = 1").fetchall()
db.execute(
    "INSERT INTO tool_calls (message_id, tool, input, external_id) VALUES (1, ?, ?, ?)",
    (payload["tool_name"], json.dumps(payload["tool_input"]), "min-" + payload["tool_use_id"]),
)
db.execute("COMMIT")
os._exit(0)
"""
#: The same with the C modules the packages wrap (`_json`, `_sqlite3`): the least a Python
#: hook that reads history.db can cost; `_sqlite3` itself imports functools and collections.
MINIMAL_C = """
import sys, os, _json, _sqlite3
class Reading:
    strict, object_hook, object_pairs_hook = True, None, None
    parse_float, parse_int, parse_constant = float, int, None
payload, _ = _json.make_scanner(Reading())(sys.stdin.read(), 0)
db = _sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("SELECT * FROM rules WHERE active = 1").fetchall()
db.execute(
    "INSERT INTO tool_calls (message_id, tool, input, external_id) VALUES (1, ?, ?, ?)",
    (payload["tool_name"], _json.encode_basestring(str(payload["tool_input"])),
     "minc-" + payload["tool_use_id"]),
)
db.execute("COMMIT")
os._exit(0)
"""
COMMANDS = ("rm", "curl", "git", "pip", "npm", "docker", "kubectl", "terraform", "psql", "ssh")
FLAGS = ("-rf", "--force", "--hard", "-9", "--no-verify", "--prune", "-f", "--all", "-y", "-x")
TARGETS = ("/", "main", "production", "prod-db", "origin", "~", "*", "node_modules", "/etc", "..")


def make_rules(db: sqlite3.Connection, count: int, seed: int) -> None:
    """`count` active regex rules of realistic shapes: commands with flags and targets,
    most for Bash, some for file writes, a few for every tool."""
    from voyager_brain.guard.rules import add_rule

    rng = random.Random(seed)
    for n in range(count):
        command, flag, target = rng.choice(COMMANDS), rng.choice(FLAGS), rng.choice(TARGETS)
        shape = n % 10
        if shape < 7:
            pattern = rf"\b{command}\b.*\s{re.escape(flag)}\s+{re.escape(target)}{n}\b"
            tool: str | None = "Bash"
        elif shape < 9:
            pattern = rf"(?i)(api|secret)_?key\s*=\s*['\"][A-Za-z0-9]{{{16 + n % 8}}}"
            tool = "Write" if shape == 7 else "Edit"
        else:
            pattern = rf"{re.escape(target)}{n}/\.ssh/"
            tool = None
        add_rule(
            db,
            description=f"rule {n}: never {command} {flag} {target}",
            pattern=pattern,
            tool=tool,
            action=("block", "block", "warn", "log")[n % 4],
            priority=n % 5,
            solution="ask the user first",
        )


def make_history(db: sqlite3.Connection, calls: int, seed: int) -> None:
    """`calls` tool calls in sessions of 100, each under an assistant message after a
    user prompt, with a trigger on one call in twenty."""
    rng = random.Random(seed)
    rule_ids = [r[0] for r in db.execute("SELECT id FROM rules")] or [None]
    db.execute("BEGIN")
    db.execute("INSERT OR IGNORE INTO projects (path, name) VALUES ('/srv/app', 'app')")
    project = db.execute("SELECT id FROM projects WHERE path = '/srv/app'").fetchone()[0]
    call_id = 0
    for s in range(max(1, calls // 100)):
        day = f"2026-{1 + s % 12:02d}-{1 + s % 28:02d}"
        session = db.execute(
            "INSERT INTO sessions (project_id, task, started_at, status, external_id)"
            " VALUES (?, ?, ?, 'completed', ?)",
            (project, f"task {s}", f"{day} 09:00:00.000", f"bench-{s}"),
        ).lastrowid
        rows = []
        for c in range(100):
            if call_id >= calls:
                break
            stamp = f"{day} {9 + c // 60:02d}:{c % 60:02d}:00.000"
            message = db.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                (session, "assistant", f"step {c}", stamp),
            ).lastrowid
            command = f"{rng.choice(COMMANDS)} {rng.choice(FLAGS)} {rng.choice(TARGETS)}"
            rows.append(
                (
                    message,
                    "Bash",
                    json.dumps({"command": command}),
                    "ok\n" * 20,
                    stamp,
                    f"tu-{call_id}",
                )
            )
            call_id += 1
        db.executemany(
            "INSERT INTO tool_calls (message_id, tool, input, output, timestamp, external_id)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    db.executemany(
        "INSERT INTO rule_triggers (rule_id, tool_call_id, action_taken) VALUES (?, ?, 'block')",
        [(rng.choice(rule_ids), n) for n in range(1, call_id + 1, 20)],
    )
    db.execute("COMMIT")


def make_guard_database(path: Path, plan: Plan) -> None:
    """history.db at `path` with `plan.guard_rules` rules and `plan.guard_calls` calls."""
    from voyager_brain.guard import db as gdb

    print(
        f"building history.db: {plan.guard_rules} rules, {plan.guard_calls:,} tool calls ...",
        flush=True,
    )
    db = gdb.open_database(str(path))
    make_rules(db, plan.guard_rules, SEED + 10)
    make_history(db, plan.guard_calls, SEED + 11)
    db.close()
    gdb.close_all()


def make_transcript(path: Path, megabytes: float, seed: int) -> int:
    """A Claude Code transcript of about `megabytes`: prompts, assistant text with tool
    uses, and tool results of a few kilobytes. Returns its line count."""
    rng = random.Random(seed)
    limit = int(megabytes * 1_000_000)
    written = lines = 0
    n = 0
    with path.open("w", encoding="utf-8") as f:
        while written < limit:
            stamp = f"2026-03-21T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.000Z"
            common = {"sessionId": "bench-transcript", "cwd": "/srv/app", "timestamp": stamp}
            tool_id = f"toolu_{n:08d}"
            entries = [
                {
                    **common,
                    "type": "user",
                    "uuid": f"u{n}",
                    "message": {
                        "role": "user",
                        "content": f"Please fix bug {n} in module {rng.randrange(50)}",
                    },
                },
                {
                    **common,
                    "type": "assistant",
                    "uuid": f"a{n}",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "text",
                                "text": "Looking at the failing test first. " * rng.randrange(1, 6),
                            },
                            {
                                "type": "tool_use",
                                "id": tool_id,
                                "name": "Bash",
                                "input": {"command": f"pytest tests/test_{n % 97}.py -x"},
                            },
                        ],
                    },
                },
                {
                    **common,
                    "type": "user",
                    "uuid": f"r{n}",
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": tool_id,
                                "content": "F" * 40
                                + "\n"
                                + "E   assert x == y\n" * rng.randrange(20, 200),
                                "is_error": n % 7 == 0,
                            },
                        ],
                    },
                },
            ]
            for entry in entries:
                line = json.dumps(entry) + "\n"
                f.write(line)
                written += len(line)
                lines += 1
            n += 1
    return lines


def _voyager_command() -> list[str]:
    """How an agent runs us: the console script (pip's launcher imports `re`), else -m."""
    script = Path(sys.executable).with_name("voyager-brain")
    if script.exists():
        return [str(script)]
    found = shutil.which("voyager-brain")
    return [found] if found else [sys.executable, "-m", "voyager_brain"]


#: Each agent's tool-call event, as its hook command names it.
TOOL_EVENTS = {
    "claude": "pre-tool-use",
    "codex": "pre-tool-use",
    "gemini": "before-tool",
    "cursor": "pre-tool-use",
    "copilot": "pre-tool-use",
}


def tool_call_payload(agent: str, cwd: str, call_id: str) -> dict[str, Any]:
    """The same shell call (`npm run build -- --watch`) as each agent sends it (the
    shapes of tests/fixtures/AGENT/)."""
    command = {"command": "npm run build -- --watch", "description": "Build"}
    if agent in ("claude", "codex"):
        return {
            "session_id": f"bench-{agent}",
            "transcript_path": "",
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": command,
            "tool_use_id": call_id,
        }
    if agent == "gemini":
        return {
            "session_id": "bench-gemini",
            "transcript_path": "",
            "cwd": cwd,
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-25T10:00:00.000Z",
            "tool_name": "run_shell_command",
            "tool_input": command,
        }
    if agent == "cursor":
        return {
            "conversation_id": "bench-cursor",
            "generation_id": call_id,
            "hook_event_name": "preToolUse",
            "workspace_roots": [cwd],
            "tool_name": "Shell",
            "tool_input": {"command": command["command"], "working_directory": cwd},
            "tool_use_id": call_id,
            "cwd": cwd,
        }
    assert agent == "copilot", agent
    return {
        "sessionId": "bench-copilot",
        "timestamp": 1785400002000,
        "cwd": cwd,
        "toolName": "bash",
        "toolArgs": json.dumps(command),
    }


def bench_guard(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    from voyager_brain.guard import db as gdb
    from voyager_brain.guard.transcript import import_transcript

    top = parent / "guard"
    top.mkdir()
    run_child(["git", "init", "-q"], os.environ.copy(), top)
    home = Path(os.environ["VOYAGER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    make_guard_database(home / "history.db", plan)
    size = f"{plan.guard_rules} rules, {plan.guard_calls:,} calls"

    env = child_env(pycache)
    command = _voyager_command()
    calls = iter(range(10**9))
    hooks = {agent: [*command, "hook", agent, event] for agent, event in TOOL_EVENTS.items()}

    def payload(agent: str = "claude") -> str:
        return json.dumps(tool_call_payload(agent, str(top), f"toolu_bench_{next(calls)}"))

    # What any Python hook doing this job pays: pip's console-script launcher imports re,
    # the payload is JSON, the record is a row of history.db. Ours beside it is what the
    # check itself costs.
    minimal = [sys.executable, "-c", MINIMAL, str(home / "history.db")]
    minimal_c = [sys.executable, "-c", MINIMAL_C, str(home / "history.db")]
    # Warm-up: bytecode, pattern cache.
    outputs = [run_child(hook, env, top, stdin=payload(agent)) for agent, hook in hooks.items()]
    run_child(minimal, env, top, stdin=payload())
    run_child(minimal_c, env, top, stdin=payload())
    bares, minimals, minimals_c = [], [], []
    times: dict[str, list[float]] = {agent: [] for agent in hooks}
    for _ in range(plan.guard_runs):
        bares.append(timed(lambda: run_child([sys.executable, "-c", "pass"], env, top)))
        minimals.append(timed(lambda: run_child(minimal, env, top, stdin=payload())))
        minimals_c.append(timed(lambda: run_child(minimal_c, env, top, stdin=payload())))
        for agent, hook in hooks.items():
            stdin = payload(agent)
            times[agent].append(
                timed(lambda h=hook, i=stdin: outputs.append(run_child(h, env, top, stdin=i)))
            )
    if any(outputs):
        raise RuntimeError(f"pre-tool hooks: expected no output for an allowed call: {outputs}")
    bare = statistics.median(bares)
    results.add(
        "guard",
        Row(
            "minimal hook: read JSON, insert one row",
            size,
            plan.guard_runs,
            statistics.median(minimals),
            bare,
        ),
    )
    results.add(
        "guard",
        Row(
            "... the same with the C modules (_json, _sqlite3)",
            size,
            plan.guard_runs,
            statistics.median(minimals_c),
            bare,
        ),
    )
    for agent, event in TOOL_EVENTS.items():
        ours = statistics.median(times[agent])
        results.add(
            "guard",
            Row(
                f"hook {agent} {event} (no rule matches)",
                size,
                plan.guard_runs,
                ours,
                bare,
                f"<= {GUARD_HOOK_TARGET:g}x floor",
                ours / bare <= GUARD_HOOK_TARGET,
            ),
        )

    print(f"adding {plan.guard_test_rules:,} rules for `rules test` ...", flush=True)
    db = gdb.open_database(str(home / "history.db"))
    make_rules(db, plan.guard_test_rules - plan.guard_rules, SEED + 12)
    db.close()
    test = [*command, "rules", "test", "--tool", "Bash", "--input", '{"command": "ls -la"}']
    run_child(test, env, top)  # warm-up: the compiled patterns are cached
    bares, tests = [], []
    for _ in range(plan.guard_runs):
        bares.append(timed(lambda: run_child([sys.executable, "-c", "pass"], env, top)))
        tests.append(timed(lambda: run_child(test, env, top)))
    results.add(
        "guard",
        Row(
            "rules test (the CLI process)",
            f"{plan.guard_test_rules:,} rules",
            plan.guard_runs,
            statistics.median(tests),
            statistics.median(bares),
        ),
    )

    transcript = parent / "transcript.jsonl"
    print(f"writing a {plan.guard_transcript_mb:g} MB transcript ...", flush=True)
    lines = make_transcript(transcript, plan.guard_transcript_mb, SEED + 13)
    megabytes = transcript.stat().st_size / 1e6

    def parse_only() -> None:
        with transcript.open("rb") as f:
            for raw in f:
                json.loads(raw)

    # Untimed: the caches a second import finds (the redaction hint, compiled programs).
    warm = gdb.open_database(str(parent / "import-warm.db"))
    import_transcript(warm, str(transcript))
    warm.close()
    imports, floors = [], []
    for n in range(plan.guard_import_runs):
        floors.append(timed(parse_only))
        target = gdb.open_database(str(parent / f"import-{n}.db"))
        imports.append(timed(lambda t=target: import_transcript(t, str(transcript))))  # type: ignore[misc]
        target.close()
    results.add(
        "guard",
        Row(
            "history import of a transcript",
            f"{megabytes:.0f} MB, {lines:,} lines",
            plan.guard_import_runs,
            statistics.median(imports),
            statistics.median(floors),
            f"<= {IMPORT_TARGET_RATIO:g}x floor",
            statistics.median(imports) / statistics.median(floors) <= IMPORT_TARGET_RATIO,
        ),
    )

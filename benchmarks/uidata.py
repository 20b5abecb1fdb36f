"""A large, realistic project for the dashboard (`voyager-brain ui`) to be tested and
benchmarked on: every page has plenty to show.

`populate(parent, home=home)` builds, under `parent`:

- ``project/``: a git repository left by `voyager_brain.demo.run_demo` (two scripted
  sessions), then grown by the library's own writers: brain.md with `entries` more
  entries (`BrainManager.update` + `persist`), brain.json with every section filled
  (`merge_state`: decisions, known issues of every severity, key files of which some no
  longer exist, preferences, next steps, a blocker), a project memory log of `learnings`
  generated lines (`content.make_memory_lines`, each checked with `log.validate`; about
  90% live learnings at the end, the rest updates, tombstones and tasks) plus learnings,
  preferences, tasks and reminders added through `brain_tool`, a small working tree,
  and a pipeline in ``.brain/`` (architect done, builder done after one REVISE, reviewer
  running), all committed;
- ``home``'s ``history.db`` (`benchmarks/uihistory.py`): three projects, 200 sessions over
  the 30 days before `NOW` with `tool_calls` tool calls, 16 regex rules and the triggers
  the hook would have recorded.

The caller sets ``os.environ["VOYAGER_HOME"] = str(home)`` (and leaves
``VOYAGER_MEMORY_PATH`` unset) before calling, for the whole call: the personal memory
log, the pipeline registry and the caches go there, and the user's ``~/.voyager`` is
never touched. `populate` refuses to run otherwise.

Every time is fixed (`NOW` and the demo's scripted clock; git's dates too), and every
generated choice comes from `seed`: two runs give the same bytes apart from the folder
names (absolute paths in history.db and ``.brain/pipeline-state.json``) and the caches.
"Due" and "overdue" are meant at `NOW`: one task is overdue and one reminder (the
personal log's default, never run) is due then. A dashboard reading the wall clock
sees more of them due, since `NOW` is in the past.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.content import LIBS, TOPICS, UNICODE, make_entries, write_memory_log
from benchmarks.environment import environment
from benchmarks.plan import CONFIG, SEED, T0
from benchmarks.uihistory import counts, seeded_uuid, write_history
from voyager_brain import BrainManager
from voyager_brain.demo import run_demo
from voyager_brain.memory.tool import brain_tool
from voyager_brain.paths import home_folder
from voyager_brain.pipeline import blackboard
from voyager_brain.pipeline import state as ps
from voyager_brain.pipeline.events import append_event
from voyager_brain.pipeline.heartbeat import remember_project

#: The populated project's present: sessions, brain.json and the pipeline end just before.
NOW = T0 + timedelta(days=30)
#: The demo's commit (its clock starts at 14:30 that day).
DEMO_COMMIT = datetime(2026, 3, 21, 16, 30, tzinfo=UTC)
SMALL = {"entries": 200, "learnings": 200, "tool_calls": 2_000}


def populate(
    parent: Path,
    *,
    home: Path,
    entries: int = 10_000,
    learnings: int = 10_000,
    tool_calls: int = 100_000,
    seed: int = SEED,
) -> Path:
    """Build the project under `parent` and its history in `home` (see the module's
    text; ``VOYAGER_HOME`` must name `home`). Returns the repository's top."""
    _check_home(home)
    with _git_dates(DEMO_COMMIT):
        top = run_demo(parent / "project", echo=lambda _: None)
    if top != (parent / "project").resolve():
        # run_demo works in the enclosing repository when there is one.
        raise RuntimeError(f"{parent} is inside the git repository {top}; use another folder")
    _write_tree(top)
    _write_brain(top, entries, seed)
    _write_memory(top, learnings, seed)
    _write_pipeline(top, seed)
    with _git_dates(NOW - timedelta(minutes=2)):
        _git(top, "add", "-A")
        _git(top, "commit", "-q", "-m", "brain: a month of sessions, a pipeline under way")
    write_history(parent, top, home, tool_calls, seed, now=NOW, files=tuple(TREE))
    return top


def populate_small(parent: Path, *, home: Path, seed: int = SEED) -> Path:
    """`populate` at sizes for fast tests: 200 entries, 200 learnings, 2,000 calls."""
    return populate(parent, home=home, seed=seed, **SMALL)


def _check_home(home: Path) -> None:
    if Path(home_folder()).resolve() != home.resolve() or os.environ.get("VOYAGER_MEMORY_PATH"):
        raise RuntimeError(
            f'populate: set os.environ["VOYAGER_HOME"] = "{home}" and unset '
            "VOYAGER_MEMORY_PATH first (the personal files must not land in ~/.voyager)"
        )


def _at(moment: datetime) -> Callable[[], datetime]:
    return lambda: moment


def _git_dates(moment: datetime) -> contextlib.AbstractContextManager[None]:
    """git's author and committer dates fixed (run_demo's commits inherit them): the
    same commits, hence the same object ids, on every run."""
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S+0000")
    return environment(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)


def _git(top: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Dana Developer", "-c", "user.email=dana@example.invalid", *args],
        cwd=top,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )


# -- the working tree -------------------------------------------------------------------

#: Files of the demo's auth service that exist in the working tree (key files among them).
TREE = {
    "pyproject.toml": '[project]\nname = "project"\nversion = "0.4.0"\n'
    'dependencies = ["fastapi>=0.110", "pyjwt>=2.8"]\n',
    "src/auth.py": "from datetime import UTC, datetime\n\nfrom .tokens import decode\n\n\n"
    "def check(token: str) -> dict:\n    claims = decode(token)\n"
    '    if claims["exp"] < datetime.now(UTC).timestamp():\n'
    '        raise PermissionError("expired")\n    return claims\n',
    "src/tokens.py": "import jwt\n\nKEY_ID = 'staging-2026-03'\n\n\n"
    "def decode(token: str) -> dict:\n"
    '    return jwt.decode(token, options={"require": ["exp", "sub"]}, algorithms=["RS256"])\n',
    "src/refresh.py": "def rotate(family: str, token: str) -> str:\n"
    '    """A new refresh token; the old one is revoked with its whole family on reuse."""\n'
    "    raise NotImplementedError\n",
    "src/api/routes.py": "from fastapi import APIRouter\n\nrouter = APIRouter()\n\n\n"
    '@router.post("/login")\ndef login() -> dict:\n    return {}\n',
    "src/api/ratelimit.py": "LIMIT_PER_MINUTE = 10  # the login endpoint, per client IP\n",
    "tests/test_auth.py": "def test_expired_token_is_rejected() -> None:\n    ...\n",
    "tests/test_refresh.py": "def test_reuse_revokes_the_family() -> None:\n    ...\n",
    "docs/auth.md": "# Authentication\n\nJWT access tokens (15 min), rotating refresh tokens.\n",
    ".github/workflows/ci.yml": "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - uses: actions/checkout@v4\n      - run: pytest -q\n",
}
#: Key files brain.json still names although they are gone (stale), with their roles.
GONE = {
    "src/sessions.py": "server-side sessions (before JWT)",
    "src/legacy/session_store.py": "the in-process session store",
    "scripts/migrate_sessions.py": "one-off migration of live sessions",
    "docs/sessions.md": "the old session design",
    "web/components/LoginForm.tsx": "the login form of the old web client",
    "internal/db/pool.go": "the Go connection pool (moved to api-gateway)",
}


def _write_tree(top: Path) -> None:
    for name, text in TREE.items():
        path = top / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# -- brain.md and brain.json ------------------------------------------------------------

SEVERITIES = ("critical", "high", "medium", "low", None)


def _state_update(rng: random.Random) -> dict[str, Any]:
    """A brain.json update filling every section (merged onto the demo's)."""

    def day(n: int) -> str:
        return (T0 + timedelta(days=n)).date().isoformat()

    decisions = [
        {
            "what": f"Use {lib} for {topic}",
            "why": f"fewer moving parts than {rng.choice([o for o in LIBS if o != lib])}; "
            f"{rng.choice(UNICODE)}",
            "when": day(1 + n * 28 // 40),
            "reversible": n % 3 != 0,
        }
        for n, (lib, topic) in enumerate((lib, topic) for topic in TOPICS for lib in LIBS[:4])
    ][:40]
    issues = [
        {
            "issue": f"{topic.capitalize()} fails under load (case {n + 1})",
            "workaround": rng.choice(
                ("retry once", "run the job alone", "pin the old version", "restart the worker")
            ),
            **({"severity": SEVERITIES[n % 5]} if SEVERITIES[n % 5] else {}),
        }
        for n, topic in enumerate(TOPICS + TOPICS[:8])
    ]
    issues[0]["issue"] = "Refresh tokens are accepted after the family was revoked"
    issues[1]["issue"] = "The login endpoint has no rate limit"
    roles = {
        "README.md": "what the service is, how to run it",
        "pyproject.toml": "dependencies and the version",
        "src/auth.py": "token issue and check",
        "src/tokens.py": "JWT decoding, the signing key id",
        "src/refresh.py": "refresh-token rotation and family revocation",
        "src/api/routes.py": "the HTTP endpoints",
        "src/api/ratelimit.py": "login rate limit",
        "tests/test_auth.py": "expiry and signature tests",
        "tests/test_refresh.py": "rotation and reuse tests",
        "docs/auth.md": "the auth design for reviewers",
        ".github/workflows/ci.yml": "CI: pytest on every push",
        **GONE,
    }
    return {
        "facts": {
            "stack": ["PyJWT", "PostgreSQL 16", "Redis"],  # after the demo's Python, FastAPI
            "environment": {
                "ci": "GitHub Actions",
                "deploy": "3 nodes behind nginx",
                "python": "3.12",
                "secrets": "in the vault, never in .env",
            },
            "custom": [
                "Access tokens live 15 minutes, refresh tokens 30 days",
                "Clock skew tolerance is 30 s",
                "café ☕ is the staging tenant's name (non-ASCII on purpose)",
            ],
        },
        "decisions": decisions,
        "activeState": {
            "currentGoal": "Rate-limit the login endpoint",
            "inProgress": [
                "Sliding-window limiter in src/api/ratelimit.py",
                "Load test of /login at 200 rps",
            ],
            "blockers": ["Waiting for the security review of refresh-token rotation (SEC-142)"],
            "recentlyCompleted": ["Refresh-token families", "Expiry tests in UTC"],
        },
        "keyFiles": [{"path": path, "role": role} for path, role in roles.items()],
        "knownIssues": issues,
        "preferences": {
            "style": "ruff format, type hints everywhere, small functions",
            "constraints": ["No new dependency without a decision", "Python 3.11 compatible"],
            "communication": "Short answers; say what the tests showed",
            "testing": "pytest, real Redis in CI, no mocks of our own code",
        },
        "nextSteps": [
            "Finish the sliding-window limiter",
            "Load-test /login at 200 rps",
            "Answer the SEC-142 review",
            "Document token rotation in docs/auth.md",
            "Remove the stale session key files from brain.json",
        ],
    }


def _write_brain(top: Path, count: int, seed: int) -> None:
    """`count` entries after the demo's (a day later, one minute apart), and brain.json
    enriched, in one BrainManager session with a fixed clock."""
    shift = timedelta(days=1)
    bm = BrainManager(top, config=CONFIG, clock=_at(NOW - timedelta(hours=1)))
    before = len(bm.load().entries)
    for entry in make_entries(count, seed):
        assert entry.timestamp is not None
        bm.update(entry.replace(timestamp=entry.timestamp + shift))
    bm.merge_state(_state_update(random.Random(seed + 1)))
    bm.persist()
    found = len(BrainManager(top, config=CONFIG).load().entries)
    if found != before + count:
        raise RuntimeError(f"{bm.path}: expected {before + count} entries, read back {found}")


# -- the memory logs --------------------------------------------------------------------


def _write_memory(top: Path, lines: int, seed: int) -> None:
    """`lines` generated lines (mostly learnings) in the project log, then what a person
    adds through the brain tool: learnings, preferences, tasks, reminders."""
    write_memory_log(top, lines, seed)
    steps: list[tuple[str, datetime, dict[str, Any]]] = [
        ("add", NOW - timedelta(days=6), {"type": "learning", "id": "1ea70001",
            "text": "Refresh-token reuse must revoke the whole family, not just the token"}),
        ("add", NOW - timedelta(days=5), {"type": "learning", "id": "1ea70002",
            "text": "The login rate limit counts per client IP; behind nginx read X-Real-IP"}),
        ("add", NOW - timedelta(days=9), {"type": "preference", "id": "9ef00001",
            "category": "style", "text": "Prefer small pure functions over classes"}),
        ("add", NOW - timedelta(days=9), {"type": "preference", "id": "9ef00002",
            "category": "tools", "text": "Use uv, not pip, to install dependencies"}),
        ("add", NOW - timedelta(days=8), {"type": "preference", "id": "9ef00003",
            "category": "testing", "text": "Run the auth tests with a real Redis",
            "store": "project"}),
        ("add", NOW - timedelta(days=8), {"type": "preference", "id": "9ef00004",
            "category": "review", "text": "Every security change gets a second reviewer",
            "store": "project"}),
        ("add", NOW - timedelta(days=10), {"type": "task", "id": "7a5c0001",
            "description": "Rotate the staging signing key", "priority": "high",
            "due": (NOW - timedelta(days=3)).date().isoformat(), "tags": "security"}),
        ("add", NOW - timedelta(days=2), {"type": "task", "id": "7a5c0002",
            "description": "Fix the flaky test_refresh_race in CI", "priority": "urgent",
            "tags": "ci,tests"}),
        ("add", NOW - timedelta(days=2), {"type": "task", "id": "7a5c0003",
            "description": "Write the migration guide for v2 tokens", "due": "2027-06-30"}),
        ("add", NOW - timedelta(days=4), {"type": "task", "id": "7a5c0004",
            "description": "Pin PyJWT below 3", "priority": "low"}),
        ("task_done", NOW - timedelta(days=1), {"id": "7a5c0004"}),
        ("add", NOW - timedelta(days=12), {"type": "reminder", "id": "5e1d0001",
            "text": "Read the weekly dependency audit", "cadence": "7d", "tags": "deps"}),
        ("reminder_run", NOW - timedelta(days=1), {"id": "5e1d0001", "result": "ok"}),
        ("add", NOW - timedelta(days=12), {"type": "reminder", "id": "5e1d0002",
            "text": "Check the nightly load-test report", "cadence": "24h",
            "enabled": False},),
    ]  # fmt: skip
    # In the order of their times, as a person would have added them.
    for action, moment, params in sorted(steps, key=lambda step: step[1]):
        done = brain_tool(action, cwd=str(top), clock=_at(moment), **params)
        if not done["ok"]:
            raise RuntimeError(f"brain_tool {action} {params}: {done['message']}")


# -- the pipeline -----------------------------------------------------------------------

PIPELINE_TASK = "Rate-limit the login endpoint (10 attempts a minute per client IP)"
PLAN = """# Plan

- [x] Sliding-window counter in Redis, keyed by client IP (`src/api/ratelimit.py`)
- [x] 429 with Retry-After from `/login` (`src/api/routes.py`)
- [ ] Read the client IP from X-Real-IP behind nginx, not from the socket
- [ ] Tests: the 11th attempt in a minute is refused; another IP is not
"""
REVIEW = """# Review

Verdict: REVISE (score 6/10)

- The limiter reads the socket address: behind nginx every client is 127.0.0.1.
- No test for the Retry-After header.
"""


def _write_pipeline(top: Path, seed: int) -> None:
    """architect done, builder done, reviewer REVISE, builder again, reviewer running
    (started a few minutes before NOW, so not stalled then); each transition saved and
    its event appended as the engine does, on a fixed clock."""
    rng = random.Random(seed + 2)
    blackboard.init_brain(top)
    blackboard.bootstrap_project(top, PIPELINE_TASK)
    remember_project(top)
    roles = ("architect", "builder", "reviewer")
    moment = NOW - timedelta(hours=2)

    def tick(minutes: float) -> Callable[[], datetime]:
        nonlocal moment
        moment += timedelta(minutes=minutes)
        return _at(moment)

    def event(name: str, **fields: Any) -> None:
        append_event(top, name, _at(moment), **fields)

    state = ps.new_state(top, PIPELINE_TASK, roles, tick(0)).replace(extra={"maxRetries": 3})
    ps.save(top, state)
    event("pipeline.started", task=PIPELINE_TASK, stages=list(roles), maxRetries=3)

    def run(index: int, minutes: float, output: Callable[[], object] | None = None) -> None:
        nonlocal state
        state = ps.start_stage(state, index, tick(0.1))
        ps.save(top, state)
        event("stage.started", stage=index, role=roles[index])
        tick(minutes)  # the agent at work
        if output is not None:
            output()
        session = seeded_uuid(rng)
        state = ps.finish_stage(state, index, tick(0.05), session)
        ps.save(top, state)
        event("stage.completed", stage=index, role=roles[index], sessionId=session)
        if index + 1 < len(roles):
            state = state.replace(current_stage=index + 1, updated_at=ps.epoch_ms(moment))
            ps.save(top, state)

    brain = blackboard.brain_dir(top)
    run(0, 22, lambda: (brain / "PLAN.md").write_text(PLAN, encoding="utf-8"))
    run(1, 48)

    def review() -> None:
        (brain / "REVIEW.md").write_text(REVIEW, encoding="utf-8")
        event("review.verdict", stage=2, verdict="REVISE", source="structured", score=6, issues=2)

    run(2, 9, review)
    state = ps.restart_from(state, 1, tick(0.1))
    state = state.replace(extra={**state.extra, "lastVerdict": "REVISE"})
    ps.save(top, state)
    event("pipeline.retry", verdict="REVISE", stage=1, role="builder", retries=1)
    with (brain / "MISTAKES.md").open("a", encoding="utf-8") as f:
        f.write("\n- Behind a proxy the socket address is the proxy's: read X-Real-IP.\n")
    run(1, 31)
    state = ps.start_stage(state, 2, tick(0.1))  # the reviewer, still at work
    ps.save(top, state)
    event("stage.started", stage=2, role="reviewer")


def _main(argv: Sequence[str]) -> None:
    """``python -m benchmarks.uidata FOLDER [--small]``: populate FOLDER (its
    ``home/`` is VOYAGER_HOME) and print what was made and how long it took."""
    import time

    parent = Path(argv[0]).absolute()
    parent.mkdir(parents=True, exist_ok=True)
    home = parent / "home"
    os.environ["VOYAGER_HOME"] = str(home)
    os.environ.pop("VOYAGER_MEMORY_PATH", None)
    start = time.perf_counter()
    top = (populate_small if "--small" in argv else populate)(parent, home=home)
    print(f"{top} in {time.perf_counter() - start:.1f} s: {counts(home)}")


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])

"""`voyager-brain demo`: two scripted agent sessions on a scratch repository.

It drives the same calls an agent loop or a hook makes (load, update, compact, persist)
and prints what each did, then the status and the `git diff` of the brain files, so a new user
sees the whole product in one command. The clock is scripted, so the output is the same
on every run apart from the folder name.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from . import repo
from .errors import BrainError
from .session.manager import BrainManager, ensure_layout
from .session.model import BrainEntry
from .state.brainjson import diff

Echo = Callable[[str], None]

DEMO_BUDGET_TOKENS = 250  # small, so that the demo's compaction has work to do

_SESSION_ONE = [
    ("observation", "Task: Implement auth flow\nFiles: src/auth.py, tests/test_auth.py"),
    ("decision", "Chose JWT over sessions for a stateless API\nWhy: the API runs on 3 nodes"),
    ("loop_status", "Iteration: 1/10\nCircuit breaker: CLOSED\nProgress: started"),
    ("observation", "Read src/auth.py: sessions are kept in process memory"),
    ("observation", "Tests failing: 4 of 12 in tests/test_auth.py (token expiry)"),
    ("observation", "Found the cause: tokens compared naive and aware datetimes"),
    ("loop_status", "Iteration: 2/10\nCircuit breaker: CLOSED\nProgress: 1 file modified"),
    ("observation", "Tests failing: 2 of 12 in tests/test_auth.py (token expiry)"),
    (
        "observation",
        "Configured the staging key: OPENAI_API_KEY=sk-proj-" + "Xq7Lm2Np8Rt4Vw6Yz0Ab" * 2,
    ),
    ("loop_status", "Iteration: 3/10\nCircuit breaker: CLOSED\nProgress: 2 files modified"),
    ("reflection", "Expiry bugs came from naive datetimes; use aware UTC everywhere."),
    ("observation", "Added tests/test_auth.py::test_expired_token_is_rejected"),
    ("observation", "Outcome: tests passing, 3 iterations"),
    ("loop_status", "Iteration: 4/10\nCircuit breaker: CLOSED\nProgress: Steady — 2 files"),
]
_STATE_ONE = {
    "facts": {"stack": ["Python", "FastAPI"], "architecture": "Stateless API on 3 nodes"},
    "decisions": [
        {
            "what": "Use JWT over server-side sessions",
            "why": "The API runs on 3 nodes without shared memory",
            "when": "2026-03-21",
            "reversible": True,
        }
    ],
    "activeState": {"currentGoal": "Auth flow", "recentlyCompleted": ["Auth flow tests"]},
    "keyFiles": [{"path": "src/auth.py", "role": "Token issue and check"}],
    "nextSteps": ["Add refresh tokens", "Rate-limit the login endpoint"],
}
_STATE_TWO = {
    "decisions": [
        {
            "what": "Rotate refresh tokens on every use",
            "why": "Reuse of an old token reveals theft",
            "when": "2026-03-21",
        }
    ],
    "activeState": {"currentGoal": "Refresh tokens", "recentlyCompleted": ["Token rotation"]},
    "nextSteps": ["Rate-limit the login endpoint"],
}
_SESSION_TWO = [
    ("observation", "Task: Add refresh tokens\nStarted from the JWT decision above"),
    ("decision", "Refresh tokens rotate on every use; reuse revokes the family"),
    ("loop_status", "Iteration: 1/10\nCircuit breaker: CLOSED\nProgress: started"),
]


def scripted_clock(start: datetime, step: timedelta) -> Callable[[], datetime]:
    """A clock that advances by `step` each time it is read."""
    ticks: Iterator[int] = iter(range(1_000_000))
    return lambda: start + step * next(ticks)


def _git(top: Path, *args: str) -> str:
    result = subprocess.run(
        [
            "git",
            "-c",
            "user.name=voyager-brain demo",
            "-c",
            "user.email=demo@example.invalid",
            *args,
        ],
        cwd=top,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        said = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[-1]
        raise BrainError(f"{top}: git {args[0]} failed: {said}")
    return result.stdout


def _first_line(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= 70 else line[:69] + "…"


def run_demo(directory: Path | None, echo: Echo) -> Path:
    """Run the demo in `directory` (a new temporary folder when None); return its top."""
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="voyager-brain-demo-"))
    directory.mkdir(parents=True, exist_ok=True)
    top = repo.find_top(directory)
    if top is None:
        _git(directory, "init", "-q")
        (directory / "README.md").write_text("# demo project\n")
        # Named by its manifest, not its folder: the figures it prints (sizes, tokens)
        # are then the same wherever it runs.
        (directory / "pyproject.toml").write_text('[project]\nname = "auth-service"\n')
        _git(directory, "add", "README.md", "pyproject.toml")
        _git(directory, "commit", "-q", "-m", "initial commit")
        top = directory.resolve()
    echo(f"voyager-brain demo in {top}")
    ensure_layout(top / ".voyager")
    config_file = top / ".voyager" / "config.toml"
    config_file.write_text(
        config_file.read_text() + "\n# The demo compacts explicitly, with a small budget.\n"
        f"compact_budget_tokens = {DEMO_BUDGET_TOKENS}\nauto_compact = false\n"
    )
    clock = scripted_clock(datetime(2026, 3, 21, 14, 30, tzinfo=UTC), timedelta(minutes=5))

    echo("\n== Session 1: an agent implements an auth flow")
    bm = BrainManager(top, clock=clock)
    state = bm.load()
    echo(
        f"load()     {state.entry_count} entries, compacted={state.compacted} "
        "(brain.md does not exist yet)"
    )
    for kind, text in _SESSION_ONE:
        bm.update(BrainEntry(kind, text))
        echo(f"update()   {kind:<12} {_first_line(bm.entries[-1].content)}")
    report = bm.compact()
    echo(
        f"compact()  {report.entries_before} -> {report.entries_after} entries, "
        f"~{report.tokens_before} -> ~{report.tokens_after} tokens "
        f"(budget {report.budget_tokens})"
    )
    echo(
        f"           kept {report.kept}, dropped {report.merged} near-duplicate "
        f"observation and {report.superseded} older loop statuses, "
        f"summarized {report.summarized} old entries into 1 reflection"
    )
    bm.merge_state(_STATE_ONE)
    echo("merge_state() facts, 1 decision, goal, 1 key file, 2 next steps into brain.json")
    bm.persist()
    echo(
        f"persist()  .voyager/brain.md, {bm.get_status().size_bytes:,} bytes; "
        f".voyager/brain.json, session {bm.state.session_count}"
    )
    _git(top, "add", ".voyager")
    _git(top, "commit", "-q", "-m", "brain: session 1")
    echo("git commit -m 'brain: session 1'")

    echo("\n== Session 2: a new process picks up where session 1 stopped")
    bm = BrainManager(top, clock=clock)
    state = bm.load()
    echo(
        f"load()     {state.entry_count} entries, compacted={state.compacted}, "
        f"last updated {state.last_updated:%Y-%m-%dT%H:%M:%SZ}"
    )
    for kind, text in _SESSION_TWO:
        bm.update(BrainEntry(kind, text))
        echo(f"update()   {kind:<12} {_first_line(text)}")
    before = bm.state.data
    after = bm.merge_state(_STATE_TWO).data
    echo("merge_state() " + "; ".join(c.describe() for c in diff(before, after)))
    bm.persist()
    echo(
        f"persist()  appended {len(_SESSION_TWO)} sections to .voyager/brain.md; "
        f"brain.json is at session {bm.state.session_count}"
    )

    status = bm.get_status()
    echo("\n== get_status()")
    echo(f"path             {status.path.relative_to(top)}")
    echo(f"size_bytes       {status.size_bytes:,}")
    echo(f"entry_count      {status.entry_count}")
    last = status.last_compaction
    echo(f"last_compaction  {last:%Y-%m-%dT%H:%M:%SZ}" if last else "last_compaction  never")

    echo("\n== git diff .voyager (what session 2 adds to the pull request)")
    echo(_git(top, "diff", "--", ".voyager/brain.md", ".voyager/brain.json").rstrip("\n"))
    echo(f"\nThe brain is in {top / '.voyager' / 'brain.md'}; try `voyager-brain -C {top} status`.")
    return top

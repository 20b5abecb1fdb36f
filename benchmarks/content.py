"""The generated content: brain.md entries, repositories, memory logs, and their caches."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from benchmarks.plan import CONFIG, SEED, T0
from voyager_brain import BrainEntry, BrainManager, storage
from voyager_brain.memory import log as memory_log
from voyager_brain.paths import voyager_home
from voyager_brain.session.manager import ensure_layout

# -- the content ------------------------------------------------------------------------

FILES = (
    "src/auth/login.py",
    "src/auth/session.py",
    "src/api/routes.py",
    "tests/test_api.py",
    "web/components/Header.tsx",
    "internal/db/pool.go",
    "docs/guide.md",
    "Cargo.toml",
    "scripts/release.sh",
    "src/i18n/messages_fr.json",
)
TOPICS = (
    "token refresh",
    "the retry loop",
    "the schema migration",
    "the flaky CI job",
    "Unicode file names",
    "the cache layer",
    "rate limiting",
    "the i18n strings",
    "the websocket reconnect",
    "pagination",
    "the config loader",
    "error reporting",
)
VERBS = ("Implement", "Fix", "Refactor", "Investigate", "Test", "Document", "Speed up")
UNICODE = (
    "café ☕ in the fixture name",
    "naïve datetime → must be UTC",
    "✓ all green locally",
    "日本語のファイル名 breaks the glob",
    "Ünïcödé path on macOS (NFD)",
    "emoji 🚀 in a commit message",
    "Ελληνικά in the locale file",
    "a non-breaking space\u00a0in the CSV header",
)
LIBS = ("httpx", "SQLAlchemy", "pydantic", "a plain dataclass", "Redis", "SQLite", "tenacity")
STATUSES = ("in progress", "blocked on review", "tests red", "tests green", "waiting for CI")
CODE = (
    ("python", ["def backoff(attempt: int) -> float:", "    return min(2 ** attempt, 30)"]),
    ("bash", ["pytest -q -k 'auth and not slow'", "git diff --stat HEAD~1"]),
    ("json", ['{"retries": 3, "timeout_s": 2.5,', ' "locale": "fr_FR"}']),
    ("diff", ["-    timeout = 1", "+    timeout = 2.5  # CI is slow"]),
    ("go", ["if err != nil {", '\treturn fmt.Errorf("pool: %w", err)', "}"]),
)


def _code_block(rng: random.Random) -> list[str]:
    lang, lines = rng.choice(CODE)
    return [f"```{lang}", *lines, "```"]


def _body(kind: str, rng: random.Random, n: int) -> str:
    topic, file, verb = rng.choice(TOPICS), rng.choice(FILES), rng.choice(VERBS)
    if kind == "observation":
        lines = [
            f"Task: {verb} {topic} in `{file}`",
            f"- Ran `pytest -q` → {rng.randint(40, 400)} passed, {rng.randint(0, 5)} failed",
            f"- Noticed: {rng.choice(UNICODE)}",
            f"- Next: check `{rng.choice(FILES)}` line {rng.randint(1, 900)}",
        ]
        if rng.random() < 0.35:
            lines += ["", "Reproduced with:", *_code_block(rng)]
    elif kind == "decision":
        alt = rng.choice(LIBS)
        lines = [
            f"Decision: use {rng.choice(LIBS)} for {topic} (entry {n}).",
            "",
            "**Why:**",
            f"- fewer moving parts than {alt}",
            f"- keeps `{file}` testable without a network",
            f"Rejected: {alt} — {rng.choice(UNICODE)}.",
        ]
        if rng.random() < 0.2:
            lines += ["", *_code_block(rng)]
    elif kind == "loop_status":
        total = rng.randint(5, 20)
        lines = [
            f"Iteration: {rng.randint(1, total)}/{total}",
            f"Status: {rng.choice(STATUSES)}",
            f"Tests: {rng.randint(40, 400)} passed, {rng.randint(0, 9)} failed",
            f"Next step: {verb.lower()} {topic}",
        ]
    else:
        lines = [
            f"Reflection on {topic}:",
            f"1. What went well: {verb.lower()}ing `{file}` in small steps",
            f"2. What to improve: read `{rng.choice(FILES)}` before editing it",
            f"> {rng.choice(UNICODE)}",
        ]
        if rng.random() < 0.3:
            lines += ["", "Lesson: write the failing test first.", *_code_block(rng)]
    return "\n".join(lines)


def make_entries(count: int, seed: int = SEED) -> list[BrainEntry]:
    """`count` realistic entries, one minute apart from 2026-03-21T00:00:00Z."""
    rng = random.Random(seed)
    kinds = ("observation", "decision", "loop_status", "reflection")
    weights = (50, 15, 20, 15)
    return [
        BrainEntry(
            kind,
            _body(kind, rng, n),
            T0 + timedelta(minutes=n),
            rng.choice((None, None, "hook", "agent")),
        )
        for n, kind in enumerate(rng.choices(kinds, weights, k=count))
    ]


def extra_entry(n: int) -> BrainEntry:
    """A new entry stamped after every generated one (for the persist runs)."""
    return BrainEntry(
        "observation",
        f"Task: benchmark persist run {n}\n- appended by benchmarks/run.py\n- ✓ fast path",
        T0 + timedelta(days=30, minutes=n),
        "hook",
    )


# -- the repository ---------------------------------------------------------------------


def fixed_clock() -> datetime:
    return T0 + timedelta(days=60)


def make_repo(parent: Path, name: str) -> Path:
    top = parent / name
    top.mkdir()
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", str(top)],
        check=True,
        capture_output=True,
    )
    return top


def write_brain(top: Path, entries: Sequence[BrainEntry]) -> bytes:
    """brain.md with `entries`, written by the library; returns its bytes."""
    bm = BrainManager(top, config=CONFIG, clock=fixed_clock)
    bm.load()
    for entry in entries:
        bm.update(entry)
    bm.persist()
    data = bm.path.read_bytes()
    if len(BrainManager(top, config=CONFIG).load().entries) != len(entries):
        raise RuntimeError(f"{bm.path}: wrote {len(entries)} entries, read back another count")
    return data


def restore(top: Path, data: bytes) -> None:
    (top / ".voyager" / "brain.md").write_bytes(data)


# -- the memory log ---------------------------------------------------------------------

SUBJECTS = (
    "The retry loop",
    "Token refresh",
    "The schema migration",
    "The flaky CI job",
    "The cache layer",
    "Rate limiting",
    "The i18n loader",
    "Pagination",
    "The config loader",
    "The websocket reconnect",
    "Error reporting",
    "The release script",
)
LESSONS = (
    "needs a fresh token before the second request",
    "breaks on NFD file names (macOS); normalize to NFC first",
    "must run with `pytest -p no:randomly` or the fixture order hides a leak",
    "compares naïve datetimes; convert to UTC first → off by one hour otherwise",
    "is slow under CI: timeout_s 2.5, not 1",
    "prints the café ☕ fixture as mojibake unless the handler is UTF-8",
    "goes through SQLAlchemy sessions, never raw connections",
    "retries 429s with exponential backoff capped at 30 s",
    "keeps state in Redis; flush it between tests",
    "fails on 日本語 paths with the old glob; use pathlib",
    "is covered by tests/test_api.py::test_refresh, run it first",
    "reads settings once at import; tests must monkeypatch before importing",
)
TASKS = (
    "Add a regression test for",
    "Document",
    "Profile",
    "Split the module behind",
    "Ask in review about",
)


def _stamp(moment: datetime) -> str:
    """The memory log's time format (``2026-03-21T00:00:00.000Z``)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _learning_text(rng: random.Random) -> str:
    subject, lesson = rng.choice(SUBJECTS), rng.choice(LESSONS)
    text = f"{subject} {lesson}"
    if len(text) < 60 or rng.random() < 0.5:
        longer = f"{subject} in `{rng.choice(FILES)}` {lesson}"
        if len(longer) <= 120:
            text = longer
    if len(text) < 60:
        text += f" (seen {rng.randint(2, 9)} times)"
    return text


def make_memory_lines(count: int, seed: int = SEED) -> list[dict[str, object]]:
    """`count` lines of a project memory log, in file order: mostly new learnings
    (project-scoped, ~60-120 characters of text), ~5% updates re-writing an earlier
    learning with an ``updated`` time, ~2% tombstones, ~1% tasks; 37 s apart from
    2026-03-21T00:00:00Z."""
    rng = random.Random(seed)
    used: set[str] = set()
    live: list[dict[str, object]] = []  # live learnings, for updates and tombstones

    def new_id() -> str:
        while True:
            candidate = f"{rng.getrandbits(32):08x}"
            if candidate not in used:
                used.add(candidate)
                return candidate

    lines: list[dict[str, object]] = []
    for n in range(count):
        created = _stamp(T0 + timedelta(seconds=37 * n))
        roll = rng.random()
        if roll < 0.05 and live:
            k = rng.randrange(len(live))
            live[k] = {**live[k], "text": _learning_text(rng), "updated": created}
            lines.append(live[k])
        elif roll < 0.07 and live:
            k = rng.randrange(len(live))
            target = live[k]
            live[k] = live[-1]
            live.pop()
            lines.append(
                {
                    "id": new_id(),
                    "type": "tombstone",
                    "target_id": target["id"],
                    "target_type": "learning",
                    "reason": rng.choice(("removed", "decay", "outdated")),
                    "created": created,
                }
            )
        elif roll < 0.08:
            lines.append(
                {
                    "id": new_id(),
                    "type": "task",
                    "description": f"{rng.choice(TASKS)} {rng.choice(SUBJECTS).lower()}",
                    "status": "pending",
                    "priority": rng.choice(("low", "normal", "high")),
                    "due": None,
                    "tags": [],
                    "completedAt": None,
                    "created": created,
                }
            )
        else:
            entry: dict[str, object] = {
                "id": new_id(),
                "type": "learning",
                "text": _learning_text(rng),
                "source": rng.choice(("manual", "manual", "auto")),
                "scope": "project",
                "projectPath": ".",  # relative in the project log: the repository top
                "created": created,
            }
            live.append(entry)
            lines.append(entry)
    return lines


def write_memory_log(top: Path, count: int, seed: int = SEED) -> bytes:
    """``.voyager/memory.jsonl`` of `count` lines (validated by the library); its bytes."""
    lines = make_memory_lines(count, seed)
    for n, line in enumerate(lines):
        memory_log.validate(line, f"generated line {n + 1}")
    data = b"".join(memory_log.encode(line) for line in lines)
    (top / ".voyager" / "memory.jsonl").write_bytes(data)
    return data


def make_memory_repo(parent: Path, name: str, count: int) -> tuple[Path, bytes]:
    """A git repository with ``.voyager/`` (config.toml, .gitignore) and a memory log."""
    top = make_repo(parent, name)
    ensure_layout(top / ".voyager")
    return top, write_memory_log(top, count)


def cache_folders(top: Path) -> tuple[Path, Path]:
    return top / ".voyager" / "cache", voyager_home() / "cache"


def wait_for_saves(top: Path) -> None:
    """Wait until no detached child of an earlier command is still saving a fold cache
    (it holds the cache's lock until the file is written): its save must neither land
    after a drop (the next "no caches" run would be a warm one) nor run beside the next
    timed run (a session start comes minutes after the last one, not milliseconds)."""
    for folder in cache_folders(top):
        for lock in folder.glob("*.lock"):
            with storage.locked(lock.with_suffix("")):
                pass


def drop_caches(top: Path) -> None:
    """Remove every on-disk cache a read could reuse: the project's ``.voyager/cache``
    and the personal ``$VOYAGER_HOME/cache`` (fold caches, the context cache, the
    daily-decay stamp), once no save is under way."""
    wait_for_saves(top)
    for folder in cache_folders(top):
        shutil.rmtree(folder, ignore_errors=True)


def drop_context_cache(top: Path) -> None:
    """Remove only the cached context document (the fold caches stay, once saved)."""
    wait_for_saves(top)
    (top / ".voyager" / "cache" / "context.json").unlink(missing_ok=True)


def settle(top: Path) -> None:
    """Date the inputs a minute back, as they are when a session starts: the context
    cache does not trust files modified in the last two seconds."""
    past = time.time() - 60
    inputs = [*(top / ".voyager").glob("*"), *voyager_home().glob("*")]
    for path in inputs:
        if path.is_file():
            os.utime(path, (past, past))

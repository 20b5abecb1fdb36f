"""The ``.brain/`` files through which the agents hand work to each other (seed 004):
creating them, bootstrapping PROJECT.md from the first task, and the caps on what of
MISTAKES.md and RESEARCH/ goes into an agent's prompt.

Agent-written files are tracked by git; the engine's own files (pipeline-state.json,
events.jsonl, locks, files moved aside) are ignored by ``.brain/.gitignore``.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import confine, storage
from ..redact import redact
from .events import EVENTS_FILE
from .state import BRAIN_DIR, STATE_FILE

__all__ = [
    "FILES",
    "GITIGNORE_LINES",
    "LOGS_DIR",
    "PROJECT_MIN_CHARS",
    "bootstrap_project",
    "brain_dir",
    "capped",
    "check_files",
    "init_brain",
    "research_texts",
]

#: The agent-written files, and the RESEARCH/ folder the scout fills.
FILES = (
    "PROJECT.md",
    "BACKLOG.md",
    "DECISIONS.md",
    "PATTERNS.md",
    "MISTAKES.md",
    "PLAN.md",
    "REVIEW.md",
    "RESEARCH/",
)

#: Each stage's system prompt and its agent's output (ignored by git).
LOGS_DIR = "logs"

#: What ``.brain/.gitignore`` must hold: the engine's ephemeral files, the locks, the
#: files `reset` moves aside, the temporary files of atomic writes, and logs/ (each
#: stage's system prompt and agent output).
GITIGNORE_LINES = (STATE_FILE, EVENTS_FILE, "*.lock", "*.corrupt", ".*.tmp", f"{LOGS_DIR}/")

#: A PROJECT.md whose trimmed text is this long or shorter is replaced by a scaffold.
PROJECT_MIN_CHARS = 50

# What a new file says: who writes it and who reads it. PROJECT.md's line is short enough
# that the first run replaces it with the scaffold.
_STARTERS = {
    "PROJECT.md": "# Project\n",
    "BACKLOG.md": "# Backlog\n\nTasks for the pipeline, one per line; edited by people.\n",
    "DECISIONS.md": "# Decisions\n\nArchitectural decisions, written by the architect.\n",
    "PATTERNS.md": "# Patterns\n\nConventions the code follows; the reviewer checks them.\n",
    "MISTAKES.md": "# Mistakes\n\nLessons learned, newest last; the builder adds them.\n",
    "PLAN.md": "",
    "REVIEW.md": "",
}

_PROJECT_SCAFFOLD = """\
# Project

Written by voyager-brain from the first pipeline task; the architect refines it.

## Goal

{task}

## Stack

Not described yet.

## Conventions

Not described yet.
"""


def brain_dir(root: Path) -> Path:
    return root / BRAIN_DIR


def init_brain(root: Path) -> list[Path]:
    """Create ``.brain/``, its files and RESEARCH/ where missing, and make sure its
    .gitignore ignores the engine's files. Nothing that exists is overwritten (the
    .gitignore keeps every line it had). Returns what was created."""
    brain = brain_dir(root)
    created: list[Path] = []
    if not brain.is_dir():
        brain.mkdir(parents=True)
        created.append(brain)
    for name in FILES:
        path = brain / name
        if name.endswith("/"):
            if not path.is_dir():
                path.mkdir()
                created.append(path)
        elif not path.exists() and storage.create(path, _STARTERS[name].encode()):
            created.append(path)
    if _ensure_gitignore(brain / ".gitignore"):
        created.append(brain / ".gitignore")
    return created


def check_files(root: Path) -> None:
    """Refuse (`UnsafePathError`, one line naming the file) before a run writes anything
    when a file the pipeline reads into a prompt or writes is a link out of the
    repository, a FIFO or a device."""
    brain = brain_dir(root)
    names = [n for n in FILES if not n.endswith("/")]
    names += [STATE_FILE, EVENTS_FILE, ".gitignore", f"{STATE_FILE}.lock", f"{EVENTS_FILE}.lock"]
    for name in names:
        confine.check(brain / name)
    research = brain / "RESEARCH"
    confine.check(research / "note.md")  # RESEARCH/ itself, not a link
    if research.is_dir():
        for path in sorted(research.glob("*.md")):
            confine.check(path)


def _ensure_gitignore(path: Path) -> bool:
    """Add the missing ignore lines; True when the file was created."""
    text = "".join(f"{line}\n" for line in GITIGNORE_LINES)
    header = "# The pipeline engine's own files (voyager-brain).\n"
    if storage.create(path, (header + text).encode()):
        return True
    if not _missing_ignores(path):
        return False  # nothing to add: not even a lock file is left behind
    with storage.locked(path):
        current = (storage.read_bytes(path) or b"").decode("utf-8", errors="surrogateescape")
        missing = _missing_ignores(path)
        if missing:
            merged = current if not current or current.endswith("\n") else current + "\n"
            merged += header + "".join(f"{line}\n" for line in missing)
            storage.atomic_write(path, merged.encode("utf-8", errors="surrogateescape"))
    return False


def _missing_ignores(path: Path) -> list[str]:
    current = (storage.read_bytes(path) or b"").decode("utf-8", errors="surrogateescape")
    present = {line.strip() for line in current.splitlines()}
    return [line for line in GITIGNORE_LINES if line not in present]


def bootstrap_project(root: Path, task: str) -> bool:
    """Write PROJECT.md from `task` when it is missing or its trimmed text has at most
    `PROJECT_MIN_CHARS` characters; True when written. Longer content is kept."""
    path = brain_dir(root) / "PROJECT.md"
    with storage.locked(path):
        data = storage.read_bytes(path)
        if data is not None:
            text = data.decode("utf-8", errors="replace")
            if len(text.strip()) > PROJECT_MIN_CHARS:
                return False
        # PROJECT.md is tracked by git, and a task may quote a credential.
        scaffold = _PROJECT_SCAFFOLD.format(task=redact(task.strip()) or "Not described yet.")
        storage.atomic_write(path, scaffold.encode())
    return True


# -- what goes into prompts -----------------------------------------------------------

_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"(`{3,}|~{3,})")


def _entry_starts(body: str) -> list[int]:
    """Where each entry of `body` begins: at each heading line when there are headings
    (text before the first heading is an entry too), else at each paragraph. Lines inside
    code fences never start an entry."""
    lines = body.splitlines(keepends=True)
    offsets, heading_starts, paragraph_starts = [], [], []
    fence: str | None = None
    position, previous_blank = 0, True
    for line in lines:
        offsets.append(position)
        stripped = line.strip()
        inside = fence is not None
        if not inside and stripped and previous_blank:
            paragraph_starts.append(position)
        if not inside and _HEADING.match(line):
            heading_starts.append(position)
        fence_mark = _FENCE.match(stripped)
        if fence_mark and (fence is None or fence_mark.group(1).startswith(fence)):
            fence = fence_mark.group(1) if fence is None else None
        previous_blank = not stripped and fence is None
        position += len(line)
    if not heading_starts:
        return paragraph_starts
    if body[: heading_starts[0]].strip():
        return [paragraph_starts[0], *heading_starts]
    return heading_starts


def capped(text: str, cap: int = 3000) -> str:
    """The newest entries of MISTAKES.md that fit in `cap` characters.

    Entries are markdown sections (a heading line starts one) or, in a file without
    headings, paragraphs. Whole entries are kept from the bottom of the file, in the
    file's order, and a marker line first says how many older ones were cut. When the
    newest entry alone is longer than `cap`, its last `cap` characters are kept. The
    marker (and the blank line after it) is not counted in `cap`; a text that fits is
    returned unchanged.
    """
    body = text.rstrip()
    if len(body) <= cap:
        return text
    starts = _entry_starts(body)
    for kept, start in enumerate(starts):
        if len(body) - start <= cap:
            return f"{_marker(kept, cap, whole=True)}\n\n{body[start:]}\n"
    return f"{_marker(len(starts) - 1, cap, whole=False)}\n\n{body[-cap:] if cap else ''}\n"


def _marker(cut: int, cap: int, *, whole: bool) -> str:
    older = f"{cut} older {'entry' if cut == 1 else 'entries'} cut"
    if whole:
        return f"[{older} to keep this under {cap} characters]"
    return f"[{older}; the newest entry is longer than {cap} characters, only its end is shown]"


def research_texts(
    root: Path, cap_each: int = 2000, cap_total: int = 6000
) -> list[tuple[str, str]]:
    """The scout's notes for a prompt: ``(file name, text)`` for each ``RESEARCH/*.md``,
    sorted by name.

    A note is findings first, so each keeps its *first* `cap_each` characters (unlike
    MISTAKES.md, where the newest lessons are at the bottom), with a line saying how much
    was cut. Notes are taken in name order until `cap_total` characters are used; a later
    note gets what remains, and once nothing does, a line saying it is omitted, so that the
    agent still knows the file exists and can read it. Markers are not counted in the caps.
    """
    folder = brain_dir(root) / "RESEARCH"
    if not folder.is_dir():
        return []
    notes: list[tuple[str, str]] = []
    left = cap_total
    for path in sorted(folder.glob("*.md")):
        if not path.is_file():
            continue
        text = (storage.read_bytes(path) or b"").decode("utf-8", errors="replace").strip()
        room = min(cap_each, left)
        if room <= 0:
            notes.append((path.name, f"[omitted: {len(text)} characters over the research cap]"))
            continue
        if len(text) > room:
            text = f"{text[:room]}\n[{len(text) - room} more characters cut; read the file]"
            left -= room
        else:
            left -= len(text)
        notes.append((path.name, text))
    return notes

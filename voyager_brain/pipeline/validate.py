"""What each role must leave behind for its stage to pass (the reviewer's verdict is
checked in `verdict`). A stage that fails validation fails the pipeline; nothing retries.

- scout: at least one non-empty ``.brain/RESEARCH/*.md`` written during the stage;
- architect: a ``.brain/PLAN.md`` with at least one unchecked ``- [ ]`` item and none
  checked (the builder checks them off);
- builder: some change under the project outside ``.brain/`` (see `work_fingerprint`);
- every role: no ``.brain/**/*.md`` holding git conflict markers (`check_conflicts`): the
  next agent would read both sides of an unresolved merge as one plan or one review.

Notes and plans left by an earlier run do not count: like REVIEW.md, only what the agent
wrote during its own stage does.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from .. import storage
from . import blackboard
from .state import BRAIN_DIR

_UNCHECKED = re.compile(r"^[ \t]*[-*+][ \t]+\[ \][ \t]+\S", re.MULTILINE)
_CHECKED = re.compile(r"^[ \t]*[-*+][ \t]+\[[xX]\][ \t]+\S", re.MULTILINE)


def check_conflicts(root: Path) -> str | None:
    """None when no markdown file of ``.brain/`` holds git conflict markers, else which
    file and lines."""
    from ..conflicts import find

    folder = blackboard.brain_dir(root)
    for path in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
        try:
            regions = find(storage.read_bytes(path) or b"")
        except OSError:
            continue
        if regions:
            where = path.relative_to(root)
            return (
                f"{where} has an unresolved git conflict (lines {regions[0].start}-"
                f"{regions[0].end})"
            )
    return None


def check_scout(root: Path, started_ns: int) -> str | None:
    """None when the scout wrote research during the stage, else why not."""
    folder = blackboard.brain_dir(root) / "RESEARCH"
    notes = sorted(folder.glob("*.md")) if folder.is_dir() else []
    fresh = [
        p
        for p in notes
        if p.is_file() and _mtime(p) >= started_ns and (storage.read_bytes(p) or b"").strip()
    ]
    if fresh:
        return None
    older = ""
    if notes:
        older = f" ({len(notes)} older {'note is' if len(notes) == 1 else 'notes are'} there)"
    return f"scout wrote no .brain/RESEARCH/*.md during this stage{older}"


def check_architect(root: Path, started_ns: int) -> str | None:
    """None when PLAN.md is a fresh plan of unchecked items, else why not."""
    path = blackboard.brain_dir(root) / "PLAN.md"
    try:
        data = storage.read_bytes(path)
    except OSError:
        data = None
    if data is None:
        return "architect left no .brain/PLAN.md"
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        return "architect left .brain/PLAN.md empty"
    if _mtime(path) < started_ns:
        return "architect did not write .brain/PLAN.md during this stage"
    if not _UNCHECKED.search(text):
        return "architect's .brain/PLAN.md has no unchecked `- [ ]` item"
    checked = len(_CHECKED.findall(text))
    if checked:
        return (
            f"architect's .brain/PLAN.md has {checked} checked `- [x]` item"
            f"{'s' if checked > 1 else ''}; a new plan leaves every item for the builder"
        )
    return None


def check_builder(before: object, after: object) -> str | None:
    """None when the project changed outside .brain/ between the two fingerprints."""
    if before != after:
        return None
    return "builder changed nothing outside .brain/"


def work_fingerprint(root: Path) -> object:
    """Something that changes when the project changes outside ``.brain/``.

    In a git work tree: the project folder's entries in HEAD's tree but ``.brain`` (so a
    commit counts, one that only touches ``.brain/`` or files outside the project does
    not), and every path ``git status`` lists under the project (untracked files too,
    ignored ones not: a build's output is not work) with its size and modification time,
    so a file already modified before the stage and edited again still counts. The
    project may be a subfolder of the repository. Outside git, or when git fails: every
    file's path, size and modification time.
    """
    git = _git_fingerprint(root)
    return git if git is not None else _tree_fingerprint(root)


def _git(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=timeout)


def _git_fingerprint(root: Path) -> object | None:
    try:
        prefix = _git(root, "rev-parse", "--show-prefix")
        # Paths relative to `root`; fails (no entries) before the first commit.
        tree = _git(root, "ls-tree", "-z", "HEAD")
        status = _git(
            root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if prefix.returncode != 0 or status.returncode != 0:
        return None
    listed = tree.stdout.split(b"\0") if tree.returncode == 0 else []
    committed = tuple(sorted(r for r in listed if r and r.split(b"\t", 1)[-1] != b".brain"))
    # Porcelain paths are relative to the repository's top, whatever the folder.
    top = prefix.stdout.rstrip(b"\n").decode("utf-8", errors="surrogateescape")
    entries = []
    records = iter(status.stdout.split(b"\0"))
    for record in records:
        if len(record) < 4:
            continue
        if record[:1] in b"RC" or record[1:2] in b"RC":
            next(records, None)  # a rename's or copy's source path follows
        path = record[3:].decode("utf-8", errors="surrogateescape")
        if path.startswith(top):
            path = path[len(top) :]
        if path == ".brain" or path.startswith(".brain/"):
            continue
        entries.append((record[:2], path, _stat(root / path)))
    return (committed, tuple(sorted(entries)))


def _tree_fingerprint(root: Path) -> object:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in (".git", BRAIN_DIR))
        for name in files:
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, root), _stat(Path(path))))
    return tuple(sorted(found))


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1

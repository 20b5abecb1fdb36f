"""Committing the brain files at session end: ``auto_commit = true`` in config.toml.

Only brain.md, brain.json and memory.jsonl are committed (``git commit --only``), so
other staged work stays staged and uncommitted. Nothing is committed while git is in the
middle of a merge, rebase, cherry-pick or revert, nor when the brain files have no
changes. The message says what changed: ``brain: session 12 (+3 observations,
+1 decision)``.

Standard library and plain git subprocesses only: the session-end hook runs this.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from .. import repo, storage
from ..errors import BrainError, CorruptFileError
from .changes import BRAIN_FILES, BRAIN_JSON, BrainChanges, file_changes, kind_of, read_state


@dataclasses.dataclass(frozen=True, slots=True)
class AutoCommit:
    """What `commit_brain_files` did: a commit, or why there was none."""

    sha: str | None
    message: str | None
    files: tuple[str, ...] = ()
    skipped: str | None = None  # why nothing was committed

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def commit_brain_files(top: Path) -> AutoCommit:
    """Commit the brain files of the repository at `top` that have changes, and nothing
    else. Raises `BrainError` when a brain file cannot be read (it is not committed) or
    git refuses the commit."""
    busy = repo.operation_in_progress(top)
    if busy is not None:
        return AutoCommit(None, None, skipped=f"{busy} is in progress")
    files = [p for p in repo.brain_files_dirty(top, BRAIN_FILES) if p in BRAIN_FILES]
    if not files:
        return AutoCommit(None, None, skipped="the brain files have no changes")
    message = commit_message(top, files)
    sha = repo.commit_only(top, files, message)
    return AutoCommit(sha, message, tuple(files))


def commit_message(top: Path, files: list[str]) -> str:
    """``brain: session N (summary)``: N is brain.json's sessionCount, the summary what
    `files` changed against HEAD."""
    changes = BrainChanges()
    for path, old in zip(files, repo.read_blobs(top, [f"HEAD:{p}" for p in files]), strict=True):
        kind = kind_of(path)
        assert kind is not None
        new = storage.read_bytes(top / path)
        try:
            try:
                changes += file_changes(kind, old, new, f"HEAD:{path}", path)
            except CorruptFileError as exc:
                if exc.path == Path(path):
                    raise
                # HEAD's version is broken (a bad merge): nothing to say about this file,
                # as long as the version to commit reads.
                file_changes(kind, None, new, "", path)
        except CorruptFileError as exc:
            raise BrainError(f"not committing the brain files: {exc}") from None
    try:
        count = read_state(storage.read_bytes(top / BRAIN_JSON), BRAIN_JSON).get("sessionCount")
    except CorruptFileError:
        count = None
    head = f"brain: session {count}" if isinstance(count, int) and count > 0 else "brain: update"
    summary = changes.summary()
    return f"{head} ({summary})" if summary else head

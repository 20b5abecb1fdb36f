"""The brain files in git: what changed between two versions of them (`comparison`, for
``voyager-brain diff``).

GitPython is imported inside the functions that use it, and every `Repo` is closed before
they return (with it goes its persistent ``git cat-file --batch`` process). Blobs at a
revision are read through that one process.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import storage
from .changes import BRAIN_FILES, BrainChanges, compare
from .errors import GitError, NotInRepositoryError
from .repo import current_branch

if TYPE_CHECKING:
    import git

WORKTREE = "working tree"
INDEX = "index"


@contextlib.contextmanager
def open_repository(top: Path) -> Iterator[git.Repo]:
    """The GitPython `Repo` of the work tree at `top`, closed when the block ends."""
    import git

    try:
        repository = git.Repo(top)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotInRepositoryError(top) from None
    with repository:
        yield repository


def _commit(repository: git.Repo, rev: str) -> str | None:
    """The id of the commit `rev` names, or None."""
    import git

    try:
        return str(
            repository.git.rev_parse("--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        )
    except git.GitCommandError:
        return None


def _need_commit(repository: git.Repo, rev: str) -> str:
    commit = _commit(repository, rev)
    if commit is None:
        raise GitError(f"{rev}: unknown revision; expected a commit, branch or tag")
    return commit


def _merge_base(repository: git.Repo, a: str, b: str) -> str | None:
    import git

    try:
        return str(repository.git.merge_base(a, b))
    except git.GitCommandError:
        return None


def default_branch(repository: git.Repo) -> str | None:
    """The branch pull requests go to: origin/HEAD's (``origin/main``), else a local
    ``main``, else ``master``; None when there is none of them."""
    import git

    try:
        ref = str(repository.git.symbolic_ref("--quiet", "refs/remotes/origin/HEAD"))
        return ref.removeprefix("refs/remotes/")
    except git.GitCommandError:
        pass
    for name in ("main", "master"):
        if _commit(repository, f"refs/heads/{name}") is not None:
            return name
    return None


def read_blob(repository: git.Repo, name: str) -> bytes | None:
    """The blob `name` (``<rev>:<path>``, ``:<path>`` for the index) names; None when
    there is no such file."""
    try:
        _, kind, _, data = repository.git.get_object_data(name)
    except ValueError:  # cat-file answered "<name> missing"
        return None
    # GitPython hands the type over as bytes, whatever its annotation says
    kind_name = kind.decode() if isinstance(kind, bytes) else kind
    return data if kind_name == "blob" else None


# -- diff: two versions -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Side:
    """One of the two versions compared: a commit, the index or the working tree."""

    label: str  # as the user named it: HEAD, main, "index", "working tree"
    commit: str | None = None  # None: the index, the working tree, or no commit yet

    def describe(self) -> str:
        return f"{self.label} ({self.commit[:8]})" if self.commit else self.label

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "commit": self.commit}


@dataclasses.dataclass(frozen=True, slots=True)
class Comparison:
    """What `voyager-brain diff` shows: the two versions and what changed between them."""

    title: str
    old: Side
    new: Side
    changes: BrainChanges

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "old": self.old.to_dict(),
            "new": self.new.to_dict(),
            **self.changes.to_dict(),
        }


def compare_versions(
    top: Path, rev_range: str | None = None, *, staged: bool = False
) -> Comparison:
    """The changes to the brain files between two versions of the repository at `top`.

    `rev_range` is ``A...B`` (from the merge base of A and B to B), ``A..B``, or one
    revision A (against the working tree); a side left out is HEAD. Without it: from the
    merge base with the default branch to HEAD, or, on the default branch itself or with
    no commits to compare, from HEAD to the working tree. `staged`: from HEAD to the
    index. A file missing on one side counts as empty. Raises `GitError` for a revision
    git does not know, `CorruptFileError` for a version that cannot be read.
    """
    with open_repository(top) as repository:
        title, old, new = _sides(repository, top, rev_range, staged)
        changes = compare(
            _read_side(repository, top, old),
            _read_side(repository, top, new),
            _label(old),
            _label(new),
        )
    return Comparison(title, old, new, changes)


def _sides(
    repository: git.Repo, top: Path, rev_range: str | None, staged: bool
) -> tuple[str, Side, Side]:
    head = _commit(repository, "HEAD")
    if staged:
        return f"HEAD -> {INDEX}", Side("HEAD", head), Side(INDEX)
    if rev_range is None:
        base_ref = default_branch(repository)
        # origin/main is the default branch of a clone whose current branch is main
        on_default = base_ref is not None and base_ref.split("/", 1)[-1] == current_branch(top)
        if head is not None and base_ref is not None and not on_default:
            base = _merge_base(repository, base_ref, head)
            if base is not None and base != head:
                return (
                    f"{base_ref}...HEAD",
                    Side(f"merge base of {base_ref} and HEAD", base),
                    Side("HEAD", head),
                )
        return f"HEAD -> {WORKTREE}", Side("HEAD", head), Side(WORKTREE)
    if "..." in rev_range:
        a, b = (part or "HEAD" for part in rev_range.split("...", 1))
        base = _merge_base(repository, _need_commit(repository, a), _need_commit(repository, b))
        if base is None:
            raise GitError(f"{rev_range}: {a} and {b} have no common ancestor")
        return rev_range, Side(f"merge base of {a} and {b}", base), Side(b, _commit(repository, b))
    if ".." in rev_range:
        a, b = (part or "HEAD" for part in rev_range.split("..", 1))
        return rev_range, Side(a, _need_commit(repository, a)), Side(b, _need_commit(repository, b))
    return (
        f"{rev_range} -> {WORKTREE}",
        Side(rev_range, _need_commit(repository, rev_range)),
        Side(WORKTREE),
    )


def _label(side: Side) -> str:
    """How a side's files are named in errors: ``main:.voyager/brain.json``."""
    return "" if side.label == WORKTREE else side.label


def _read_side(repository: git.Repo, top: Path, side: Side) -> dict[str, bytes | None]:
    if side.label == WORKTREE:
        return {path: storage.read_bytes(top / path) for path in BRAIN_FILES}
    if side.label == INDEX:
        return {path: read_blob(repository, f":{path}") for path in BRAIN_FILES}
    if side.commit is None:
        return {}  # no commit yet: every file is missing
    return {path: read_blob(repository, f"{side.commit}:{path}") for path in BRAIN_FILES}

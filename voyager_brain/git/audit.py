"""The brain files in git: what changed between two versions (`compare_versions`, for
``voyager-brain diff``) and the commits that changed them (`history`, for ``log`` and
``blame``).

GitPython is imported inside the functions that use it, and every `Repo` is closed before
they return (with it goes its persistent ``git cat-file --batch`` process): blobs are read
through that one process. The history is one ``git log --patch`` stream, summarized as it
comes: brain.md's changes from its hunks (made to hold whole sections), the memory log's
from its appended lines (and, for what an appended update or tombstone replaced, the
version before them); brain.json, and anything the patch alone cannot tell, from the two
blobs of the commit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import storage
from ..errors import CorruptFileError, GitError, NotInRepositoryError
from ..memory import log as memory_log
from ..repo import current_branch
from ..session import brainfile
from ..session.model import LABEL_TYPES, BrainEntry
from ..state import brainjson as project_state
from .changes import (
    BRAIN_FILES,
    BrainChanges,
    appended_memory_changes,
    compare,
    entry_changes,
    file_changes,
    kind_of,
    memory_changes,
    memory_changes_after,
    read_memory,
    read_state,
)

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


# -- log: the commits that changed the brain ----------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str  # the author's, ISO 8601
    subject: str

    def describe(self) -> str:
        """One line for people: ``3f2a1b9c  2026-03-21 14:30  Ada Lovelace  subject``."""
        when = self.date[:16].replace("T", " ")
        return f"{self.sha[:8]}  {when}  {self.author}  {self.subject}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "parents": list(self.parents),
            "author": self.author,
            "email": self.email,
            "date": self.date,
            "subject": self.subject,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class LogRecord:
    """One commit of the history: what it changed in the brain files. A merge's changes
    are those it brought to its first parent."""

    commit: Commit
    changes: BrainChanges
    files: tuple[str, ...]  # every file it changed, of those asked about

    @property
    def merge(self) -> bool:
        return len(self.commit.parents) > 1

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.commit.to_dict(),
            "merge": self.merge,
            "files": list(self.files),
            **self.changes.to_dict(),
        }


_ATTRIBUTES = Path(__file__).with_name("audit.gitattributes")
# A section heading, as a POSIX regular expression (git's xfuncname): ## Loop Status — ...
_HEADING_FUNCNAME = (
    "^##[[:blank:]]+("
    + "|".join(label.replace(" ", "[[:blank:]]+") for label in LABEL_TYPES)
    + ")[[:blank:]]"
)
_FORMAT = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s"
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_BLOB = "0" * 40


def _log_command(
    paths: Sequence[str],
    *,
    since: str | None,
    limit: int | None,
    grep: str | None,
    follow: bool,
    merges: bool,
) -> list[str]:
    """The one ``git log`` that reads the history, whatever the user's git config says
    about colors, prefixes, renames, signatures or external diff tools."""
    command = [
        "git",
        "-c",
        f"core.attributesFile={_ATTRIBUTES}",
        "-c",
        f"diff.voyager-brain-md.xfuncname={_HEADING_FUNCNAME}",
        "-c",
        "diff.voyager-brain-lines.xfuncname=^",
        "-c",
        "core.quotepath=off",
        "-c",
        "diff.suppressBlankEmpty=false",
        "-c",
        "log.follow=false",
        "log",
        f"--format=tformat:{_FORMAT}",
        "--patch",
        "--function-context",
        "--full-index",
        "--find-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-relative",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--no-show-signature",
        "--encoding=UTF-8",
        "--diff-merges=first-parent" if merges else "--diff-merges=off",
    ]
    if follow:
        command.append("--follow")
    if since:
        command.append(f"--since={since}")
    if limit:
        command.append(f"--max-count={limit}")
    if grep:
        command += [f"--grep={grep}", "--fixed-strings", "--regexp-ignore-case"]
    return [*command, "--", *paths]


@dataclasses.dataclass(slots=True)
class _Hunk:
    old_start: int
    new_start: int
    lines: list[bytes]  # with their " ", "-" or "+"


@dataclasses.dataclass(slots=True)
class _FilePatch:
    old_path: str | None = None
    new_path: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    binary: bool = False
    hunks: list[_Hunk] = dataclasses.field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _patch_path(data: bytes, prefix: bytes) -> str | None:
    """The path of a ``--- a/x`` or ``+++ b/x`` line; None for /dev/null."""
    if data.startswith(b'"') and data.endswith(b'"'):  # quoted (a control character)
        data = data[1:-1]
    return _text(data[len(prefix) :]) if data.startswith(prefix) else None


def _parse_log(lines: Iterable[bytes]) -> Iterator[tuple[Commit, list[_FilePatch]]]:
    """Commits and their file patches from the output of `_log_command`."""
    commit: Commit | None = None
    patches: list[_FilePatch] = []
    patch: _FilePatch | None = None
    hunk: _Hunk | None = None
    old_left = new_left = 0
    for raw in lines:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if hunk is not None and (old_left > 0 or new_left > 0):
            tag = line[:1]
            if tag == b"\\":  # "\ No newline at end of file"
                continue
            hunk.lines.append(line)
            if tag != b"+":
                old_left -= 1
            if tag != b"-":
                new_left -= 1
            continue
        hunk = None
        if line.startswith(b"\x1e"):
            if commit is not None:
                yield commit, patches
            sha, parents, author, email, date, subject = _text(line[1:]).split("\x1f", 5)
            commit = Commit(sha, tuple(parents.split()), author, email, date, subject)
            patches, patch = [], None
        elif line.startswith(b"diff --git "):
            patch = _FilePatch()
            patches.append(patch)
            # Until the ---/+++ lines (absent for a binary file or a pure rename) say more.
            patch.old_path = patch.new_path = _text(line.rsplit(b" b/", 1)[-1])
        elif patch is None:
            continue
        elif line.startswith(b"@@ "):
            m = _HUNK.match(line)
            if m is not None:
                hunk = _Hunk(int(m[1]), int(m[3]), [])
                patch.hunks.append(hunk)
                old_left = int(m[2]) if m[2] is not None else 1
                new_left = int(m[4]) if m[4] is not None else 1
        elif line.startswith(b"index "):
            blobs = line[6:].split(b" ", 1)[0].split(b"..")
            if len(blobs) == 2:
                patch.old_blob, patch.new_blob = (_text(b) for b in blobs)
        elif line.startswith(b"--- "):
            patch.old_path = _patch_path(line[4:], b"a/")
        elif line.startswith(b"+++ "):
            patch.new_path = _patch_path(line[4:], b"b/")
        elif line.startswith(b"rename from "):
            patch.old_path = _text(line[12:])
        elif line.startswith(b"rename to "):
            patch.new_path = _text(line[10:])
        elif line.startswith(b"Binary files "):
            patch.binary = True
    if commit is not None:
        yield commit, patches


def _entry_sides(hunks: list[_Hunk]) -> tuple[list[BrainEntry], list[BrainEntry]] | None:
    """The entries in the old and the new side of brain.md's hunks, or None when the
    hunks do not hold whole sections.

    With the section heading as git's function line, ``--function-context`` widens each
    hunk to the whole sections it changes, plus a few context lines: before the first
    heading (part of an unchanged section, dropped here) and after the last section (the
    same on both sides, so the same entry on both). An entry outside every hunk is the
    same in both versions. A hunk from the first line holds the front matter and title.
    """
    old: list[BrainEntry] = []
    new: list[BrainEntry] = []
    for hunk in hunks:
        for side, start, mark in ((old, hunk.old_start, b"-"), (new, hunk.new_start, b"+")):
            lines = [line for line in hunk.lines if line[:1] in (b" ", mark)]
            if start > 1:
                first = next(
                    (
                        n
                        for n, line in enumerate(lines)
                        if line[1:3] == b"##" and brainfile.is_heading(_text(line[1:]))
                    ),
                    len(lines),
                )
                # Blank lines between sections are no entry's text (diff often shows the
                # one before an appended section as added); anything else changed here
                # is outside any whole section: the hunks are not what our drivers make.
                if any(line[:1] == mark and line[1:] for line in lines[:first]):
                    return None
                lines = lines[first:]
            text = b"\n".join(line[1:] for line in lines)
            try:
                side.extend(brainfile.parse(text + b"\n", Path("brain.md")).entries)
            except CorruptFileError:
                return None
    return old, new


class _History:
    """Summaries of the commits of one `git log` stream, blobs read as needed."""

    def __init__(self, repository: git.Repo) -> None:
        self.repository = repository
        # brain.json versions by blob id: a commit's new version is often the old
        # version of the next commit in the stream.
        self.states: dict[str, dict[str, Any]] = {}

    def blob(self, blob_id: str | None) -> bytes | None:
        if blob_id is None or blob_id == _NO_BLOB:
            return None
        return read_blob(self.repository, blob_id)

    def state(self, blob_id: str | None, where: str) -> dict[str, Any]:
        if blob_id is None or blob_id not in self.states:
            parsed = read_state(self.blob(blob_id), where)
            if blob_id is None:
                return parsed
            if len(self.states) >= 8:
                del self.states[next(iter(self.states))]
            self.states[blob_id] = parsed
        return self.states[blob_id]

    def changes(self, commit: Commit, patch: _FilePatch) -> BrainChanges:
        kind = kind_of(patch.path)
        if kind is None:
            return BrainChanges()
        old_where = f"{commit.sha[:8]}^:{patch.old_path or patch.path}"
        new_where = f"{commit.sha[:8]}:{patch.path}"
        try:
            return self._changes(kind, patch, old_where, new_where)
        except CorruptFileError as exc:
            return BrainChanges(unreadable=((kind, str(exc)),))

    def _changes(
        self, kind: str, patch: _FilePatch, old_where: str, new_where: str
    ) -> BrainChanges:
        if kind == "brain.json":
            before = self.state(patch.old_blob, old_where)
            after = self.state(patch.new_blob, new_where)
            return BrainChanges(state=tuple(project_state.diff(before, after)))
        if kind == "brain.md" and not patch.binary:
            sides = _entry_sides(patch.hunks)
            if sides is not None:
                return BrainChanges(entries=entry_changes(*sides))
        lines = [line for hunk in patch.hunks for line in hunk.lines]
        appended_only = not any(line[:1] == b"-" for line in lines)
        if kind == "memory.jsonl" and not patch.binary and appended_only:
            added = memory_log.parse(b"\n".join(line[1:] for line in lines if line[:1] == b"+"))
            if patch.old_blob == _NO_BLOB:  # a new file: nothing came before these lines
                return BrainChanges(memory=memory_changes((), added[0]))
            changes = appended_memory_changes(added[0])
            if changes.updated or changes.tombstoned:
                # The lines alone do not tell what an update or a tombstone replaced: fold
                # the version before them (the parent's), then on with them.
                earlier = memory_log.fold(read_memory(self.blob(patch.old_blob)))
                changes = memory_changes_after(earlier, added[0])
            return BrainChanges(memory=changes)
        # What the patch alone cannot tell: compare the two versions.
        return file_changes(
            kind, self.blob(patch.old_blob), self.blob(patch.new_blob), old_where, new_where
        )

    def record(self, commit: Commit, patches: list[_FilePatch]) -> LogRecord:
        changes = BrainChanges()
        for patch in patches:
            changes += self.changes(commit, patch)
        return LogRecord(commit, changes, tuple(patch.path for patch in patches))


@contextlib.contextmanager
def history(
    top: Path,
    paths: Sequence[str] = (".voyager",),
    *,
    since: str | None = None,
    limit: int | None = None,
    grep: str | None = None,
    follow: bool = False,
    merges: bool = True,
) -> Iterator[Iterator[LogRecord]]:
    """The commits that changed `paths` (relative to `top`), newest first, each with what
    it changed in the brain files; for use in a ``with`` block, which stops git when it
    ends.

    `since` is any date git understands; `limit` the most commits; `grep` keeps the
    commits whose message contains it (any case); `follow` follows one file through
    renames; `merges` summarizes a merge by what it brought to its first parent (else a
    merge shows no changes). Raises `GitError` when git fails.
    """
    with open_repository(top) as repository:
        if _commit(repository, "HEAD") is None:
            yield iter(())  # no commits yet
            return
        command = _log_command(
            paths, since=since, limit=limit, grep=grep, follow=follow, merges=merges
        )
        # The wrapper stops git when it is garbage: it lives as long as this block.
        process = repository.git.execute(command, as_process=True)
        popen = process.proc
        assert popen is not None and popen.stdout is not None and popen.stderr is not None
        summarizer = _History(repository)
        finished = False

        def records() -> Iterator[LogRecord]:
            nonlocal finished
            assert popen.stdout is not None
            for commit, patches in _parse_log(popen.stdout):
                yield summarizer.record(commit, patches)
            finished = True

        try:
            yield records()
        finally:
            if not finished:
                popen.kill()  # the caller stopped early
            popen.wait()
            error = _text(popen.stderr.read()).strip()
        if finished and popen.returncode:
            raise GitError(f"git log: {error or f'exit status {popen.returncode}'}")

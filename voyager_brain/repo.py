"""What voyager-brain needs to know about the git repository it lives in.

Agent hooks call into this module on every turn, so it uses only the standard library and,
where the answer cannot be read from a file cheaply and correctly, a plain ``git``
subprocess. `find_top`, `current_branch` and `operation_in_progress` read the file system
directly and never start a process; `detect_project_name` starts one only when no manifest
names the project; `brain_files_dirty` and `read_blobs` start exactly one; `commit_only`
(for the session-end auto-commit) three.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from . import confine, worktree
from .errors import BrainError, GitError

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Any


# json, tomllib, urllib.parse and subprocess are imported inside the functions that need
# them: together they cost tens of milliseconds, and a hook that only wants `find_top` or
# `current_branch` should not pay for them.

__all__ = [
    "brain_files_dirty",
    "commit_only",
    "current_branch",
    "detect_project_name",
    "find_top",
    "operation_in_progress",
    "read_blobs",
]

# Seconds a git subprocess may take before we give up on it (and report nothing): a hook
# that waits longer than this delays the agent's turn more than the answer is worth.
_GIT_TIMEOUT = 5.0

# Variables that tell git which repository, index or object store to use. A hook started by
# git (pre-commit, post-checkout, ...) exports some of them; left in place they would make
# our git look at that repository instead of `top`. This is `git rev-parse --local-env-vars`
# minus the config ones, which carry the user's `git -c` settings and are safe to keep.
_REPOSITORY_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_DIR",
    "GIT_GRAFT_FILE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_OBJECT_DIRECTORY",
    "GIT_PREFIX",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_WORK_TREE",
)


# -- the work tree --------------------------------------------------------------------------


def find_top(start: str | os.PathLike[str]) -> Path | None:
    """The top folder of the git work tree containing `start`, or None outside any repository.

    `start` may be a folder or a file; one that does not exist counts from its nearest
    existing parent. Symlinks are resolved, so the result is a real, absolute path. A folder
    is a top when it holds a ``.git`` folder (with a ``HEAD``) or a ``.git`` file starting
    with ``gitdir:`` (linked worktrees, submodules, ``--separate-git-dir``). Never starts a
    process and never raises for an unreadable or odd path.
    """
    top = worktree.find_top(os.fspath(start))
    return None if top is None else Path(top)


def _exists(path: Path) -> bool:
    return worktree.exists(os.fspath(path))


def _is_dir(path: Path) -> bool:
    return worktree.is_dir(os.fspath(path))


def _git_entry(folder: Path) -> Path | None:
    """``folder/.git`` when it marks a work tree top (see `find_top`), else None."""
    entry = worktree.git_entry(os.fspath(folder))
    return None if entry is None else Path(entry)


def _git_dir(top: Path) -> Path | None:
    """The git directory of the work tree whose top is `top` (following a ``gitdir:`` file)."""
    entry = _git_entry(top)
    if entry is None:
        # Be forgiving when handed a folder inside the work tree rather than its top.
        found = find_top(top)
        entry = None if found is None else _git_entry(found)
        if entry is None:
            return None
    if _is_dir(entry):
        return entry
    try:
        text = entry.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    first = text.splitlines()[0] if text else ""
    target = first[len("gitdir:") :].strip()
    if not target:
        return None
    # A relative gitdir (submodules write one) is relative to the folder holding the file.
    git_dir = entry.parent / target
    return git_dir if _is_dir(git_dir) else None


# -- branch -----------------------------------------------------------------------------------


def current_branch(top: Path) -> str | None:
    """The name of the checked-out branch (e.g. ``main``, ``feature/x``) of the work tree at `top`.

    None when HEAD is detached, or when `top` is not in a repository. A branch with no commits
    yet (just after ``git init``) is still the current branch. Reads ``HEAD`` from the git
    directory (following a worktree's ``gitdir:`` file); starts no process, except on a
    repository using the reftable ref store, whose ``HEAD`` file is only a placeholder.
    """
    git_dir = _git_dir(top)
    if git_dir is None:
        return None
    head = git_dir / "HEAD"
    try:
        if head.is_symlink():
            # Git before 1.5 made HEAD a symlink to the branch's ref file; still legal.
            ref = os.readlink(head)
        else:
            text = head.read_text(encoding="utf-8")
            if not text.startswith("ref:"):
                return None  # detached: HEAD holds an object id
            ref = text[len("ref:") :].strip()
    except (OSError, ValueError):
        return None
    if ref == "refs/heads/.invalid":
        # The reftable backend keeps HEAD inside the table and leaves this stub on disk so
        # that old git versions refuse the repository; only git can tell us the truth.
        ref = _git_text(top, "symbolic-ref", "--quiet", "HEAD") or ""
    if not ref.startswith("refs/heads/"):
        return None
    return ref[len("refs/heads/") :] or None


# -- project name -----------------------------------------------------------------------------


# Detected names by top and what they were read from: an agent loop builds the context
# again and again, and asking git for the remotes costs a process each time.
_detected: dict[str, tuple[tuple[object, ...], str]] = {}
_NAME_FILES = ("package.json", "pyproject.toml", "Cargo.toml", "go.mod", ".git/config")


def detect_project_name(top: Path) -> str:
    """`find_project_name`, remembered while none of the files it reads has changed
    (the manifests and ``.git/config``; a ``.git`` file, as in a worktree, is not
    remembered: its config lives elsewhere)."""
    stamps: list[object] = []
    for name in _NAME_FILES:
        try:
            st = os.stat(os.path.join(top, name))
        except OSError:
            stamps.append(None)
        else:
            stamps.append((st.st_size, st.st_mtime_ns, st.st_ino))
    key = tuple(stamps)
    known = _detected.get(str(top))
    if known is not None and known[0] == key:
        return known[1]
    found = find_project_name(top)
    if os.path.isdir(os.path.join(top, ".git")):
        _detected[str(top)] = (key, found)
    return found


def find_project_name(top: Path) -> str:
    """The project's name, detected from the files at the repository top.

    The first of these that yields a non-empty name (surrounding white space stripped) wins:
    ``package.json`` ``name``; ``pyproject.toml`` ``[project].name``, then
    ``[tool.poetry].name``; ``Cargo.toml`` ``[package].name``; ``go.mod``'s module path (its
    last element, skipping a major-version suffix: ``github.com/acme/widget/v2`` gives
    ``widget``); the repository name in the URL of the git remote ``origin``, else of the other
    remotes in config order; else the name of the `top` folder itself. A manifest that is
    missing, unreadable or malformed, or lacks the field, is skipped: this never raises.
    """
    sources: tuple[Callable[[Path], str | None], ...] = (
        _name_from_package_json,
        _name_from_pyproject,
        _name_from_cargo,
        _name_from_go_mod,
        _name_from_remotes,
    )
    for source in sources:
        name = source(top)
        if name:
            return name
    return Path(os.path.abspath(top)).name or str(top)


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _read_text(path: Path) -> str | None:
    try:
        # Checked: a manifest that is a link out of the repository is not read, and a
        # FIFO does not hang the hook.
        data = confine.read_bytes(path)
        # utf-8-sig: editors on Windows like to start JSON and TOML files with a BOM.
        return None if data is None else data.decode("utf-8-sig")
    except (OSError, ValueError, BrainError):
        return None


def _read_toml(path: Path) -> dict[str, Any] | None:
    import tomllib

    text = _read_text(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError):
        return None


def _dig(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _name_from_package_json(top: Path) -> str | None:
    import json

    text = _read_text(top / "package.json")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return _clean(_dig(data, "name"))


def _name_from_pyproject(top: Path) -> str | None:
    data = _read_toml(top / "pyproject.toml")
    return _clean(_dig(data, "project", "name")) or _clean(_dig(data, "tool", "poetry", "name"))


def _name_from_cargo(top: Path) -> str | None:
    return _clean(_dig(_read_toml(top / "Cargo.toml"), "package", "name"))


# Patterns compiled (and kept by re's cache) when first used, not at import.
_MAJOR_VERSION = r"v[0-9]+"
_GOPKG_VERSION = r"\.v[0-9]+$"


def _name_from_go_mod(top: Path) -> str | None:
    text = _read_text(top / "go.mod")
    if text is None:
        return None
    module = _go_module_path(text)
    if module is None:
        return None
    parts = [p for p in module.split("/") if p]
    if len(parts) > 1 and re.fullmatch(_MAJOR_VERSION, parts[-1]):
        parts.pop()  # github.com/acme/widget/v2: the module is still "widget"
    if not parts:
        return None
    name = parts[-1]
    if module.startswith("gopkg.in/"):
        name = re.sub(_GOPKG_VERSION, "", name) or name  # gopkg.in/yaml.v3 is "yaml"
    return _clean(name)


def _go_module_path(text: str) -> str | None:
    """The module path declared in go.mod `text`: ``module x`` or the block ``module (x)``."""
    in_block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if in_block:
            if line == ")":
                return None
            return _unquote_go(line)
        words = line.split(None, 1)
        if words[0] != "module" and not words[0].startswith("module("):
            continue
        rest = line[len("module") :].strip()
        if rest == "(":
            in_block = True
            continue
        if rest.startswith("("):
            rest = rest[1:].rstrip(")").strip()
        return _unquote_go(rest) if rest else None
    return None


def _unquote_go(token: str) -> str | None:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in '"`':
        token = token[1:-1]
    return token.strip() or None


def _name_from_remotes(top: Path) -> str | None:
    # Ask git rather than parse .git/config ourselves: it knows includes, worktrees' shared
    # config, quoting and case rules. This runs only when no manifest names the project.
    out = _git_bytes(top, "config", "-z", "--get-regexp", r"^remote\..*\.url$")
    if not out:
        return None
    urls: list[tuple[str, str]] = []
    for record in os.fsdecode(out).split("\0"):
        key, _, url = record.partition("\n")
        if not key.startswith("remote.") or not key.endswith(".url"):
            continue
        # Remote names may contain dots (remote.my.fork.url), so cut at both ends.
        urls.append((key[len("remote.") : -len(".url")], url))
    urls.sort(key=lambda pair: pair[0] != "origin")  # stable: the rest keep config order
    for _remote, url in urls:
        name = _repository_name_from_url(url)
        if name:
            return name
    return None


_SCP_LIKE = r"^[^/\\:]+:"
_DOS_DRIVE = r"^[A-Za-z]:[/\\]"


def _repository_name_from_url(url: str) -> str | None:
    """The repository's name in a git remote URL, or None when it names none.

    Understands ``https://host/owner/repo.git``, ``ssh://git@host:22/owner/repo``,
    scp-style ``git@host:owner/repo.git``, ``file://`` URLs and local paths (including
    Windows ones); trailing slashes and ``.git`` are ignored.
    """
    from urllib.parse import unquote, urlsplit

    url = url.strip()
    if "://" in url:
        path = unquote(urlsplit(url).path)
    elif re.match(_SCP_LIKE, url) and not re.match(_DOS_DRIVE, url):
        # git@host:owner/repo: git's own rule is "a colon before any slash".
        path = url.split(":", 1)[1]
    else:
        path = url
    parts = [p for p in re.split(r"[/\\]+", path) if p]
    if parts and parts[-1] == ".git":
        parts.pop()  # /src/widget/.git: a non-bare repository used as a remote
    if not parts:
        return None
    name = parts[-1].removesuffix(".git").strip()
    return None if name in ("", ".", "..") else name


# -- uncommitted brain files ----------------------------------------------------------------


def brain_files_dirty(top: Path, paths: Sequence[str] = (".voyager",)) -> list[str]:
    """The files under `paths` (relative to `top`) that have uncommitted changes, sorted.

    Modified, staged, deleted and untracked files all count (ignored ones do not); each is
    named as ``git status --porcelain`` names it, relative to the repository top, with both
    names for a rename. Empty when nothing under `paths` changed, when `paths` is empty, and
    when `top` is not in a repository or git is missing, slow or failing: this never raises.
    """
    if not paths or find_top(top) is None:
        return []
    out = _git_bytes(
        top,
        "--literal-pathspecs",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--",
        *paths,
    )
    if out is None:
        return []
    found: set[str] = set()
    records = out.split(b"\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if len(record) < 4:
            continue  # the empty string after the final NUL
        xy, path = record[:2], record[3:]
        found.add(os.fsdecode(path))
        if b"R" in xy or b"C" in xy:
            # -z puts a rename's or copy's source in the next record, without a status.
            if i < len(records) and records[i]:
                found.add(os.fsdecode(records[i]))
            i += 1
    return sorted(found)


def changed_files(top: Path) -> list[str]:
    """Every file of the work tree with uncommitted changes, as `brain_files_dirty`
    reports them (one ``git status`` call; never raises)."""
    return brain_files_dirty(top, (".",))


# -- what git is in the middle of, reading blobs, committing ----------------------------------

#: Files in the git directory that mean an operation waits for the user to finish it.
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase or git am"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def operation_in_progress(top: Path) -> str | None:
    """``a merge``, ``a rebase``, ... when git is in the middle of one in the work tree at
    `top` (each linked worktree has its own); None when not, or outside a repository."""
    git_dir = _git_dir(top)
    if git_dir is None:
        return None
    for name, what in _IN_PROGRESS:
        if _exists(git_dir / name):
            return what
    return None


def read_blobs(top: Path, names: Sequence[str]) -> list[bytes | None]:
    """The contents of the blobs `names` name (``HEAD:.voyager/brain.md``, ``:path`` for
    the index), through one ``git cat-file --batch``; None for a name that names no blob.
    Raises `GitError` when git cannot run."""
    if not names:
        return []
    done = _run_git(top, "cat-file", "--batch", input="".join(f"{n}\n" for n in names).encode())
    if done is None or done.returncode != 0:
        raise GitError(f"{top}: git cat-file failed: {_first_error(done)}")
    out, found, at = done.stdout, [], 0
    for _ in names:
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) == 3 and header[1] in (b"blob", b"tree", b"commit", b"tag"):
            size = int(header[2])
            found.append(out[at : at + size] if header[1] == b"blob" else None)
            at += size + 1
        else:
            found.append(None)  # "<name> missing" (or ambiguous)
    return found


def commit_only(top: Path, paths: Sequence[str], message: str) -> str:
    """Commit the working-tree contents of `paths` (relative to `top`) and nothing else:
    ``git commit --only``, so whatever else is staged stays staged and out of the commit.
    A path git does not track yet is added first (as intent to add). The commit hooks
    are not run: the commit holds only voyager-brain's files. Returns the new commit's id;
    raises `GitError` with git's message when git refuses."""
    existing = [p for p in paths if _exists(top / p)]
    if existing:
        _check(top, _run_git(top, "add", "--intent-to-add", "--", *existing))
    _check(
        top,
        _run_git(
            top,
            "commit",
            "--only",
            "--no-verify",
            "--quiet",
            "-m",
            message,
            "--",
            *paths,
            timeout=_COMMIT_TIMEOUT,
        ),
    )
    return _git_text(top, "rev-parse", "HEAD") or ""


def _check(top: Path, done: subprocess.CompletedProcess[bytes] | None) -> None:
    if done is None or done.returncode != 0:
        raise GitError(f"{top}: git could not commit the brain files: {_first_error(done)}")


def _first_error(done: subprocess.CompletedProcess[bytes] | None) -> str:
    """The line of git's stderr that says what went wrong."""
    if done is None:
        return "git is missing or too slow"
    lines = [line.strip() for line in os.fsdecode(done.stderr).splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[0] if lines else f"exit status {done.returncode}"


# -- running git ------------------------------------------------------------------------------

# A commit takes longer than a query (a large index, a slow disk), but a session-end hook
# must still end.
_COMMIT_TIMEOUT = 30.0


def _run_git(
    top: Path, *args: str, input: bytes | None = None, timeout: float = _GIT_TIMEOUT
) -> subprocess.CompletedProcess[bytes] | None:
    """``git ARGS`` run in `top`, or None if git is missing or slow."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_ENV}
    # Never stop to ask for credentials or a pager, never take the index lock just to
    # refresh stat data (that would race with the user's own git commands).
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        return subprocess.run(
            ["git", "-c", "core.quotepath=off", "--no-pager", *args],
            cwd=top,
            env=env,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def _git_bytes(top: Path, *args: str) -> bytes | None:
    """Stdout of ``git ARGS`` run in `top`, or None if git is missing, slow or fails."""
    done = _run_git(top, *args)
    return done.stdout if done is not None and done.returncode == 0 else None


def _git_text(top: Path, *args: str) -> str | None:
    out = _git_bytes(top, *args)
    return None if out is None else os.fsdecode(out).strip()

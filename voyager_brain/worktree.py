"""Where the top of a git work tree is, with plain string paths.

Standard library only, and without pathlib: the session-start hook looks up its cached
document with it before anything else is imported, and pathlib (with the urllib.parse
it brings in) costs about 4 ms to import, an eighth of a cached session start.
`repo.find_top` gives the same answer as a Path.
"""

from __future__ import annotations

import os
import stat

GITDIR_PREFIX = b"gitdir:"


def find_top(start: str) -> str | None:
    """The top folder of the git work tree containing `start`, or None outside any
    repository (see `repo.find_top`)."""
    here = _resolve(start)
    if here is None:
        return None
    # The nearest existing ancestor: a path that does not exist yet (a file about to be
    # written) belongs to the repository its folder is in.
    while _stat(here) is None and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    if not is_dir(here):
        here = os.path.dirname(here)
    while True:
        if git_entry(here) is not None:
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _resolve(path: str) -> str | None:
    """`path` made absolute with symlinks resolved; None when that is impossible."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        pass
    # A relative path in a deleted working directory has no answer.
    try:
        return os.path.abspath(path)
    except (OSError, ValueError):
        return None


def _stat(path: str) -> os.stat_result | None:
    # An unreadable folder on the way up means "not here", never a traceback.
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def exists(path: str) -> bool:
    return _stat(path) is not None


def is_dir(path: str) -> bool:
    st = _stat(path)
    return st is not None and stat.S_ISDIR(st.st_mode)


def git_entry(folder: str) -> str | None:
    """``folder/.git`` when it marks a work tree top: a folder holding ``HEAD`` or a
    file starting with ``gitdir:`` (linked worktrees, submodules, ``--separate-git-dir``),
    else None."""
    entry = os.path.join(folder, ".git")
    st = _stat(entry)
    if st is None:
        return None
    if stat.S_ISDIR(st.st_mode):
        # An empty or half-made .git folder is not a repository; git itself would keep
        # looking further up, and so do we.
        return entry if exists(os.path.join(entry, "HEAD")) else None
    if stat.S_ISREG(st.st_mode):
        try:
            with open(entry, "rb") as f:
                head = f.read(len(GITDIR_PREFIX))
        except OSError:
            return None
        return entry if head == GITDIR_PREFIX else None
    return None

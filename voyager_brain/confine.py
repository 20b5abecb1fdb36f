"""Nothing outside the repository: which files voyager-brain may read and write.

A cloned repository can carry symbolic links (``.voyager`` to another folder, ``brain.md``
to a credentials file, a lock to a path that does not exist yet) and FIFOs. Inside a
repository every file we read into a tracked file or write must be a regular file reached
from the work tree's top with no link on the way; the top itself may be reached through
a link of the user's (a checkout under a linked folder). In the personal folder
(``$VOYAGER_HOME``, the personal memory log's folder) and anywhere outside a repository,
the files are the user's own: a link to an existing regular file of theirs is followed
(dotfiles), a link to a missing path is refused rather than created through.

`check` decides; `read_bytes` is the one checked read, and `storage` opens what it writes
with the flags `open_flags` adds (``O_NOFOLLOW`` unless the link was allowed,
``O_NONBLOCK`` so that a FIFO never hangs a hook, then ``fstat`` must say regular file).

Standard library only, and without pathlib: every hook passes through here, and a
check costs a few ``lstat`` calls up to the repository's top, never a walk of the tree.
"""

from __future__ import annotations

import errno
import os
import stat

from . import paths, worktree
from .errors import UnsafePathError

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, TypeAlias

    PathLike: TypeAlias = str | os.PathLike[str]

LINK_INSIDE = "is a symbolic link; voyager-brain follows no link inside a repository"
NOT_REGULAR = "is not a regular file"
HARD_LINK = (
    "has other hard links, which may be a file outside the repository;"
    " voyager-brain writes no such file inside a repository"
)


def check(path: PathLike) -> bool:
    """Raise `UnsafePathError` (one line naming the file and what is wrong) unless `path`
    may be read and written; True when `path` is a link that may be followed (only in the
    user's own folders), False when it is a regular file or does not exist yet."""
    full = os.path.abspath(os.fspath(path))
    if _personal(full):
        return _check_own(full)
    top, link = _top_and_link(full)
    if top is None:
        # Outside any repository: nothing cloned put it there.
        return _check_own(full)
    if link is not None:
        name = os.path.relpath(link, top)
        raise UnsafePathError(full, f"{name} {LINK_INSIDE}")
    st = _lstat(full)
    if st is None:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(full, LINK_INSIDE)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePathError(full, f"{NOT_REGULAR} ({_kind(st.st_mode)})")
    return False


def open_flags(follow: bool) -> int:
    """The flags every open of a checked file adds: never through a link `check` did
    not allow, never blocked by a FIFO, never inherited by a child."""
    flags = os.O_CLOEXEC | os.O_NONBLOCK
    return flags if follow else flags | os.O_NOFOLLOW


def open_checked(path: PathLike, flags: int, mode: int = 0o644) -> int:
    """`check` then ``os.open`` with `open_flags`; the descriptor of a regular file (a
    FIFO, a device or a link put in place after the check raise `UnsafePathError`)."""
    follow = check(path)
    try:
        fd = os.open(path, flags | open_flags(follow), mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            # ELOOP: O_NOFOLLOW met a link; ENXIO: a FIFO opened for writing has no reader.
            detail = LINK_INSIDE if exc.errno == errno.ELOOP else NOT_REGULAR
            raise UnsafePathError(os.path.abspath(os.fspath(path)), detail) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(os.path.abspath(os.fspath(path)), NOT_REGULAR)
        if st.st_nlink > 1 and flags & (os.O_WRONLY | os.O_RDWR) and _in_repository(path):
            # A hard link cannot be told from the file by its path: what is written
            # through it (an append) lands in the other name, perhaps ~/.bashrc.
            raise UnsafePathError(os.path.abspath(os.fspath(path)), HARD_LINK)
        # Back to blocking reads and writes: O_NONBLOCK was only for the open.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: PathLike) -> bytes | None:
    """The file's bytes, or None when it does not exist; `UnsafePathError` when it may
    not be read (see `check`)."""
    try:
        fd = open_checked(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def open_regular(path: PathLike) -> BinaryIO:
    """A file the user names on the command line (a transcript, an update to save),
    opened to read if it is a regular file (a link to one is followed: the user named
    it); an OSError naming it otherwise, for a device or a FIFO would be read forever
    or hang the open. Not for a repository's own files: `read_bytes` checks those."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            strerror = f"{NOT_REGULAR} ({_kind(mode)})"
            raise OSError(errno.EINVAL, strerror, os.fspath(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _in_repository(path: PathLike) -> bool:
    """Whether `path` is a repository's file (not the user's own): asked only of a file
    with several hard links, which is rare."""
    full = os.path.abspath(os.fspath(path))
    return not _personal(full) and _top_and_link(full)[0] is not None


# The personal folders as prefixes, by the environment they were computed from: a check
# runs several times per hook, and expanding them costs more than the lstat calls.
_prefixes: dict[tuple[str | None, ...], tuple[str, ...]] = {}
_ENV = ("VOYAGER_HOME", "VOYAGER_MEMORY_PATH", "HOME")


def _personal(full: str) -> bool:
    """Under ``$VOYAGER_HOME`` or the personal memory log's folder."""
    key = tuple(os.environ.get(name) for name in _ENV)
    prefixes = _prefixes.get(key)
    if prefixes is None:
        folders = (paths.home_folder(), os.path.dirname(paths.personal_log_file()))
        prefixes = tuple(os.path.abspath(f).rstrip(os.sep) + os.sep for f in folders)
        _prefixes[key] = prefixes
    return full.startswith(prefixes)


def _check_own(full: str) -> bool:
    """The rule in the user's own folders: a link must lead to an existing regular file
    of the user's; a path is never created through a link."""
    st = _lstat(full)
    if st is None:
        return False
    if not stat.S_ISLNK(st.st_mode):
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(full, f"{NOT_REGULAR} ({_kind(st.st_mode)})")
        return False
    try:
        target = os.stat(full)
    except OSError:
        raise UnsafePathError(
            full,
            "is a symbolic link to a missing path; voyager-brain creates no file through a link",
        ) from None
    if not stat.S_ISREG(target.st_mode):
        raise UnsafePathError(full, f"is a symbolic link to a {_kind(target.st_mode)}")
    if hasattr(os, "geteuid") and target.st_uid != os.geteuid():
        raise UnsafePathError(full, "is a symbolic link to a file of another user")
    return True


def _top_and_link(full: str) -> tuple[str | None, str | None]:
    """The repository top above `full` (None outside any) and the highest folder between
    them that is a symbolic link (None when there is none)."""
    link: str | None = None
    here = os.path.dirname(full)
    while True:
        st = _lstat(here)
        is_link = st is not None and stat.S_ISLNK(st.st_mode)
        if st is not None and worktree.git_entry(here) is not None:
            outer = _top_of(os.path.dirname(here)) if is_link else None
            if outer is not None:
                # A link inside one repository to the top of another: still a link inside.
                return outer, here
            return here, link
        if is_link:
            link = here
        parent = os.path.dirname(here)
        if parent == here:
            return None, None
        here = parent


def _top_of(folder: str) -> str | None:
    here = folder
    while True:
        if worktree.git_entry(here) is not None:
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "an unknown kind of file"

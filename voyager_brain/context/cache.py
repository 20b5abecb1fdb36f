"""The last session-start document, reused while nothing it was built from has changed.

Building the context reads every store (a large memory log, a megabyte of brain.md);
most session starts follow one where nothing changed. The document is kept in
``cache/context.json`` (never in git) with the fingerprint of everything it depends on:
the size, modification time and inode of each input file (brain.md, brain.json, both
memory logs, both config.toml files, template overrides), the working directory, the
budget asked for, the environment variables that move files, and the package itself;
plus the moment the clock alone would change it and the key-file paths whose existence
it shows. A fingerprint taken before the build must still hold after it, and a file
modified within the last two seconds is not trusted to show its next change in its
modification time, so a racing write is never cached as current.

Standard library only, and small: the entry point checks this cache before importing
the rest of the package (or click), so a hit costs little more than starting Python.
Paths are plain strings here, for the same reason: pathlib costs about 4 ms to import.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime

from ..paths import home_folder, personal_log_file

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    PathLike = str | os.PathLike[str]


_VERSION = 1
_ENV = ("VOYAGER_HOME", "VOYAGER_MEMORY_PATH", "TZ")
_PROJECT_FILES = ("brain.md", "brain.json", "memory.jsonl", "config.toml")
_HERE = os.path.dirname(os.path.abspath(__file__))
# The modules that build the document: a new version of them is a new document.
_BUILDERS = ("build.py", "candidates.py")
_PACKAGE = os.path.dirname(_HERE)  # voyager_brain/
# The built-in templates: inside a wheel, or at the top of a source checkout (where
# render.builtin_template_dir finds them too; importing render would cost typing here).
_BUILTIN_TEMPLATES = os.path.join(
    _PACKAGE if os.path.isdir(os.path.join(_PACKAGE, "templates")) else os.path.dirname(_PACKAGE),
    "templates",
)
_RACY_NS = 2_000_000_000


def _stat(path: str) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None]
    return [path, st.st_size, st.st_mtime_ns, st.st_ino]


def _tree(folder: str) -> list[list[Any]]:
    """Every file under `folder` (template overrides), or nothing when it is absent."""
    # os.walk, not a glob: the glob machinery costs a cache hit more than the walk.
    found = [os.path.join(where, name) for where, _, names in os.walk(folder) for name in names]
    return [_stat(path) for path in sorted(found)]


def locate(cwd: PathLike) -> tuple[str, str | None]:
    """The working directory as BrainManager sees it, and its project's ``.voyager/``
    (None when there is none)."""
    from ..worktree import find_top

    root = os.path.abspath(os.path.expanduser(os.fspath(cwd)))
    voyager = os.path.join(find_top(root) or root, ".voyager")
    return root, voyager if os.path.isdir(voyager) else None


def fingerprint(cwd: PathLike, budget: int | None) -> dict[str, Any]:
    """What the document built for `cwd` and `budget` depends on, besides the clock."""
    root, voyager = locate(cwd)
    files = [_stat(personal_log_file()), _stat(os.path.join(home_folder(), "config.toml"))]
    templates: list[list[Any]] = []
    if voyager is not None:
        files += [_stat(os.path.join(voyager, name)) for name in _PROJECT_FILES]
        templates = _tree(os.path.join(voyager, "templates"))
    return {
        "version": _VERSION,
        "cwd": root,
        "budget": budget,
        "env": [os.environ.get(name) for name in _ENV],
        "files": files,
        "templates": templates,
        "package": [
            *(_stat(os.path.join(_HERE, name)) for name in _BUILDERS),
            *_tree(os.path.join(_BUILTIN_TEMPLATES, "context")),
        ],
    }


def cache_path(cwd: PathLike) -> str:
    """Where the document for `cwd` is kept: the project's ``.voyager/cache/``, else the
    personal folder's ``cache/``."""
    _, voyager = locate(cwd)
    return os.path.join(voyager or home_folder(), "cache", "context.json")


def lookup(cwd: PathLike, budget: int | None, now: datetime | None = None) -> str | None:
    """The cached document for `cwd` and `budget` when it is still what a build would
    give, else None. Never raises: a cache is only ever an optimisation."""
    from .. import confine

    try:
        # Checked: a cache that is a link out of the repository or a FIFO (which would
        # hang the session start) is a miss; the full build then names it.
        record = json.loads(confine.read_bytes(cache_path(cwd)) or b"null")
        if record.get("fingerprint") != fingerprint(cwd, budget):
            return None
        moment = now or datetime.now(UTC)
        if moment >= datetime.fromisoformat(record["valid_until"]):
            return None
        for path, existed in record["paths_checked"]:
            if os.path.exists(path) != existed:
                return None
        text = record["text"]
        return text if isinstance(text, str) else None
    except Exception:  # a missing, partial or foreign cache file is a miss
        return None


def store(
    cwd: PathLike,
    budget: int | None,
    before: dict[str, Any],
    text: str,
    valid_until: datetime | None,
    paths_checked: tuple[tuple[str, bool], ...],
) -> bool:
    """Keep the document built from the inputs fingerprinted `before` the build, unless
    they changed meanwhile or too recently to tell. Returns whether it was kept."""
    if valid_until is None or fingerprint(cwd, budget) != before:
        return False
    newest = max(
        (f[2] for f in before["files"] + before["templates"] if f[1] is not None), default=0
    )
    if time.time_ns() - newest < _RACY_NS:
        return False
    record = {
        "fingerprint": before,
        "valid_until": valid_until.isoformat(),
        "paths_checked": [list(p) for p in paths_checked],
        "text": text,
    }
    from pathlib import Path

    from ..errors import UnsafePathError
    from ..jsonfile import dumps
    from ..storage import atomic_write

    data = dumps(record).encode()
    try:
        atomic_write(Path(cache_path(cwd)), data, durable=False)
    except (OSError, UnsafePathError):  # a read-only or full disk, or a cache folder
        return False  # linked out of the repository: no cache, no failure
    return True

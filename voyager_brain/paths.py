"""Where voyager-brain's personal files live. Standard library only, and without pathlib:
the session-start hook's cache check reads them before anything else is imported, as
strings (the `*_file` and `home_folder` functions); the rest of the package takes the
same places as Paths."""

from __future__ import annotations

import os

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def home_folder() -> str:
    """The personal folder: ``$VOYAGER_HOME``, else ``~/.voyager``."""
    env = os.environ.get("VOYAGER_HOME")
    return os.path.expanduser(env) if env else os.path.join(os.path.expanduser("~"), ".voyager")


def personal_log_file() -> str:
    """The personal memory log: ``$VOYAGER_MEMORY_PATH``, else ``memory.jsonl`` in the
    personal folder."""
    override = os.environ.get("VOYAGER_MEMORY_PATH")
    return os.path.expanduser(override) if override else os.path.join(home_folder(), "memory.jsonl")


def decay_stamp_file() -> str:
    """Where the UTC day of the last automatic decay is kept (local, never in git)."""
    return os.path.join(os.path.dirname(personal_log_file()), "cache", "last-decay")


def voyager_home() -> Path:
    """`home_folder` as a Path."""
    from pathlib import Path

    return Path(home_folder())


def personal_log_path() -> Path:
    """`personal_log_file` as a Path."""
    from pathlib import Path

    return Path(personal_log_file())


def decay_stamp_path() -> Path:
    """`decay_stamp_file` as a Path."""
    from pathlib import Path

    return Path(decay_stamp_file())


def history_file() -> str:
    """The SQLite history of sessions, tool calls and guard rules: ``history.db`` in the
    personal folder (never in a repository)."""
    return os.path.join(home_folder(), "history.db")


def cache_folder() -> str:
    """Derived personal data, safe to delete: ``cache/`` in the personal folder."""
    return os.path.join(home_folder(), "cache")


def trust_file() -> str:
    """Where `voyager-brain trust` keeps the project config files the user trusts (their
    resolved path and the sha256 of the content trusted)."""
    return os.path.join(home_folder(), "trust.json")

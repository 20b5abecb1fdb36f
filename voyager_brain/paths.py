"""Where voyager-brain's personal files live. Standard library only: the hook fast path
reads it before anything else is imported."""

from __future__ import annotations

import os
from pathlib import Path


def voyager_home() -> Path:
    """The personal folder: ``$VOYAGER_HOME``, else ``~/.voyager``."""
    env = os.environ.get("VOYAGER_HOME")
    return Path(env).expanduser() if env else Path.home() / ".voyager"


def personal_log_path() -> Path:
    """The personal memory log: ``$VOYAGER_MEMORY_PATH``, else ``memory.jsonl`` in the
    personal folder."""
    override = os.environ.get("VOYAGER_MEMORY_PATH")
    return Path(override).expanduser() if override else voyager_home() / "memory.jsonl"


def decay_stamp_path() -> Path:
    """Where the UTC day of the last automatic decay is kept (local, never in git)."""
    return personal_log_path().parent / "cache" / "last-decay"

"""The session start served from the context cache.

Most session starts follow one where nothing changed: then the hook prints the cached
document and exits. This module is all that path imports besides the cache itself (and
the standard library), so a hit costs little more than starting Python; anything else
falls through to the full build in `lifecycle`.
"""

from __future__ import annotations


def cached_context(cwd: str) -> str | None:
    """The context straight from the cache when nothing has changed since it was built
    (and today's decay has run), else None: then the full build does the work."""
    from datetime import UTC, datetime

    from ..context import cache as context_cache
    from ..paths import decay_stamp_file

    try:
        now = datetime.now(UTC)
        with open(decay_stamp_file(), encoding="utf-8") as f:
            if f.read().strip() != now.date().isoformat():
                return None
        return context_cache.lookup(cwd, None, now)
    except Exception:  # anything odd: the full build runs and reports it
        return None

"""The SessionStart hook served from the context cache.

Most session starts follow one where nothing changed: then the hook prints the cached
document and exits. This module is all that path imports besides the cache itself (and
the standard library), so a hit costs little more than starting Python; anything else
falls through to the full hook in `claude`.
"""

from __future__ import annotations

import json
import os


def cached_session_start(stdin: str) -> str | None:
    """The SessionStart hook's output straight from the context cache when nothing has
    changed since it was built (and today's decay has run), else None: then the full
    hook does the work."""
    from datetime import UTC, datetime

    from ..context import cache as context_cache
    from ..paths import decay_stamp_file

    try:
        payload = json.loads(stdin) if stdin.strip() else {}
        now = datetime.now(UTC)
        with open(decay_stamp_file(), encoding="utf-8") as f:
            if f.read().strip() != now.date().isoformat():
                return None
        cwd = str(payload.get("cwd") or os.getcwd())
        text = context_cache.lookup(cwd, None, now)
    except Exception:  # anything odd: the full hook runs and reports it
        return None
    return session_start_output(text) if text is not None else None


def session_start_output(context: str) -> str:
    """What the SessionStart hook prints: the context as additionalContext."""
    output = {"hookEventName": "SessionStart", "additionalContext": context}
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False) + "\n"

"""Times as every brain file writes them: UTC, to the second, ISO 8601 with a ``Z``.

The session brain, the project state and the git history all read and write these, so
they live below all of them; this module imports only the standard library.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_second(moment: datetime) -> datetime:
    """`moment` in UTC, truncated to the second. A naive datetime is taken to be UTC."""
    if moment.tzinfo is UTC and not moment.microsecond:
        return moment  # already normal: the common case when reading brain.md
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, to the second: ``2026-03-21T14:30:00Z``."""
    return utc_second(moment).isoformat()[:19] + "Z"


def parse_timestamp(text: str) -> datetime:
    """Read an ISO 8601 time (``Z`` or an offset; no offset means UTC) as UTC to the second.

    Raises ValueError when `text` is not such a time.
    """
    text = text.strip()
    if len(text) < 10 or not text[:4].isdigit():
        raise ValueError(f"not an ISO 8601 time: {text!r}")
    return utc_second(datetime.fromisoformat(text))

"""Dedup, scoring, ranking and decay of learnings and preferences (seed 001).

Everything here is pure: entries are the plain dicts of the memory log, `now` is passed in,
and nothing is read or written. The callers (the CLI's ``learn``/``prefer``/``recall`` and
the decay report) do the I/O and decide what to print.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "DedupResult",
    "age_days",
    "check_duplicate",
    "decay_candidates",
    "near_key",
    "normalize_text",
    "rank_learnings",
    "score",
]

# `[\W_]` is "not a letter or digit" in the Unicode sense (`\w` is exactly str.isalnum plus
# "_"), so non-ASCII words survive normalization instead of all collapsing to one space.
_NON_ALNUM = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")

# Containment only counts as "the same fact, restated" when both texts are long enough that
# one being inside the other is unlikely to be a coincidence ("pnpm" is inside "use pnpm").
_CONTAINMENT_MIN_CHARS = 30

_RECENCY_MAX = 10
_RECENCY_WEEK_DAYS = 7
_PROJECT_BOOST = 5
_MANUAL_BOOST = 2

# Stands in for a missing or unparseable timestamp when ordering, so such entries sort as
# the oldest rather than raising.
_EPOCH_FLOOR = datetime.min.replace(tzinfo=UTC)


def normalize_text(text: str) -> str:
    """Seed dedup normalization: lowercased, every run of non-alphanumeric characters
    collapsed to one space, stripped."""
    # Lowercase first: lowering can emit combining marks (e.g. "İ"), which the collapse then
    # turns into spaces; doing it in this order keeps the function idempotent.
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def near_key(text: str) -> str:
    """normalize_text with every run of digits masked to '0' (so "API runs on port 8080" and
    "API runs on port 3000" share a key)."""
    return _DIGITS.sub("0", normalize_text(text))


@dataclass(frozen=True, slots=True)
class DedupResult:
    """The verdict on a candidate text: "new", "duplicate" or "supersedes", and for the
    latter two the stored entry it matched."""

    kind: str  # "new" | "duplicate" | "supersedes"
    existing: dict[str, Any] | None


def _parse_time(value: object) -> datetime | None:
    """An ISO-8601 timestamp as an aware datetime, or None when it can't be read."""
    if not isinstance(value, str):
        return None
    try:
        # Python 3.11's fromisoformat reads the seed's "...000Z" as well as "+02:00" offsets.
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    # A naive time was written by something that didn't record a zone; the log is UTC.
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _aware(now: datetime) -> datetime:
    # Subtracting naive from aware raises; treat a naive `now` as UTC like naive log times.
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _last_changed(entry: dict[str, Any]) -> datetime | None:
    """`updated` if readable, else `created`: the time the entry's text was last set."""
    return _parse_time(entry.get("updated")) or _parse_time(entry.get("created"))


def _age(entry: dict[str, Any], now: datetime) -> timedelta:
    changed = _last_changed(entry)
    if changed is None:
        return timedelta(0)
    # A time in the future (clock skew between machines) is "just now", not negative age.
    return max(_aware(now) - changed, timedelta(0))


def check_duplicate(text: str, existing: Iterable[dict[str, Any]]) -> DedupResult:
    """Classify a candidate text against stored entries of the same type (the caller
    filters by type).

    - exact: normalize_text equal -> "duplicate" (nothing is written);
    - near: near_key equal, or one normalized text contains the other while both are at
      least 30 characters -> "supersedes" (the caller updates that entry's text);
    - else "new".

    Exact wins over near. Among several matches of the winning kind the most recently
    changed entry (`updated`, else `created`) is returned, the later in `existing` on ties.
    """
    norm = normalize_text(text)
    key = near_key(text)
    exact: list[tuple[tuple[datetime, int], dict[str, Any]]] = []
    near: list[tuple[tuple[datetime, int], dict[str, Any]]] = []
    for index, entry in enumerate(existing):
        stored = entry.get("text")
        if not isinstance(stored, str):
            continue
        # The index makes every key distinct, so max() never has to compare the dicts.
        order = (_last_changed(entry) or _EPOCH_FLOOR, index)
        stored_norm = normalize_text(stored)
        if stored_norm == norm:
            exact.append((order, entry))
        elif _is_near(norm, key, stored_norm):
            near.append((order, entry))
    if exact:
        return DedupResult("duplicate", max(exact, key=_first)[1])
    if near:
        return DedupResult("supersedes", max(near, key=_first)[1])
    return DedupResult("new", None)


def _first(pair: tuple[tuple[datetime, int], dict[str, Any]]) -> tuple[datetime, int]:
    return pair[0]


def _is_near(norm: str, key: str, stored_norm: str) -> bool:
    # near_key(stored) == _DIGITS.sub on its normalized form; reuse it rather than renormalize.
    if _DIGITS.sub("0", stored_norm) == key:
        return True
    if min(len(norm), len(stored_norm)) < _CONTAINMENT_MIN_CHARS:
        return False
    return norm in stored_norm or stored_norm in norm


def age_days(entry: dict[str, Any], now: datetime) -> float:
    """Days since the entry's last update: `updated` if present, else `created`.

    Missing or unparseable times count as age 0, so a malformed entry is never decayed on
    the strength of a timestamp nobody can read.
    """
    return _age(entry, now) / timedelta(days=1)


def _inside(cwd: str, project_path: str) -> bool:
    """Whether `cwd` is `project_path` or below it, compared on whole path components."""
    base = os.path.normpath(project_path)
    here = os.path.normpath(cwd)
    if here == base:
        return True
    # rstrip so the filesystem root ("/") doesn't become "//" and match nothing.
    return here.startswith(base.rstrip(os.sep) + os.sep)


def score(learning: dict[str, Any], now: datetime, cwd: str | None = None) -> int:
    """Recency 0..10 (10 - floor(age_in_days / 7), clamped); +5 if scope is "project" and
    `cwd` is inside projectPath; +2 if source is "manual". So always within 0..17."""
    weeks = math.floor(age_days(learning, now) / _RECENCY_WEEK_DAYS)
    total = min(_RECENCY_MAX, max(0, _RECENCY_MAX - weeks))
    project_path = learning.get("projectPath")
    if (
        learning.get("scope") == "project"
        and cwd
        and isinstance(project_path, str)
        and project_path  # normpath("") is ".", which would match any relative cwd
        and _inside(cwd, project_path)
    ):
        total += _PROJECT_BOOST
    if learning.get("source") == "manual":
        total += _MANUAL_BOOST
    return total


def rank_learnings(
    learnings: Iterable[dict[str, Any]], now: datetime, cwd: str | None = None
) -> list[dict[str, Any]]:
    """Highest score first; ties: newest `created` first, then the later in the input first
    (so the order is fully determined by the input)."""
    keyed = [
        ((score(entry, now, cwd), _parse_time(entry.get("created")) or _EPOCH_FLOOR, i), entry)
        for i, entry in enumerate(learnings)
    ]
    # The index in the key makes every key distinct, so the dicts themselves are never compared.
    keyed.sort(key=lambda pair: pair[0], reverse=True)
    return [entry for _, entry in keyed]


def decay_candidates(
    learnings: Iterable[dict[str, Any]],
    now: datetime,
    *,
    after_days: int = 90,
    min_score: int = 3,
    cwd: str | None = None,
) -> list[dict[str, Any]]:
    """Learnings untouched for more than `after_days` whose score is below `min_score`.

    Only ``type == "learning"`` entries are ever returned: preferences never decay and other
    types are ignored. A score of at least `min_score` exempts an entry whatever its age (past
    90 days recency is 0, so only the project/manual boosts can). Input order is kept.
    """
    limit = timedelta(days=after_days)
    return [
        entry
        for entry in learnings
        if entry.get("type") == "learning"
        # Compare timedeltas, not float days, so "exactly after_days" is exact.
        and _age(entry, now) > limit
        and score(entry, now, cwd) < min_score
    ]

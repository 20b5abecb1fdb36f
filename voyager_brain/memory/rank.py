"""Dedup, scoring, ranking and decay of learnings and preferences (seed 001).

Everything here is pure: entries are the plain dicts of the memory log, `now` is passed in,
and nothing is read or written. The callers (the CLI's ``learn``/``prefer``/``recall`` and
the decay report) do the I/O and decide what to print.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import os
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from itertools import compress, repeat
from operator import attrgetter, contains, itemgetter

from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: How learnings are ordered: (score, created, then what the caller adds to tell
    #: ties apart: a position, later is larger); largest first.
    RankKey = tuple[Any, ...]

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
@functools.cache
def _non_alnum() -> re.Pattern[str]:  # compiled when first used: a hook never dedups
    return re.compile(r"[\W_]+")


@functools.cache
def _digits() -> re.Pattern[str]:
    return re.compile(r"\d+")


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
    return _non_alnum().sub(" ", text.lower()).strip()


def near_key(text: str) -> str:
    """normalize_text with every run of digits masked to '0' (so "API runs on port 8080" and
    "API runs on port 3000" share a key)."""
    return _digits().sub("0", normalize_text(text))


class DedupResult(Record):
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
    # near_key(stored) == _digits().sub on its normalized form; reuse it, not renormalize.
    if _digits().sub("0", stored_norm) == key:
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


_WEEK = timedelta(days=_RECENCY_WEEK_DAYS)


class Scorer:
    """`score` for many learnings at one `now` and `cwd`.

    Session start scores every learning of the log, so the work is done a list at a
    time: times parsed with one `map` over the strings (a per-entry function call costs
    more than the parse), ages compared with precomputed week boundaries, and each
    projectPath compared with the cwd once (most learnings share a few paths).
    """

    def __init__(self, now: datetime, cwd: str | None = None) -> None:
        self.now = _aware(now)
        self.cwd = cwd
        self._inside: dict[str, bool] = {}
        # A learning changed at or before now - k weeks is at least k weeks old: whole
        # weeks by comparing times, exact (float days can round).
        self._weeks_ago = [self.now - k * _WEEK for k in range(_RECENCY_MAX, 0, -1)]

    def times(
        self, learnings: Sequence[dict[str, Any]]
    ) -> tuple[list[datetime | None], list[datetime | None]]:
        """Each learning's ``created`` and last change (``updated``, else ``created``),
        None where unreadable."""
        try:
            created: list[datetime | None] = list(
                map(datetime.fromisoformat, map(itemgetter("created"), learnings))
            )
            if None in map(attrgetter("tzinfo"), created):
                raise ValueError("naive times are read as UTC, one by one")
        except (KeyError, TypeError, ValueError):
            created = [_parse_time(e.get("created")) for e in learnings]
        changed = list(created)
        # Most learnings were never updated: the few that were are found by C loops.
        for n in compress(range(len(learnings)), map(contains, learnings, repeat("updated"))):
            changed[n] = _parse_time(learnings[n]["updated"]) or created[n]
        return created, changed

    def in_project(self, project_path: object) -> bool:
        # normpath("") is ".", which would match any relative cwd: an empty path never does.
        if not (self.cwd and isinstance(project_path, str) and project_path):
            return False
        inside = self._inside.get(project_path)
        if inside is None:
            inside = self._inside[project_path] = _inside(self.cwd, project_path)
        return inside

    def next_change(self, changed: Iterable[datetime | None]) -> datetime | None:
        """The first moment after `now` at which one of these last-change times reaches
        another whole week of age below ten (None: every one is ten weeks old or more)."""
        weeks_ago = self._weeks_ago
        oldest = weeks_ago[0]
        # Recency r means 10 - r whole weeks old, so the next whole week is reached at
        # when + (11 - r) weeks (a time in the future has r = 10: one week after it).
        return min(
            (
                when + (_RECENCY_MAX + 1 - bisect.bisect_left(weeks_ago, when)) * _WEEK
                for when in changed
                if when is not None and when > oldest
            ),
            default=None,
        )

    def scores(
        self, learnings: Sequence[dict[str, Any]], changed: Sequence[datetime | None]
    ) -> list[int]:
        """The score of each learning, given its last change from `times`."""
        weeks_ago = self._weeks_ago
        # The project boost of each path string, looked up inline (a call per entry
        # costs): computed the first time a path is seen, in the one pass below.
        boost = _Boosts(self)
        return [
            (_RECENCY_MAX if when is None else bisect.bisect_left(weeks_ago, when))
            + (
                boost[path]
                if entry.get("scope") == "project"
                and isinstance(path := entry.get("projectPath"), str)
                else 0
            )
            + (_MANUAL_BOOST if entry.get("source") == "manual" else 0)
            for entry, when in zip(learnings, changed, strict=True)
        ]

    def keys(
        self, learnings: Sequence[dict[str, Any]], *ties: Iterable[Any]
    ) -> tuple[list[RankKey], datetime | None]:
        """The rank key of each learning (score, creation time, then its value in each
        of `ties`) and `next_change` of them all."""
        scores, created, changed = self.rows(learnings)
        return (
            list(zip(scores, created, *ties, strict=False)),  # ties may go on (repeat)
            self.next_change(changed),
        )

    def rows(
        self, learnings: Sequence[dict[str, Any]]
    ) -> tuple[list[int], list[datetime], list[datetime | None]]:
        """Each learning's score, creation time as ranked (an unreadable one as the
        oldest) and last change (None where unreadable)."""
        created, changed = self.times(learnings)
        scores = self.scores(learnings, changed)
        if None in created:
            return scores, [c or _EPOCH_FLOOR for c in created], changed
        return scores, created, changed  # type: ignore[return-value]

    def stale(
        self,
        scores: Iterable[int],
        changed: Iterable[datetime | None],
        after_days: int,
        min_score: int,
    ) -> list[bool]:
        """Whether each learning, by its score and last change, decays: untouched for
        more than `after_days` (a time nobody can read is age 0) and scoring below
        `min_score`."""
        cutoff = self.now - timedelta(days=after_days)
        return [
            when is not None and when < cutoff and points < min_score
            for points, when in zip(scores, changed, strict=True)
        ]


class _Boosts(dict[str, int]):
    """The project boost by projectPath, each path looked at once (most learnings
    share a few paths)."""

    def __init__(self, scorer: Scorer) -> None:
        super().__init__()
        self.scorer = scorer

    def __missing__(self, path: str) -> int:
        boost = self[path] = _PROJECT_BOOST if self.scorer.in_project(path) else 0
        return boost


def score(learning: dict[str, Any], now: datetime, cwd: str | None = None) -> int:
    """Recency 0..10 (10 - floor(age_in_days / 7), clamped); +5 if scope is "project" and
    `cwd` is inside projectPath; +2 if source is "manual". So always within 0..17."""
    scorer = Scorer(now, cwd)
    return scorer.scores([learning], scorer.times([learning])[1])[0]


def rank_learnings(
    learnings: Iterable[dict[str, Any]],
    now: datetime,
    cwd: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Highest score first; ties: newest `created` first, then the later in the input first
    (so the order is fully determined by the input). With `limit`, only the first `limit`
    of that order (selected without sorting them all)."""
    return top_learnings(learnings, now, cwd, limit)[0]


def top_learnings(
    learnings: Iterable[dict[str, Any]],
    now: datetime,
    cwd: str | None = None,
    limit: int | None = None,
) -> tuple[list[dict[str, Any]], datetime | None]:
    """`rank_learnings`, and the first moment after `now` at which a score drops (a
    learning's age reaches another whole week), when the order may change; None if no
    score will change again."""
    entries = list(learnings)
    # The index makes every key distinct (and decides the last ties).
    keys, next_change = Scorer(now, cwd).keys(entries, range(len(entries)))
    return [entries[index] for *_, index in head(keys, limit)], next_change


def head(keys: list[RankKey], limit: int | None) -> list[RankKey]:
    """The largest `limit` keys (all of them with None), largest first."""
    if limit is not None and limit < len(keys):
        # Newest lines first: logs grow at the end, so the heap is filled with the best
        # early and most later keys are turned away with one comparison.
        return heapq.nlargest(limit, reversed(keys))
    return sorted(keys, reverse=True)


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
    candidates = [e for e in learnings if e.get("type") == "learning"]
    scorer = Scorer(now, cwd)
    scores, _, changed = scorer.rows(candidates)
    return list(compress(candidates, scorer.stale(scores, changed, after_days, min_score)))

"""Compaction of the session brain: the rules of `BrainManager.compact()`.

In order:

1. every decision is kept verbatim;
2. of the loop statuses only the newest is kept;
3. observations that are exact or near duplicates of a newer observation are dropped
   (near: equal once case, runs of whitespace and digits are ignored, so
   "Tests passing, 3 iterations" and "tests passing,  4 iterations" are one);
4. while the file is over the budget, the oldest observations and reflections (earlier
   summaries included) are folded into one summary reflection (source ``compact``),
   placed where the newest of them stood and stamped with its time.

When decisions, the summary and the newest loop status alone exceed the budget, it stops
there: decisions are never dropped to meet a budget. Compacting twice gives the same
entries as compacting once.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from .model import BrainEntry
from .summarizer import Summarizer

SUMMARY_SOURCE = "compact"


@dataclasses.dataclass(frozen=True, slots=True)
class CompactionResult:
    entries: tuple[BrainEntry, ...]
    merged: int
    superseded: int
    summarized: int
    summary: BrainEntry | None


def near_duplicate_key(text: str) -> str:
    """Text with case, whitespace runs and digits normalized away."""
    return " ".join(re.sub(r"\d+", "0", text.lower()).split())


def _order(item: tuple[int, BrainEntry]) -> tuple[str, int]:
    index, entry = item
    return (entry.key[1], index)


def compact_entries(
    entries: Sequence[BrainEntry],
    *,
    budget_chars: int,
    fixed_chars: int,
    section_chars: Callable[[BrainEntry], int],
    summarizer: Summarizer,
) -> CompactionResult:
    """Apply the rules above. `fixed_chars` is the size of everything but the sections
    (front matter, title); `section_chars(entry)` the size one section takes in the file."""
    indexed = list(enumerate(entries))
    drop: set[int] = set()

    statuses = [item for item in indexed if item[1].type == "loop_status"]
    if statuses:
        newest = max(statuses, key=_order)[0]
        drop.update(i for i, _ in statuses if i != newest)
    superseded = len(drop)

    newest_by_text: dict[str, int] = {}
    for i, entry in sorted((it for it in indexed if it[1].type == "observation"), key=_order):
        key = near_duplicate_key(entry.content)
        if key in newest_by_text:
            drop.add(newest_by_text[key])
        newest_by_text[key] = i
    merged = len(drop) - superseded

    kept = [item for item in indexed if item[0] not in drop]
    sizes = {i: section_chars(entry) for i, entry in kept}
    total = fixed_chars + sum(sizes.values())
    summary: BrainEntry | None = None
    summarized: set[int] = set()

    candidates = sorted(
        (it for it in kept if it[1].type in ("observation", "reflection")), key=_order
    )
    if total > budget_chars and candidates:
        # The summary gets the room left once enough old entries are picked: at least
        # `floor` characters (a header and a few points), at most a third of the budget.
        cap = max(budget_chars // 3, 200)
        floor = min(cap, 300)
        newest_stamp = max((e.timestamp for _, e in candidates if e.timestamp), default=None)
        overhead = section_chars(BrainEntry("reflection", "", newest_stamp, SUMMARY_SOURCE))
        picked: list[tuple[int, BrainEntry]] = []
        freed = 0
        for item in candidates:
            if total - freed + overhead + floor <= budget_chars:
                break
            picked.append(item)
            freed += sizes[item[0]]
        only_a_summary = len(picked) == 1 and picked[0][1].source == SUMMARY_SOURCE
        if picked and not only_a_summary:
            stamp = max(e.timestamp for _, e in picked if e.timestamp)
            room = min(cap, max(floor, budget_chars - (total - freed) - overhead))
            text = summarizer.summarize([e for _, e in picked], room)
            summary = BrainEntry("reflection", text, stamp, SUMMARY_SOURCE)
            summarized = {i for i, _ in picked}

    result: list[BrainEntry] = []
    anchor = max(summarized, key=lambda i: (entries[i].key[1], i)) if summarized else -1
    for i, entry in kept:
        if i == anchor and summary is not None:
            result.append(summary)
        elif i not in summarized:
            result.append(entry)
    return CompactionResult(tuple(result), merged, superseded, len(summarized), summary)

"""The one document injected at session start, built from every store within a budget.

Sections, in order: identity and user (full cost, taken first), behavior, preferences,
the project state (brain.json), project context (longest path prefix of the working
directory), the session brain (brain.md), what is due, and learnings ranked by score.
The seed's budget rules apply to the whole document: tokens are characters / 4 rounded
up; identity and user are paid first; the rest is split by `WEIGHTS`, and what a section
leaves unused goes to learnings (the seed's surplus cascading); inside a section lines
are taken in order until its share ends, with a ``(…N more omitted)`` marker. The
document never exceeds the budget, its first and last lines and the markers included.

Every candidate line is recorded as a `Choice` (what, where from, cost, included or why
not), so ``--explain`` shows exactly what the text holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from ..memory.log import Folded
from ..render import Templates
from ..value import Record
from . import candidates as gather
from .candidates import PROJECT_SHARES, Grouped, Item, Lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .candidates import Memory, SessionEntry

#: Shares of what identity and user leave, in percent, in the order the sections come.
#: The seed's four keep its proportions (behavior 15, preferences 20, context 25,
#: learnings 40, that is 3:4:5:8) within the 60% they share; the project state, the
#: session brain and what is due have the other 40%. Whatever a section leaves unused
#: goes to learnings, as the seed says.
WEIGHTS: dict[str, int] = {
    "behavior": 9,
    "preferences": 12,
    "project": 25,
    "context": 15,
    "session": 10,
    "due": 5,
    "learnings": 24,
}
#: Section names, as the title template shows them (``## Learnings``).
NAMES = {
    "identity": "Identity",
    "user": "User",
    "behavior": "Behavior",
    "preferences": "Preferences",
    "project": "Project state",
    "context": "Project context",
    "session": "Session brain",
    "due": "Due",
    "learnings": "Learnings",
}


# A NamedTuple, as Item is (see there).
class Choice(Record):
    """What became of a candidate line: its cost, whether it is in, and why not."""

    item: Item
    tokens: int
    included: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.item.section,
            "ref": self.item.ref,
            "text": self.item.text,
            "tokens": self.tokens,
            "included": self.included,
            "reason": self.reason,
        }


class ContextDocument(Record):
    """The document, and what it depends on besides the files it was built from: the
    moment the clock alone changes it (a new day, a learning a week older, a reminder
    coming due) and the paths whose existence it shows (stale key files)."""

    text: str
    budget_tokens: int
    tokens: int
    choices: tuple[Choice, ...]
    valid_until: datetime | None = None
    paths_checked: tuple[tuple[str, bool], ...] = ()

    @property
    def included_refs(self) -> list[str]:
        return [c.item.ref for c in self.choices if c.included]

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "included": self.included_refs,
            "choices": [c.to_dict() for c in self.choices],
        }


# -- taking lines within a budget -----------------------------------------------------


def _cost(chars: int, cpt: int) -> int:
    return math.ceil(chars / cpt)


def _take(
    title: str,
    items: Iterable[Item],
    room: int,
    cpt: int,
    choices: list[Choice],
    *,
    marker: bool = True,
    total: int | None = None,
    explain: bool = True,
) -> str | None:
    """The section's block (title and lines, no final newline) using at most `room`
    characters of the document, the separator before it included; None when empty or
    nothing fits. Records a Choice per item (without `explain`, only up to the first
    that does not fit: the rest are not even rendered). `total` counts candidates beyond
    `items` that were not even looked at (they count as omitted). Without `marker`,
    omitted lines are only recorded (the caller counts them)."""
    if total is None:
        items = list(items)
        total = len(items)
    if not total:
        return None
    lines = [title]
    used = 2 + len(title)  # the blank line before the block, and the title
    taken = 0
    pending = iter(items)
    for n, item in enumerate(pending):
        rest = total - n - 1
        reserve = 1 + len(f"(…{rest} more omitted)") if rest and marker else 0
        if used + 1 + len(item.text) + reserve <= room:
            lines.append(item.text)
            used += 1 + len(item.text)
            taken += 1
            choices.append(Choice(item, _cost(len(item.text) + 1, cpt), True, "included"))
        else:
            choices.append(_over(item, cpt))
            break
    if explain:
        choices.extend(_over(item, cpt) for item in pending)
    omitted = total - taken
    if omitted and not marker:
        return None if taken == 0 else "\n".join(lines)
    if omitted:
        marker_line = f"(…{omitted} more omitted)"
        if used + 1 + len(marker_line) > room:
            return None if taken == 0 else "\n".join(lines)
        lines.append(marker_line)
    return "\n".join(lines)


def _over(item: Item, cpt: int) -> Choice:
    return Choice(
        item, _cost(len(item.text) + 1, cpt), False, "over the section's share of the budget"
    )


def build_context(
    *,
    memory: Folded | Memory,
    state: Mapping[str, Any] | None,
    entries: Sequence[SessionEntry],
    cwd: Path,
    top: Path | None,
    project: str | None,
    now: datetime,
    budget_tokens: int = 2000,
    chars_per_token: int = 4,
    explain: bool = True,
    templates: Templates | None = None,
) -> ContextDocument:
    """The session-start document, never longer than `budget_tokens`.

    With `explain` (the default) `choices` holds every candidate line; without it, only
    those that were looked at (the long sections stop where their share ends), which is
    much faster with a large log. The text is the same either way. Every line comes from
    a ``context/*.md.j2`` template of `templates` (default: the built-in ones)."""
    cpt = chars_per_token
    budget = budget_tokens * cpt
    line = Lines(templates or Templates())
    header = line("header", project=project, date=now.astimezone(UTC).date().isoformat())
    footer = line("footer")
    titles = {section: line("title", name=name) for section, name in NAMES.items()}
    choices: list[Choice] = []
    blocks: list[str] = []
    # The header, the footer and the final newline are always there.
    remaining = budget - len(header) - 2 - len(footer) - 1
    if remaining < 0:
        text = header[: max(budget - 1, 0)] + "\n" if budget > 1 else ""
        return ContextDocument(text, budget_tokens, _cost(len(text), cpt), ())

    live = Grouped(memory) if isinstance(memory, Folded) else memory
    # Identity and user first, at full cost (within what the budget allows at all).
    for section in ("identity", "user"):
        block = _take(titles[section], gather.keyed(live, section, line), remaining, cpt, choices)
        if block is not None:
            blocks.append(block)
            remaining -= len(block) + 2

    checked: list[tuple[str, bool]] = []
    parts = gather.project_parts(state, top, checked, line)
    expiries = [_next_midnight(now.astimezone(UTC))]  # the date in the header
    # Long sections give only as many candidates as could fit (a line costs at least its
    # newline; a built-in line at least 3 characters) unless every one is to be explained.
    least = 3 if line.builtin else 1
    candidates: dict[str, Callable[[int | None], tuple[Iterable[Item], int]]] = {
        "behavior": lambda _: gather.every(gather.behavior(live, line)),
        "preferences": lambda _: gather.every(gather.preferences(live, line)),
        "context": lambda _: gather.every(gather.project_context(live, cwd, line)),
        "session": lambda limit: gather.session(entries, limit, line),
        "due": lambda _: gather.every(gather.due(live, now, expiries, line)),
        "learnings": lambda limit: gather.learnings(live, now, cwd, limit, expiries, line),
    }
    pool = remaining
    spent = 0
    for section, weight in WEIGHTS.items():
        # Learnings, last, have their own share and every other section's surplus: all
        # the others did not use.
        share = pool - spent if section == "learnings" else pool * weight // 100
        if section == "project":
            block, used = _project_block(parts, titles["project"], share, cpt, choices)
        else:
            items, total = candidates[section](None if explain else share // least + 1)
            block = _take(titles[section], items, share, cpt, choices, total=total, explain=explain)
            used = len(block) + 2 if block is not None else 0
        if block is not None:
            blocks.append(block)
        spent += used

    text = "\n\n".join([header, *blocks, footer]) + "\n"
    assert len(text) <= budget, "the context document must fit its budget"
    if any(t.get("due") for t in live.of_type("task")):
        # Overdue counts in local days. Margin of an hour: a fixed-offset midnight can be
        # an hour late across a daylight-saving change.
        expiries.append(_next_midnight(now.astimezone()) - timedelta(hours=1))
    return ContextDocument(
        text,
        budget_tokens,
        _cost(len(text), cpt),
        tuple(choices),
        valid_until=min(expiries),
        paths_checked=tuple(checked),
    )


def _next_midnight(moment: datetime) -> datetime:
    """The start of the next day on `moment`'s own clock (its tzinfo)."""
    return datetime.combine(moment.date() + timedelta(days=1), time(), tzinfo=moment.tzinfo)


def _project_block(
    parts: Mapping[str, list[Item]], title: str, share: int, cpt: int, choices: list[Choice]
) -> tuple[str | None, int]:
    """The project-state block: each part has its own share; unused share flows on."""
    if not any(parts.values()):
        return None, 0
    lines = [title]
    used = 2 + len(title)
    # One marker for the whole section, counted at the end; its room is kept aside.
    total = sum(len(items) for items in parts.values())
    reserve = 1 + len(f"(…{total} more omitted)")
    if share < used + reserve:
        for items in parts.values():
            choices.extend(
                Choice(
                    i, _cost(len(i.text) + 1, cpt), False, "over the section's share of the budget"
                )
                for i in items
            )
        return None, 0
    inner = share - used - reserve
    carry = 0
    omitted = 0
    for name, pct in PROJECT_SHARES.items():
        room = inner * pct // 100 + carry
        items = parts.get(name, [])
        # A title-less block: _take counts 2 characters before it, the block 1.
        block = _take("", items, room + 1, cpt, choices, marker=False) if items else None
        spent = 0
        if block is not None:
            body = block.split("\n", 1)[1]
            lines.append(body)
            spent = len(body) + 1
        omitted += len(items) - (block.count("\n") if block is not None else 0)
        carry = room - spent
    if omitted:
        lines.append(f"(…{omitted} more omitted)")
    if len(lines) == 1:
        return None, 0
    block_text = "\n".join(lines)
    return block_text, len(block_text) + 2

"""The one document injected at session start, built from every store within a budget.

Sections, in order: identity and user, behavior, preferences (brain.json's and the
memory's), the project state (brain.json), project context (longest path prefix of the
working directory), the session brain (brain.md), what is due, and learnings ranked by
score. Tokens are characters / 4 rounded up. Two passes: first every must-know line
(`candidates.MUST_KNOW`: identity and user, which the seed pays first at full cost, the
goal, blockers, work in progress and next steps, critical and high known issues, the
newest loop status and compaction summary, the user's rules and brain.json's
preferences, what is due, the newest decisions) has its room, in its own section; then
what they leave is split by `WEIGHTS`, and what a section leaves unused goes to
learnings (the seed's surplus cascading). Inside a section the other lines are taken in
order until its share ends, with a ``(…N more omitted)`` marker. If the must-know lines
alone exceed the budget they are shortened, then the least important go (`_fit_must`),
and nothing else is in. The last line counts what was left out per section and names
``voyager-brain recall``. The document never exceeds the budget, its first and last
lines and the markers included.

Every candidate line is recorded as a `Choice` (what, where from, cost, its tier,
included or why not), so ``--explain`` shows exactly what the text holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from ..memory.log import Folded
from ..render import Templates
from ..value import Record
from . import candidates as gather
from .candidates import MUST_KNOW, PROJECT_SHARES, Grouped, Item, Lines, Offer

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

    @property
    def tier(self) -> str:
        return "must-know" if self.item.must else "ranked"

    @property
    def why(self) -> str:
        """Why the line is must-know (empty for the others)."""
        return MUST_KNOW.get(self.item.must, "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.item.section,
            "ref": self.item.ref,
            "text": self.item.text,
            "tokens": self.tokens,
            "included": self.included,
            "reason": self.reason,
            "tier": self.tier,
            "why": self.why,
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
    #: What had to give when the must-know lines alone overflowed the budget.
    notes: tuple[str, ...] = ()
    #: Per section, how many candidate lines the budget left out.
    left_out: Mapping[str, int] | None = None

    @property
    def included_refs(self) -> list[str]:
        return [c.item.ref for c in self.choices if c.included]

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "included": self.included_refs,
            "left_out": dict(self.left_out or {}),
            "notes": list(self.notes),
            "choices": [c.to_dict() for c in self.choices],
        }


# -- taking lines within a budget -----------------------------------------------------

OVER = "over the section's share of the budget"
SHORTENED = "included, shortened: the must-know lines alone exceed the budget"
LEFT_OUT = "left out: the must-know lines alone exceed the budget"
#: When the must-know lines alone exceed the budget, each is cut to this many characters.
SHORT_LINE = 80


def _cost(chars: int, cpt: int) -> int:
    return math.ceil(chars / cpt)


def _marker(omitted: int) -> int:
    """The room a ``(…N more omitted)`` line takes, its newline included."""
    return 1 + len(f"(…{omitted} more omitted)") if omitted else 0


def _take(
    title: str,
    items: Iterable[Item],
    room: int,
    cpt: int,
    choices: list[Choice],
    *,
    total: int,
    owed: int = 0,
    swap: Mapping[tuple[str, str], Item | None] | None = None,
    ranked: bool = True,
    marker: bool = True,
    explain: bool = True,
) -> tuple[str | None, int]:
    """The section's block (title and lines, no final newline) using at most `room`
    characters of the document, the separator before it included, and how many lines it
    holds; None when empty or nothing fits.

    Must-know lines are always taken: `owed` is the room they need (what `_must_cost`
    counted, for the lines `swap` keeps: it maps a must-know line to its shortened form,
    or None when it is left out). The others are taken in order while they fit beside
    what is owed, none after the first that does not (none at all without `ranked`).
    Records a Choice per item (without `explain`, only up to where nothing more can be
    taken: the rest are not even rendered). `total` counts every candidate, those
    `items` does not give included. Without `marker`, omitted lines are only recorded
    (the caller counts them)."""
    if not total:
        return None, 0
    lines = [title]
    used = 2 + len(title)  # the blank line before the block, and the title
    taken = 0
    closed = not ranked
    for n, item in enumerate(items):
        if item.must:
            if swap is not None and (item.section, item.ref) in swap:
                shortened = swap[item.section, item.ref]
                if shortened is None:
                    choices.append(Choice(item, _cost(len(item.text) + 1, cpt), False, LEFT_OUT))
                    continue
                item, why = shortened, SHORTENED
            else:
                why = "included"
            owed -= 1 + len(item.text)
        elif (
            closed
            or used + 1 + len(item.text) + owed + (_marker(total - n - 1) if marker else 0) > room
        ):
            closed = True
            choices.append(_over(item, cpt))
            if owed <= 0 and not explain:
                break
            continue
        else:
            why = "included"
        lines.append(item.text)
        used += 1 + len(item.text)
        taken += 1
        choices.append(Choice(item, _cost(len(item.text) + 1, cpt), True, why))
    omitted = total - taken
    if taken == 0:
        return None, 0
    if omitted and marker and used + _marker(omitted) <= room:
        lines.append(f"(…{omitted} more omitted)")
    return "\n".join(lines), taken


def _over(item: Item, cpt: int) -> Choice:
    return Choice(item, _cost(len(item.text) + 1, cpt), False, OVER)


def _must_cost(title: str, must: Iterable[Item], total: int) -> int:
    """The room a section's must-know lines need: the title, the lines, and the marker
    for the other lines at their most."""
    kept = list(must)
    if not kept:
        return 0
    return 2 + len(title) + sum(1 + len(i.text) for i in kept) + _marker(total - len(kept))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fit_must(
    must: Mapping[str, list[Item]],
    totals: Mapping[str, int],
    titles: Mapping[str, str],
    room: int,
    cpt: int,
    notes: list[str],
) -> tuple[dict[tuple[str, str], Item | None], int]:
    """When the must-know lines alone need more than `room`: each is shortened to one
    line of `SHORT_LINE` characters (identity and user, which the seed pays in full,
    only if need be), then the least important go, the oldest decisions first
    (`MUST_KNOW`'s order). The lines changed (None: left out), and the room the rest
    need."""

    def need(kept: Mapping[str, list[Item]]) -> int:
        return sum(_must_cost(titles[s], items, totals[s]) for s, items in kept.items())

    first = cost = need(must)
    if cost <= room:
        return {}, cost
    swap: dict[tuple[str, str], Item | None] = {}
    kept = {s: list(items) for s, items in must.items()}
    for paid_in_full in (False, True):
        for items in kept.values():
            for n, item in enumerate(items):
                if (item.must in ("identity", "user")) == paid_in_full:
                    short = item._replace(text=_shorten(item.text, SHORT_LINE))
                    if short.text != item.text:
                        items[n] = swap[item.section, item.ref] = short
        cost = need(kept)
        if cost <= room:
            break
    shortened = sum(1 for v in swap.values() if v is not None)
    notes.append(
        f"the must-know lines alone need ~{_cost(first, cpt)} tokens of the"
        f" ~{_cost(max(room, 0), cpt)} left: {shortened} shortened to one line of at most"
        f" {SHORT_LINE} characters, nothing else is in"
    )
    if cost <= room:
        return swap, cost
    rank = {key: n for n, key in enumerate(MUST_KNOW)}
    order = sorted(
        (
            (rank[item.must], n, section, item)
            for section, items in kept.items()
            for n, item in enumerate(items)
        ),
        key=lambda t: (t[0], t[1]),
    )
    dropped: list[str] = []
    while cost > room and order:
        _, _, section, item = order.pop()
        kept[section].remove(item)
        swap[section, item.ref] = None
        dropped.append(item.must)
        cost = need(kept)
    kinds = ", ".join(f"{k.replace('_', ' ')} ×{dropped.count(k)}" for k in dict.fromkeys(dropped))
    notes.append(f"must-know lines left out, the least important first: {kinds}")
    return swap, cost


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
    warnings: Sequence[str] = (),
) -> ContextDocument:
    """The session-start document, never longer than `budget_tokens`.

    Two passes: every must-know line (`MUST_KNOW`) has its room first, each in its
    section; then each section has its share (`WEIGHTS`) of what they leave, learnings
    the rest. With `explain` (the default) `choices` holds every candidate line; without
    it, only those that were looked at (the long sections stop where their share ends),
    which is much faster with a large log. The text is the same either way. Every line
    comes from a ``context/*.md.j2`` template of `templates` (default: the built-in
    ones). `warnings` (a brain file left out, and why) come first, one line each, when
    the budget holds them."""
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

    if warnings:
        notice = "\n".join(line("warning", text=w) for w in warnings)
        if len(notice) + 2 <= remaining:
            blocks.append(notice)
            remaining -= len(notice) + 2

    live = Grouped(memory) if isinstance(memory, Folded) else memory
    checked: list[tuple[str, bool]] = []
    parts = gather.project_parts(state, top, checked, line)
    expiries = [_next_midnight(now.astimezone(UTC))]  # the date in the header
    project_items = [i for items in parts.values() for i in items]
    offers: dict[str, Offer] = {
        "identity": gather.offer(gather.keyed(live, "identity", line)),
        "user": gather.offer(gather.keyed(live, "user", line)),
        "behavior": gather.offer(gather.behavior(live, line)),
        "preferences": gather.offer(gather.preferences(live, state, line)),
        "project": Offer(
            [i for i in project_items if i.must], len(project_items), lambda _: project_items
        ),
        "context": gather.offer(gather.project_context(live, cwd, line)),
        "session": gather.session(entries, line),
        "due": gather.offer(gather.due(live, now, expiries, line)),
        "learnings": gather.learnings(live, now, cwd, expiries, line),
    }
    totals = {section: o.total for section, o in offers.items()}
    # The last line: what was left out, and how to recall it. Its room is kept for the
    # most it could say (every candidate of every section left out).
    worst = line("recall", left_out=_left_out(totals))
    if len(worst) + 1 <= remaining:
        remaining -= len(worst) + 1
    else:
        worst = ""

    notes: list[str] = []
    must = {s: o.must for s, o in offers.items() if o.must}
    swap, owed = _fit_must(must, totals, titles, remaining, cpt, notes)
    # What the must-know lines leave is shared by weight; nothing else is in when they
    # had to be shortened (the room a ranked line took would be theirs).
    cut = bool(swap)
    pool = 0 if cut else remaining - owed
    left = remaining
    taken: dict[str, int] = {}
    # Long sections give only as many candidates as could fit (a line costs at least its
    # newline; a built-in line at least 3 characters) unless every one is to be explained.
    least = 3 if line.builtin else 1
    for section, o in offers.items():
        kept = [swap.get((i.section, i.ref), i) for i in o.must]
        need = _must_cost(titles[section], [i for i in kept if i is not None], o.total)
        # Learnings, last, have their own share and every other section's surplus: all
        # the others did not use.
        share = left if section == "learnings" else need + pool * WEIGHTS.get(section, 0) // 100
        if section == "project":
            block, taken[section] = _project_block(
                parts, titles[section], share, cpt, choices, swap, ranked=not cut
            )
        else:
            block, taken[section] = _take(
                titles[section],
                o.items(None if explain else share // least + 1),
                share,
                cpt,
                choices,
                total=o.total,
                owed=_owed(o.must, swap),
                swap=swap,
                ranked=not cut,
                explain=explain,
            )
        if block is not None:
            blocks.append(block)
            left -= len(block) + 2

    omitted = {s: totals[s] - taken.get(s, 0) for s in totals}
    tail = [footer]
    if worst:
        recall = line("recall", left_out=_left_out(omitted))
        tail.append(recall if len(recall) <= len(worst) else recall[: len(worst)])
    text = "\n\n".join([header, *blocks, "\n".join(tail)]) + "\n"
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
        notes=tuple(notes),
        left_out={s: n for s, n in omitted.items() if n},
    )


def _left_out(counts: Mapping[str, int]) -> list[dict[str, Any]]:
    """What the recall line's template is given: each section with lines left out."""
    return [{"section": s, "name": NAMES[s].lower(), "count": n} for s, n in counts.items() if n]


def _next_midnight(moment: datetime) -> datetime:
    """The start of the next day on `moment`'s own clock (its tzinfo)."""
    return datetime.combine(moment.date() + timedelta(days=1), time(), tzinfo=moment.tzinfo)


def _project_block(
    parts: Mapping[str, list[Item]],
    title: str,
    share: int,
    cpt: int,
    choices: list[Choice],
    swap: Mapping[tuple[str, str], Item | None],
    *,
    ranked: bool,
) -> tuple[str | None, int]:
    """The project-state block and how many lines it holds: each part has its must-know
    lines and its share of the rest; unused share flows on to the next part."""
    total = sum(len(items) for items in parts.values())
    if not total:
        return None, 0
    owed = {name: _owed(items, swap) for name, items in parts.items()}
    kept = sum(1 for items in parts.values() for i in items if _kept(i, swap))
    # One marker for the whole section, counted at the end; its room is kept aside.
    inner = share - 2 - len(title) - _marker(total - kept)
    if inner < sum(owed.values()):  # no must-know line, and not even the title fits
        choices.extend(_over(i, cpt) for items in parts.values() for i in items)
        return None, 0
    rest = inner - sum(owed.values())
    lines = [title]
    carry = 0
    taken = 0
    for name, pct in PROJECT_SHARES.items():
        items = parts.get(name, [])
        room = owed[name] + rest * pct // 100 + carry
        # A title-less block: _take counts 2 characters before it, the block 1.
        block, count = _take(
            "",
            items,
            room + 1,
            cpt,
            choices,
            total=len(items),
            owed=owed[name],
            swap=swap,
            ranked=ranked,
            marker=False,
        )
        spent = 0
        if block is not None:
            body = block.split("\n", 1)[1]
            lines.append(body)
            spent = len(body) + 1
        taken += count
        carry = room - spent
    if taken == 0:
        return None, 0
    if taken < total:
        lines.append(f"(…{total - taken} more omitted)")
    return "\n".join(lines), taken


def _kept(item: Item, swap: Mapping[tuple[str, str], Item | None]) -> bool:
    return bool(item.must) and swap.get((item.section, item.ref), item) is not None


def _owed(items: Iterable[Item], swap: Mapping[tuple[str, str], Item | None]) -> int:
    """The room the must-know lines among `items` take, as `swap` leaves them."""
    owed = 0
    for item in items:
        if item.must:
            kept = swap.get((item.section, item.ref), item)
            owed += 1 + len(kept.text) if kept is not None else 0
    return owed

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

import heapq
import itertools
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from ..memory import rank, schedule
from ..memory.log import Folded
from ..render import Templates
from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

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
#: Inside the project state, so that one long list cannot crowd out the others.
PROJECT_SHARES: dict[str, int] = {
    "active": 35,
    "decisions": 30,
    "issues": 15,
    "facts": 10,
    "files": 10,
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
SEVERITY_ORDER = ("critical", "high", "medium", "low")
_OLDEST = datetime.min.replace(tzinfo=UTC)


# Item and Choice are NamedTuples: a session start makes hundreds of them, and creating
# a frozen dataclass (class and instances) costs several times more.
class Item(Record):
    """One candidate line: its text, its section, and what it stands for."""

    section: str
    ref: str
    text: str


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


# -- gathering the candidates ---------------------------------------------------------


def _one_line(text: str, limit: int = 240) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


if TYPE_CHECKING:  # a Protocol class costs a session start more than the check is worth

    class SessionEntry(Protocol):
        """A section of brain.md as the context reads it: a `BrainEntry`, or a
        `brainfile.Section` that decodes its text only when asked. The session package
        hands them in; the context does not import it (it sits below the session)."""

        @property
        def type(self) -> str: ...
        @property
        def timestamp(self) -> datetime | None: ...
        @property
        def source(self) -> str | None: ...
        @property
        def content(self) -> str: ...
        @property
        def key(self) -> tuple[str, str, str]: ...
        @property
        def label(self) -> str: ...

    class Memory(Protocol):
        """The live memory entries as the context reads them: by type in fold order,
        and the learnings ranked. `memory.view.MemoryView` keeps them current in a
        process; `Grouped` reads them off one fold."""

        def of_type(self, type_: str, /) -> list[dict[str, Any]]: ...

        def count(self, type_: str, /) -> int: ...

        def top_learnings(
            self, now: datetime, cwd: str, limit: int | None, /
        ) -> tuple[list[dict[str, Any]], datetime | None]: ...


class Grouped:
    """A fold grouped by type (what `Memory` asks of it, computed at once)."""

    def __init__(self, memory: Folded) -> None:
        self._live: dict[str, list[dict[str, Any]]] = {}
        for entry in memory.entries.values():
            self._live.setdefault(str(entry.get("type")), []).append(entry)

    def of_type(self, type_: str, /) -> list[dict[str, Any]]:
        return self._live.get(type_, [])

    def count(self, type_: str, /) -> int:
        return len(self._live.get(type_, ()))

    def top_learnings(
        self, now: datetime, cwd: str, limit: int | None, /
    ) -> tuple[list[dict[str, Any]], datetime | None]:
        return rank.top_learnings(self.of_type("learning"), now, cwd, limit)


class Lines:
    """Candidate lines rendered by the context templates (``context/NAME.md.j2``, a
    project may override them): one line each, whatever a template makes of it."""

    def __init__(self, templates: Templates) -> None:
        self.render = templates.render
        #: No override of any context template: every line is the built-in one.
        self.builtin = (
            templates.override_dir is None or not (templates.override_dir / "context").is_dir()
        )

    def __call__(self, template: str, /, **values: Any) -> str:
        text = self.render(f"context/{template}.md.j2", **values).rstrip("\n")
        return text.replace("\n", " ") if "\n" in text else text


def _keyed(live: Memory, type_: str, line: Lines) -> list[Item]:
    entries = sorted(live.of_type(type_), key=lambda e: str(e.get("key")))
    return [
        Item(type_, e["id"], line("keyed", key=e.get("key"), value=_one_line(e.get("value", ""))))
        for e in entries
    ]


def _behavior(live: Memory, line: Lines) -> list[Item]:
    labels = {"do": "Do", "dont": "Don't", "value": "Value"}
    items = []
    for category in ("do", "dont", "value"):
        for e in live.of_type("behavior"):
            if e.get("category") == category:
                text = _one_line(e.get("text", ""))
                items.append(
                    Item("behavior", e["id"], line("behavior", label=labels[category], text=text))
                )
    return items


def _preferences(live: Memory, line: Lines) -> list[Item]:
    entries = sorted(
        live.of_type("preference"),
        key=lambda e: (str(e.get("category", "")), str(e.get("text", ""))),
    )
    return [
        Item(
            "preferences",
            e["id"],
            line(
                "preference",
                category=e.get("category", "General"),
                text=_one_line(e.get("text", "")),
            ),
        )
        for e in entries
    ]


def _project_parts(
    state: Mapping[str, Any] | None,
    top: Path | None,
    checked: list[tuple[str, bool]],
    line: Lines,
) -> dict[str, list[Item]]:
    if not state:
        return {}
    active = state.get("activeState", {})
    parts: dict[str, list[Item]] = {name: [] for name in PROJECT_SHARES}
    ref = "brain.json"
    if active.get("currentGoal"):
        parts["active"].append(
            Item(
                "project",
                f"{ref}:currentGoal",
                line("project", kind="goal", text=_one_line(active["currentGoal"])),
            )
        )
    parts["active"] += [
        Item("project", f"{ref}:blockers[{n}]", line("project", kind="blocker", text=_one_line(b)))
        for n, b in enumerate(active.get("blockers", []))
    ]
    parts["active"] += [
        Item(
            "project",
            f"{ref}:inProgress[{n}]",
            line("project", kind="in_progress", text=_one_line(b)),
        )
        for n, b in enumerate(active.get("inProgress", []))
    ]
    parts["active"] += [
        Item(
            "project", f"{ref}:nextSteps[{n}]", line("project", kind="next_step", text=_one_line(s))
        )
        for n, s in enumerate(state.get("nextSteps", []))
    ]
    # Newest first: by date, and among the same date the one recorded later.
    dated = sorted(
        enumerate(state.get("decisions", [])),
        key=lambda pair: (str(pair[1].get("when") or ""), pair[0]),
        reverse=True,
    )
    decisions = [d for _, d in dated]
    for d in decisions:
        text = line(
            "project",
            kind="decision",
            what=_one_line(d["what"]),
            why=_one_line(d["why"]) if d.get("why") else "",
            when=d.get("when") or "",
        )
        parts["decisions"].append(Item("project", f"{ref}:decisions[{d['what']}]", text))
    rank_of = {s: n for n, s in enumerate(SEVERITY_ORDER)}
    for issue in sorted(
        state.get("knownIssues", []),
        key=lambda i: rank_of.get(i.get("severity") or "", len(rank_of)),
    ):
        text = line(
            "project",
            kind="known_issue",
            severity=issue.get("severity") or "?",
            issue=_one_line(issue["issue"]),
            workaround=_one_line(issue["workaround"]) if issue.get("workaround") else "",
        )
        parts["issues"].append(Item("project", f"{ref}:knownIssues[{issue['issue']}]", text))
    facts = state.get("facts", {})
    if facts.get("stack"):
        text = line("project", kind="stack", text=", ".join(facts["stack"]))
        parts["facts"].append(Item("project", f"{ref}:facts.stack", text))
    if facts.get("architecture"):
        text = line("project", kind="architecture", text=_one_line(facts["architecture"]))
        parts["facts"].append(Item("project", f"{ref}:facts.architecture", text))
    for k, v in facts.get("environment", {}).items():
        text = line("project", kind="environment", key=k, value=_one_line(str(v)))
        parts["facts"].append(Item("project", f"{ref}:facts.environment.{k}", text))
    for n, c in enumerate(facts.get("custom", [])):
        text = line("project", kind="fact", text=_one_line(c))
        parts["facts"].append(Item("project", f"{ref}:facts.custom[{n}]", text))
    for f in state.get("keyFiles", []):
        stale = False
        if top is not None:
            stale = not (top / f["path"]).exists()
            checked.append((str(top / f["path"]), not stale))
        text = line(
            "project",
            kind="key_file",
            path=f["path"],
            role=_one_line(f["role"]) if f.get("role") else "",
            missing=stale,
        )
        parts["files"].append(Item("project", f"{ref}:keyFiles[{f['path']}]", text))
    return parts


def _context(live: Memory, cwd: Path, line: Lines) -> list[Item]:
    best: dict[str, Any] | None = None
    best_len = -1
    here = os.path.normpath(cwd)
    for e in live.of_type("context"):
        path = os.path.normpath(str(e.get("path", "")))
        inside = here == path or here.startswith(path.rstrip(os.sep) + os.sep)
        if inside and len(path) > best_len:
            best, best_len = e, len(path)
    if best is None:
        return []
    return [
        Item("context", best["id"], line("context", line=text))
        for text in str(best.get("content", "")).splitlines()
        if text.strip()
    ]


def _session(
    entries: Sequence[SessionEntry], limit: int | None, line: Lines
) -> tuple[Iterable[Item], int]:
    def item(e: SessionEntry, label: str) -> Item:
        text = line("session", label=label, timestamp=e.key[1], text=_one_line(e.content))
        return Item("session", f"brain.md:{e.type}@{e.key[1]}", text)

    statuses: list[SessionEntry] = []
    summaries: list[SessionEntry] = []
    recent: list[SessionEntry] = []
    for e in entries:  # one look at each source: a Section reads it off its text
        if e.type == "loop_status":
            statuses.append(e)
        elif e.source != "compact":  # a decision, an observation or a reflection
            recent.append(e)
        elif e.type == "reflection":
            summaries.append(e)
    items: list[Item] = []
    if statuses:
        items.append(item(statuses[-1], "Loop status"))
    if summaries:
        items.append(item(summaries[-1], "Summary"))
    total = len(items) + len(recent)
    # By time (to the second, as the key shows it), a decision before the rest, the one
    # earlier in the file first. The keys are offered newest first: of a file in time
    # order, each after the first `limit` is turned away by one comparison.
    keys = [(e.timestamp or _OLDEST, e.type == "decision", -n) for n, e in enumerate(recent)]
    keys.reverse()
    if limit is not None and limit < len(keys):
        keys = heapq.nlargest(limit, keys)
    else:
        keys.sort(reverse=True)
    newest_first = [recent[-key[2]] for key in keys]
    # Rendered as taken: most are never looked at.
    return itertools.chain(items, (item(e, e.label) for e in newest_first)), total


def _due(live: Memory, now: datetime, expiries: list[datetime], line: Lines) -> list[Item]:
    items = []
    for r in live.of_type("reminder"):
        when = schedule.due_at(r)
        if when is not None and when <= now:
            text = line("due", kind="reminder", text=_one_line(r.get("text", "")), why="")
            items.append(Item("due", r["id"], text))
        elif when is not None:
            expiries.append(when)
    for t in live.of_type("task"):
        if schedule.matches_filter(t, "pending") and (
            t.get("priority") == "urgent" or schedule.is_overdue(t, now)
        ):
            why = "urgent" if t.get("priority") == "urgent" else f"overdue since {t.get('due')}"
            text = line("due", kind="task", text=_one_line(t["description"]), why=why)
            items.append(Item("due", t["id"], text))
    return items


def _learnings(
    live: Memory,
    now: datetime,
    cwd: Path,
    limit: int | None,
    expiries: list[datetime],
    line: Lines,
) -> tuple[Iterable[Item], int]:
    ranked, next_change = live.top_learnings(now, str(cwd), limit)
    if next_change is not None:
        expiries.append(next_change)
    items = (
        Item("learnings", e["id"], line("learning", text=_one_line(e.get("text", ""))))
        for e in ranked
    )
    return items, live.count("learning")


def _all(items: list[Item]) -> tuple[list[Item], int]:
    return items, len(items)


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
        block = _take(titles[section], _keyed(live, section, line), remaining, cpt, choices)
        if block is not None:
            blocks.append(block)
            remaining -= len(block) + 2

    checked: list[tuple[str, bool]] = []
    parts = _project_parts(state, top, checked, line)
    expiries = [_next_midnight(now.astimezone(UTC))]  # the date in the header
    # Long sections give only as many candidates as could fit (a line costs at least its
    # newline; a built-in line at least 3 characters) unless every one is to be explained.
    least = 3 if line.builtin else 1
    candidates: dict[str, Callable[[int | None], tuple[Iterable[Item], int]]] = {
        "behavior": lambda _: _all(_behavior(live, line)),
        "preferences": lambda _: _all(_preferences(live, line)),
        "context": lambda _: _all(_context(live, cwd, line)),
        "session": lambda limit: _session(entries, limit, line),
        "due": lambda _: _all(_due(live, now, expiries, line)),
        "learnings": lambda limit: _learnings(live, now, cwd, limit, expiries, line),
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

"""The candidate lines of the session-start context, section by section: what each
store offers, one line each, rendered by the context templates. `build` decides which of
them fit the budget."""

from __future__ import annotations

import heapq
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from ..memory import rank, schedule
from ..memory.log import Folded
from ..render import Templates
from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

#: Inside the project state, so that one long list cannot crowd out the others.
PROJECT_SHARES: dict[str, int] = {
    "active": 35,
    "decisions": 30,
    "issues": 15,
    "facts": 10,
    "files": 10,
}
SEVERITY_ORDER = ("critical", "high", "medium", "low")
_OLDEST = datetime.min.replace(tzinfo=UTC)

#: How many of the newest decisions are must-know.
NEWEST_DECISIONS = 3
#: What the next session must know, and why: every such line is in the document before
#: any other (see `build`). In this order of importance: when the must-know lines alone
#: overflow the budget, the last kinds go first (the oldest decisions first of all).
MUST_KNOW: dict[str, str] = {
    "identity": "identity, paid first as the seed says",
    "user": "about the user, paid first as the seed says",
    "goal": "the current goal",
    "blocker": "an open blocker",
    "critical": "a known issue of severity critical",
    "high": "a known issue of severity high",
    "in_progress": "work in progress",
    "next_step": "a next step",
    "loop_status": "the session's newest loop status",
    "summary": "the latest compaction summary",
    "rule": "a rule of the user's (don't, never, always, must)",
    "preference": "a preference in brain.json",
    "due": "due now (a reminder, an urgent or overdue task)",
    "decision": f"one of the {NEWEST_DECISIONS} newest decisions",
}
#: A behavior or a preference that says one of these words is a rule, must-know.
RULE_WORDS = re.compile(r"\b(?:never|always|don['’]t|do not|must)\b", re.IGNORECASE)


# Item is a NamedTuple: a session start makes hundreds of them, and creating a frozen
# dataclass (class and instances) costs several times more.
class Item(Record):
    """One candidate line: its text, its section, and what it stands for; `must` is the
    `MUST_KNOW` key of a must-know line, empty for the others."""

    section: str
    ref: str
    text: str
    must: str = ""


class Offer(Record):
    """A section's candidates: `items(limit)` gives them in order, the must-know ones
    among them, and at least `limit` of the others when there are so many (None: all);
    `total` counts them all; `must` lists the must-know ones, each as `items` gives it."""

    must: list[Item]
    total: int
    items: Callable[[int | None], Iterable[Item]]


def offer(items: list[Item]) -> Offer:
    """A section whose candidates are all made at once."""
    return Offer([i for i in items if i.must], len(items), lambda _: items)


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


def keyed(live: Memory, type_: str, line: Lines) -> list[Item]:
    entries = sorted(live.of_type(type_), key=lambda e: str(e.get("key")))
    return [
        Item(
            type_,
            e["id"],
            line("keyed", key=e.get("key"), value=_one_line(e.get("value", ""))),
            type_,
        )
        for e in entries
    ]


def _rule(text: str) -> str:
    return "rule" if RULE_WORDS.search(text) else ""


def behavior(live: Memory, line: Lines) -> list[Item]:
    labels = {"do": "Do", "dont": "Don't", "value": "Value"}
    items = []
    for category in ("do", "dont", "value"):
        for e in live.of_type("behavior"):
            if e.get("category") == category:
                text = _one_line(e.get("text", ""))
                must = "rule" if category == "dont" else _rule(text)
                rendered = line("behavior", label=labels[category], text=text)
                items.append(Item("behavior", e["id"], rendered, must))
    return items


def preferences(live: Memory, state: Mapping[str, Any] | None, line: Lines) -> list[Item]:
    """brain.json's preferences (the project's, each value a line, every item of a list
    one), then the memory's preferences by category."""
    items = []
    for key, value in (state or {}).get("preferences", {}).items():
        values = enumerate(value) if isinstance(value, list) else [(None, value)]
        for n, v in values:
            if v in ("", None, [], {}):
                continue
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
            ref = f"brain.json:preferences.{key}" + (f"[{n}]" if n is not None else "")
            rendered = line("preference", category=key, text=_one_line(text))
            items.append(Item("preferences", ref, rendered, "preference"))
    entries = sorted(
        live.of_type("preference"),
        key=lambda e: (str(e.get("category", "")), str(e.get("text", ""))),
    )
    for e in entries:
        text = _one_line(e.get("text", ""))
        rendered = line("preference", category=e.get("category", "General"), text=text)
        items.append(Item("preferences", e["id"], rendered, _rule(text)))
    return items


def project_parts(
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
    # Everything in the active part is must-know.
    if active.get("currentGoal"):
        text = line("project", kind="goal", text=_one_line(active["currentGoal"]))
        parts["active"].append(Item("project", f"{ref}:currentGoal", text, "goal"))
    for field, kind, values in (
        ("blockers", "blocker", active.get("blockers", [])),
        ("inProgress", "in_progress", active.get("inProgress", [])),
        ("nextSteps", "next_step", state.get("nextSteps", [])),
    ):
        parts["active"] += [
            Item(
                "project",
                f"{ref}:{field}[{n}]",
                line("project", kind=kind, text=_one_line(v)),
                kind,
            )
            for n, v in enumerate(values)
        ]
    # Newest first: by date, and among the same date the one recorded later.
    dated = sorted(
        enumerate(state.get("decisions", [])),
        key=lambda pair: (str(pair[1].get("when") or ""), pair[0]),
        reverse=True,
    )
    decisions = [d for _, d in dated]
    for n, d in enumerate(decisions):
        text = line(
            "project",
            kind="decision",
            what=_one_line(d["what"]),
            why=_one_line(d["why"]) if d.get("why") else "",
            when=d.get("when") or "",
        )
        must = "decision" if n < NEWEST_DECISIONS else ""
        parts["decisions"].append(Item("project", f"{ref}:decisions[{d['what']}]", text, must))
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
        must = issue.get("severity") if issue.get("severity") in ("critical", "high") else ""
        item = Item("project", f"{ref}:knownIssues[{issue['issue']}]", text, str(must))
        parts["issues"].append(item)
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


def project_context(live: Memory, cwd: Path, line: Lines) -> list[Item]:
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


def session(entries: Sequence[SessionEntry], line: Lines) -> Offer:
    """The newest loop status and the latest compaction summary (must-know), then the
    other entries newest first, a decision before the rest at the same second, the one
    earlier in the file first."""

    def item(e: SessionEntry, label: str, must: str = "") -> Item:
        text = line("session", label=label, timestamp=e.key[1], text=_one_line(e.content))
        return Item("session", f"brain.md:{e.type}@{e.key[1]}", text, must)

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
    must: list[Item] = []
    if statuses:
        must.append(item(statuses[-1], "Loop status", "loop_status"))
    if summaries:
        must.append(item(summaries[-1], "Summary", "summary"))

    def items(limit: int | None) -> Iterable[Item]:
        # By time (to the second, as the key shows it), a decision before the rest, the
        # one earlier in the file first. The keys are offered newest first: of a file in
        # time order, each after the first `limit` is turned away by one comparison.
        keys = [(e.timestamp or _OLDEST, e.type == "decision", -n) for n, e in enumerate(recent)]
        keys.reverse()
        if limit is not None and limit < len(keys):
            keys = heapq.nlargest(limit, keys)
        else:
            keys.sort(reverse=True)
        newest_first = [recent[-key[2]] for key in keys]
        # Rendered as taken: most are never looked at.
        return itertools.chain(must, (item(e, e.label) for e in newest_first))

    return Offer(must, len(must) + len(recent), items)


def due(live: Memory, now: datetime, expiries: list[datetime], line: Lines) -> list[Item]:
    items = []
    for r in live.of_type("reminder"):
        when = schedule.due_at(r)
        if when is not None and when <= now:
            text = line("due", kind="reminder", text=_one_line(r.get("text", "")), why="")
            items.append(Item("due", r["id"], text, "due"))
        elif when is not None:
            expiries.append(when)
    for t in live.of_type("task"):
        if schedule.matches_filter(t, "pending") and (
            t.get("priority") == "urgent" or schedule.is_overdue(t, now)
        ):
            why = "urgent" if t.get("priority") == "urgent" else f"overdue since {t.get('due')}"
            text = line("due", kind="task", text=_one_line(t["description"]), why=why)
            items.append(Item("due", t["id"], text, "due"))
    return items


def learnings(
    live: Memory, now: datetime, cwd: Path, expiries: list[datetime], line: Lines
) -> Offer:
    """The learnings by score (none is must-know)."""

    def items(limit: int | None) -> Iterable[Item]:
        ranked, next_change = live.top_learnings(now, str(cwd), limit)
        if next_change is not None:
            expiries.append(next_change)
        return (
            Item("learnings", e["id"], line("learning", text=_one_line(e.get("text", ""))))
            for e in ranked
        )

    return Offer([], live.count("learning"), items)

"""What the overview and the pages of one project's brain show, as plain data: the JSON
twin of each page (``?format=json``) is this data, and the HTML page renders it.

Each function takes the dashboard, the project and the page's query; a store that cannot
be read gives its section an ``error`` (the library's one line, naming file and line)
instead of failing the whole page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial

from ..errors import BrainError
from ..memory import schedule
from ..memory.store import MemoryStore
from ..session.model import ENTRY_TYPES, LABEL_TYPES, TYPE_LABELS
from ..timestamps import format_timestamp
from .projects import Dashboard, PageError, Project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

#: Rows a page shows at once.
PER_PAGE = 50
#: The known-issue severities, most severe first.
SEVERITIES = ("critical", "high", "medium", "low")


def page_bounds(number: int, total: int) -> tuple[int, int, int]:
    """(page, pages, offset) of page `number` of `total` rows: pages count from 1, and a
    page past the end gives the last."""
    pages = max(1, -(-total // PER_PAGE))
    page = min(max(1, number), pages)
    return page, pages, (page - 1) * PER_PAGE


def paginate(items: Sequence[T], number: int) -> dict[str, Any]:
    """One page of `items` (see `page_bounds`)."""
    page, pages, start = page_bounds(number, len(items))
    return {
        "page": page,
        "pages": pages,
        "total": len(items),
        "items": list(items[start : start + PER_PAGE]),
    }


def guarded(read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`read()`, or ``{"error": "<one line>"}`` when a store cannot be read."""
    try:
        return read()
    except BrainError as exc:
        return {"error": str(exc)}


# -- the overview --------------------------------------------------------------------------


def overview(dash: Dashboard) -> dict[str, Any]:
    """Every project: its goal, blockers, severe issues, last session, and how the
    session-start context spends its budget by section."""
    problem = dash.history_problem()
    db = None if problem else dash.history()
    last: dict[int, dict[str, Any]] = {}
    if db is not None:
        rows = db.execute(
            "SELECT s.project_id, s.id, s.task, s.started_at, s.ended_at, s.status"
            " FROM sessions s WHERE s.id = (SELECT s2.id FROM sessions s2"
            " WHERE s2.project_id = s.project_id ORDER BY s2.started_at DESC, s2.id DESC LIMIT 1)"
        )
        last = {row["project_id"]: dict(row) for row in rows}
    projects = []
    for project in dash.projects():
        card: dict[str, Any] = {"project": project.to_dict(), "ref": project.ref}
        card["last_session"] = last.get(project.id) if project.id is not None else None
        card["summary"] = guarded(partial(_summary, dash, project))
        card["budget"] = guarded(partial(budget, dash, project))
        projects.append(card)
    return {
        "projects": projects,
        "history": {
            "path": dash.history_path,
            "exists": os.path.exists(dash.history_path),
            "error": problem,
        },
    }


def _summary(dash: Dashboard, project: Project) -> dict[str, Any]:
    brain = dash.brain(project)
    st = brain.state
    return {
        "name": brain.project,
        "goal": st.active_state.get("currentGoal") or None,
        "blockers": list(st.active_state.get("blockers", [])),
        "severe_issues": [
            i for i in st.known_issues if str(i.get("severity", "")).lower() in SEVERITIES[:2]
        ],
        "entries": len(brain.entries),
        "sessions": st.session_count,
    }


def budget(dash: Dashboard, project: Project) -> dict[str, Any]:
    """The session-start context's tokens by section, in the document's order."""
    from ..context.build import NAMES

    doc = dash.context(project)
    used: dict[str, int] = {}
    for choice in doc.choices:
        if choice.included:
            used[choice.item.section] = used.get(choice.item.section, 0) + choice.tokens
    sections = [{"section": s, "name": NAMES.get(s, s), "tokens": n} for s, n in used.items() if n]
    return {
        "budget_tokens": doc.budget_tokens,
        "tokens": doc.tokens,
        "sections": sections,
        "left_out": dict(doc.left_out or {}),
    }


# -- the session brain -----------------------------------------------------------------------


def heading(entry_type: str, stamp: str | None) -> str:
    """The entry's heading in brain.md, which `blame entry` takes."""
    label = TYPE_LABELS[entry_type]
    return f"{label} — {stamp}" if stamp else label


def brain_page(
    dash: Dashboard, project: Project, *, kind: str = "", q: str = "", page: int = 1
) -> dict[str, Any]:
    """brain.md's entries newest first, filtered by type and text, a page at a time.
    A compaction summary keeps its first line as the headline and what it folded below."""
    brain = dash.brain(project)
    if kind and kind not in ENTRY_TYPES:
        raise PageError(f"type: expected one of {', '.join(ENTRY_TYPES)}, got {kind!r}")
    needle = q.casefold().strip()
    chosen = [
        e
        for e in reversed(brain.entries)
        if (not kind or e.type == kind) and (not needle or needle in e.content.casefold())
    ]
    shown = paginate(chosen, page)
    shown["items"] = [_entry(e) for e in shown["items"]]
    counts = dict.fromkeys(ENTRY_TYPES, 0)
    for entry in brain.entries:
        counts[entry.type] += 1
    tokens = -(-brain.chars // brain.chars_per_token)
    return {
        "project": project.to_dict(),
        "name": brain.project,
        "filters": {"type": kind, "q": q},
        "types": [{"type": t, "label": TYPE_LABELS[t], "count": counts[t]} for t in ENTRY_TYPES],
        "entries": shown,
        "tokens": tokens,
        "budget_tokens": brain.compact_budget_tokens,
        "last_compaction": (
            format_timestamp(brain.last_compaction) if brain.last_compaction else None
        ),
    }


def _entry(entry: Any) -> dict[str, Any]:
    stamp = format_timestamp(entry.timestamp) if entry.timestamp else None
    first, _, rest = entry.content.partition("\n")
    summary = entry.source == "compact"
    return {
        "type": entry.type,
        "label": TYPE_LABELS[entry.type],
        "timestamp": stamp,
        "source": entry.source,
        "heading": heading(entry.type, stamp),
        "text": entry.content,
        "summary": summary,
        "headline": first if summary else None,
        "folded": rest.split("\n") if summary and rest else [],
    }


#: The commits of brain.md an entry's page looks through, newest first.
LOG_LIMIT = 100


def entry_history(dash: Dashboard, project: Project, key: str) -> dict[str, Any]:
    """Where one brain.md entry came from in git (`voyager-brain blame entry KEY`), and
    the commits among brain.md's latest `LOG_LIMIT` that added, edited, removed or
    compacted it (as `voyager-brain log .voyager/brain.md` reports them)."""
    from ..git.audit import history
    from ..git.blame import blame

    bm = dash.manager(project)
    try:
        found = blame(bm.top, "entry", key)
    except BrainError as exc:  # no such entry, or more than one: say so, as a 404
        raise PageError(str(exc)) from None
    label, _, stamp = found.key.partition(" — ")
    wanted = (LABEL_TYPES.get(label), stamp)
    log = []
    with history(bm.top, [".voyager/brain.md"], limit=LOG_LIMIT) as records:
        for record in records:
            changes = record.changes.entries
            ops = [
                op
                for op, entries in (
                    ("added", changes.added),
                    ("edited", [new for _, new in changes.edited]),
                    ("removed", changes.removed),
                    ("compacted", changes.compacted),
                )
                if any(_slot(e) == wanted for e in entries)
            ]
            if ops:
                log.append({**record.commit.to_dict(), "ops": ops})
    return {
        "project": project.to_dict(),
        "key": found.key,
        "blame": found.to_dict(),
        "log": log,
        "text": found.render_text(),
        "commands": [
            f'voyager-brain blame entry "{found.key}"',
            "voyager-brain log .voyager/brain.md",
        ],
    }


def _slot(entry: Any) -> tuple[str | None, str | None]:
    return entry.type, format_timestamp(entry.timestamp) if entry.timestamp else None


# -- the project state ---------------------------------------------------------------------


def state_page(dash: Dashboard, project: Project) -> dict[str, Any]:
    """brain.json by section; key files gone from the working tree flagged stale,
    known issues most severe first."""
    brain = dash.brain(project)
    data = brain.state.data
    top = dash.manager(project).top
    key_files = [
        {**f, "stale": not (top / str(f.get("path", ""))).exists()} for f in brain.state.key_files
    ]
    rank = {s: n for n, s in enumerate(SEVERITIES)}
    issues = sorted(
        brain.state.known_issues,
        key=lambda i: rank.get(str(i.get("severity", "")).lower(), len(SEVERITIES)),
    )
    return {
        "project": project.to_dict(),
        "name": brain.project,
        "version": data.get("version"),
        "last_updated": data.get("lastUpdated"),
        "session_count": brain.state.session_count,
        "facts": dict(brain.state.facts),
        "decisions": list(reversed(brain.state.decisions)),
        "active_state": dict(brain.state.active_state),
        "key_files": key_files,
        "stale_key_files": sum(f["stale"] for f in key_files),
        "known_issues": issues,
        "preferences": dict(brain.state.preferences),
        "next_steps": list(brain.state.next_steps),
    }


# -- the memory ----------------------------------------------------------------------------


def memory_page(dash: Dashboard, project: Project, *, q: str = "", page: int = 1) -> dict[str, Any]:
    """The learnings ranked by score, each with its decay status; preferences, tasks
    (overdue flagged), reminders (due flagged); and recall's answers for `q`."""
    from ..memory.rank import score

    bm = dash.manager(project)
    store = MemoryStore(bm.root, clock=dash.clock)
    view = store.view()
    now = dash.clock()
    cwd = str(bm.root)
    config = bm.config
    mask = not config.redact_secrets
    ranked, _ = view.top_learnings(now, cwd, None)
    stale = {
        id(e)
        for e in view.stale_learnings(now, cwd, config.decay_after_days, config.decay_min_score)
    }
    shown = paginate(ranked, page)
    shown["items"] = [
        {
            **_memory_item(view, e, mask),
            "score": score(e, now, cwd),
            "decay": "stale" if id(e) in stale else "fresh",
        }
        for e in shown["items"]
    ]
    tasks = [
        {**_memory_item(view, t, mask), "overdue": schedule.is_overdue(t, now)}
        for t in view.of_type("task")
    ]
    reminders = [
        {**_memory_item(view, r, mask), "due": schedule.is_due(r, now)}
        for r in view.of_type("reminder")
    ]
    found: dict[str, Any] | None = None
    if q.strip():
        found = guarded(lambda: {"hits": [h.to_dict() for h in bm.recall(q, limit=20)]})
    return {
        "project": project.to_dict(),
        "q": q,
        "recall": found,
        "learnings": shown,
        "stale_learnings": len(stale),
        "decay": {"after_days": config.decay_after_days, "min_score": config.decay_min_score},
        "preferences": [_memory_item(view, p, mask) for p in view.of_type("preference")],
        "tasks": tasks,
        "reminders": reminders,
        "due": sum(r["due"] for r in reminders) + sum(t["overdue"] for t in tasks),
    }


def _memory_item(view: Any, entry: dict[str, Any], mask: bool) -> dict[str, Any]:
    """An entry as shown, with the log it is in. With `mask` (redact_secrets = false
    lets the personal log keep secrets as written) a personal entry's texts are
    redacted for the page, as recall redacts what it shows."""
    store = view.origin(entry["id"])
    if mask and store == "personal":
        from ..redact import redact_json

        entry = {k: v if k in ("id", "type") else redact_json(v) for k, v in entry.items()}
    return {**entry, "store": store}

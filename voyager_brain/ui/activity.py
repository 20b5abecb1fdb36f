"""What the history, the rules and the pipelines pages show, as plain data (each page's
JSON twin). The history is read with indexed queries a page at a time: a history of
100,000 tool calls answers as fast as one of a hundred."""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from pathlib import Path

from ..errors import BrainError
from ..guard import queries
from ..guard.check import STRENGTH
from ..guard.rules import list_rules
from ..pipeline import events as pipeline_events
from ..pipeline import state as pipeline_state
from .pages import PER_PAGE, page_bounds
from .projects import NO_HISTORY, Dashboard, PageError, Project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: What the guard decided for a tool call, strongest first: the strongest action of the
#: rules that fired, "allow" when none did.
DECISIONS = tuple(sorted(STRENGTH, key=STRENGTH.__getitem__, reverse=True))
#: The days the rules' chart and the activity chart cover, up to today.
CHART_DAYS = 30

_FIRED = "EXISTS (SELECT 1 FROM rule_triggers rt WHERE rt.tool_call_id = tc.id{})"
#: Each decision as a condition on a tool call ``tc``, answered from rule_triggers' index
#: on tool_call_id (a CASE over every call's triggers would visit them all).
DECISION_SQL = {
    "block": _FIRED.format(" AND rt.action_taken = 'block'"),
    "warn": _FIRED.format(" AND rt.action_taken = 'warn'")
    + " AND NOT "
    + _FIRED.format(" AND rt.action_taken = 'block'"),
    "log": _FIRED.format("")
    + " AND NOT "
    + _FIRED.format(" AND rt.action_taken IN ('block', 'warn')"),
    "allow": "NOT " + _FIRED.format(""),
}


def _decision(actions: set[str]) -> str:
    return next((d for d in DECISIONS if d in actions), "allow")


def _call_filter(tool: str, decision: str) -> tuple[list[str], list[Any]]:
    """The conditions on a tool call ``tc`` of the tool and decision filters, and their
    parameters; `PageError` for a decision that is not one."""
    if decision and decision not in DECISIONS:
        raise PageError(f"decision: expected one of {', '.join(DECISIONS)}, got {decision!r}")
    where = (["tc.tool = ?"] if tool else []) + ([DECISION_SQL[decision]] if decision else [])
    return where, [tool] if tool else []


def _no_history(dash: Dashboard) -> dict[str, Any]:
    return {"error": NO_HISTORY, "history": {"path": dash.history_path, "exists": False}}


def _days(dash: Dashboard, newest: str | None) -> list[str]:
    """The chart's days (ISO dates), oldest first: up to today, or up to the day of
    `newest` (the latest recorded time) when nothing happened in the last days, so that
    a quiet project still shows its last month of activity."""
    end = dash.clock().date()
    if newest:
        latest = date.fromisoformat(newest[:10])
        if latest < end - timedelta(days=CHART_DAYS - 1):
            end = latest
    return [(end - timedelta(days=n)).isoformat() for n in range(CHART_DAYS - 1, -1, -1)]


def _after(day: str) -> str:
    """The day after `day`: the end of a range of history times (which sort as text)."""
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


# -- the history ---------------------------------------------------------------------------


def history_page(
    dash: Dashboard, *, project: str = "", tool: str = "", decision: str = "", page: int = 1
) -> dict[str, Any]:
    """Sessions across projects, newest first; with a tool or a decision, the tool calls
    that match instead. Filters: the project (a history row id), the tool, the decision."""
    db = dash.history()
    if db is None:
        return _no_history(dash)
    _call_filter(tool, decision)  # a bad decision is a 404 before any query
    chosen: Project | None = dash.project(project) if project else None
    project_id = chosen.id if chosen is not None else None
    if chosen is not None and project_id is None:
        project_id = -1  # here, unknown to the history: nothing matches
    out: dict[str, Any] = {
        "filters": {"project": project, "tool": tool, "decision": decision},
        "projects": [
            {"id": row["id"], "name": row["name"]}
            for row in db.execute("SELECT id, name FROM projects ORDER BY name, id")
        ],
        "tools": [row[0] for row in db.execute("SELECT DISTINCT tool FROM tool_calls ORDER BY 1")],
        "decisions": list(DECISIONS),
        "activity": _activity(dash, db, project_id),
        "history": {"path": dash.history_path, "exists": True},
    }
    if tool or decision:
        out["tool_calls"] = _tool_calls(db, project_id, tool, decision, page)
    else:
        out["sessions"] = _sessions(db, project_id, page)
    return out


def _paged(
    db: sqlite3.Connection, column: str, base: str, order: str, params: list[Any], number: int
) -> tuple[dict[str, Any], list[Any]]:
    """Page `number` of ``SELECT column base ORDER BY order``: the page's numbers
    (``page``, ``pages``, ``total``) and the values of `column` on it."""
    total = db.execute(f"SELECT COUNT(*) {base}", params).fetchone()[0]
    page, pages, offset = page_bounds(number, total)
    values = [
        row[0]
        for row in db.execute(
            f"SELECT {column} {base} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, PER_PAGE, offset],
        )
    ]
    return {"page": page, "pages": pages, "total": total}, values


def _sessions(db: sqlite3.Connection, project_id: int | None, number: int) -> dict[str, Any]:
    where, params = ("WHERE project_id = ?", [project_id]) if project_id is not None else ("", [])
    shown, ids = _paged(
        db, "id", f"FROM sessions {where}", "started_at DESC, id DESC", params, number
    )
    return {**shown, "items": [queries.find_session(db, str(i)) for i in ids]}


def _tool_calls(
    db: sqlite3.Connection, project_id: int | None, tool: str, decision: str, number: int
) -> dict[str, Any]:
    where, params = _call_filter(tool, decision)
    joins = ""
    if project_id is not None:
        joins = " JOIN messages m ON m.id = tc.message_id JOIN sessions s ON s.id = m.session_id"
        where.append("s.project_id = ?")
        params.append(project_id)
    base = f"FROM tool_calls tc{joins}" + (f" WHERE {' AND '.join(where)}" if where else "")
    order = "tc.timestamp DESC, tc.id DESC"
    shown, ids = _paged(db, "tc.id", base, order, params, number)
    return {**shown, "items": _calls(db, ids)}


def _calls(db: sqlite3.Connection, ids: list[int]) -> list[dict[str, Any]]:
    """The tool calls `ids`, in that order, each with its session, the rules that fired
    (``triggers``) and the ``decision``."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    calls = {
        row["id"]: {**dict(row), "triggers": []}
        for row in db.execute(
            "SELECT tc.id, tc.message_id, tc.tool, tc.input, tc.output, tc.success,"
            " tc.duration_ms, tc.timestamp, tc.external_id, m.session_id"
            f" FROM tool_calls tc JOIN messages m ON m.id = tc.message_id WHERE tc.id IN ({marks})",
            ids,
        )
    }
    for row in db.execute(
        "SELECT rt.id, rt.tool_call_id, rt.rule_id, r.description, rt.action_taken,"
        " rt.llm_reasoning, rt.timestamp FROM rule_triggers rt JOIN rules r ON r.id = rt.rule_id"
        f" WHERE rt.tool_call_id IN ({marks}) ORDER BY rt.timestamp, rt.id",
        ids,
    ):
        calls[row["tool_call_id"]]["triggers"].append(dict(row))
    for call in calls.values():
        call["decision"] = _decision({t["action_taken"] for t in call["triggers"]})
    return [calls[i] for i in ids if i in calls]


def _activity(dash: Dashboard, db: sqlite3.Connection, project_id: int | None) -> list[Any]:
    """Tool calls per day over the chart's days, as ``[day, count]`` pairs."""
    newest = db.execute("SELECT MAX(timestamp) FROM tool_calls").fetchone()[0]
    days = _days(dash, newest)
    where = "WHERE tc.timestamp >= ? AND tc.timestamp < ?"
    params: list[Any] = [days[0], _after(days[-1])]
    join = ""
    if project_id is not None:
        join = " JOIN messages m ON m.id = tc.message_id JOIN sessions s ON s.id = m.session_id"
        where += " AND s.project_id = ?"
        params.append(project_id)
    counts = dict(
        db.execute(
            f"SELECT substr(tc.timestamp, 1, 10) AS day, COUNT(*) FROM tool_calls tc{join}"
            f" {where} GROUP BY day",
            params,
        ).fetchall()
    )
    return [[day, counts.get(day, 0)] for day in days]


def session_page(
    dash: Dashboard, ref: str, *, tool: str = "", decision: str = "", page: int = 1
) -> dict[str, Any]:
    """One session: its messages in order, a page at a time, each tool call with the
    rules that fired and the decision. With a tool or a decision, only the messages
    with such calls, and only those calls."""
    db = dash.history()
    if db is None:
        return _no_history(dash)
    match, params = _call_filter(tool, decision)
    try:
        session = queries.find_session(db, ref)
    except BrainError as exc:
        raise PageError(str(exc)) from None
    condition = " AND ".join(match)
    where = "WHERE m.session_id = ?"
    if condition:
        where += (
            f" AND EXISTS (SELECT 1 FROM tool_calls tc WHERE tc.message_id = m.id AND {condition})"
        )
    base = f"FROM messages m {where}"
    shown, ids = _paged(db, "m.id", base, "m.timestamp, m.id", [session["id"], *params], page)
    rows = db.execute(
        "SELECT m.id, m.session_id, m.role, m.content, m.timestamp, m.external_id"
        f" FROM messages m WHERE m.id IN ({','.join('?' * len(ids))})",
        ids,
    )
    by_id = {row["id"]: {**dict(row), "tool_calls": []} for row in rows}
    messages = [by_id[i] for i in ids]
    if by_id:
        marks = ",".join("?" * len(by_id))
        ids = [
            row[0]
            for row in db.execute(
                f"SELECT tc.id FROM tool_calls tc WHERE tc.message_id IN ({marks})"
                + (f" AND {condition}" if condition else "")
                + " ORDER BY tc.timestamp, tc.id",
                [*by_id, *params],
            )
        ]
        for call in _calls(db, ids):
            by_id[call["message_id"]]["tool_calls"].append(call)
    tools = [
        row[0]
        for row in db.execute(
            "SELECT DISTINCT tc.tool FROM tool_calls tc JOIN messages m ON m.id = tc.message_id"
            " WHERE m.session_id = ? ORDER BY 1",
            (session["id"],),
        )
    ]
    return {
        "session": session,
        "filters": {"tool": tool, "decision": decision},
        "tools": tools,
        "decisions": list(DECISIONS),
        "messages": {**shown, "items": messages},
    }


# -- the rules -------------------------------------------------------------------------------


def rules_page(dash: Dashboard) -> dict[str, Any]:
    """Every rule (inactive ones too) with its rule set, how often it fired in all and
    per day over the chart's days."""
    db = dash.history()
    if db is None:
        return _no_history(dash)
    days = _days(dash, db.execute("SELECT MAX(timestamp) FROM rule_triggers").fetchone()[0])
    totals = dict(db.execute("SELECT rule_id, COUNT(*) FROM rule_triggers GROUP BY rule_id"))
    per_day: dict[int, dict[str, int]] = {}
    for rule_id, day, count in db.execute(
        "SELECT rule_id, substr(timestamp, 1, 10) AS day, COUNT(*) FROM rule_triggers"
        " WHERE timestamp >= ? AND timestamp < ? GROUP BY rule_id, day",
        (days[0], _after(days[-1])),
    ):
        per_day.setdefault(rule_id, {})[day] = count
    sets = {row["id"]: row["name"] for row in db.execute("SELECT id, name FROM rule_sets")}
    rules = []
    for rule in list_rules(db, include_inactive=True):
        row = rule.to_dict()
        row["rule_set"] = sets.get(rule.rule_set_id) if rule.rule_set_id is not None else None
        row["triggers"] = totals.get(rule.id, 0)
        row["per_day"] = [[day, per_day.get(rule.id, {}).get(day, 0)] for day in days]
        row["recent"] = sum(per_day.get(rule.id, {}).values())
        rules.append(row)
    return {"days": days, "rules": rules, "history": {"path": dash.history_path, "exists": True}}


# -- the pipelines -----------------------------------------------------------------------------


def pipeline_page(dash: Dashboard, project: Project, *, events: int = 100) -> dict[str, Any]:
    """Every known project's pipeline at a glance, and the chosen one's stages,
    verdict, retries and latest events (newest first)."""
    return {
        "project": project.to_dict(),
        "pipelines": [_glance(dash, p) for p in dash.projects()],
        "pipeline": _pipeline(project.path, events),
    }


def _glance(dash: Dashboard, project: Project) -> dict[str, Any]:
    out: dict[str, Any] = {"project": project.to_dict(), "ref": project.ref}
    try:
        found = pipeline_state.load(project.path)
    except BrainError as exc:
        out["error"] = str(exc)
        return out
    if found is not None:
        out.update(
            status=found.status,
            task=found.task,
            stage=found.current_stage,
            stages=len(found.stages),
        )
    else:
        out["status"] = None
    return out


def _pipeline(root: Path, events: int) -> dict[str, Any] | None:
    try:
        found = pipeline_state.load(root)
        logged = pipeline_events.read_events(root)
    except BrainError as exc:
        return {"error": str(exc)}
    if found is None:
        return None
    return {
        "state": found.to_json(),
        "running": found.status == "running",
        "events": list(reversed(logged[-events:])),
        "event_count": len(logged),
    }

"""The project state (brain.json) as text for people: `voyager-brain show`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .validate import SEVERITIES

_TITLES = {
    "facts": "Facts",
    "decisions": "Decisions",
    "activeState": "Active state",
    "keyFiles": "Key files",
    "knownIssues": "Known issues",
    "preferences": "Preferences",
    "nextSteps": "Next steps",
}


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "; ".join(_value(v) for v in value) or "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items()) or "(none)"
    if value is None or value == "":
        return "(none)"
    return str(value)


def _facts(facts: Mapping[str, Any]) -> list[str]:
    lines = [
        f"stack: {', '.join(facts.get('stack', [])) or '(none)'}",
        f"architecture: {_value(facts.get('architecture'))}",
    ]
    lines += [f"environment: {k} = {_value(v)}" for k, v in facts.get("environment", {}).items()]
    lines += [f"- {fact}" for fact in facts.get("custom", [])]
    lines += [
        f"{k}: {_value(v)}"
        for k, v in facts.items()
        if k not in ("stack", "architecture", "environment", "custom")
    ]
    return lines


def _decisions(decisions: list[dict[str, Any]]) -> list[str]:
    # Newest first; decisions without a date keep their file order, after the dated ones.
    ordered = sorted(decisions, key=lambda d: str(d.get("when") or ""), reverse=True)
    lines = []
    for d in ordered:
        tags = [str(d["when"])] if d.get("when") else []
        if d.get("reversible") is not None:
            tags.append("reversible" if d["reversible"] else "not reversible")
        lines.append(f"- {d['what']}" + (f" ({', '.join(tags)})" if tags else ""))
        if d.get("why"):
            lines.append(f"  why: {d['why']}")
    return lines


def _active(active: Mapping[str, Any]) -> list[str]:
    names = {
        "currentGoal": "goal",
        "inProgress": "in progress",
        "blockers": "blockers",
        "recentlyCompleted": "recently completed",
    }
    return [f"{names.get(k, k)}: {_value(v)}" for k, v in active.items()]


def _key_files(files: list[dict[str, Any]]) -> list[str]:
    return [f"{f['path']}" + (f" — {f['role']}" if f.get("role") else "") for f in files]


def _known_issues(issues: list[dict[str, Any]]) -> list[str]:
    rank = {s: n for n, s in enumerate(reversed(SEVERITIES))}
    lines = []
    for issue in sorted(issues, key=lambda i: rank.get(i.get("severity") or "", len(rank))):
        lines.append(f"[{issue.get('severity') or '?'}] {issue['issue']}")
        if issue.get("workaround"):
            lines.append(f"  workaround: {issue['workaround']}")
    return lines


def _preferences(prefs: Mapping[str, Any]) -> list[str]:
    return [f"{k}: {_value(v)}" for k, v in prefs.items()]


def _next_steps(steps: list[str]) -> list[str]:
    return [f"{n}. {step}" for n, step in enumerate(steps, 1)]


_SECTIONS: dict[str, Callable[[Any], list[str]]] = {
    "facts": _facts,
    "decisions": _decisions,
    "activeState": _active,
    "keyFiles": _key_files,
    "knownIssues": _known_issues,
    "preferences": _preferences,
    "nextSteps": _next_steps,
}


def render_state(data: Mapping[str, Any], field: str | None = None) -> str:
    """brain.json as readable text; only `field` (a top-level field name) when given."""
    out: list[str] = []
    if field is None:
        out.append(
            f"{data.get('project', '')} — project state "
            f"({data.get('sessionCount', 0)} sessions, updated {data.get('lastUpdated', '?')})"
        )
    for name, render in _SECTIONS.items():
        if field is not None and name != field:
            continue
        lines = render(
            data.get(name) or ([] if name not in ("facts", "activeState", "preferences") else {})
        )
        if out:
            out.append("")
        out.append(f"## {_TITLES[name]}")
        out.extend(lines or ["(none)"])
    return "\n".join(out) + "\n"

"""Checking a brain.json document, or a partial update of one, against seed 000's fields:
their types, their allowed values, and the fields the seed does not define (kept, and
reported)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..errors import StateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SEVERITIES = ("low", "medium", "high", "critical")


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _shown(value: Any, width: int = 80) -> str:
    """`value` as JSON, cut to `width` characters: an error is one line, and a value
    from a hostile file may be megabytes long or nested too deeply to serialize."""
    try:
        text = as_json(value)
    except RecursionError:
        return f"{_kind(value)} nested too deeply to show"
    return text if len(text) <= width else text[: width - 1] + "…"


class _Checker:
    """Walks a brain.json document (or a partial update), raising on the first bad field
    and collecting the paths of fields the seed does not define."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.unknown: list[str] = []

    def fail(self, path: str, expected: str, value: Any) -> None:
        raise StateError(f"{self.where}: {path}: expected {expected}, got {_shown(value)}", path)

    def string(self, path: str, value: Any, *, optional: bool = True) -> None:
        if not isinstance(value, str) and not (optional and value is None):
            self.fail(path, "a string", value)

    def strings(self, path: str, value: Any) -> None:
        if not isinstance(value, list):
            self.fail(path, "a list of strings", value)
        for n, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(f"{path}[{n}]", "a string", item)

    def obj(self, path: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, "an object", value)
        return value  # type: ignore[no-any-return]

    def fields(self, path: str, value: dict[str, Any], known: Mapping[str, Any]) -> None:
        for name, item in value.items():
            check = known.get(name)
            sub = f"{path}.{name}" if path else name
            if check is None:
                self.unknown.append(sub)
            else:
                check(sub, item)

    def items(self, path: str, value: Any, key: str, known: Mapping[str, Any]) -> None:
        if not isinstance(value, list):
            self.fail(path, f"a list of objects with {key!r}", value)
        for n, item in enumerate(value):
            sub = f"{path}[{n}]"
            self.obj(sub, item)
            if not isinstance(item.get(key), str):
                self.fail(f"{sub}.{key}", "a string", item.get(key))
            self.fields(sub, item, known)

    def check(self, data: Any) -> list[str]:
        if not isinstance(data, dict):
            raise StateError(f"{self.where}: expected a JSON object, got {_kind(data)}")
        string, strings = self.string, self.strings

        def facts(path: str, value: Any) -> None:
            self.fields(
                path,
                self.obj(path, value),
                {
                    "stack": strings,
                    "architecture": string,
                    "environment": lambda p, v: self.obj(p, v),
                    "custom": strings,
                },
            )

        def active(path: str, value: Any) -> None:
            self.fields(
                path,
                self.obj(path, value),
                {
                    "currentGoal": string,
                    "inProgress": strings,
                    "blockers": strings,
                    "recentlyCompleted": strings,
                },
            )

        def decisions(path: str, value: Any) -> None:
            self.items(
                path,
                value,
                "what",
                {
                    "what": string,
                    "why": string,
                    # Any text, as llm-brain takes it ("March 2026"); we write ISO dates.
                    "when": string,
                    "reversible": self.boolean,
                },
            )

        def preferences(path: str, value: Any) -> None:
            # llm-brain's types; other keys are kept, as everywhere.
            known = {"style": string, "constraints": strings, "communication": string}
            value = self.obj(path, value)
            for name, check in known.items():
                if name in value:
                    check(f"{path}.{name}", value[name])

        def key_files(path: str, value: Any) -> None:
            self.items(path, value, "path", {"path": string, "role": string})

        def known_issues(path: str, value: Any) -> None:
            self.items(
                path,
                value,
                "issue",
                {
                    "issue": string,
                    "workaround": string,
                    "severity": self.severity,
                },
            )

        self.fields(
            "",
            data,
            {
                "version": lambda p, v: string(p, v, optional=False),
                "project": lambda p, v: string(p, v, optional=False),
                "lastUpdated": string,
                "sessionCount": self.count,
                "facts": facts,
                "decisions": decisions,
                "activeState": active,
                "keyFiles": key_files,
                "knownIssues": known_issues,
                "preferences": preferences,
                "nextSteps": strings,
            },
        )
        return self.unknown

    def boolean(self, path: str, value: Any) -> None:
        if not isinstance(value, bool) and value is not None:
            self.fail(path, "a boolean (true or false)", value)

    def severity(self, path: str, value: Any) -> None:
        if value is not None and value not in SEVERITIES:
            self.fail(path, f"one of {', '.join(SEVERITIES)}", value)

    def count(self, path: str, value: Any) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.fail(path, "a number", value)


def validate(data: Any, where: str = "update") -> list[str]:
    """Check the types and values of a brain.json document or of a partial update.

    Returns the paths of fields the seed does not define (kept, but worth reporting).
    Raises `StateError` naming `where`, the field path and what was expected::

        update: knownIssues[0].severity: expected one of low, medium, high, critical, got "urgent"
    """
    return _Checker(where).check(data)

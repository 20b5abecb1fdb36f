"""Checking a brain.json document, or a partial update of one, against seed 000's fields:
their types, their allowed values, and the fields the seed does not define (kept, and
reported)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime

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

    def iso_date(self, path: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, str):
            try:
                (date if len(value) <= 10 else datetime).fromisoformat(value)
                return
            except ValueError:
                pass
        self.fail(path, "an ISO date (YYYY-MM-DD)", value)

    def timestamp(self, path: str, value: Any) -> None:
        if isinstance(value, str):
            try:
                datetime.fromisoformat(value)
                return
            except ValueError:
                pass
        self.fail(path, "an ISO 8601 time", value)

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
            if not isinstance(item.get(key), str) or not item[key].strip():
                self.fail(f"{sub}.{key}", "a non-empty string", item.get(key))
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
                    "when": self.iso_date,
                    "reversible": self.boolean,
                },
            )

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
                "lastUpdated": self.timestamp,
                "sessionCount": self.count,
                "facts": facts,
                "decisions": decisions,
                "activeState": active,
                "keyFiles": key_files,
                "knownIssues": known_issues,
                "preferences": lambda p, v: self.obj(p, v),
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
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            self.fail(path, "a whole number >= 0", value)


def validate(data: Any, where: str = "update") -> list[str]:
    """Check the types and values of a brain.json document or of a partial update.

    Returns the paths of fields the seed does not define (kept, but worth reporting).
    Raises `StateError` naming `where`, the field path and what was expected::

        update: knownIssues[0].severity: expected one of low, medium, high, critical, got "urgent"
    """
    return _Checker(where).check(data)

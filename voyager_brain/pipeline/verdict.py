"""The reviewer's verdict: its structured output (ReviewOutput), the REVIEW.md fallback,
which of the two counts, and the REVIEW.md the engine writes after a structured verdict.

Seed 004's two paths, made strict:

1. Structured output, validated against `REVIEW_JSON_SCHEMA` exactly (by `parse_structured`,
   which walks the schema itself, so the schema and the checks cannot drift apart).
2. When there is none, the first verdict line of a REVIEW.md written during this reviewer
   stage (`fresh_review_verdict`); a REVIEW.md from an earlier round is never trusted.

Structured output wins; invalid structured output fails the stage even when REVIEW.md has a
verdict (`decide`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from typing import Any, Literal

from voyager_brain import storage
from voyager_brain.errors import BrainError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

VERDICTS = ("APPROVE", "REVISE", "REDESIGN")
SEVERITIES = ("critical", "major", "minor", "nit")

#: ReviewOutput, as the reviewer's runner is asked for it (`VOYAGER_PIPELINE_SCHEMA`) and as
#: `parse_structured` checks it. Treat it as read-only.
REVIEW_JSON_SCHEMA: dict[str, Any] = {
    "title": "ReviewOutput",
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "score": {"type": "integer", "minimum": 1, "maximum": 10},
        "summary": {"type": "string"},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "severity": {"type": "string", "enum": list(SEVERITIES)},
                    "description": {"type": "string"},
                    "file": {"type": "string"},
                },
                "required": ["severity", "description"],
                "additionalProperties": False,
            },
        },
        "patternsCompliance": {"type": "boolean"},
    },
    "required": ["verdict", "score", "summary", "issues", "patternsCompliance"],
    "additionalProperties": False,
}


class VerdictError(BrainError, ValueError):
    """The reviewer gave no valid verdict: invalid structured output, or none and no
    fresh REVIEW.md with a verdict line. It fails the stage (no retry)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Issue:
    """One problem the reviewer found."""

    severity: str
    description: str
    file: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Review:
    """A valid ReviewOutput."""

    verdict: str
    score: int
    summary: str
    issues: tuple[Issue, ...]
    patterns_compliance: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """The verdict of a reviewer stage and where it came from. `review` is the structured
    output when that decided (the engine then writes `render_review(review)` to REVIEW.md
    and logs `patternsCompliance` false), None when REVIEW.md decided."""

    verdict: str
    source: Literal["structured", "review_md"]
    review: Review | None = None


def schema_text() -> str:
    """`REVIEW_JSON_SCHEMA` as JSON text, byte-identical on every call (the runner's file)."""
    return json.dumps(REVIEW_JSON_SCHEMA, indent=2) + "\n"


# -- structured output -------------------------------------------------------------------

_JSON_TYPES: dict[str, str] = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "boolean": "a boolean",
}


def _shown(value: object) -> str:
    text = json.dumps(value) if _is_json_scalar(value) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _is_json_scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _has_type(value: object, kind: str) -> bool:
    match kind:
        case "object":
            return isinstance(value, Mapping)
        case "array":
            return isinstance(value, list | tuple)
        case "string":
            return isinstance(value, str)
        case "integer":
            # Stricter than JSON Schema, which counts 5.0 as an integer: a score is a
            # whole number the reviewer wrote as one. bool is an int subclass in Python.
            return isinstance(value, int) and not isinstance(value, bool)
        case "boolean":
            return isinstance(value, bool)
    raise AssertionError(f"schema type not handled: {kind}")  # pragma: no cover


def _check(value: object, schema: Mapping[str, Any], where: str) -> None:
    """Raise VerdictError for the first way `value` breaks `schema` (the subset of JSON
    Schema REVIEW_JSON_SCHEMA uses: type, enum, minimum, maximum, properties, required,
    additionalProperties false, items). Keys are checked in the schema's order."""
    kind = schema["type"]
    if not _has_type(value, kind):
        raise VerdictError(f"{where}: expected {_JSON_TYPES[kind]} (got {_shown(value)})")
    if "enum" in schema and value not in schema["enum"]:
        raise VerdictError(
            f"{where}: expected one of {', '.join(schema['enum'])} (got {_shown(value)})"
        )
    if kind == "integer":
        assert isinstance(value, int)
        low, high = schema["minimum"], schema["maximum"]
        if not low <= value <= high:
            raise VerdictError(f"{where}: expected an integer from {low} to {high} (got {value})")
    elif kind == "object":
        assert isinstance(value, Mapping)
        known = schema["properties"]
        unknown = sorted(str(key) for key in value if key not in known)
        if unknown:
            raise VerdictError(
                f"{where}: unknown key {unknown[0]!r} (expected only {', '.join(known)})"
            )
        for key, sub in known.items():
            if key in value:
                _check(value[key], sub, f"{where}.{key}")
            elif key in schema["required"]:
                raise VerdictError(f"{where}: missing {key!r} ({_JSON_TYPES[sub['type']]})")
    elif kind == "array":
        assert isinstance(value, list | tuple)
        for position, item in enumerate(value):
            _check(item, schema["items"], f"{where}[{position}]")


def parse_structured(obj: object) -> Review:
    """The Review in a reviewer's structured output (the parsed JSON), checked against
    `REVIEW_JSON_SCHEMA` exactly: every field but `issues[].file` required, no other key,
    `score` a whole number 1..10 (not a bool, not 5.0), verdicts and severities spelled as
    in the schema (upper- and lowercase respectively).

    Raises VerdictError naming the field (``structured output.issues[0].severity``) and
    what was expected.
    """
    _check(obj, REVIEW_JSON_SCHEMA, "structured output")
    assert isinstance(obj, Mapping)
    return Review(
        verdict=obj["verdict"],
        score=obj["score"],
        summary=obj["summary"],
        issues=tuple(
            Issue(item["severity"], item["description"], item.get("file")) for item in obj["issues"]
        ),
        patterns_compliance=obj["patternsCompliance"],
    )


# -- the REVIEW.md fallback --------------------------------------------------------------

# What counts as a verdict line: the label "Verdict" (or "Final verdict") at the start of
# the line, after at most a markdown prefix (indentation, ">" quotes, a heading's "#"s, one
# list marker), then an optional colon, then the verdict as a whole word. Emphasis ("*",
# "_", up to three) may wrap the label, the colon, the value or all of them. Any case.
# Not a verdict line: "Verdict: APPROVED" (not the word), the template placeholder
# "Verdict: APPROVE|REVISE|REDESIGN" (a value followed by "|" or "/"), a label in prose
# ("the verdict was approve", "My verdict: APPROVE"), "Verdict - APPROVE" (only a colon
# may separate) and table rows. Code fences are not special: the first such line counts.
_VERDICT_LINE = re.compile(
    r"""
    [ \t]*(?:>[ \t]*)*                 # indentation, block quotes
    (?:\#{1,6}[ \t]+)?                 # a heading
    (?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?   # a list item
    [*_]{0,3}(?:final[ \t]+)?verdict(?![^\W_])
    [*_]{0,3}[ \t]*(?::[ \t]*)?[*_]{0,3}[ \t]*[*_]{0,3}
    (?P<verdict>APPROVE|REVISE|REDESIGN)
    [*_]{0,3}(?!\w)(?![ \t]*[|/])
    """,
    re.IGNORECASE | re.VERBOSE,
)


def verdict_from_review_md(text: str) -> str | None:
    """The verdict (upper case) of the first verdict line of REVIEW.md's `text`, or None
    when no line is one. Never raises. What counts is described at `_VERDICT_LINE`:
    ``Verdict: APPROVE``, ``**Verdict:** revise``, ``**Verdict**: Redesign``,
    ``verdict REVISE``, ``## Verdict: APPROVE``, ``- **Verdict**: APPROVE`` do."""
    for line in text.splitlines():
        found = _VERDICT_LINE.match(line)
        if found:
            return found["verdict"].upper()
    return None


_CLOCK_REALTIME_COARSE = 5  # Linux's clock id; the time module does not name it


def stage_clock_ms() -> int:
    """Now, in epoch milliseconds, on the clock file modification times are taken from.

    The engine records a reviewer stage's start with this before starting the runner.
    Linux stamps files from its coarse real-time clock, which lags `time.time()` by up to
    a scheduler tick: a REVIEW.md written just after a `time.time()` start could look
    older than the stage. The coarse clock, floored to the millisecond, never does.
    """
    if sys.platform.startswith("linux"):
        return time.clock_gettime_ns(_CLOCK_REALTIME_COARSE) // 1_000_000
    return time.time_ns() // 1_000_000


def fresh_review_text(path: Path, stage_started_ms: int) -> str | None:
    """REVIEW.md's text when it was written during the stage that started at
    `stage_started_ms` (from `stage_clock_ms`), else None (missing, unreadable, or older).

    The rule: its modification time in nanoseconds is at least ``stage_started_ms *
    1_000_000``. A file from an earlier round was written before the stages between that
    review and this one ran, so it is older by at least a whole agent run. On a file
    system with coarse timestamps (FAT: 2 s, HFS+: 1 s) a REVIEW.md written within that
    interval after the start looks older and is not trusted: the check fails safe.
    """
    try:
        if os.stat(path).st_mtime_ns < stage_started_ms * 1_000_000:
            return None
        data = storage.read_bytes(path)
    except OSError:
        return None
    return None if data is None else data.decode("utf-8", errors="replace")


def fresh_review_verdict(path: Path, stage_started_ms: int) -> str | None:
    """The verdict line of REVIEW.md when it was written during this stage (see
    `fresh_review_text`), else None."""
    text = fresh_review_text(path, stage_started_ms)
    return None if text is None else verdict_from_review_md(text)


def decide(structured: object | None, review_md_text: str | None) -> Decision:
    """The verdict of a reviewer stage.

    `structured` is the runner's structured output (None when it gave none);
    `review_md_text` is REVIEW.md's text only when it was written during this stage
    (`fresh_review_text`), else None. Structured output wins; when present but invalid the
    stage fails even if REVIEW.md has a verdict. Raises VerdictError saying what was
    wrong or missing.
    """
    if structured is not None:
        review = parse_structured(structured)
        return Decision(review.verdict, "structured", review)
    if review_md_text is None:
        raise VerdictError(
            "reviewer gave no structured output and wrote no REVIEW.md during this stage "
            "(a REVIEW.md from an earlier round is never trusted)"
        )
    verdict = verdict_from_review_md(review_md_text)
    if verdict is None:
        raise VerdictError(
            "reviewer gave no structured output and REVIEW.md has no "
            "`Verdict: APPROVE|REVISE|REDESIGN` line"
        )
    return Decision(verdict, "review_md")


def _indented(text: str, indent: str) -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join([lines[0], *(indent + line if line else "" for line in lines[1:])])


def render_review(review: Review) -> str:
    """The REVIEW.md the engine writes after a structured verdict, for the next agent to
    read. Its verdict line is the first line `verdict_from_review_md` matches, so it
    reads back to the same verdict. Deterministic."""
    parts = [
        "# Review",
        "",
        f"**Verdict:** {review.verdict}",
        f"**Score:** {review.score}/10",
        f"**Patterns compliance:** {'yes' if review.patterns_compliance else 'no'}",
        "",
        "## Summary",
        "",
        review.summary.strip() or "(none)",
        "",
        "## Issues",
        "",
    ]
    for issue in review.issues:
        where = f" `{issue.file}`" if issue.file else ""
        parts.append(f"- **{issue.severity}**{where}: {_indented(issue.description, '  ')}")
    if not review.issues:
        parts.append("None.")
    return "\n".join(parts) + "\n"

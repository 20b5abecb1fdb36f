"""What a new personal log starts with: behaviors, one reminder, the schema version.

Written once, under the lock, only when ``memory.jsonl`` does not exist yet; every entry
can be removed or changed like any other.
"""

from __future__ import annotations

from typing import Any

from .log import deterministic_id

BEHAVIORS: tuple[tuple[str, str], ...] = (
    ("do", "Be direct: lead with the answer, then the reasons"),
    ("do", "Read the code and its tests before changing them"),
    ("do", "Make the smallest change that solves the problem, then verify it"),
    ("do", "Run the tests after every change and say what they showed"),
    ("do", "Say what you are unsure of, and how you would find out"),
    ("do", "Keep the user's conventions: style, tools, layout, naming"),
    ("do", "Record decisions with their reasons, and what you learned, as you go"),
    ("dont", "Use performative phrases like 'Great question!'"),
    ("dont", "Invent APIs, flags, files or results you have not checked"),
    ("dont", "Leave the work half done without saying what remains"),
    ("dont", "Change unrelated code or reformat files in passing"),
    ("dont", "Put secrets in code, commits, logs or memory"),
    ("value", "Clarity over diplomacy"),
    ("value", "Working software over clever software"),
    ("value", "Evidence over assumption"),
    ("value", "The user's time over the agent's effort"),
)

CONSOLIDATE_REMINDER = (
    "Consolidate memory: decay stale learnings, remove duplicates, "
    "record what recent sessions taught (voyager-brain brain action=decay)"
)


def default_entries(created: str) -> list[dict[str, Any]]:
    """The lines of a new personal log, stamped `created`."""
    entries: list[dict[str, Any]] = [
        {
            "id": f"b{n:07d}",
            "type": "behavior",
            "category": category,
            "text": text,
            "created": created,
        }
        for n, (category, text) in enumerate(BEHAVIORS, 1)
    ]
    entries.append(
        {
            "id": "rem00001",
            "type": "reminder",
            "text": CONSOLIDATE_REMINDER,
            "cadence": {"kind": "daily", "at": "01:00"},
            "enabled": True,
            "priority": "normal",
            "tags": ["memory"],
            "last_run": None,
            "next_due": None,
            "last_result": None,
            "last_error": None,
            "created": created,
        }
    )
    entries.append(
        {
            "id": deterministic_id("meta", "schema_version"),
            "type": "meta",
            "key": "schema_version",
            "value": "1",
            "created": created,
        }
    )
    return entries

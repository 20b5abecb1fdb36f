"""``.brain/events.jsonl``: what happened to a pipeline, one JSON line per transition or
warning, each with its time. Appended under the file's lock; a line torn by a crash is
closed before the next one and skipped when read."""

from __future__ import annotations

import os
from pathlib import Path

from .. import jsonfile, storage
from ..errors import CorruptFileError
from ..redact import redact_json
from ..session.manager import Clock
from ..timestamps import format_timestamp
from .state import BRAIN_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENTS_FILE = "events.jsonl"

#: The closed set of event names; anything else is a programming error.
EVENTS = frozenset(
    {
        "pipeline.started",
        "stage.started",
        "stage.completed",
        "stage.failed",
        "review.verdict",
        "pipeline.retry",
        "pipeline.completed",
        "pipeline.failed",
        "pipeline.stalled",
        "patterns.noncompliant",
        "backlog.changed",
    }
)


def events_path(root: Path) -> Path:
    return root / BRAIN_DIR / EVENTS_FILE


def append_event(root: Path, name: str, clock: Clock, **fields: Any) -> dict[str, Any]:
    """Append ``{"event": name, "at": "<ISO 8601 UTC>", **fields}`` as one line of
    ``.brain/events.jsonl`` and return it. An unknown `name` is a `ValueError`."""
    if name not in EVENTS:
        raise ValueError(f"unknown pipeline event {name!r}: expected one of {sorted(EVENTS)}")
    clash = {"event", "at"} & fields.keys()
    if clash:
        raise ValueError(f"event fields may not be named {', '.join(sorted(clash))}")
    # Fields carry a task, an agent's error or a path: redacted like every stored text.
    fields = redact_json(fields)  # type: ignore[assignment]
    event: dict[str, Any] = {"event": name, "at": format_timestamp(clock()), **fields}
    line = jsonfile.dumps(event, separators=(",", ":")) + "\n"
    path = events_path(root)
    with storage.locked(path):
        # A line torn by a crash is closed first, so that ours is not glued onto it.
        prefix = "\n" if _ends_torn(path) else ""
        storage.append(path, (prefix + line).encode())
    return event


def _ends_torn(path: Path) -> bool:
    try:
        with storage.open_read(path) as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


def read_events(root: Path) -> list[dict[str, Any]]:
    """The events in order. A torn line (one that does not parse, left by a writer that
    died mid-append) is skipped when it is the last line or followed by more events;
    a line that parses but is not an event object raises `CorruptFileError`."""
    path = events_path(root)
    data = storage.read_bytes(path)
    if data is None:
        return []
    events = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            event = jsonfile.loads(raw)
        except jsonfile.JSONTextError:  # torn, or not JSON we can read: skipped
            continue
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise CorruptFileError(path, "expected an object with an 'event' name", number)
        events.append(event)
    return events

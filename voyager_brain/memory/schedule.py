"""Tasks and reminders in the typed memory log (seed 001): pure functions, no I/O, no clock.

Every function that needs the time takes ``now`` (a timezone-aware datetime); every one
that needs a calendar takes ``tz`` (``None`` means the machine's local zone). Entries are
plain dicts shaped like the seed's JSON objects::

    {"type": "task", "status": "pending", "priority": "high", "due": "2026-02-15",
     "tags": ["code", "ci"], "completedAt": null, ...}
    {"type": "reminder", "cadence": {"kind": "interval", "every": "6h"}, "enabled": true,
     "last_run": null, "next_due": null, "last_result": null, "last_error": null, ...}

Functions that update an entry return a new dict and leave the input untouched. Bad input
raises `EntryError` (a `ValueError`) whose one-line message names the field and says
what was expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from ..errors import EntryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PRIORITIES = ("urgent", "high", "normal", "low")
TASK_STATUSES = ("pending", "done")
RESULTS = ("ok", "error", "skipped")
CADENCE_KINDS = ("interval", "daily")
FILTERS = ("pending", "done", "active")

UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}

# Compiled (and kept by re's cache) when a cadence is first read, not when a hook
# imports this module.
_EVERY_RE = r"(\d+)\s*([A-Za-z]+)"
_AT_RE = r"(\d{1,2}):(\d{2})"
_EVERY_SHORTHAND_RE = r"(?i)(?:every\s+)?(\d+\s*[a-z]+)"
_DAILY_SHORTHAND_RE = r"(?i)daily(?:\s*@\s*|\s+(?:at\s+)?)(\S+)"

_CADENCE_HINT = (
    '{"kind":"interval","every":"6h"}, {"kind":"daily","at":"08:00"}, '
    '"6h", "every 6h" or "daily 08:00"'
)


# --- tags -------------------------------------------------------------------------------


def normalize_tags(value: str | list[str] | None) -> list[str]:
    """``'code, CI,,code'`` or ``['Code', 'ci']`` -> ``['code', 'ci']``.

    Lowercased and stripped; empty tags and repeats are dropped; the first occurrence
    keeps its place. A list item holding commas is split like a string.
    """
    if value is None:
        return []
    if isinstance(value, str):
        pieces = value.split(",")
    elif isinstance(value, list | tuple):
        pieces = []
        for item in value:
            if not isinstance(item, str):
                raise EntryError(f"tags: expected strings, got {item!r}")
            pieces.extend(item.split(","))
    else:
        raise EntryError(
            f"tags: expected a comma-separated string or a list of strings, got {value!r}"
        )
    tags: list[str] = []
    for piece in pieces:
        tag = piece.strip().lower()
        if tag and tag not in tags:
            tags.append(tag)
    return tags


# --- cadence ----------------------------------------------------------------------------


def _parse_every(every: object) -> tuple[int, str]:
    """``'6h'`` -> ``(6, 'h')``; the number is positive and the unit one of m, h, d."""
    match = re.fullmatch(_EVERY_RE, every.strip()) if isinstance(every, str) else None
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in UNIT_SECONDS:
        raise EntryError(
            f'cadence.every: expected a number and a unit m, h or d, like "6h", got {every!r}'
        )
    count = int(match.group(1))
    if count <= 0:
        raise EntryError(f'cadence.every: expected a positive number, like "6h", got {every!r}')
    return count, unit


def _parse_at(at: object) -> str:
    """``'8:00'`` -> ``'08:00'``; hours 0-23, minutes 0-59."""
    match = re.fullmatch(_AT_RE, at.strip()) if isinstance(at, str) else None
    if match is None or int(match.group(1)) > 23 or int(match.group(2)) > 59:
        raise EntryError(f'cadence.at: expected a local time HH:MM, like "08:00", got {at!r}')
    return f"{int(match.group(1)):02d}:{match.group(2)}"


def interval_seconds(every: str) -> int:
    """``'6h'`` -> ``21600``. Units: m (minutes), h (hours), d (days)."""
    count, unit = _parse_every(every)
    return count * UNIT_SECONDS[unit]


def _cadence_from_mapping(value: Mapping[str, Any]) -> dict[str, str]:
    kind = value.get("kind")
    if not isinstance(kind, str) or kind.strip().lower() not in CADENCE_KINDS:
        raise EntryError(f"cadence.kind: expected interval or daily, got {kind!r}")
    kind = kind.strip().lower()
    field = "every" if kind == "interval" else "at"
    extra = sorted(str(key) for key in value if key not in ("kind", field))
    if extra:
        raise EntryError(
            f"cadence: a {kind} cadence has only the keys kind and {field}, got {', '.join(extra)}"
        )
    if field not in value:
        raise EntryError(f"cadence.{field}: required for a {kind} cadence")
    if kind == "interval":
        count, unit = _parse_every(value["every"])
        return {"kind": "interval", "every": f"{count}{unit}"}
    return {"kind": "daily", "at": _parse_at(value["at"])}


def _relaxed_object(text: str) -> dict[str, str]:
    """``'{kind:daily,at:08:00}'`` (JSON whose quotes a shell ate) -> a dict of strings."""
    result: dict[str, str] = {}
    for part in text.strip()[1:-1].split(","):
        if not part.strip():
            continue
        key, colon, item = part.partition(":")
        key = key.strip().strip("'\"").strip()
        if not colon or not key or key in result:
            raise EntryError(f"cadence: expected {_CADENCE_HINT}, got {text!r}")
        result[key] = item.strip().strip("'\"").strip()
    return result


def parse_cadence(value: str | Mapping[str, Any]) -> dict[str, str]:
    """Read a cadence in any of the forms an agent or a shell may hand over.

    Accepted: a dict ``{"kind": "interval", "every": "6h"}`` or ``{"kind": "daily",
    "at": "08:00"}``; a JSON string of one; the relaxed form left when a shell drops the
    quotes, ``{kind:interval,every:6h}``; and the shorthands ``6h``, ``every 6h``,
    ``daily 08:00``, ``daily at 08:00`` and ``daily@08:00``.

    Returns the canonical dict: keys ``kind`` then ``every``/``at``; ``every`` as number
    and unit without leading zeros (``'06h'`` -> ``'6h'``); ``at`` as zero-padded HH:MM.
    """
    if isinstance(value, Mapping):
        return _cadence_from_mapping(value)
    if not isinstance(value, str):
        raise EntryError(f"cadence: expected {_CADENCE_HINT}, got {value!r}")
    text = value.strip()
    if text.startswith("{") and text.endswith("}"):
        try:
            loaded = json.loads(text)
        except ValueError:
            loaded = _relaxed_object(text)
        if not isinstance(loaded, dict):
            raise EntryError(f"cadence: expected {_CADENCE_HINT}, got {value!r}")
        return _cadence_from_mapping(loaded)
    every = re.fullmatch(_EVERY_SHORTHAND_RE, text)
    if every is not None:
        count, unit = _parse_every(every.group(1))
        return {"kind": "interval", "every": f"{count}{unit}"}
    daily = re.fullmatch(_DAILY_SHORTHAND_RE, text)
    if daily is not None:
        return {"kind": "daily", "at": _parse_at(daily.group(1))}
    raise EntryError(f"cadence: expected {_CADENCE_HINT}, got {value!r}")


# --- time -------------------------------------------------------------------------------


def _require_aware(moment: object, field: str) -> datetime:
    if not isinstance(moment, datetime):
        raise EntryError(f"{field}: expected a timezone-aware datetime, got {moment!r}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise EntryError(f"{field}: expected a timezone-aware datetime, got naive {moment!r}")
    return moment


def iso_ms(moment: datetime) -> str:
    """UTC ISO 8601 with milliseconds and ``Z``: ``2026-02-10T00:00:00.000Z``.

    Sub-millisecond digits are dropped (truncated, never rounded up into the next second).
    """
    utc = _require_aware(moment, "time").astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_time(text: str) -> datetime:
    """Read a timestamp as an aware UTC datetime.

    Accepts the seed's ``2026-02-10T00:00:00.000Z``, any ISO 8601 time with an offset, a
    time without an offset (taken as UTC, as everywhere in voyager-brain) and a bare date
    ``2026-02-10`` (midnight UTC).
    """
    return _parse_time_field(text, "time")


def _parse_time_field(text: object, field: str) -> datetime:
    problem = (
        f'{field}: expected an ISO 8601 time like "2026-02-10T00:00:00.000Z" or a date '
        f'like "2026-02-10", got {text!r}'
    )
    if not isinstance(text, str):
        raise EntryError(problem)
    stripped = text.strip()
    # fromisoformat also reads compact forms ("20260210"); the log only ever holds the
    # extended form, so anything else is more likely a typo than a time.
    if len(stripped) < 10 or not re.match(r"\d{4}-\d{2}-\d{2}", stripped):
        raise EntryError(problem)
    try:
        parsed = datetime.fromisoformat(stripped)
    except ValueError:
        raise EntryError(problem) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _to_wall(moment: datetime, tz: tzinfo | None) -> datetime:
    """The naive local wall-clock reading of `moment` in `tz` (None: the machine's zone)."""
    return moment.astimezone(tz).replace(tzinfo=None)


def _from_wall(wall: datetime, tz: tzinfo | None) -> datetime:
    """The UTC instant at which the clock in `tz` reads `wall`.

    A wall time that a DST change skips maps to the instant the clock would have shown it
    with the old offset (02:30 on a spring-forward day -> 03:30 new time); a wall time that
    happens twice maps to its first occurrence.
    """
    if tz is not None:
        return wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    # The machine's zone is only reachable through the C library (`astimezone()`), whose
    # reading of a naive time inside a gap goes backwards; apply zoneinfo's rule by hand
    # with the offsets in force a day either side (no zone changes twice in two days).
    as_utc = wall.replace(tzinfo=UTC)
    before = _machine_offset(as_utc - timedelta(days=1))
    after = _machine_offset(as_utc + timedelta(days=1))
    for offset in (before, after):  # both fit in a repeated hour: `before` is the first
        if _machine_offset(as_utc - offset) == offset:
            return as_utc - offset
    return as_utc - before  # skipped: read with the offset before the change


def _machine_offset(moment: datetime) -> timedelta:
    """The machine's UTC offset at `moment`."""
    return moment.astimezone().utcoffset() or timedelta(0)


def next_due(
    cadence: str | Mapping[str, Any], last_run: datetime, tz: tzinfo | None = None
) -> datetime:
    """When a reminder that last ran at `last_run` is due next, in UTC.

    `cadence` is anything `parse_cadence` reads. interval: `last_run` + every. daily: the
    first HH:MM on the local clock in `tz` strictly after `last_run`. DST-safe: the wall
    time is built on the calendar date and then converted, so across a change it is 23 or
    25 hours after the previous one; a skipped HH:MM runs when the clock would have shown
    it (02:30 -> 03:30), a repeated one at its first occurrence.
    """
    canonical = parse_cadence(cadence)
    last = _require_aware(last_run, "last_run").astimezone(UTC)
    if canonical["kind"] == "interval":
        try:
            return last + timedelta(seconds=interval_seconds(canonical["every"]))
        except OverflowError:
            raise EntryError(
                f"cadence.every: expected an interval that ends before the year 10000, "
                f"got {canonical['every']!r}"
            ) from None
    hour, minute = (int(part) for part in canonical["at"].split(":"))
    day = _to_wall(last, tz).date()
    # Day 0 or 1 always does it; the third day only matters in zones with odd transitions.
    for offset in range(3):
        try:
            wall = datetime.combine(day + timedelta(days=offset), time(hour, minute))
        except OverflowError:
            break
        candidate = _from_wall(wall, tz)
        if candidate > last:
            return candidate
    raise EntryError(f"last_run: no daily time after {iso_ms(last)} fits in the calendar")


# --- reminders --------------------------------------------------------------------------


def _check_type(entry: Mapping[str, Any], expected: str) -> None:
    if not isinstance(entry, Mapping):
        raise EntryError(f"entry: expected a JSON object, got {entry!r}")
    type_ = entry.get("type", expected)
    if type_ != expected:
        raise EntryError(f"type: expected {expected}, got {type_!r}")


def _enabled(reminder: Mapping[str, Any]) -> bool:
    """The reminder's ``enabled`` flag; a reminder without one is enabled."""
    enabled = reminder.get("enabled", True)
    if not isinstance(enabled, bool):
        raise EntryError(f"enabled: expected true or false, got {enabled!r}")
    return enabled


def is_due(reminder: Mapping[str, Any], now: datetime, tz: tzinfo | None = None) -> bool:
    """Enabled, and its ``next_due`` is at or before `now`.

    A reminder without ``next_due`` is due, unless it has a ``last_run``: then ``next_due``
    is worked out from the cadence (in `tz`) the way `record_run` would have stored it.
    """
    moment = _require_aware(now, "now")
    when = due_at(reminder, tz)
    return when is not None and when <= moment


def due_at(reminder: Mapping[str, Any], tz: tzinfo | None = None) -> datetime | None:
    """When the reminder is (or was) due, as `is_due` reads it: None when disabled, the
    earliest time there is when it never ran and has no ``next_due``."""
    _check_type(reminder, "reminder")
    if not _enabled(reminder):
        return None
    stored = reminder.get("next_due")
    if stored is not None:
        return _parse_time_field(stored, "next_due")
    last_run = reminder.get("last_run")
    if last_run is None:
        return datetime.min.replace(tzinfo=UTC)
    if "cadence" not in reminder:
        raise EntryError("cadence: required for a reminder")
    return next_due(reminder["cadence"], _parse_time_field(last_run, "last_run"), tz)


def record_run(
    reminder: Mapping[str, Any],
    result: str,
    now: datetime,
    error: str | None = None,
    tz: tzinfo | None = None,
) -> dict[str, Any]:
    """The reminder after a run at `now` that ended with `result` (ok, error or skipped).

    Returns a new dict: ``last_run`` = `now`, ``last_result`` = `result`, ``last_error`` =
    `error` for an error (None otherwise), ``next_due`` = the cadence's next time after
    `now`. Times are written like the seed: ``2026-02-01T06:00:00.000Z``.
    """
    _check_type(reminder, "reminder")
    moment = _require_aware(now, "now")
    if result not in RESULTS:
        raise EntryError(f"last_result: expected one of {', '.join(RESULTS)}, got {result!r}")
    if error is not None and not isinstance(error, str):
        raise EntryError(f"last_error: expected a message or null, got {error!r}")
    if "cadence" not in reminder:
        raise EntryError("cadence: required for a reminder")
    updated = dict(reminder)
    updated["last_run"] = iso_ms(moment)
    updated["next_due"] = iso_ms(next_due(reminder["cadence"], moment, tz))
    updated["last_result"] = result
    updated["last_error"] = error if result == "error" else None
    return updated


# --- tasks ------------------------------------------------------------------------------


def complete_task(task: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A new dict: the task with ``status`` done and ``completedAt`` = `now`."""
    _check_type(task, "task")
    updated = dict(task)
    updated["status"] = "done"
    updated["completedAt"] = iso_ms(_require_aware(now, "now"))
    return updated


def _due_date(due: object, tz: tzinfo | None) -> date:
    """The local calendar day a task's ``due`` names."""
    problem = f'due: expected an ISO date like "2026-02-15" or an ISO 8601 time, got {due!r}'
    if not isinstance(due, str):
        raise EntryError(problem)
    text = due.strip()
    if not re.match(r"\d{4}-\d{2}-\d{2}", text):
        raise EntryError(problem)
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise EntryError(problem) from None
    if moment.tzinfo is None:
        return moment.date()  # a wall-clock time as the user wrote it
    return _to_wall(moment, tz).date()


def is_overdue(task: Mapping[str, Any], now: datetime, tz: tzinfo | None = None) -> bool:
    """Pending, with a ``due`` day before today's date on the local clock in `tz`.

    A task due today is not overdue; a ``due`` with a time of day counts by its local date.
    """
    _check_type(task, "task")
    today = _to_wall(_require_aware(now, "now"), tz).date()
    if task.get("status") != "pending":
        return False
    due = task.get("due")
    if due is None:
        return False
    return _due_date(due, tz) < today


# --- list filters -----------------------------------------------------------------------


def matches_filter(entry: Mapping[str, Any], name: str) -> bool:
    """Whether `entry` passes the list filter `name`.

    ``pending``: a task with status pending; ``done``: a task with status done;
    ``active``: an enabled reminder. (``due`` needs a clock: use `is_due`.)
    """
    if name not in FILTERS:
        raise EntryError(
            f"filter: expected one of {', '.join(FILTERS)} (due is checked with is_due), "
            f"got {name!r}"
        )
    type_ = entry.get("type")
    if name == "active":
        return type_ == "reminder" and _enabled(entry)
    return type_ == "task" and entry.get("status") == name

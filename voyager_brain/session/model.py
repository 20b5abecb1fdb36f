"""The values of the session brain (seed 002): frozen, and cheap to import (see `Value`).

This module imports nothing else from voyager_brain but its errors, values and times:
the stores and the lifecycle build on it, never the other way round.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

from ..errors import InvalidEntryError
from ..timestamps import format_timestamp, utc_second
from ..value import Record, Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The four entry types of seed 002, in the order the seed lists them.
ENTRY_TYPES: tuple[str, ...] = ("observation", "decision", "loop_status", "reflection")

#: How each type is spelled in a brain.md heading (``## Loop Status — ...``).
TYPE_LABELS: dict[str, str] = {
    "observation": "Observation",
    "decision": "Decision",
    "loop_status": "Loop Status",
    "reflection": "Reflection",
}
LABEL_TYPES: dict[str, str] = {label: type_ for type_, label in TYPE_LABELS.items()}


def estimate_tokens(text: str, chars_per_token: int = 4) -> int:
    """The token estimate used everywhere: characters divided by `chars_per_token`, rounded up."""
    return math.ceil(len(text) / chars_per_token)


def _normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class BrainEntry(Value):
    """One section of brain.md.

    `timestamp` is kept to the second in UTC (a naive datetime is read as UTC); an entry
    without one is stamped by `BrainManager.update()`. Line endings in `content` are
    normalized to ``\\n`` and trailing newlines dropped. `source` says who wrote the
    entry (``compact`` for compaction summaries); it is one line.
    """

    __slots__ = ("_key", "content", "source", "timestamp", "type")
    __match_args__ = ("type", "content", "timestamp", "source")
    _fields = __match_args__
    type: str
    content: str
    timestamp: datetime | None
    source: str | None
    # The identity, computed once: it is compared for every entry on every persist.
    _key: tuple[str, str, str]

    def __init__(
        self,
        type: str,  # the field name (a keyword argument too), as seed 002 spells it
        content: str,
        timestamp: datetime | None = None,
        source: str | None = None,
    ) -> None:
        if type not in TYPE_LABELS:
            raise InvalidEntryError(
                f"entry type: expected one of {', '.join(ENTRY_TYPES)}, got {type!r}"
            )
        if not isinstance(content, str):
            raise InvalidEntryError(
                f"entry content: expected a string, got {content.__class__.__name__}"
            )
        if "\0" in content:  # brain.md with a NUL byte is refused on read (git: binary)
            raise InvalidEntryError("entry content: holds a NUL character; expected text")
        # Trailing newlines are not content: a hand edit that leaves a blank line at the
        # end of a section must not make it a different entry.
        content = _normalize_newlines(content).rstrip("\n")
        if timestamp is not None:
            if not isinstance(timestamp, datetime):
                raise InvalidEntryError(
                    f"entry timestamp: expected a datetime, got {timestamp.__class__.__name__}"
                )
            timestamp = utc_second(timestamp)
        if source is not None:
            if not isinstance(source, str):
                raise InvalidEntryError(
                    f"entry source: expected a string, got {source.__class__.__name__}"
                )
            if "\n" in source or "\r" in source or "-->" in source or "\0" in source:
                raise InvalidEntryError(
                    f"entry source: expected one line without '-->', got {source!r}"
                )
            source = source.strip() or None
        stamp = format_timestamp(timestamp) if timestamp is not None else ""
        self._assign(type, content, timestamp, source)
        object.__setattr__(self, "_key", (type, stamp, content))

    @classmethod
    def parsed(
        cls, type_: str, content: str, timestamp: datetime, source: str | None
    ) -> BrainEntry:
        """An entry as the brain.md parser reads it: a known type, a UTC time to the
        second, a stripped one-line source. Only what the parser cannot promise is
        checked (a megabyte of brain.md holds thousands of entries); anything odd goes
        through the full checks, which say what is wrong."""
        if "\r" in content or (source is not None and ("-->" in source or "\r" in source)):
            return cls(type_, content, timestamp, source)
        entry = object.__new__(cls)
        content = content.rstrip("\n")
        # Spelled out, not _assign's loop: load() makes thousands of entries here.
        setattr_ = object.__setattr__
        setattr_(entry, "type", type_)
        setattr_(entry, "content", content)
        setattr_(entry, "timestamp", timestamp)
        setattr_(entry, "source", source)
        setattr_(entry, "_key", (type_, timestamp.isoformat()[:19] + "Z", content))
        return entry

    @property
    def label(self) -> str:
        """The heading spelling of the type (``Loop Status``)."""
        return TYPE_LABELS[self.type]

    @property
    def key(self) -> tuple[str, str, str]:
        """The entry's identity: type, timestamp and content. Same key, same entry."""
        return self._key

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "timestamp": format_timestamp(self.timestamp) if self.timestamp else None,
            "source": self.source,
            "content": self.content,
        }


class BrainState(Record):
    """What `load()` returns: the brain.md text to inject, and a few facts about it."""

    content: str
    last_updated: datetime | None
    entry_count: int
    compacted: bool
    entries: tuple[BrainEntry, ...] = ()


class BrainStatus(Record):
    """What `get_status()` returns (seed 002's BrainStatus)."""

    loaded: bool
    path: Path
    size_bytes: int
    entry_count: int
    last_compaction: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "loaded": self.loaded,
            "path": str(self.path),
            "size_bytes": self.size_bytes,
            "entry_count": self.entry_count,
            "last_compaction": (
                format_timestamp(self.last_compaction) if self.last_compaction else None
            ),
        }


class CompactionReport(Record):
    """What `compact()` did: entries kept, merged, summarized and removed, sizes around it."""

    entries_before: int
    entries_after: int
    kept: int  # entries carried over unchanged
    merged: int  # exact or near-duplicate observations folded into a newer twin
    superseded: int  # loop statuses older than the newest one
    summarized: int  # entries folded into the summary
    removed: int  # merged + superseded + summarized
    summary: BrainEntry | None
    bytes_before: int
    bytes_after: int
    tokens_before: int
    tokens_after: int
    budget_tokens: int

    @property
    def fits(self) -> bool:
        """Whether the file now fits the budget (it may not when decisions alone exceed it)."""
        return self.tokens_after <= self.budget_tokens

    @property
    def changed(self) -> bool:
        return self.removed > 0 or self.summary is not None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self._asdict()
        data["summary"] = self.summary.to_dict() if self.summary else None
        data["fits"] = self.fits
        data["changed"] = self.changed
        return data

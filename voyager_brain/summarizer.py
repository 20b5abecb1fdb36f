"""Summaries of old brain.md entries, for compaction.

A summarizer turns entries into one short text of at most `max_chars` characters. The
default, `ExtractiveSummarizer`, needs no model and no network: it picks one key line from
each entry (markdown-it tells prose from code) and lists them. A model-backed summarizer
plugs into the same interface.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from .model import BrainEntry, format_timestamp

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: Lines that usually carry the point of an entry; preferred as its key line.
_SIGNAL = re.compile(
    r"^(?:outcome|result|decision|decided|learned|lesson|conclusion|fixed|fix|cause|"
    r"root cause|error|blocker|next)\b",
    re.IGNORECASE,
)
_LINE_LIMIT = 160


class Summarizer(Protocol):
    name: str

    def summarize(self, entries: Sequence[BrainEntry], max_chars: int) -> str:
        """A summary of `entries` (oldest first), at most `max_chars` characters, no
        line of which could be read as a brain.md heading."""
        ...


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"\d+", "0", text.lower()).split())


class ExtractiveSummarizer:
    """Deterministic, offline: one key line per entry, newest points kept when space is short."""

    name = "extractive"

    def __init__(self) -> None:
        self._md: MarkdownIt | None = None

    def _prose_lines(self, text: str) -> list[str]:
        """Lines of prose (paragraphs, list items, headings), not code or HTML."""
        if self._md is None:
            from markdown_it import MarkdownIt

            self._md = MarkdownIt("commonmark")
        lines: list[str] = []
        for token in self._md.parse(text):
            if token.type == "inline":
                lines.extend(line.strip() for line in token.content.split("\n"))
        return [line for line in lines if line]

    def key_lines(self, entry: BrainEntry) -> list[str]:
        """The lines that stand for `entry` in a summary."""
        prose = self._prose_lines(entry.content)
        if entry.source == "compact":
            # An earlier summary: its points are key lines already.
            return [line for line in prose if not line.startswith("Summary of ")]
        if not prose:
            return []
        signal = [line for line in prose if _SIGNAL.match(line)]
        best = prose[0] if not signal or signal[0] is prose[0] else f"{prose[0]} — {signal[0]}"
        return [best]

    def summarize(self, entries: Sequence[BrainEntry], max_chars: int) -> str:
        stamps = [e.timestamp for e in entries if e.timestamp is not None]
        span = ""
        if stamps:
            span = f" from {format_timestamp(min(stamps))} to {format_timestamp(max(stamps))}"
        header = f"Summary of {len(entries)} earlier entries{span}:"

        points: list[str] = []
        seen: set[str] = set()
        for entry in entries:
            for line in self.key_lines(entry):
                line = line.lstrip("-*+ ").strip()
                if len(line) > _LINE_LIMIT:
                    line = line[: _LINE_LIMIT - 1].rstrip() + "…"
                norm = _normalize(line)
                if norm and norm not in seen:
                    seen.add(norm)
                    points.append(f"- {line}")

        # Keep the newest points that fit; say how many older ones were left out.
        kept: list[str] = []
        used = len(header)
        for point in reversed(points):
            marker = len(f"\n- (…{len(points)} earlier points omitted)")
            if used + 1 + len(point) + marker > max_chars:
                break
            kept.append(point)
            used += 1 + len(point)
        kept.reverse()
        lines = [header]
        if len(kept) < len(points):
            lines.append(f"- (…{len(points) - len(kept)} earlier points omitted)")
        lines.extend(kept)
        text = "\n".join(lines)
        return text if len(text) <= max_chars else header[:max_chars]


def get_summarizer(name: str) -> Summarizer:
    """The summarizer configured by name (config key ``summarizer``)."""
    if name == "extractive":
        return ExtractiveSummarizer()
    raise ValueError(f"unknown summarizer {name!r}")

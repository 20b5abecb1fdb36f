"""Summaries of old brain.md entries, for compaction.

A summarizer turns entries into one short text of at most `max_chars` characters. The
default, `ExtractiveSummarizer`, needs no model and no network: it picks one key line from
each entry (markdown-it tells prose from code) and lists them. A model-backed summarizer
plugs into the same interface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from ..timestamps import format_timestamp
from .model import BrainEntry

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from ..providers import Provider

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
            return [line for line in prose if not line.startswith(("Summary of ", "- (…", "(…"))]
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

        # Newest first, so that only the entries whose points fit are read at all
        # (compaction may fold thousands); older ones are counted, not listed.
        points: list[str] = []
        seen: set[str] = set()
        room = max_chars - len(header) - len(f"\n- (…{len(entries)} earlier entries not listed)")
        unlisted = 0
        for n, entry in enumerate(reversed(entries)):
            fresh = [p for p in (_point(line) for line in self.key_lines(entry)) if p]
            fresh = [p for p in dict.fromkeys(fresh) if _normalize(p) not in seen]
            cost = sum(1 + len(p) for p in fresh)
            if cost > room:
                unlisted = len(entries) - n
                break
            room -= cost
            seen.update(_normalize(p) for p in fresh)
            points[:0] = fresh
        lines = [header]
        if unlisted:
            lines.append(f"- (…{unlisted} earlier entries not listed)")
        lines.extend(points)
        text = "\n".join(lines)
        return text if len(text) <= max_chars else header[:max_chars]


def _point(line: str) -> str:
    """A key line as a summary bullet: list markers stripped, long lines cut."""
    line = line.lstrip("-*+ ").strip()
    if len(line) > _LINE_LIMIT:
        line = line[: _LINE_LIMIT - 1].rstrip() + "…"
    return f"- {line}" if line else ""


class ModelSummarizer:
    """Summaries written by the configured model command; the extractive summary when
    the command fails or answers too long (nothing is lost either way)."""

    name = "model"

    def __init__(self, provider: Provider, warn: Callable[[str], None] | None = None) -> None:
        self.provider = provider
        self.fallback = ExtractiveSummarizer()
        self.warn = warn

    def summarize(self, entries: Sequence[BrainEntry], max_chars: int) -> str:
        from ..providers import ProviderError

        body = "\n\n".join(f"[{e.label}] {e.content}" for e in entries)
        prompt = (
            f"Summarize these {len(entries)} notes of a coding agent's session in at most "
            f"{max_chars - 100} characters, as short '- ' bullet points, keeping decisions, "
            f"outcomes and causes of problems:\n\n{body[-30000:]}"
        )
        try:
            answer = self.provider.complete(prompt).strip()
        except ProviderError as exc:
            if self.warn:
                self.warn(f"model summary failed ({exc}); using the extractive summary")
            return self.fallback.summarize(entries, max_chars)
        stamps = [e.timestamp for e in entries if e.timestamp is not None]
        span = (
            f" from {format_timestamp(min(stamps))} to {format_timestamp(max(stamps))}"
            if stamps
            else ""
        )
        # Bullets only: a model's line must never read as a brain.md heading.
        lines = [f"- {line.lstrip('-*+ ').strip()}" for line in answer.splitlines() if line.strip()]
        text = "\n".join([f"Summary of {len(entries)} earlier entries{span}:", *lines])
        return text if len(text) <= max_chars else self.fallback.summarize(entries, max_chars)


def get_summarizer(name: str, provider: Provider | None = None) -> Summarizer:
    """The summarizer configured by name (config key ``summarizer``): ``model`` needs a
    provider (``model_command``), and is extractive without one."""
    if name == "model" and provider is not None:
        return ModelSummarizer(provider)
    if name in ("extractive", "model"):
        return ExtractiveSummarizer()
    raise ValueError(f"unknown summarizer {name!r}")

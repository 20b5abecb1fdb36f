"""Exports for agents without hooks: the budgeted context written into a managed block of
the file the agent reads at start (AGENTS.md, CLAUDE.md, GEMINI.md, a Cursor rule).

The block sits between two marker comments. Re-running replaces the block and nothing
else: the text around it is kept byte for byte. A file whose markers are broken (an end
without a begin, two begins ...) is refused with the line, never rewritten. A block whose
only change is the date in the context's first line is left as it is, so that the file's
history shows real changes only.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from .. import storage
from ..errors import BrainError
from ..redact import redact

BEGIN = "<!-- voyager-brain:begin (written by `voyager-brain export`; edits here are replaced) -->"
END = "<!-- voyager-brain:end -->"
_BEGIN_RE = re.compile(r"^<!-- voyager-brain:begin\b.*-->[ \t]*$")
_END_RE = re.compile(r"^<!-- voyager-brain:end\b.*-->[ \t]*$")

#: target -> (the file, relative to the repository's top; what reads it)
TARGETS: dict[str, tuple[str, str]] = {
    "agents-md": ("AGENTS.md", "Codex, Cursor, Copilot and other agents that read AGENTS.md"),
    "claude-md": ("CLAUDE.md", "Claude Code"),
    "gemini-md": ("GEMINI.md", "Gemini CLI"),
    "cursor-rules": (".cursor/rules/voyager-brain.mdc", "Cursor (a rule applied to every chat)"),
}

#: A Cursor rule is a file of its own; its front matter asks Cursor to always apply it.
_CURSOR_FRONT_MATTER = (
    "---\ndescription: The project's memory, kept by voyager-brain\nalwaysApply: true\n---\n\n"
)


class ExportError(BrainError):
    """The target file's markers are broken: it is left as it is."""


@dataclasses.dataclass(frozen=True, slots=True)
class Export:
    """What an export did: ``created``, ``updated`` or ``unchanged``."""

    target: str
    path: Path
    action: str

    def to_json(self) -> dict[str, str]:
        return {"target": self.target, "path": str(self.path), "action": self.action}


def block(context: str) -> str:
    """The managed block for `context` (markers included, a final newline)."""
    refresh = "_Refreshed by `voyager-brain export`; the full memory: `voyager-brain context`._"
    return f"{BEGIN}\n{redact(context).strip()}\n\n{refresh}\n{END}\n"


def _find(text: str, path: Path) -> tuple[int, int] | None:
    """The character span of the block in `text` (from its begin marker to the end of its
    end marker's line), None when there is none. Raises ExportError for broken markers."""
    begins, ends = [], []
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        bare = line.rstrip("\r\n")
        if _BEGIN_RE.match(bare):
            begins.append((number, offset))
        elif _END_RE.match(bare):
            ends.append((number, offset + len(line)))
        offset += len(line)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0][0] < begins[0][0]:
        lines = ", ".join(str(n) for n, _ in sorted(begins + ends))
        raise ExportError(
            f"{path}: voyager-brain markers broken (lines {lines}); expected one begin"
            f" marker and one end marker after it. Fix or remove them and export again."
        )
    return begins[0][1], ends[0][1]


def _same_block(old: str, new: str) -> bool:
    """Equal but for the date in the context's header (its first line after the marker)."""

    def body(text: str) -> list[str]:
        lines = text.splitlines()
        if len(lines) > 1 and lines[1].startswith("# Memory"):
            lines[1] = lines[1].rsplit(" — ", 1)[0]
        return lines

    return body(old) == body(new)


def merged(current: str | None, new_block: str, target: str, path: Path) -> str:
    """The file's new text: `current` with its block replaced (or the block appended, or
    a new file). Raises ExportError when `current`'s markers are broken."""
    if current is None:
        return (_CURSOR_FRONT_MATTER if target == "cursor-rules" else "") + new_block
    span = _find(current, path)
    if span is None:
        separator = "" if not current else "\n" if current.endswith("\n") else "\n\n"
        return current + separator + new_block
    start, end = span
    old = current[start:end]
    if not old.endswith("\n"):  # the end marker was the file's last line, without newline
        new_block = new_block.rstrip("\n")
    return current[:start] + new_block + current[end:]


def _lock_path(top: Path, target: str) -> Path:
    """Where an export's lock goes: where git ignores it, not beside AGENTS.md; in a
    project without .voyager/, in the personal cache, for a .voyager/ made there would
    change the project's context (it would then count as initialised)."""
    voyager = top / ".voyager"
    if voyager.is_dir():
        return voyager / "cache" / f"export-{target}"
    import zlib

    from ..paths import cache_folder

    return Path(cache_folder()) / f"export-{zlib.crc32(str(top).encode()):08x}-{target}"


def export(top: Path, target: str, context: str, *, check: bool = False) -> Export:
    """Write `context` into `target`'s file under `top`. With `check`, write nothing and
    report what an export would do."""
    if target not in TARGETS:
        raise ExportError(f"unknown export target {target!r}: expected one of {', '.join(TARGETS)}")
    path = top / TARGETS[target][0]
    new_block = block(context)
    with storage.locked(_lock_path(top, target)):
        data = storage.read_bytes(path)
        current = None if data is None else data.decode("utf-8", errors="surrogateescape")
        if current is not None:
            span = _find(current, path)
            if span is not None and _same_block(current[span[0] : span[1]], new_block):
                return Export(target, path, "unchanged")
        text = merged(current, new_block, target, path)
        if not check:
            storage.atomic_write(path, text.encode("utf-8", errors="surrogateescape"))
    return Export(target, path, "created" if current is None else "updated")

"""An entry's text inside a brain.md section, and back: the encodings that make
``brainfile.parse(brainfile.render(x)) == x`` hold for any text (see `brainfile`).

* a line shaped like a section heading, that could start an HTML block, or shaped like
  a git conflict marker gets one more leading backslash (and loses one on read);
* the entry's source is the first body line, ``<!-- source: NAME -->``;
* a code fence left open is closed, followed by a marker line that says how many lines
  were added, so the next heading is not swallowed (markdown-it settles fences inside
  lists and quotes, where a line scan and markdown can disagree).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from .model import LABEL_TYPES

_LABELS = "|".join(re.escape(label) for label in LABEL_TYPES)
FENCE_MARKER = "<!-- voyager-brain: closes the code fence left open above ({n} line{s}) -->"
MARKER_START = FENCE_MARKER[: FENCE_MARKER.index("(")]
MARKER_LINE = re.compile(
    r"^<!-- voyager-brain: closes the code fence left open above \((\d) lines?\) -->$"
)
# A fence marker after indentation or a list/quote marker: only there can a line scan and
# CommonMark disagree about whether a fence is still open.
_NESTED_FENCE = r"(?m)^[ \t>*+\-0-9.)]+(?:`{3}|~{3})"  # compiled when first written

SOURCE_LINE = re.compile(r"^<!-- source: (.*) -->$")
# Lines escaped with a backslash (tested after any leading backslashes are stripped):
# anything shaped like a section heading, and anything that could start an HTML block
# (which would hide a later heading from a markdown viewer, or a fence from our scan).
# And a line shaped like a git conflict marker, which would make the file look conflicted
# (see `conflicts`).
_SPECIAL_PATTERN = (
    rf"(?i)^[ \t]*(?:#{{1,6}}[ \t]*(?:{_LABELS})\b|<[A-Za-z/!?])"
    r"|^(?:<{7}|\|{7}|={7}|>{7})(?: |\r?$)"
)
_FENCE_STARTS = ("```", "~~~")  # what a line opening a fence starts with, after spaces
_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")


@functools.cache
def _special() -> re.Pattern[str]:
    return re.compile(_SPECIAL_PATTERN)


def _escape(line: str) -> str:
    return "\\" + line if _special().match(line.lstrip("\\")) else line


def _unescape(line: str) -> str:
    if line.startswith("\\") and _special().match(line.lstrip("\\")):
        return line[1:]
    return line


def _open_fence(
    lines: Iterable[str], state: tuple[str, str, int] | None = None
) -> tuple[str, str, int] | None:
    """The fence (indent, character, length) still open after `lines`, or None."""
    for line in lines:
        state = fence_step(line, state)
    return state


def fence_step(line: str, state: tuple[str, str, int] | None) -> tuple[str, str, int] | None:
    if state is None:
        if not line.lstrip(" ").startswith(_FENCE_STARTS):  # cheap: most lines are prose
            return None
        m = _FENCE_OPEN.match(line)
        if m and not (m[2][0] == "`" and "`" in m[3]):
            return (m[1], m[2][0], len(m[2]))
        return None
    m = _FENCE_CLOSE.match(line)
    if m and m[1][0] == state[1] and len(m[1]) >= state[2]:
        return None
    return state


def _marker(n: int) -> str:
    return FENCE_MARKER.format(n=n, s="" if n == 1 else "s")


def encode_block(text: str) -> list[str]:
    """The body lines written for `text`: escaped, fences closed. (The section template
    writes the source line above them.)"""
    lines = [_escape(line) for line in text.split("\n")]
    ours = _open_fence(lines)
    if not re.search(_NESTED_FENCE, text):
        # Fences start at column 0 only: the line scan reads them exactly as CommonMark.
        if ours is not None:
            indent, char, length = ours
            lines += [indent + char * length, _marker(1)]
        return lines
    return lines + _closing_for_both(lines, ours)


def _closing_for_both(lines: list[str], ours: tuple[str, str, int] | None) -> list[str]:
    """Lines after `lines` that leave both the line scan and markdown-it outside any fence.

    Tried in order; the first that both accept wins. A list item holds a closing fence
    that only one of the two readings needs, so it closes nothing in the other.
    """
    theirs = _markdown_it_open_fence(lines)
    closers = [f[0] + f[1] * f[2] for f in (ours, theirs) if f is not None]
    firsts: list[list[str]] = [[], *([c] for c in closers)]
    nested: list[list[str]] = [[], *(["- ·", "  " + c.lstrip(" ")] for c in closers)]
    candidates = [a + b for a in firsts for b in nested]
    for extra in candidates:
        guard = [*extra, _marker(len(extra))] if extra else []
        if _open_fence(lines + guard) is None and _markdown_it_open_fence(lines + guard) is None:
            return guard
    # No closing satisfies both (never seen); keep our own reading right.
    if ours is None:
        return []
    return [ours[0] + ours[1] * ours[2], _marker(1)]


def _markdown_it_open_fence(lines: list[str]) -> tuple[str, str, int] | None:
    """The fence markdown-it still has open at the top level after `lines`, if any:
    found by checking whether a heading placed after them is read as one."""
    from markdown_it import MarkdownIt

    probe = "## Observation — 2000-01-01T00:00:00Z"
    tokens = MarkdownIt("commonmark").parse("\n".join([*lines, "", probe]) + "\n")
    if any(
        t.type == "heading_open" and t.level == 0 and t.map and t.map[0] == len(lines) + 1
        for t in tokens
    ):
        return None
    fences = [t for t in tokens if t.type == "fence" and t.level == 0 and t.markup]
    if not fences:
        return ("", "`", 3)  # something else swallowed the probe; report it as open
    markup = fences[-1].markup
    return ("", markup[0], len(markup))


def decode_block(lines: list[str]) -> tuple[str, str | None]:
    """Inverse of `encode_block`, after the section's source line: (text, source).
    Blank lines after the body (between sections) are not part of it."""
    end = len(lines)
    while end and lines[end - 1] == "":
        end -= 1
    lines = lines[:end]
    if lines:
        m = MARKER_LINE.match(lines[-1])
        if m and len(lines) > int(m[1]):
            lines = lines[: -1 - int(m[1])]
    source = None
    if lines:
        m = SOURCE_LINE.match(lines[0])
        if m:
            source = m[1].strip() or None
            lines = lines[1:]
    text = "\n".join(lines)
    if "\\" in text:  # only then can a line be escaped
        text = "\n".join(_unescape(line) for line in lines)
    return text, source

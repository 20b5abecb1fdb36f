"""The brain.md file format: reading and writing it, byte for byte.

The shape is seed 002's::

    ---                                  (optional YAML front matter)
    last_compaction: '2026-03-21T15:00:00Z'
    ---
    # Nity Brain — Session Context

    ## Observation — 2026-03-21T14:30:00Z
    Task: Implement auth flow

    ## Loop Status — 2026-03-21T14:35:00Z
    <!-- source: hook -->
    Iteration: 4/10

A section starts at a line that is exactly ``## <Label> — <ISO 8601 time>`` outside fenced
code. Three encodings make ``parse(render(x)) == x`` hold for any entry text:

* a body line that could be read as a section heading, or that starts an HTML block
  (which would hide everything after it in a markdown viewer), is written with one more
  leading backslash, and read back with one less; markdown shows ``\\##`` as ``##``;
* an entry's `source` is the first body line, ``<!-- source: NAME -->``;
* a body that leaves a code fence open is followed by a closing fence and the line
  ``<!-- voyager-brain: closes the code fence left open above (1 line) -->``, so the next
  heading is not swallowed by the fence; these lines are dropped on read. When a fence
  sits inside a list or quote (where a line scan and markdown disagree about where it
  ends), markdown-it picks a closing that both readings accept; the marker counts its lines.

Those three live in `escaping`; this module holds the document: title, front matter,
the heading scan, parse and render.

Reading is a line scan that tracks fences the way CommonMark does at the top level; it is
held to markdown-it's reading of the same text by a property test. Only the standard
library is imported here unless the file has front matter we did not write ourselves.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path

from .. import conflicts
from ..errors import CorruptFileError, TemplateError
from ..render import Templates
from ..timestamps import format_timestamp, parse_timestamp
from ..value import Value
from .escaping import (
    MARKER_LINE,
    MARKER_START,
    SOURCE_LINE,
    decode_block,
    encode_block,
    fence_step,
)
from .model import LABEL_TYPES, BrainEntry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TITLE_SUFFIX = " Brain — Session Context"
_LABELS = "|".join(re.escape(label) for label in LABEL_TYPES)
# Tolerant on read (hand edits): any dash, extra blanks; the timestamp is checked apart.
_HEADING_PATTERN = rf"^##[ \t]+({_LABELS})[ \t]+[—–-][ \t]+(.+?)[ \t]*$"
_TITLE = re.compile(rf"^# (.+){re.escape(TITLE_SUFFIX)}[ \t]*$")
# A level-1 ATX heading (CommonMark: up to three spaces, '#', then a blank or nothing).
_OWN_HEADING = re.compile(r" {0,3}#(?:[ \t]|$)")
_SIMPLE_META = r"^([A-Za-z_][A-Za-z0-9_]*): '((?:[^']|'')*)'$"
_META_DEPTH = 100


# Compiled when first used: a session start reads sections, it writes none.
@functools.cache
def _heading() -> re.Pattern[str]:
    return re.compile(_HEADING_PATTERN)


class BrainDocument(Value):
    """A parsed brain.md.

    `project` comes from the title line; `meta` is the front matter; `preamble` is any
    hand-written text between the title and the first section (kept as written);
    `warnings` are things `doctor` reports (a heading-like line with a bad timestamp...).
    `appendable` says new sections can be appended to the file as it is on disk.
    `heading` is a hand-written first line that is a level-1 heading other than our title
    (``# Team notes``): it is the file's title, written back as it was instead of ours.
    """

    __slots__ = ("appendable", "entries", "heading", "meta", "preamble", "project", "warnings")
    _fields = ("project", "meta", "entries", "preamble", "warnings", "appendable", "heading")
    project: str | None
    meta: Mapping[str, Any]
    entries: tuple[BrainEntry, ...]
    preamble: str | None
    warnings: tuple[str, ...]
    appendable: bool
    heading: str | None

    def __init__(
        self,
        project: str | None = None,
        meta: Mapping[str, Any] | None = None,
        entries: tuple[BrainEntry, ...] = (),
        preamble: str | None = None,
        warnings: tuple[str, ...] = (),
        appendable: bool = True,
        heading: str | None = None,
    ) -> None:
        # Blank lines around the preamble are layout, not text (as after a section).
        preamble = (preamble or "").replace("\r\n", "\n").strip("\n")
        meta = {} if meta is None else meta
        self._assign(project, meta, entries, preamble or None, warnings, appendable, heading)


# -- reading --------------------------------------------------------------------------


def decode_text(data: bytes, path: Path) -> str:
    """brain.md's bytes as text: UTF-8 without NUL bytes (a BOM is dropped), line endings
    made ``\\n``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorruptFileError(
            path,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); expected a UTF-8 text file",
            line,
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        # git takes a file with a NUL byte for binary: no diff, no merge, no review.
        raise CorruptFileError(
            path, "holds a NUL byte (0x00); expected a text file", text.count("\n", 0, nul) + 1
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n") if "\r" in text else text


def _no_conflicts(text: str, path: Path) -> None:
    """Git conflict markers are never read as content (see `conflicts`)."""
    if conflicts.OPEN_TEXT in text:
        conflicts.check(text.encode(), path)


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str, int]:
    """(metadata, rest of the text, number of lines the front matter took)."""
    if not text.startswith("---\n"):
        return {}, text, 0
    lines = text.split("\n")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        raise CorruptFileError(path, "front matter opened by '---' is never closed", 1)
    block = lines[1:end]
    rest = "\n".join(lines[end + 1 :])
    return _load_meta(block, path), rest, end + 1


def _load_meta(block: list[str], path: Path) -> dict[str, Any]:
    # What we write ourselves is `key: 'text'` lines; reading those needs no YAML library
    # (importing one costs more than the rest of a hook), and they mean the same to YAML.
    simple: dict[str, Any] = {}
    for line in block:
        m = re.match(_SIMPLE_META, line)
        if m is None:
            break
        simple[m[1]] = m[2].replace("''", "'")
    else:
        return simple
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    try:
        data = YAMLHandler().load("\n".join(block))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line_no = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CorruptFileError(
            path, f"front matter is not valid YAML: {problem}", line_no
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CorruptFileError(
            path, f"front matter: expected key: value pairs, got a {type(data).__name__}", 2
        )
    from ..nesting import depth

    # The YAML reader takes a thousand levels; writing them back recurses further than
    # Python's stack goes. Refused on read, the file is never half-written.
    levels = depth(data)
    if levels > _META_DEPTH:
        raise CorruptFileError(
            path, f"front matter nested {levels} levels deep; expected at most {_META_DEPTH}", 2
        )
    return {str(k): v for k, v in data.items()}


# The only lines that can start a section, and the only ones that can open or close a
# fence (see fence_step), each matched whole after the newline before it: a pattern that
# starts with a literal is searched for several times faster than one that starts with ^,
# and two such searches beat one for either kind. A heading-shaped line (as
# _HEADING_PATTERN reads it) also gives its label and time: what that pattern's lazy
# (.+?) takes, from the first non-blank to the last (or one blank when there is nothing
# else), spelled so that no character is tried twice.
_HEADING_LINE = (
    rf"(##[ \t]+({_LABELS})[ \t]+[—–-][ \t]+"
    r"([^ \t\n](?:[^\n]*[^ \t\n])?|[ \t])[ \t]*(?=\n|\Z))"
)
_FENCE_LINE = r"( {0,3}(?:```|~~~)[^\n]*)"
_HEADINGS = (re.compile(_HEADING_LINE), re.compile("\n" + _HEADING_LINE))
_FENCES = (re.compile(_FENCE_LINE), re.compile("\n" + _FENCE_LINE))

#: A section heading found by `_scan`: where its line starts and where the section's own
#: text starts (after the heading's newline) in the body, its type and time.
Heading = tuple[int, int, str, datetime]


def _lines_like(
    patterns: tuple[re.Pattern[str], re.Pattern[str]], body: str, start: int
) -> Iterator[re.Match[str]]:
    """The lines from offset `start` on that `patterns` match: group 1 is the line."""
    first = patterns[0].match(body) if start == 0 else None
    found = patterns[1].finditer(body, max(start - 1, 0))
    return itertools.chain((first,), found) if first is not None else found


def _scan(
    body: str, start: int, offset: int
) -> tuple[list[Heading], list[str], tuple[str, str, int] | None]:
    """Find the section headings of `body` from offset `start` on (0, or after a title
    line): their `Heading`s, the warnings, the fence still open at the end. Only candidate
    lines, found by regex searches, are looked at one by one (a megabyte of brain.md has a
    few thousand among tens of thousands of lines): first the fence lines, which tell
    where code is, then the heading-shaped lines outside it. Lines are counted only for a
    warning."""
    size = len(body)
    fence: tuple[str, str, int] | None = None
    code: list[tuple[int, int]] = []  # (the opening fence line, the closing one) of each block
    opened = 0
    for match in _lines_like(_FENCES, body, start):
        at = match.start(1)
        step = fence_step(match.group(1), fence)
        if fence is None and step is not None:
            opened = at
        elif fence is not None and step is None:
            code.append((opened, at))
        fence = step
    if fence is not None:
        code.append((opened, size))

    warnings: list[str] = []
    headings: list[Heading] = []
    line_no, counted = offset + 1, 0  # the line number at offset `counted`
    block = 0
    for match in _lines_like(_HEADINGS, body, start):
        at = match.start(1)
        while block < len(code) and code[block][1] < at:
            block += 1
        if block < len(code) and code[block][0] < at:
            continue  # a heading-shaped line inside a code fence is text
        stamp_text = match.group(3)
        try:
            stamp = parse_timestamp(stamp_text)
        except ValueError:
            line_no += body.count("\n", counted, at)
            counted = at
            warnings.append(
                f"line {line_no}: looks like a section heading but {stamp_text!r} "
                "is not an ISO 8601 time; read as text of the section above"
            )
            continue
        end = match.end()
        headings.append((at, end + 1 if end < size else size, LABEL_TYPES[match.group(2)], stamp))
    return headings, warnings, fence


def _lines(text: str) -> list[str]:
    """The lines of a piece of the body that ends at a line end (or at the end of the
    body): its final newline ends the last line, it starts none."""
    if not text:
        return []
    return (text[:-1] if text[-1] == "\n" else text).split("\n")


def heading_lines(text: str) -> list[int]:
    """1-based line numbers of the section headings in brain.md's `text`."""
    _, body, offset = _split_front_matter(text, Path("brain.md"))
    headings, _, _ = _scan(body, 0, offset)
    numbers, line_no, counted = [], offset + 1, 0
    for at, *_ in headings:
        line_no += body.count("\n", counted, at)
        counted = at
        numbers.append(line_no)
    return numbers


def is_heading(line: str) -> bool:
    """Whether `line` reads as a section heading (``## Observation — <time>``) where no
    code fence is open; whether one is open, only the text above it can tell."""
    m = _heading().match(line)
    if m is None:
        return False
    try:
        parse_timestamp(m[2])
    except ValueError:
        return False
    return True


def reference_heading_lines(text: str) -> list[int]:
    """The same as `heading_lines`, as markdown-it reads the text: top-level ``##``
    headings whose text is a label, a dash and an ISO 8601 time. Slow; for checks."""
    from markdown_it import MarkdownIt

    _, body, offset = _split_front_matter(text, Path("brain.md"))
    found = []
    tokens = MarkdownIt("commonmark").parse(body)
    for n, token in enumerate(tokens):
        if token.type == "heading_open" and token.markup == "##" and token.level == 0:
            m = _heading().match("## " + tokens[n + 1].content)
            if m and token.map is not None:
                try:
                    parse_timestamp(m[2])
                except ValueError:
                    continue
                found.append(token.map[0] + offset + 1)
    return found


#: Sections already decoded, by (type, time, the lines after the heading): see `parse`.
SectionMemo = dict[tuple[str, datetime, str], BrainEntry]


def _entry(type_: str, stamp: datetime, section: list[str]) -> BrainEntry:
    content, source = decode_block(section)
    return BrainEntry.parsed(type_, content, stamp, source)


class Section:
    """A section of brain.md as the heading scan finds it, decoded only when its text
    (or its source, when the first line may name one) is asked for: the session-start
    context reads a handful of the thousands a large brain.md holds. Reads like the
    `BrainEntry` that `parse` makes of it."""

    __slots__ = ("_body", "_end", "_entry", "_start", "timestamp", "type")

    def __init__(self, type_: str, timestamp: datetime, body: str, start: int, end: int) -> None:
        self.type, self.timestamp = type_, timestamp
        self._body, self._start, self._end = body, start, end  # its text: body[start:end]
        self._entry: BrainEntry | None = None

    @property
    def entry(self) -> BrainEntry:
        if self._entry is None:
            lines = _lines(self._body[self._start : self._end])
            self._entry = _entry(self.type, self.timestamp, lines)
        return self._entry

    @property
    def source(self) -> str | None:
        # Only a first line shaped like one can be the source line: decoding trims the
        # end of a section, and only a closing-fence marker there can take away more
        # than blank lines (then the section is decoded to be sure).
        body, start, end = self._body, self._start, self._end
        if not body.startswith("<!-- source: ", start, end):
            return None  # most sections: no need to find the end of the line
        first_end = body.find("\n", start, end)
        m = SOURCE_LINE.match(body[start : first_end if first_end >= 0 else end])
        if m is None:
            return None
        if body.find(MARKER_START, start, end) >= 0:
            text = body[start:end].rstrip("\n")
            if MARKER_LINE.match(text[text.rfind("\n") + 1 :]):  # the last non-empty line
                return self.entry.source
        return m[1].strip() or None

    @property
    def content(self) -> str:
        return self.entry.content

    @property
    def key(self) -> tuple[str, str, str]:
        return self.entry.key

    @property
    def label(self) -> str:
        return self.entry.label


def sections(data: bytes | str, path: Path) -> tuple[str | None, list[Section]]:
    """brain.md's project title and its sections, undecoded (see `Section`); raises
    what `parse` raises for a file it cannot read."""
    text = decode_text(data, path) if isinstance(data, bytes) else data
    _no_conflicts(text, path)
    _, body, offset = _split_front_matter(text, path)
    project, start = _title(body)
    headings, _, _ = _scan(body, start, offset)
    ends = [heading[0] for heading in headings] + [len(body)]
    return project, [
        Section(type_, stamp, body, begin, end)
        for (_, begin, type_, stamp), end in zip(headings, ends[1:], strict=True)
    ]


def _title(body: str) -> tuple[str | None, int]:
    """The project named by the body's title line, and the offset after that line (0
    when there is no title)."""
    end = body.find("\n")
    m = _TITLE.match(body if end < 0 else body[:end])
    if m is None:
        return None, 0
    return m[1].strip(), len(body) if end < 0 else end + 1


def _own_heading(body: str) -> tuple[str | None, int]:
    """The body's first non-blank line when it is a hand-written level-1 heading (not
    our title), and the offset after it (0 when there is none): a person titled the
    file, and a title of ours above it would make two."""
    begin = len(body) - len(body.lstrip("\n"))
    end = body.find("\n", begin)
    line = body[begin:] if end < 0 else body[begin:end]
    if _OWN_HEADING.match(line) is None or _TITLE.match(line) is not None:
        return None, 0
    return line, len(body) if end < 0 else end + 1


def parse(data: bytes | str, path: Path, memo: SectionMemo | None = None) -> BrainDocument:
    """Read brain.md. Raises `CorruptFileError` (file, line, what is wrong) when it cannot.

    `memo`, when given, is consulted before a section is decoded and filled after: an
    entry depends only on its heading and its own lines, so a caller that reads several
    versions of one file (a merge) decodes each section once.
    """
    text = decode_text(data, path) if isinstance(data, bytes) else data
    _no_conflicts(text, path)
    meta, body, offset = _split_front_matter(text, path)
    ends_with_newline = body.endswith("\n") or body == ""
    project, start = _title(body)
    own = None
    if project is None:
        own, start = _own_heading(body)
    headings, warnings, fence = _scan(body, start, offset)
    ends = [heading[0] for heading in headings] + [len(body)]
    preamble = decode_block(_lines(body[start : ends[0]]))[0].strip("\n")

    entries = []
    for (_, begin, type_, stamp), end in zip(headings, ends[1:], strict=True):
        section = _lines(body[begin:end])
        if memo is None:
            entries.append(_entry(type_, stamp, section))
            continue
        key = (type_, stamp, "\n".join(section))
        if key not in memo:
            memo[key] = _entry(type_, stamp, section)
        entries.append(memo[key])

    return BrainDocument(
        project=project,
        meta=meta,
        entries=tuple(entries),
        preamble=preamble or None,
        warnings=tuple(warnings),
        appendable=ends_with_newline and fence is None,
        heading=own,
    )


# -- writing --------------------------------------------------------------------------


def _dump_meta(meta: Mapping[str, Any]) -> str:
    # Plain one-line strings are written as `key: 'text'` (valid YAML that `_load_meta`
    # reads without a YAML library); anything else goes through python-frontmatter.
    if all(
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) and isinstance(v, str) and v.isprintable()
        for k, v in meta.items()
    ):
        return "".join(
            f"{k}: '{v.replace(chr(39), chr(39) * 2)}'\n" for k, v in sorted(meta.items())
        )
    from frontmatter.default_handlers import YAMLHandler

    return YAMLHandler().export(dict(meta), sort_keys=True) + "\n"


def render_section(entry: BrainEntry, templates: Templates) -> str:
    """One section, from the ``brain/section.md.j2`` template; ends with a newline."""
    if entry.timestamp is None:
        raise ValueError("an entry needs a timestamp before it is written")
    body = "\n".join(encode_block(entry.content))
    text = templates.render(
        "brain/section.md.j2",
        label=entry.label,
        type=entry.type,
        timestamp=format_timestamp(entry.timestamp),
        source=entry.source,
        body=body,
    )
    if not text.endswith("\n"):
        text += "\n"
    _check_section(text, entry, templates)
    return text


def _check_section(text: str, entry: BrainEntry, templates: Templates) -> None:
    # A template override that changes the heading or the body would write a file that
    # reads back differently; refuse it rather than lose the entry.
    lines = text.split("\n")[:-1]
    m = _heading().match(lines[0]) if lines else None
    ok = m is not None and LABEL_TYPES[m[1]] == entry.type
    if ok and m is not None:
        content, source = decode_block(lines[1:])
        ok = (m[2], content, source) == (
            format_timestamp(entry.timestamp or datetime.min),
            entry.content,
            entry.source,
        )
    if not ok:
        raise TemplateError(
            f"{templates.source_of('brain/section.md.j2')}: the section it renders does not "
            f"read back as the same entry; keep the heading line "
            f"'## {{{{ label }}}} — {{{{ timestamp }}}}' and '{{{{ body }}}}' unchanged"
        )


def render_title(project: str, templates: Templates) -> str:
    text = templates.render("brain/title.md.j2", project=project)
    if not text.endswith("\n"):
        text += "\n"
    m = _TITLE.match(text.split("\n")[0])
    if m is None or m[1].strip() != project.strip():
        raise TemplateError(
            f"{templates.source_of('brain/title.md.j2')}: its first line must stay "
            f"'# {{{{ project }}}}{TITLE_SUFFIX}'"
        )
    return text


def render_sections(entries: Iterable[BrainEntry], templates: Templates) -> str:
    """Sections to append after a file that ends with a newline."""
    return "".join("\n" + render_section(entry, templates) for entry in entries)


def render_head(doc: BrainDocument, templates: Templates) -> str:
    """Everything before the first section: front matter, title, preamble."""
    parts = []
    if doc.meta:
        parts.append("---\n" + _dump_meta(doc.meta) + "---\n")
    if doc.heading is not None:
        parts.append(doc.heading + "\n")
    else:
        parts.append(render_title(doc.project or "Project", templates))
    if doc.preamble:
        parts.append("\n" + "\n".join(encode_block(doc.preamble)) + "\n")
    return "".join(parts)


def render(doc: BrainDocument, templates: Templates) -> str:
    """The whole file. The same document always gives the same text."""
    return render_head(doc, templates) + render_sections(doc.entries, templates)

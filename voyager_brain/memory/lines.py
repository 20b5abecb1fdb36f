"""Reading a memory log's bytes (seed 001): one JSON object per line, and whatever else
a hand edit, a torn write or a bad merge left. Reading never fails on a bad line: it is
skipped and counted (`Health`), and a last line without its newline is reported as
``truncated_tail``. `log` folds what this reads.

Standard library only: session start reads every line through here.
"""

from __future__ import annotations

import contextlib
import gc as _gc
import json
import re
from collections.abc import Callable, Iterator

from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Health is not a dataclass: every session start imports this module, and creating a
# dataclass costs about a millisecond.
class Health(Record):
    """What reading a log found: valid entries, skipped lines, a torn last line."""

    total: int = 0
    bad_lines: int = 0
    truncated_tail: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "bad_lines": self.bad_lines,
            "truncated_tail": self.truncated_tail,
        }


def parse_objects(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """Every JSON object line of `data` (no id or type needed), and the bad-line count."""
    found: list[dict[str, Any]] = []
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        value = loads_line(raw)
        if isinstance(value, dict):
            found.append(value)
        else:
            bad += 1
    return found, bad


# Bytes decoded at a time: one str of a whole large log is several times its size (a
# single non-Latin-1 character makes every character 2 or 4 bytes) and slower to walk;
# a piece this small stays in the CPU's cache while its lines are parsed (10k lines in
# a fresh process: 36 ms median with 16 KB pieces, 44 ms with 256 KB ones).
_CHUNK = 1 << 14


def parse(data: bytes, *, chunk: int = _CHUNK) -> tuple[list[dict[str, Any]], Health]:
    """The entries of a log's bytes, in file order, and the health of the read.

    A line that is not a JSON object with a string ``id`` and ``type`` is a bad line.
    A last line without a newline is a torn tail: counted as a bad line when it does not
    parse, and reported either way. The bytes are read in pieces (see `pieces`).
    """
    entries: list[dict[str, Any]] = []
    bad = 0
    with no_cycle_collection():
        for found, wrong in pieces(data, chunk=chunk):
            entries += found
            bad += wrong
    return entries, Health(len(entries), bad, bool(data) and not data.endswith(b"\n"))


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cycle collector off while a log is read, as it was before afterwards. Reading
    makes one container per line, and the collections they set off walk the entries
    read so far again and again (about a tenth of the time of reading 100k lines in a
    process that keeps the collector on); none of them finds a cycle."""
    if not _gc.isenabled():
        yield
        return
    _gc.disable()
    try:
        yield
    finally:
        _gc.enable()


def pieces(
    data: bytes, stop: int | None = None, *, chunk: int = _CHUNK
) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """`parse` of ``data[:stop]`` a piece at a time: the entries and the bad-line count
    of each piece of about `chunk` bytes ending at a newline (a newline byte is never
    inside a UTF-8 character, so each line is in one piece). Folding each piece as it
    comes touches its entries while they are still in the CPU's cache."""
    start, size = 0, len(data) if stop is None else stop
    while start < size:
        end = min(data.find(b"\n", start + chunk - 1, size) + 1 or size, size)
        piece = data[start:end] if start or end < len(data) else data
        try:
            text = piece.decode()
        except UnicodeDecodeError:
            yield parse_lines(piece)
        else:
            yield _parse_piece(text)
        start = end


def is_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("type"), str)
    )


# What bytes.strip() removes: a line of only these is blank, never a bad line. JSON's
# own whitespace, all json.loads allows after a value, is narrower.
_BLANK = " \t\n\r\x0b\x0c"
_JSON_SPACE = " \t\r"
# The decoder's scanner, called directly: raw_decode() around it is a Python frame per
# line. It takes a value at an index and raises StopIteration where none starts.
_scan_once: Callable[[str, int], tuple[Any, int]]
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # not in the stubs


def _parse_text(text: str) -> tuple[list[dict[str, Any]], int]:
    """`parse_lines` of the decoded file, faster: one decoder call per line straight
    on the whole text (json.loads per line decodes and copies each line first). Any line
    the fast step does not take whole goes through json.loads, so the result is the same."""
    entries: list[dict[str, Any]] = []
    bad = 0
    pos, size = 0, len(text)
    find = text.find
    while pos < size:
        end_of_line = find("\n", pos)
        if end_of_line < 0:
            end_of_line = size
        try:
            value, end = _scan_once(text, pos)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end != end_of_line and (
            end < 0 or end > end_of_line or text[end:end_of_line].strip(_JSON_SPACE)
        ):
            line = text[pos:end_of_line]
            pos = end_of_line + 1
            if not line.strip(_BLANK):
                continue
            value = loads_line(line.encode())
        else:
            pos = end_of_line + 1
        # is_entry, inline: this loop runs once per line of the log.
        if (
            value.__class__ is dict
            and value.get("id").__class__ is str
            and value.get("type").__class__ is str
        ):
            entries.append(value)
        else:
            bad += 1
    return entries, bad


# Two objects on one line: a "}", a comma and a "{" with only JSON whitespace between
# (a newline is whitespace too, but it ends the line).
_TWO_ON_A_LINE = r"\}[ \t\r]*,[ \t\r]*\{"


def _parse_piece(text: str) -> tuple[list[dict[str, Any]], int]:
    """`_parse_text`, mostly in one decoder call: the piece's lines read as one JSON
    array (each newline a comma). The decoder makes each key string once per call, not
    once per line, so a piece of a hundred entries holds a few dozen key strings instead
    of several hundred (less to allocate, to walk in the CPU's cache and to free).

    The array is taken only when it means what the lines do: as many values as lines,
    every one an entry, and no line holding two objects. A value that went on over a line
    would make one element of two lines, so some other line would have to hold two
    elements for the count to match, and between two objects on a line there is only
    "}", whitespace, a comma, whitespace and "{". Anything else is read line by line."""
    body = text[:-1] if text.endswith("\n") else text
    if not re.search(_TWO_ON_A_LINE, body):
        joined = "[" + body.replace("\n", ",") + "]"
        try:
            values, end = _scan_once(joined, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end == len(joined) and len(values) == body.count("\n") + 1:
            for value in values:
                if (
                    value.__class__ is not dict
                    or value.get("id").__class__ is not str
                    or value.get("type").__class__ is not str
                ):
                    break
            else:
                return values, 0
    return _parse_text(text)


def loads_line(raw: bytes) -> Any:
    """One line as json.loads reads it, or None when it is not JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def parse_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The entries of `data` read line by line with json.loads, and the bad-line count
    (`parse` without its fast path, for bytes that are not UTF-8 throughout)."""
    entries: list[dict[str, Any]] = []
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        value = loads_line(raw)
        if is_entry(value):
            entries.append(value)
        else:
            bad += 1
    return entries, bad

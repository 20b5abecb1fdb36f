"""Where a field of a JSON text starts: the line a brain.json error names.

`value_line(text, "decisions[0].what")` scans `text` and returns the 1-based line on
which that value starts (lines counted by ``\\n``, as `json.JSONDecodeError` counts them),
or None when the path is not in the text. Run only when an error is reported, so it
trades speed for simplicity: each step of the path scans its container from the start.
An object with the same key twice gives the last one, as `json.loads` keeps it.

Standard library only, and it never raises: any text that does not scan gives None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

_WHITESPACE = " \t\n\r"
_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")
# A JSON string from its opening quote: any character but a quote, backslash or control
# character, or an escape. Runs of plain characters are taken whole (not one alternation
# per character, which takes seconds over a string of megabytes).
_STRING = re.compile(r'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"', re.DOTALL)

Path = Sequence[str | int]


class _NoMatch(Exception):
    """The text does not hold the path (or is not JSON where the scan looked)."""


def parse_path(path: str) -> list[str | int] | None:
    """``decisions[0].what`` as ``["decisions", 0, "what"]``; ``""`` is the whole
    document. None when `path` is not of that form."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _PART.match(path, pos)
        if m is None or (m[2] is not None and pos > 0 and not m[0].startswith(".")):
            return None  # "a[0]b": a key must follow a dot
        if m[2] is not None and pos == 0 and m[0].startswith("."):
            return None  # ".a": no leading dot
        parts.append(int(m[1]) if m[1] is not None else m[2])
        pos = m.end()
    return parts


def value_line(text: str, path: str | Path) -> int | None:
    """The 1-based line on which the value at `path` starts in the JSON `text`, or None
    when the path cannot be found. `path` is ``decisions[0].what`` or its parts
    (``["decisions", 0, "what"]``: keys as strings, list indexes as ints)."""
    try:
        parts = parse_path(path) if isinstance(path, str) else list(path)
        if parts is None:
            return None
        pos = _value_start(text, parts)
    except (_NoMatch, ValueError, IndexError, RecursionError):
        return None
    return text.count("\n", 0, pos) + 1


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _expect(text: str, pos: int, char: str) -> int:
    """The position after `char`, which must come next (after whitespace)."""
    pos = _skip_space(text, pos)
    if not text.startswith(char, pos):
        raise _NoMatch
    return pos + 1


def _string_end(text: str, pos: int) -> int:
    m = _STRING.match(text, pos)
    if m is None:
        raise _NoMatch
    return m.end()


def _skip_value(text: str, pos: int) -> int:
    """The position after the value that starts at `pos` (no whitespace before it).
    Containers are skipped by counting brackets outside strings, without recursion."""
    if pos >= len(text):
        raise _NoMatch
    char = text[pos]
    if char == '"':
        return _string_end(text, pos)
    if char not in "[{":
        # A number, true, false, null (or NaN, Infinity, which json.loads accepts).
        end = pos
        while end < len(text) and text[end] not in ',]}:"[{' + _WHITESPACE:
            end += 1
        if end == pos:
            raise _NoMatch
        return end
    closers: list[str] = []
    while True:
        if pos >= len(text):
            raise _NoMatch
        char = text[pos]
        if char == '"':
            pos = _string_end(text, pos)
            continue
        if char in "[{":
            closers.append("]" if char == "[" else "}")
        elif char in "]}":
            if not closers or closers.pop() != char:
                raise _NoMatch
            if not closers:
                return pos + 1
        pos += 1


def _value_start(text: str, parts: list[str | int]) -> int:
    pos = _skip_space(text, 0)
    if pos >= len(text):
        raise _NoMatch
    for part in parts:
        pos = _element(text, pos, part) if isinstance(part, int) else _member(text, pos, part)
    return pos


def _element(text: str, pos: int, index: int) -> int:
    """Where element `index` of the array at `pos` starts."""
    pos = _expect(text, pos, "[")
    pos = _skip_space(text, pos)
    if text.startswith("]", pos) or index < 0:
        raise _NoMatch
    for _ in range(index):
        pos = _skip_space(text, _skip_value(text, pos))
        pos = _skip_space(text, _expect(text, pos, ","))
    if pos >= len(text) or text[pos] in ",]":
        raise _NoMatch
    return pos


def _member(text: str, pos: int, key: str) -> int:
    """Where the value of `key` in the object at `pos` starts (its last one)."""
    pos = _expect(text, pos, "{")
    pos = _skip_space(text, pos)
    found: int | None = None
    if text.startswith("}", pos):
        raise _NoMatch
    while True:
        end = _string_end(text, pos)
        name = json.loads(text[pos:end])
        pos = _skip_space(text, _expect(text, end, ":"))
        if name == key:
            found = pos
        pos = _skip_space(text, _skip_value(text, pos))
        if text.startswith("}", pos):
            break
        pos = _skip_space(text, _expect(text, pos, ","))
    if found is None:
        raise _NoMatch
    return found

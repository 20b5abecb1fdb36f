"""One reader for the JSON texts voyager-brain keeps in files: brain.json,
pipeline-state.json, `save`'s input, the lines of memory.jsonl and events.jsonl.

A hand edit, a bad merge or a hostile clone can put anything in them. Whatever it is,
`loads` gives the value or one `JSONTextError` saying what is wrong and on which line, in
the same words for every file, so each caller names its file in one line (exit code 2)
and never writes over what it could not read:

- bytes that are not UTF-8: the first bad byte (a byte-order mark is skipped);
- not JSON: the decoder's message and column;
- nested deeper than the reader goes (`nesting.too_deep`): the standard reader recurses
  once per level and would raise RecursionError, which names nothing;
- an integer of more digits than Python converts (4,300): the standard reader raises a
  ValueError that names neither the file nor the line.

A lone surrogate escape (``"\\ud800"``) is read as the code point it names, as the
standard reader reads it: text that is not a character is kept, not refused or changed,
and written back escaped (`dumps`).

Standard library only.
"""

from __future__ import annotations

from . import cjson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class JSONTextError(ValueError):
    """A JSON text that cannot be read: what is wrong (`detail`) and the 1-based line
    (None when no line can be named)."""

    def __init__(self, detail: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {detail}" if line is not None else detail)
        self.detail = detail
        self.line = line


def decode(data: bytes) -> str:
    """`data` as UTF-8 text, a byte-order mark skipped; `JSONTextError` naming the line
    and the first byte that is not UTF-8."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        detail = f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); expected a JSON text file"
        raise JSONTextError(detail, line) from None


def loads(data: bytes | str) -> Any:
    """The JSON value of `data` (bytes are read as UTF-8, see `decode`), or
    `JSONTextError`."""
    text = decode(data) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    try:
        return cjson.loads(text)
    except RecursionError:
        from .nesting import too_deep

        detail, line = too_deep(text)
        raise JSONTextError(detail, line) from None
    except ValueError as exc:
        import json

        if isinstance(exc, json.JSONDecodeError):
            detail = f"not valid JSON: {exc.msg} (column {exc.colno})"
            raise JSONTextError(detail, exc.lineno) from None
        raise _too_many_digits(text) from None


def _too_many_digits(text: str) -> JSONTextError:
    """The error for an integer past Python's conversion limit: its line and its size."""
    import contextlib
    import json
    import sys

    limit = sys.get_int_max_str_digits()
    longest: list[str] = []

    def keep(literal: str) -> int:
        if limit and len(literal.lstrip("-")) > limit and not longest:
            longest.append(literal)
        return 0

    with contextlib.suppress(ValueError, RecursionError):
        json.loads(text, parse_int=keep)
    if not longest:  # another ValueError after all: say what the reader said
        return JSONTextError("not valid JSON")
    literal = longest[0]
    line = text.count("\n", 0, max(text.find(literal), 0)) + 1
    return JSONTextError(
        f"an integer of {len(literal.lstrip('-')):,} digits; at most {limit:,} can be read", line
    )


def dumps(
    value: Any, *, indent: int | None = None, separators: tuple[str, str] | None = None
) -> str:
    """`json.dumps(value, indent=..., separators=..., ensure_ascii=False)`, each lone
    surrogate written as its escape (``\\ud800``): what `loads` read, written back
    unchanged, and always text that encodes as UTF-8."""
    if indent is None:
        text = cjson.dumps(value, ensure_ascii=False, separators=separators)
    else:
        import json

        text = json.dumps(value, indent=indent, ensure_ascii=False, separators=separators)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Only inside strings (JSON's own syntax is ASCII), where \udXXX is the escape.
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text

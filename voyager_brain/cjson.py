"""JSON read and written by the standard library's C accelerator (`_json`), without the
`json` package.

`json.loads` and `json.dumps` end in these same C functions, but importing the package
imports `re` (json.decoder's whitespace and number patterns), and with it `enum` and
`functools`: about 4 ms, a third of an interpreter's start, which a tool-call hook pays
on every call. `loads` and `dumps` here give exactly what `json.loads(text)` and
`json.dumps(value, ...)` give for the options they take, and leave every failure (a text
that is not JSON, a value that cannot be written, a Python without the accelerator) to
the `json` package itself, so that its errors and messages are unchanged.

Standard library only: every tool-call hook reads and writes through here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json as _accelerator
except ImportError:  # another Python: the json package does it all
    _accelerator = None  # type: ignore[assignment]

#: The characters JSON counts as whitespace between values.
_WHITESPACE = " \t\n\r"


class _Reading:
    """What the C scanner reads of a `json.JSONDecoder` made with no options."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


_scan = None if _accelerator is None else _accelerator.make_scanner(_Reading())  # type: ignore[arg-type]


def loads(text: str) -> Any:
    """`json.loads(text)`: the value, or the json package's own error."""
    if _scan is not None and not text.startswith("\ufeff"):
        n, start = len(text), 0
        while start < n and text[start] in _WHITESPACE:
            start += 1
        try:
            value, end = _scan(text, start)
        except (StopIteration, SystemError):
            # StopIteration: not a JSON value. SystemError: a bad escape or control
            # character, whose error the scanner builds from json.decoder, and finds
            # nothing while that module is not imported. The json package says where.
            pass
        else:
            while end < n and text[end] in _WHITESPACE:
                end += 1
            if end == n:
                return value
    import json

    return json.loads(text)


def loads_bytes(raw: bytes) -> Any:
    """`json.loads(raw)`: through the C reader when `raw` is UTF-8 as json would detect
    it (no byte order mark, no NUL in its first bytes), a tenth of the json package's
    time on a transcript's line; else through the json package."""
    if raw.startswith(b"\xef\xbb\xbf") or b"\x00" in raw[:4]:
        import json

        return json.loads(raw)
    return loads(raw.decode("utf-8", "surrogatepass"))


def _unwritable(value: Any) -> Any:
    raise TypeError  # the json package then writes the error it writes for `value`


def dumps(
    value: Any,
    *,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """`json.dumps(value, ensure_ascii=..., separators=..., sort_keys=...)`."""
    if _accelerator is not None:
        if ensure_ascii:
            quote = _accelerator.encode_basestring_ascii
        else:
            quote = _accelerator.encode_basestring
        if isinstance(value, str):
            return str(quote(value))
        items, keys = separators or (", ", ": ")
        try:
            # The arguments JSONEncoder.iterencode gives it: circular check on, no
            # indent, NaN and the infinities allowed, keys not skipped.
            write = _accelerator.make_encoder(
                {}, _unwritable, quote, None, keys, items, sort_keys, False, True
            )
            return "".join(write(value, 0))
        except (TypeError, ValueError, RecursionError):
            pass
    import json

    return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys)

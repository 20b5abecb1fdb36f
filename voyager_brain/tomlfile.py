"""Reading TOML files (config.toml, rules.toml): through the checked read of `confine`,
with errors that name the file and the line, and a fast path for the simple files `init`
writes, which spares a hook the import of tomllib.

Standard library only: the tool-call check reads its settings through here.
"""

from __future__ import annotations

from . import confine, regexcache
from .errors import ConfigError, UnsafePathError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file as a dict; {} when missing; `ConfigError` naming file and line if bad."""
    return read_toml_raw(path)[0]


def read_toml_raw(path: str | Path) -> tuple[dict[str, Any], bytes]:
    """`read_toml` and the bytes it was read from (what a trust is a hash of: the file is
    read once, so the content trusted is the content applied)."""
    try:
        # Checked: a project's config.toml that is a link out of the repository, or a
        # FIFO, is refused (`confine`), never followed.
        raw = confine.read_bytes(path)
    except UnsafePathError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    if raw is None:
        return {}, b""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(_not_utf8(path, raw, exc)) from None
    # What reading in text mode did: universal newlines.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    simple = read_simple_toml(text)
    if simple is not None:
        return simple, raw
    import tomllib

    try:
        return tomllib.loads(text), raw
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        # tomllib recurses once per nested array or inline table: a hostile file
        # thousands of levels deep exhausts the stack before it is read.
        from .nesting import too_deep

        detail, line = too_deep(text)
        raise ConfigError(f"{path}:{line}: {detail}") from None
    except ValueError:
        # An integer of more digits than Python converts: tomllib's ValueError names
        # neither the file nor the line.
        raise ConfigError(_too_many_digits(path, text)) from None


def _too_many_digits(path: str | Path, text: str) -> str:
    """The error for an integer past Python's conversion limit (4,300 digits)."""
    import re
    import sys

    limit = sys.get_int_max_str_digits()
    found = re.search(rf"[0-9_]{{{limit + 1},}}", text)
    if found is None:
        return f"{path}: not valid TOML"
    line = text.count("\n", 0, found.start()) + 1
    digits = len(found[0].replace("_", ""))
    return f"{path}:{line}: an integer of {digits:,} digits; at most {limit:,} can be read"


def _not_utf8(path: str | Path, data: bytes, exc: UnicodeDecodeError) -> str:
    """The error for a file that is not UTF-8: the line and the first bad byte."""
    line = data[: exc.start].count(b"\n") + 1
    return (
        f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x}); expected a UTF-8 text file"
    )


# What TOML allows in a comment or a string: anything but control characters (tab is fine).
_TEXT = r"[^\x00-\x08\x0a-\x1f\x7f]"
_SIMPLE_LINE = (
    rf"[ \t]*(?:([A-Za-z0-9_-]+)[ \t]*=[ \t]*"
    r"(true|false|[+-]?(?:0|[1-9][0-9]*)(\.[0-9]+)?"
    rf"|\"((?:(?![\"\\]){_TEXT})*)\"|'((?:(?!'){_TEXT})*)')[ \t]*)?(?:#{_TEXT}*)?"
)


def read_simple_toml(text: str) -> dict[str, Any] | None:
    """`tomllib.loads(text)` for a file of comments, blank lines and ``key = value`` lines
    with a bare key and a boolean, a decimal number or a string without escapes (what
    `init` writes, and what a person adds to it); None for anything else, which tomllib
    then reads. A session-start hook reads config.toml on every run, and importing
    tomllib costs it more than reading such a file this way."""
    data: dict[str, Any] = {}
    # Compiled here, not when the module is imported: a hook in a project without a
    # config.toml never needs it (the program comes from `regexcache` either way).
    line_of = regexcache.compile(_SIMPLE_LINE).fullmatch
    lines = text.split("\n")
    last = len(lines) - 1
    for n, line in enumerate(lines):
        # A CR is allowed only as the first half of a CRLF newline.
        m = line_of(line[:-1] if n < last and line.endswith("\r") else line)
        if m is None:
            return None
        key, value = m[1], m[2]
        if key is None:
            continue  # blank, or a comment
        if key in data:
            return None  # a duplicate: tomllib says what is wrong
        if value in ("true", "false"):
            data[key] = value == "true"
        elif m[4] is not None or m[5] is not None:
            data[key] = m[4] if m[4] is not None else m[5]
        elif len(value) > 19:
            return None  # past 64 bits, or past what Python converts: tomllib decides
        else:
            data[key] = float(value) if m[3] else int(value)
    return data

"""Find secrets in text and replace them before anything reaches a git-tracked file.

Every brain entry goes through :func:`redact` before it is stored: git history is
forever, so a token that lands in ``.voyager/`` once has leaked for good.

Each secret becomes ``[REDACTED:<name>]``. What is recognised, and the names, are the
rows of :mod:`voyager_brain.secretkinds` (listed in docs/secrets.md): provider formats by
prefix or shape, JSON Web Tokens, private key blocks, passwords in URLs, ``Authorization``
headers and values assigned to secret-looking names.

Only the secret itself is replaced: in ``password = "hunter2"`` the key and the quotes
stay, so the entry still says *what* was configured.

:func:`redact` is idempotent, which ``doctor`` relies on (it re-scans stored entries):
no pattern matches a ``[REDACTED:…]`` marker or a key/value pair whose value is one.
"""

from __future__ import annotations

import re
from bisect import bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "SECRET_PATTERNS",
    "SecretPattern",
    "find_secrets",
    "might_hold_secret",
    "redact",
    "redact_json",
]


class SecretPattern:
    """One compiled row of the table: where the secret is (``regex``, and which group of
    a match), the strings one of which every match holds (``anchors``, case-sensitive;
    ``words``, lower case) and an optional test of the secret itself (``check``).
    (Plain slotted classes here, not Records: making a namedtuple class costs a hook a
    few tenths of a millisecond, and redaction is on the tool-call path.)"""

    __slots__ = ("anchors", "check", "group", "name", "regex", "words")

    def __init__(
        self,
        name: str,
        regex: re.Pattern[str],
        group: int = 0,
        *,
        anchors: tuple[str, ...] = (),
        words: tuple[str, ...] = (),
        check: Callable[[str], bool] | None = None,
    ) -> None:
        self.name, self.regex, self.group = name, regex, group
        self.anchors, self.words, self.check = anchors, words, check

    def __repr__(self) -> str:
        return f"SecretPattern({self.name!r}, {self.regex.pattern!r}, {self.group})"


# Token bodies are delimited by characters that cannot continue them; `\b` would treat
# `-` and `_` as boundaries and match inside longer identifiers.
_BEFORE = r"(?<![A-Za-z0-9_-])"
_AFTER = r"(?![A-Za-z0-9_-])"
_CACHE_GROUP = "redact"


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    from . import regexcache

    return regexcache.compile(pattern, flags | re.VERBOSE, group=_CACHE_GROUP, save=False)


def _build_table() -> tuple[SecretPattern, ...]:
    from . import regexcache
    from .secretkinds import ALL_KINDS, PROVIDER_KINDS

    providers = {id(kind) for kind in PROVIDER_KINDS}
    table = []
    for kind in ALL_KINDS:
        pattern = kind.pattern
        if id(kind) in providers:
            pattern = f"{_BEFORE}(?:{pattern}){_AFTER}"
        regex = _compile(pattern, kind.flags)
        table.append(
            SecretPattern(
                kind.name,
                regex,
                regex.groupindex.get("value", 0),
                anchors=kind.anchors,
                words=kind.words,
                check=kind.check,
            )
        )
    regexcache.save_cache(_CACHE_GROUP)
    return tuple(table)


_TABLE: tuple[SecretPattern, ...] | None = None


def _table() -> tuple[SecretPattern, ...]:
    """The patterns, compiled on first use (from programs cached by `regexcache`):
    `might_hold_secret` lets the tool-call check skip them for ordinary text."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build_table()
    return _TABLE


if TYPE_CHECKING:
    #: Every kind of secret, in the order they are tried (compiled on first use).
    SECRET_PATTERNS: tuple[SecretPattern, ...]


def __getattr__(name: str) -> Any:
    if name == "SECRET_PATTERNS":
        return _table()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Hint:
    """What text must hold for any row to match: every row's anchors and words, and the
    regexes of the rows that have neither (a shape with no fixed part, such as a Discord
    bot token). Plain substring searches: a regex alternation of the same strings took
    400 µs on 2 KB of text, these take 60."""

    __slots__ = ("anchors", "shapes", "words")

    def __init__(self) -> None:
        from .secretkinds import ALL_KINDS

        self.anchors = tuple(dict.fromkeys(a for k in ALL_KINDS for a in k.anchors))
        self.words = tuple(dict.fromkeys(w for k in ALL_KINDS for w in k.words))
        shapes = [k.pattern for k in ALL_KINDS if not k.anchors and not k.words]
        self.shapes = _compile("|".join(f"(?:{s})" for s in shapes), 0) if shapes else None


_HINT: _Hint | None = None


def might_hold_secret(text: str) -> bool:
    """False when `redact(text)` is certainly `text`: cheap, and no table compiled."""
    global _HINT
    if _HINT is None:
        _HINT = _Hint()
    if any(anchor in text for anchor in _HINT.anchors):
        return True
    lower = text.lower()
    if any(word in lower for word in _HINT.words):
        return True
    return _HINT.shapes is not None and _HINT.shapes.search(text) is not None


def _may_match(pattern: SecretPattern, text: str, lower: str) -> bool:
    """Whether `pattern` could match `text` (`lower` is its lower case)."""
    if not pattern.anchors and not pattern.words:
        return True
    return any(a in text for a in pattern.anchors) or any(w in lower for w in pattern.words)


class _Marker:
    """A ``[REDACTED:name]`` in the text being redacted, and where its secret was."""

    __slots__ = ("end", "name", "source_end", "source_start", "start")

    def __init__(self, start: int, end: int, name: str, source_start: int, source_end: int) -> None:
        self.start, self.end, self.name = start, end, name  # start, end: in the redacted text
        self.source_start, self.source_end = source_start, source_end  # in the original


def _scan(text: str) -> tuple[str, list[_Marker]]:
    """The redacted text and its markers.

    Patterns run in table order, each on the text as redacted by the ones before it, so
    that a pattern sees what it will see when the output is scanned again: a token glued
    to a private key block ends at the marker in both scans. That, and no pattern
    matching a marker, is what makes `redact` idempotent. A match that would overlap a
    marker is dropped, so the earlier (more specific) pattern wins.
    """
    current = text
    markers: list[_Marker] = []
    if not might_hold_secret(text):
        return text, markers
    lower = current.lower()
    for pattern in _table():
        if not _may_match(pattern, current, lower):
            continue
        found = _search(pattern, current, markers)
        if found:
            current, markers = _replace(current, markers, found)
            lower = current.lower()
    return current, markers


def _search(pattern: SecretPattern, current: str, markers: list[_Marker]) -> list[_Marker]:
    """Markers for the matches of `pattern` in `current` that leave `markers` alone."""
    starts = [mk.start for mk in markers]
    ends = [mk.end for mk in markers]
    found: list[_Marker] = []
    pos = 0
    while (m := pattern.regex.search(current, pos)) is not None:
        start, end = m.span(pattern.group)
        i = bisect_right(starts, start)
        clear = (i == 0 or ends[i - 1] <= start) and (i == len(starts) or starts[i] >= end)
        if clear and pattern.check is not None and not pattern.check(current[start:end]):
            # Not a secret after all (a name, a word): nor is anything inside it.
            pos = max(m.end(), m.start() + 1)
            continue
        if start < end and clear:
            # Where the secret was in the original text: counted from the end of the
            # closest marker before it (markers are sorted and never overlap).
            j = bisect_right(ends, start) - 1
            offset = 0 if j < 0 else markers[j].source_end - ends[j]
            found.append(_Marker(start, end, pattern.name, start + offset, end + offset))
            pos = max(m.end(), m.start() + 1)
        else:
            # Look again just past this start: a shorter match of the same pattern may
            # hold a secret outside the marker.
            pos = m.start() + 1
    return found


def _replace(
    current: str, markers: list[_Marker], found: list[_Marker]
) -> tuple[str, list[_Marker]]:
    """Put markers for `found` into `current`, moving the existing markers along."""
    parts: list[str] = []
    placed: list[_Marker] = []
    last = shift = 0
    both = [(mk, False) for mk in markers] + [(mk, True) for mk in found]
    for mk, new in sorted(both, key=lambda pair: pair[0].start):
        replacement = f"[REDACTED:{mk.name}]" if new else current[mk.start : mk.end]
        parts += (current[last : mk.start], replacement)
        start = mk.start + shift
        shift += len(replacement) - (mk.end - mk.start)
        placed.append(
            _Marker(start, start + len(replacement), mk.name, mk.source_start, mk.source_end)
        )
        last = mk.end
    parts.append(current[last:])
    return "".join(parts), placed


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """(pattern name, start, end) of each secret found, in order, non-overlapping.

    Patterns are tried in table order and a match that overlaps one already taken is
    dropped, so the most specific name wins.
    """
    return [(mk.name, mk.source_start, mk.source_end) for mk in _scan(text)[1]]


def redact(text: str) -> str:
    """Return text with every secret replaced by [REDACTED:<name>].

    Idempotent: redact(redact(t)) == redact(t).
    """
    return _scan(text)[0]


def redact_json(value: object) -> object:
    """`value` (a JSON value) with every string in it redacted, object keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {redact(str(key)): redact_json(item) for key, item in value.items()}
    return value

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

from bisect import bisect_left, bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
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

    __slots__ = ("anchors", "at_name", "check", "group", "name", "reach", "regex", "words")

    def __init__(
        self,
        name: str,
        regex: re.Pattern[str],
        group: int = 0,
        *,
        anchors: tuple[str, ...] = (),
        words: tuple[str, ...] = (),
        check: Callable[[str], bool] | None = None,
        at_name: bool = False,
        reach: int | None = None,
    ) -> None:
        self.name, self.regex, self.group = name, regex, group
        self.anchors, self.words, self.check = anchors, words, check
        self.at_name, self.reach = at_name, reach

    def __repr__(self) -> str:
        return f"SecretPattern({self.name!r}, {self.regex.pattern!r}, {self.group})"


# Token bodies are delimited by characters that cannot continue them; `\b` would treat
# `-` and `_` as boundaries and match inside longer identifiers.
_BEFORE = r"(?<![A-Za-z0-9_-])"
_AFTER = r"(?![A-Za-z0-9_-])"
_CACHE_GROUP = "redact"
#: re.VERBOSE, spelled out: the patterns come compiled from `regexcache`, and a tool call
#: whose text holds no anchor of a secret never imports `re`.
_VERBOSE = 64


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    from . import regexcache

    return regexcache.compile(pattern, flags | _VERBOSE, group=_CACHE_GROUP, save=False)


def _compile_hint(pattern: str) -> re.Pattern[str]:
    """The hint's regex, cached apart from the table's: a tool call reads this small
    cache, not the whole table's."""
    from . import regexcache

    return regexcache.compile(pattern, _VERBOSE, group=_CACHE_GROUP + "-hint")


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
                at_name=kind.at_name,
                reach=kind.reach,
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
    400 µs on 2 KB of text, these take 60. Kept in the cache folder between processes
    (see `_hint_data`): importing the table to make them would cost each tool call 3 ms."""

    __slots__ = ("anchors", "in_markers", "shapes", "words")

    def __init__(self) -> None:
        anchors, words, shapes, in_markers = _hint_data()
        self.anchors, self.words = anchors, words
        self.shapes = _compile_hint(shapes) if shapes else None
        # What a marker put into the text may hold: a text's anchors and words once
        # some of it is redacted are the original's and these.
        self.in_markers = frozenset(in_markers)


_HintData = tuple[tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]


def _hint_data() -> _HintData:
    """The hint's anchors, words, shapes regex and the anchors and words markers hold:
    read from ``$VOYAGER_HOME/cache/`` while the table's source files are as they were
    when it was written, else made from the table (and written; errors are ignored)."""
    import marshal
    import os

    from .paths import cache_folder

    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "secretkinds")
    key = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            st = os.stat(os.path.join(folder, name))
            key.append((name, st.st_size, st.st_mtime_ns))
    path = os.path.join(cache_folder(), "redact-hint.marshal")
    try:
        with open(path, "rb") as f:
            stored = marshal.load(f)
        if stored[0] == key:
            return tuple(stored[1:])
    except (OSError, ValueError, EOFError, TypeError, IndexError):
        pass
    data = _hint_from_table()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "wb") as f:
            marshal.dump([key, *data], f)
        os.replace(temp, path)
    except (OSError, ValueError):
        pass
    return data


def _hint_from_table() -> _HintData:
    from .secretkinds import ALL_KINDS

    anchors = tuple(dict.fromkeys(a for k in ALL_KINDS for a in k.anchors))
    words = tuple(dict.fromkeys(w for k in ALL_KINDS for w in k.words))
    shapes = [k.pattern for k in ALL_KINDS if not k.anchors and not k.words]
    markers = "".join(f"[REDACTED:{k.name}]" for k in ALL_KINDS)
    in_markers = tuple(
        [a for a in anchors if a in markers] + [w for w in words if w in markers.lower()]
    )
    return anchors, words, "|".join(f"(?:{s})" for s in shapes), in_markers


_HINT: _Hint | None = None


def _hint() -> _Hint:
    global _HINT
    if _HINT is None:
        _HINT = _Hint()
    return _HINT


def might_hold_secret(text: str) -> bool:
    """False when `redact(text)` is certainly `text`: cheap, and no table compiled."""
    hint = _hint()
    if any(anchor in text for anchor in hint.anchors):
        return True
    lower = text.lower()
    if any(word in lower for word in hint.words):
        return True
    return hint.shapes is not None and hint.shapes.search(text) is not None


#: Characters `_present` looks through one string at a time before it builds `_bulk`: a
#: hook redacting a few observations never pays for RE2's import and the sets'
#: compilation (a few milliseconds); a transcript import soon does, and then finds the
#: ~150 anchors, the words and the shapes in one pass of a text each rather than one
#: search each (35x less time for the anchors).
_ONE_BY_ONE = 1 << 20
_scanned = 0
_BULK: Any = None
#: A look-ahead or look-behind without a group inside: RE2 has none, and without it a
#: pattern finds more than with it, never less.
_LOOKAROUND = r"(?<!\\)\(\?<?[=!][^()\\]*\)"


def _bulk() -> tuple[Any, Any, Any]:
    """RE2's programs for the bulk of a transcript: every anchor in one set (literals, so
    RE2's answer is Python's `in`), every word in another (searched in the lower-cased
    text, as `in` is), and the shapes without their look-arounds (None when RE2 cannot
    run them): a text they miss holds no shape, one they find is searched by the shapes'
    own regex."""
    global _BULK
    if _BULK is None:
        import re

        import re2  # type: ignore[import-untyped, unused-ignore]

        def literals(strings: tuple[str, ...]) -> Any:
            found = re2.Set.SearchSet()
            for string in strings:
                found.Add(re.escape(string))
            found.Compile()
            return found

        hint = _hint()
        shapes = None
        if hint.shapes is not None and not any(c in hint.shapes.pattern for c in " #\n"):
            # Written for verbose mode, which RE2 lacks: only a pattern without spaces
            # and comments means the same to both.
            options = re2.Options()
            options.log_errors = False
            loose = re.sub(_LOOKAROUND, "", hint.shapes.pattern).encode("utf-8")
            program = re2._re2.RE2(loose, options)
            if program.ok():
                shapes = (program, re2._re2.RE2.Anchor.UNANCHORED)
        _BULK = (literals(hint.anchors), literals(hint.words), shapes)
    bulk: tuple[Any, Any, Any] = _BULK
    return bulk


def _present(text: str) -> frozenset[str]:
    """The anchors and words `text` holds: each searched once per text rather than once
    per row (on a megabyte, a search is a millisecond)."""
    global _scanned
    hint = _hint()
    lower = text.lower()
    if _scanned < _ONE_BY_ONE:
        _scanned += len(text)
    else:
        anchors, words, _ = _bulk()
        try:
            # Encoded here, once each: RE2's wrapper would encode a str for every call.
            found = [hint.anchors[n] for n in anchors.Match(text.encode("utf-8")) or ()]
            found += [hint.words[n] for n in words.Match(lower.encode("utf-8")) or ()]
            return frozenset(found)
        except UnicodeError:  # a lone surrogate: RE2 reads UTF-8 only
            pass
    return frozenset([a for a in hint.anchors if a in text] + [w for w in hint.words if w in lower])


def _holds_a_shape(text: str) -> bool:
    """Whether a row with neither anchors nor words (`_Hint.shapes`) may match `text`."""
    shapes = _hint().shapes
    if shapes is None:
        return False
    loose = _bulk()[2] if _scanned >= _ONE_BY_ONE else None
    if loose is not None:
        try:
            data = text.encode("utf-8")
        except UnicodeError:  # a lone surrogate: the shapes' own regex decides
            pass
        else:
            program, unanchored = loose
            if program.Match(unanchored, data, 0, len(data))[0][0] == -1:
                return False
    return shapes.search(text) is not None


def _may_match(pattern: SecretPattern, present: frozenset[str]) -> bool:
    """Whether `pattern` could match a text holding the anchors and words `present`."""
    if not pattern.anchors and not pattern.words:
        return True
    return any(a in present for a in pattern.anchors) or any(w in present for w in pattern.words)


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
    present = _present(text)
    if not present and not _holds_a_shape(text):
        return text, markers
    starts = _Starts(current, present)
    for pattern in _table():
        if not _may_match(pattern, present):
            continue
        found = _search(pattern, current, markers, starts)
        if found:
            current, markers = _replace(current, markers, found)
            present |= _hint().in_markers
            starts = _Starts(current, present)
    return current, markers


# Characters of a name (a key, a variable), as the assignment patterns define it.
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_QUOTES = frozenset("\"'`")


class _Starts:
    """Where in `text` a pattern's match can start: where a name holding one of its
    words starts (and the quote before it) for the assignment patterns; up to `reach`
    characters before one of its anchors or words for the others. Trying the regex
    there alone, rather than at every character, keeps a megabyte of tool output in
    tens of milliseconds rather than seconds (a regex that starts with a look-behind is
    tried at every character, about 100 ns each)."""

    __slots__ = ("_found", "_lower", "present", "text")

    def __init__(self, text: str, present: frozenset[str]) -> None:
        self.text, self.present = text, present
        self._lower: str | None = None
        self._found: dict[tuple[object, ...], list[int] | None] = {}

    @property
    def lower(self) -> str | None:
        """The text in lower case; None when positions in it are not the text's (a few
        characters change length in lower case), so words cannot place a match."""
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower if len(self._lower) == len(self.text) else None

    def of(self, pattern: SecretPattern) -> list[int] | None:
        """Sorted candidate starts; None when the pattern must search everywhere."""
        if pattern.at_name:
            key: tuple[object, ...] = ("name", pattern.words)
        elif pattern.reach is None or not (pattern.anchors or pattern.words):
            return None
        else:
            key = (pattern.anchors, pattern.words, pattern.reach)
        if key not in self._found:
            lower = self.lower if pattern.words else ""
            if lower is None:
                self._found[key] = None
            elif pattern.at_name:
                self._found[key] = self._names(lower, pattern.words)
            else:
                self._found[key] = self._near(lower, pattern)
        return self._found[key]

    def _near(self, lower: str, pattern: SecretPattern) -> list[int]:
        reach = pattern.reach or 0
        starts: set[int] = set()
        for within, strings in ((self.text, pattern.anchors), (lower, pattern.words)):
            for string in strings:
                at = within.find(string) if string in self.present else -1
                while at >= 0:
                    starts.update(range(max(0, at - reach), at + 1))
                    at = within.find(string, at + 1)
        return sorted(starts)

    def _names(self, lower: str, words: tuple[str, ...]) -> list[int]:
        text, chars, quotes = self.text, _NAME_CHARS, _QUOTES
        starts: set[int] = set()
        for word in words:
            # Occurrences come in order: the walk back to the start of a name stops at
            # the previous occurrence, so a long name is walked once, not once per
            # occurrence in it.
            last_at = last_start = -1
            at = lower.find(word) if word in self.present else -1
            while at >= 0:
                start = at
                while start > 0 and start != last_at and text[start - 1] in chars:
                    start -= 1
                if start == last_at and start > 0:
                    start = last_start
                starts.add(start)
                if start > 0 and text[start - 1] in quotes:
                    starts.add(start - 1)
                last_at, last_start = at, start
                at = lower.find(word, at + 1)
        return sorted(starts)


def _first_match(
    pattern: SecretPattern, text: str, pos: int, starts: _Starts
) -> re.Match[str] | None:
    """`pattern.regex.search(text, pos)`, tried only where a match can start."""
    candidates = starts.of(pattern)
    if candidates is None:
        return pattern.regex.search(text, pos)
    match = pattern.regex.match
    # By index, not a slice: a slice copies the rest of the list at every match, which
    # made a text with many matches of one row quadratic (`mysql -p` 100,000 times).
    for i in range(bisect_left(candidates, pos), len(candidates)):
        if (m := match(text, candidates[i])) is not None:
            return m
    return None


def _search(
    pattern: SecretPattern, current: str, markers: list[_Marker], where: _Starts
) -> list[_Marker]:
    """Markers for the matches of `pattern` in `current` that leave `markers` alone."""
    starts = [mk.start for mk in markers]
    ends = [mk.end for mk in markers]
    found: list[_Marker] = []
    pos = 0
    while (m := _first_match(pattern, current, pos, where)) is not None:
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


#: Short texts come back again and again (a tool input's keys, a tool's name, a short
#: description): their redaction is kept, up to `_MEMO_SIZE` of them, since it depends on
#: the text alone. A transcript import redacts 100,000 texts, a third of them keys.
_SHORT = 64
_MEMO_SIZE = 4096
_memo: dict[str, str] = {}


def redact(text: str) -> str:
    """Return text with every secret replaced by [REDACTED:<name>].

    Idempotent: redact(redact(t)) == redact(t).
    """
    if len(text) > _SHORT:
        return _scan(text)[0]
    done = _memo.get(text)
    if done is None:
        if len(_memo) >= _MEMO_SIZE:
            _memo.clear()
        done = _memo[text] = _scan(text)[0]
    return done


def redact_json(value: object) -> object:
    """`value` (a JSON value) with every string in it redacted, object keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {redact(str(key)): redact_json(item) for key, item in value.items()}
    return value

"""A rule's pattern (Python `re` syntax) written in RE2's syntax, with the same meaning.

RE2 runs in time linear in the input whatever the pattern, but its syntax is not
Python's, and where both accept a pattern they do not always mean the same: RE2's
``\\d``, ``\\w`` and ``\\s`` are ASCII, ``\\s`` leaves out ``\\v``, ``$`` is only the end of
the text (Python's is also before a final newline), ``\\Z`` is refused. So the pattern
is not handed to RE2 as written: Python's own parser reads it, and the tree is written
out again in RE2's syntax, node by node, each node in the meaning Python gives it. What
RE2 cannot mean is reported (`Untranslatable`), and the rule runs on Python's engine
under a time limit instead (`guard.patterns`):

- look-arounds, back-references, conditional groups, possessive quantifiers and atomic
  groups (no finite automaton has them);
- ``$`` (without MULTILINE) anywhere but at the end of the pattern: at the end it is
  ``\\n?\\z``, which finds the same calls, but followed by more it is not;
- ASCII with IGNORECASE (RE2 would also fold the Kelvin sign into ``k``);
- a negated class holding ``\\W``, ``\\D`` or ``\\S``; a count above RE2's 1000.

Two differences are left on purpose, and `Translation.loose` says when the first
applies: RE2's ``\\b`` and ``\\B`` see ASCII words only (and ``\\B`` matches an empty text,
Python's does not), so a pattern with them is decided by Python's engine for a text that
is not ASCII or empty, once RE2 has found its loose form there (the same pattern without
them, which matches wherever it can: most texts are ruled out in linear time); ``\\d``
and ``\\w`` are Unicode classes of RE2's Unicode version, which may know a few
characters newer than Python's.

Standard library only.
"""

from __future__ import annotations

import re

from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Python's ``\\s`` for text (str.isspace), as RE2 class items: RE2's has no ``\\v``,
#: ``\\x1c``-``\\x1f`` or the Unicode spaces.
_SPACE = (
    r"\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
    r"\x{202f}\x{205f}\x{3000}"
)
#: What each category is, as RE2 class items: (Unicode, ASCII).
_CATEGORIES = {
    "DIGIT": (r"\p{Nd}", r"0-9"),
    "WORD": (r"\p{L}\p{N}_", r"0-9A-Za-z_"),
    "SPACE": (_SPACE, r"\x{9}-\x{d} "),
}
#: RE2 refuses a count above this.
MAX_COUNT = 1000


class Untranslatable(Exception):
    """The pattern has something RE2 cannot mean; the message says what."""


class Translation(Record):
    """A pattern in RE2's syntax. `loose`, for a pattern with ``\\b`` or ``\\B`` in Unicode
    mode, or ``\\B`` (which RE2 matches as Python does on ASCII text that is not empty
    only): the pattern without them, found wherever the pattern could be."""

    pattern: str
    loose: str | None = None


def translate(tree: Any) -> Translation:
    """The RE2 pattern of `tree` (what `re._parser.parse` gives for a str pattern).
    Raises `Untranslatable`."""
    writer = _Writer(tree.state.flags)
    text = writer.sequence(list(tree), tree.state.flags, tail=True)
    if not writer.boundary:
        return Translation(text)
    # An assertion taken away only lets more texts match: a superset, for a prefilter.
    loose = _Writer(tree.state.flags, loose=True)
    return Translation(text, loose.sequence(list(tree), tree.state.flags, tail=True))


def _char(code: int) -> str:
    if 0xD800 <= code <= 0xDFFF:
        raise Untranslatable("a surrogate code point")
    if code < 128 and chr(code).isalnum():
        return chr(code)
    return f"\\x{{{code:x}}}"


class _Writer:
    def __init__(self, flags: int, *, loose: bool = False) -> None:
        self.boundary = False
        self.loose = loose
        self.scoped_ascii = ~flags & re.ASCII  # ASCII that only a (?a:...) group turns on

    def sequence(self, items: list[Any], flags: int, *, tail: bool) -> str:
        last = len(items) - 1
        return "".join(
            self.node(op, av, flags, tail=tail and i == last) for i, (op, av) in enumerate(items)
        )

    def node(self, op: Any, av: Any, flags: int, *, tail: bool) -> str:
        from re import _constants as c  # type: ignore[attr-defined]

        if flags & re.ASCII and flags & re.IGNORECASE:
            raise Untranslatable("ASCII case folding")
        fold = bool(flags & re.IGNORECASE)
        if op is c.LITERAL:
            return _folded(_char(av), fold)
        if op is c.NOT_LITERAL:
            return _folded(f"[^{_char(av)}]", fold)
        if op is c.ANY:
            return "(?s:.)" if flags & re.DOTALL else "[^\\n]"
        if op is c.IN:
            return _folded(self.klass(av, flags), fold)
        if op is c.AT:
            return self.at(av, flags, tail=tail)
        if op is c.BRANCH:
            return "(?:" + "|".join(self.sequence(list(b), flags, tail=tail) for b in av[1]) + ")"
        if op is c.SUBPATTERN:
            _group, add, remove, body = av
            return "(?:" + self.sequence(list(body), (flags | add) & ~remove, tail=tail) + ")"
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, body = av
            if low > MAX_COUNT or (high != c.MAXREPEAT and high > MAX_COUNT):
                raise Untranslatable(f"a count above {MAX_COUNT}")
            inner = "(?:" + self.sequence(list(body), flags, tail=False) + ")"
            if high == c.MAXREPEAT:
                count = {0: "*", 1: "+"}.get(low, f"{{{low},}}")
            else:
                count = f"{{{low}}}" if low == high else f"{{{low},{high}}}"
            return inner + count + ("?" if op is c.MIN_REPEAT else "")
        raise Untranslatable(_WHAT.get(str(op), f"{str(op).lower()}"))

    def at(self, where: Any, flags: int, *, tail: bool) -> str:
        from re import _constants as c  # type: ignore[attr-defined]

        multiline = bool(flags & re.MULTILINE)
        if where is c.AT_BEGINNING:
            return "(?m:^)" if multiline else "\\A"
        if where is c.AT_BEGINNING_STRING:
            return "\\A"
        if where is c.AT_END_STRING:
            return "\\z"
        if where is c.AT_END:
            if multiline:
                return "(?m:$)"
            if tail:  # nothing follows: ending at a final newline is ending before it
                return "(?:\\n?\\z)"
            raise Untranslatable("'$' before the end of the pattern")
        if where in (c.AT_BOUNDARY, c.AT_NON_BOUNDARY):
            unicode = not flags & re.ASCII
            self.boundary = self.boundary or unicode or where is c.AT_NON_BOUNDARY
            if self.loose:
                return ""
            return "\\b" if where is c.AT_BOUNDARY else "\\B"
        raise Untranslatable(str(where).lower())  # pragma: no cover - bytes patterns only

    def klass(self, items: list[Any], flags: int) -> str:
        from re import _constants as c  # type: ignore[attr-defined]

        negate = False
        plain: list[str] = []
        negated: list[str] = []  # \D, \W, \S: each its own negated class
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                plain.append(_char(av))
            elif op is c.RANGE:
                plain.append(f"{_char(av[0])}-{_char(av[1])}")
            elif op is c.CATEGORY:
                name = str(av).removeprefix("CATEGORY_")
                body = _CATEGORIES[name.removeprefix("NOT_")][1 if flags & re.ASCII else 0]
                (negated if name.startswith("NOT_") else plain).append(body)
            else:  # pragma: no cover - bytes patterns only
                raise Untranslatable(str(op).lower())
        categories = any(op is c.CATEGORY for op, _ in items)
        if flags & self.scoped_ascii and (negated or (negate and categories)):
            # Python 3.11 reads \W, \D, \S, and the categories of a negated class, as
            # Unicode inside (?a:...) unless the whole pattern is ASCII: (?a:\W) does
            # not match "é", (?a)\W does. Its own engine decides such a rule.
            raise Untranslatable("a negated category inside a scoped (?a:...)")
        if not negated:
            if not plain:
                return "[^\\x{0}-\\x{10ffff}]" if not negate else "(?s:.)"
            return ("[^" if negate else "[") + "".join(plain) + "]"
        if negate:
            raise Untranslatable("a negated class holding \\W, \\D or \\S")
        parts = [f"[^{body}]" for body in negated]
        if plain:
            parts.append("[" + "".join(plain) + "]")
        return "(?:" + "|".join(parts) + ")"


def _folded(text: str, fold: bool) -> str:
    return f"(?i:{text})" if fold else text


_WHAT = {
    "ASSERT": "a look-around",
    "ASSERT_NOT": "a look-around",
    "GROUPREF": "a back-reference",
    "GROUPREF_EXISTS": "a conditional group",
    "POSSESSIVE_REPEAT": "a possessive quantifier",
    "ATOMIC_GROUP": "an atomic group",
}


def required_text(tree: Any) -> str | None:
    """The longest run of plain characters every match of `tree` contains, or None:
    consecutive literals at the top of the pattern, without IGNORECASE. A text without
    it cannot match, and a check skips the pattern for the cost of a substring test
    (most tool calls hold none of the rules' command names)."""
    from re import _constants as c  # type: ignore[attr-defined]

    if tree.state.flags & re.IGNORECASE:
        return None
    best, run = "", ""
    for op, av in tree:
        if op is c.LITERAL:
            run += chr(av)
            best = max(best, run, key=len)
        else:
            run = ""
    return best or None

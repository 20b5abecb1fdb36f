"""Regex rules: which engine runs a pattern, and compiling many patterns fast.

A pattern is Python `re` syntax. Python's engine backtracks, so a pattern that nests
repetitions (``(a+)+$``) or repeats an alternation (``(a|ab)*c``) can take exponential
time on a short input and stall every tool call. Such patterns are found by walking
their parse tree (`unbounded_backtracking`) and run on RE2 (google-re2), whose time is
linear in the input; a pattern RE2 cannot run (look-arounds, back-references) is refused
when the rule is added. Every other pattern runs on Python's engine.

Compiling is most of what a check costs: about 90 µs a pattern, 9 ms for 100 rules,
against a budget of about one interpreter start-up. So the compiled programs of the
patterns Python's engine runs are kept by `voyager_brain.regexcache` and rebuilt in a few
µs each.

Standard library only, but RE2 when a rule needs it.
"""

from __future__ import annotations

import re

from .. import regexcache
from ..errors import RuleError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Matcher(Protocol):
        def search(self, text: str) -> object: ...


#: The regexcache group of the rules' programs.
GROUP = "guard"
#: The engines a pattern can run on.
PYTHON, RE2 = "re", "re2"


def _walk(items: Any, repeated: bool) -> str | None:
    """What in `items` can backtrack without bound, or None. `repeated`: the items sit
    inside an unbounded repetition, so any choice in them is tried again and again."""
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        found = None
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            high, body = av[1], av[2]
            if high > 1 and repeated:
                return "a repetition inside a repetition"
            if high == c.MAXREPEAT:
                found = _walk(body, True)
            elif high > 1 and _walk(body, True) is not None:
                # (a+){2,30}: a bounded repetition of an unbounded one is as bad.
                return "a repetition inside a repetition"
            else:
                found = _walk(body, repeated)
        elif op == c.BRANCH:
            if repeated:
                return "an alternation inside a repetition"
            found = next((f for b in av[1] if (f := _walk(b, repeated))), None)
        elif op == c.SUBPATTERN:
            found = _walk(av[-1], repeated)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            found = _walk(av[1], repeated)
        elif op == c.ATOMIC_GROUP:
            found = _walk(av, repeated)
        elif op == c.GROUPREF_EXISTS:
            found = next((f for b in av[1:] if b is not None and (f := _walk(b, repeated))), None)
        if found:
            return found
    return None


def parse(pattern: str) -> Any:
    """The parse tree of `pattern`; `RuleError` naming the position when it is invalid."""
    from re import _parser  # type: ignore[attr-defined]

    try:
        return _parser.parse(pattern, 0)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise RuleError(f"invalid regex {pattern!r}: {exc.msg}{where}") from None
    except (RecursionError, OverflowError, ValueError) as exc:
        raise RuleError(f"invalid regex {pattern!r}: {exc}") from None


def unbounded_backtracking(pattern: str) -> str | None:
    """Why Python's engine could backtrack without bound on `pattern`, or None."""
    return _walk(parse(pattern), False)


def _re2() -> Any:
    import re2  # type: ignore[import-untyped, unused-ignore]

    return re2


def _re2_compile(pattern: str) -> Any:
    re2 = _re2()
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own complaint on stderr
    return re2.compile(pattern, options)


def engine_for(pattern: str) -> str:
    """The engine that runs `pattern` (`PYTHON` or `RE2`). Raises `RuleError` for an
    invalid pattern, or one that could stall Python's engine and that RE2 cannot run."""
    why = unbounded_backtracking(pattern)
    if why is None:
        try:
            re.compile(pattern)
        except re.error as exc:  # parse() accepts a few things compile refuses
            raise RuleError(f"invalid regex {pattern!r}: {exc}") from None
        return PYTHON
    try:
        _re2_compile(pattern)
    except ImportError:
        problem = "and the google-re2 package that runs such patterns is not installed"
    except Exception as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        problem = f"and the linear-time engine cannot run it ({detail})"
    else:
        return RE2
    raise RuleError(
        f"regex {pattern!r} could take exponential time: it has {why}, {problem}; "
        "rewrite it without nesting (e.g. 'a+$' for '(a+)+$')"
    )


# -- compiling for a check -------------------------------------------------------------


class Compiler:
    """Compiles the patterns of one check. A pattern whose program is in the cache of
    `voyager_brain.regexcache` was found safe for Python's engine before and is rebuilt
    from it; any other is checked (`engine_for`) first. Patterns that cannot run are
    reported in `errors` (pattern -> message); `save` keeps what was learnt."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def compile(self, pattern: str) -> Matcher | None:
        if regexcache.known(pattern, group=GROUP):
            try:
                return regexcache.compile(pattern, group=GROUP, save=False)
            except re.error:
                pass
        try:
            if engine_for(pattern) == RE2:
                matcher: Matcher = _re2_compile(pattern)
                return matcher
            return regexcache.compile(pattern, group=GROUP, save=False)
        except (RuleError, ImportError, re.error) as exc:
            self.errors[pattern] = str(exc)
            return None

    def save(self) -> None:
        regexcache.save_cache(GROUP)

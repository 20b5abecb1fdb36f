"""Regex rules: which engine runs a pattern, in bounded time, and compiling them fast.

A pattern is Python `re` syntax, but Python's engine backtracks: nested repetitions
(``(a+)+$``), quantifiers in a row (``\\s*\\s*\\s*;``), even one quantifier under
``search`` (``\\s+;`` on megabytes of spaces) can take minutes on an input an attacker
chooses, and a hook that stalls stalls the agent. So every pattern that can be written
in RE2's syntax with the same meaning (`re2syntax.translate`) runs on RE2 (google-re2),
whose time is linear in the input. The others (look-arounds, back-references, ...) run
on Python's engine with a clock (`LIMITED`): at most `TIME_LIMIT` seconds a rule and
`CHECK_LIMIT` for all of them in one check. A rule that runs over counts as matched
(`OVER_LIMIT`): a block rule still blocks, and no input can buy an allow by being slow
to match. An invalid pattern is refused with the reason.

Working out a pattern's engine means parsing it (about 50 µs); the answer is kept by
`voyager_brain.regexcache` (`GROUP`), so a hook only compiles RE2 programs
(about 10 µs each). google-re2 is imported when a regex rule applies to the call.
"""

from __future__ import annotations

import time

from .. import regexcache
from ..errors import RuleError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The regexcache group of each pattern's plan (engine, RE2 pattern, why). Its number
#: changes with what `re2syntax` writes, so that no plan of an older build is reused.
GROUP = "guard-re2-3"
#: The engines a pattern can run on: RE2, or Python's engine with a time limit.
RE2, LIMITED = "re2", "re"
#: Seconds one rule may spend on Python's engine in one check, and all of them together.
#: Their sum, with the process start, fits well inside the hook timeouts `install`
#: writes (integrations/install.py: `HOOK_TIMEOUTS`).
TIME_LIMIT = 0.5
CHECK_LIMIT = 1.0
#: What a rule that ran over its time counts as.
OVER_LIMIT = "matched"


def parse(pattern: str) -> Any:
    """The parse tree of `pattern`; `RuleError` naming the position when it is invalid."""
    import re
    from re import _parser  # type: ignore[attr-defined]

    try:
        return _parser.parse(pattern, 0)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise RuleError(f"invalid regex {pattern!r}: {exc.msg}{where}") from None
    except (RecursionError, OverflowError, ValueError) as exc:
        raise RuleError(f"invalid regex {pattern!r}: {exc}") from None


def _re2_compile(pattern: str) -> Any:
    """RE2's program of a pattern in RE2's syntax; ImportError, or RE2's error."""
    import re2  # type: ignore[import-untyped, unused-ignore]

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own complaint on stderr
    regexp = re2._re2.RE2(pattern.encode("utf-8"), options)
    if not regexp.ok():
        raise re2.error(regexp.error())
    return regexp


def plan(pattern: str) -> tuple[str, str | None, str | None, str | None, str | None]:
    """How `pattern` runs: (engine, its RE2 pattern or None, its loose RE2 form when
    Python's engine decides non-ASCII texts (``\\b``), why it is not RE2 or None, the
    text every match holds or None). Raises `RuleError` for an invalid pattern."""
    import re

    from .re2syntax import Untranslatable, required_text, translate

    tree = parse(pattern)
    try:
        re.compile(pattern)
    except re.error as exc:  # parse() accepts a few things compile refuses
        raise RuleError(f"invalid regex {pattern!r}: {exc}") from None
    try:
        translation = translate(tree)
    except Untranslatable as exc:
        return (LIMITED, None, None, f"it has {exc}", required_text(tree))
    try:
        _re2_compile(translation.pattern)
    except ImportError:
        why = "the google-re2 package is not installed"
        return (LIMITED, None, None, why, required_text(tree))
    except Exception as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return (LIMITED, None, None, f"RE2 cannot run it ({detail})", required_text(tree))
    return (RE2, translation.pattern, translation.loose, None, required_text(tree))


def engine_for(pattern: str) -> str:
    """The engine that runs `pattern` (`RE2` or `LIMITED`). Raises `RuleError` for an
    invalid pattern, or one no engine here can run. The plan is kept for the checks to
    come (written by `save_plans`): the first tool call after a rule is added finds it
    worked out, and does not import `re` to parse it."""
    found = plan(pattern)
    regexcache.remember(pattern, found, group=GROUP)
    return found[0]


def save_plans() -> None:
    """Write the plans worked out in this process (once, after a batch of rules)."""
    regexcache.save_cache(GROUP)


def note(pattern: str) -> str | None:
    """What a user is told about a valid pattern that runs on Python's engine: why, its
    time limit and what happens over it. None for a pattern RE2 runs."""
    engine, _, _, why, _ = plan(pattern)
    if engine == RE2:
        return None
    return (
        f"regex {pattern!r} runs on Python's engine ({why}), at most {TIME_LIMIT:g} s a "
        f"check; over that the rule counts as {OVER_LIMIT}"
    )


def timed_notes(rules: Any) -> list[str]:
    """One line per active regex rule among `rules` that runs on Python's engine under
    its time limit (`note`): what `rules add`, `rules sync`, `rules test` and `doctor`
    say about them."""
    lines = []
    for rule in rules:
        if rule.type != "regex" or not rule.pattern or not rule.active:
            continue
        try:
            said = note(rule.pattern)
        except RuleError:
            continue  # reported as a rule that cannot run, where it is checked
        if said is not None:
            lines.append(f"rule {rule.id}: {said}")
    return lines


# -- compiling and matching for a check -------------------------------------------------


class Matcher:
    """One rule's pattern as a check runs it: its RE2 pattern (None for Python's timed
    engine) and its loose form (`re2syntax.Translation`), each compiled when first
    needed, and the text every match holds (`needle`)."""

    __slots__ = ("loose", "needle", "pattern", "re2", "why")

    def __init__(
        self, pattern: str, re2: Any, loose: Any, why: str | None, needle: str | None = None
    ) -> None:
        self.pattern = pattern
        self.re2 = re2
        self.loose = loose
        self.why = why
        self.needle = needle

    def search(self, text: str) -> bool:
        """Whether the pattern is found in `text`, without a time limit (tests and tools;
        a check goes through `Compiler.search`)."""
        compiler = Compiler()
        return compiler.search(self, [text]) is not False


class Compiler:
    """Compiles and matches the patterns of one check. A pattern's plan comes from the
    cache of `voyager_brain.regexcache` when it was worked out before. Patterns that
    cannot run are reported in `errors` (pattern -> message); `save` keeps what was
    learnt. The time spent on Python's engine is counted against `CHECK_LIMIT`."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}
        self.spent = 0.0
        self._utf8: dict[int, tuple[str, bytes]] = {}

    def compile(self, pattern: str) -> Matcher | None:
        found = regexcache.lookup(pattern, group=GROUP)
        for again in (False, True):
            try:
                if again or not _usable(found):
                    found = plan(pattern)  # not known, or a plan this build cannot use
                    regexcache.remember(pattern, found, group=GROUP)
                engine, translated, loose, why, needle = found
                if engine == RE2:
                    # Compiled now only if the plan is this call's (checked by RE2).
                    program = _re2_compile(translated) if again else translated
                    return Matcher(pattern, program, loose, None, needle)
                return Matcher(pattern, None, None, why, needle)
            except RuleError as exc:  # invalid: no engine can run it
                self.errors[pattern] = str(exc)
                return None
            except Exception as exc:  # RE2 refused a cached plan, or is not installed
                if again:
                    self.errors[pattern] = f"regex {pattern!r}: {exc}"
        return None

    def search(self, matcher: Matcher, texts: list[str]) -> bool | str:
        """Whether `matcher` finds its pattern in any of `texts`: True, False, or (over
        its time limit) the reasoning of a rule that counts as matched."""
        if matcher.needle is not None and not any(matcher.needle in t for t in texts):
            return False  # what every match holds is in no text: no RE2, no engine
        if isinstance(matcher.re2, str):
            self._ready(matcher)
        slow: list[str] = []
        if matcher.re2 is not None:
            for text in texts:
                if matcher.loose is None or (text and text.isascii()):
                    if self._re2_search(matcher.re2, text):
                        return True
                    continue
                # \b in Unicode, \B: Python's engine decides where the loose form is found.
                if isinstance(matcher.loose, str):
                    matcher.loose = _re2_compile(matcher.loose)
                if self._re2_search(matcher.loose, text):
                    slow.append(text)
            if not slow:
                return False
        else:
            slow = texts
        return self._limited_search(matcher, slow)

    def _ready(self, matcher: Matcher) -> None:
        """Compile the RE2 pattern of a cached plan; one RE2 refuses (a file of another
        build) is worked out again (`plan`), never skipped."""
        try:
            matcher.re2 = _re2_compile(matcher.re2)
        except Exception:
            found = plan(matcher.pattern)
            regexcache.remember(matcher.pattern, found, group=GROUP)
            _, translated, matcher.loose, matcher.why, matcher.needle = found
            matcher.re2 = _re2_compile(translated) if translated is not None else None

    def _re2_search(self, regexp: Any, text: str) -> bool:
        import re2  # type: ignore[import-untyped, unused-ignore]

        held = self._utf8.get(id(text))
        if held is None or held[0] is not text:
            held = self._utf8[id(text)] = (text, _utf8(text))
        data = held[1]
        span = regexp.Match(re2._re2.RE2.Anchor.UNANCHORED, data, 0, len(data))[0]
        return bool(span[0] != -1)

    def _limited_search(self, matcher: Matcher, texts: list[str]) -> bool | str:
        limit = min(TIME_LIMIT, CHECK_LIMIT - self.spent)
        start = time.monotonic()
        try:
            found = _timed_search(matcher.pattern, texts, limit) if limit > 0 else None
        finally:
            self.spent += time.monotonic() - start
        if found is not None:
            return found
        if limit < TIME_LIMIT:
            return (
                f"counted as {OVER_LIMIT}: the check's {CHECK_LIMIT:g} s for patterns on "
                "Python's engine ran out before this one was decided"
            )
        return (
            f"counted as {OVER_LIMIT}: its pattern ran over its {TIME_LIMIT:g} s on Python's engine"
        )

    def save(self) -> None:
        save_plans()


def _usable(found: Any) -> bool:
    """Whether a cached plan has the shape `plan` gives (a file of another build may
    not)."""
    return (
        isinstance(found, tuple)
        and len(found) == 5
        and found[0] in (RE2, LIMITED)
        and all(part is None or isinstance(part, str) for part in found[1:])
    )


def _utf8(text: str) -> bytes:
    """`text` as RE2 reads it. A lone surrogate (not UTF-8) becomes U+FFFD, which every
    pattern RE2 runs treats as Python's engine treats the surrogate: an unknown char."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        wide = text.encode("utf-16-le", "surrogatepass")
        return wide.decode("utf-16-le", "replace").encode("utf-8")


class _OverLimit(Exception):
    pass


def _over_limit(signum: int, frame: Any) -> None:
    raise _OverLimit


def _timed_search(pattern: str, texts: list[str], limit: float) -> bool | None:
    """Whether Python's engine finds `pattern` in any of `texts` within `limit` seconds;
    None when it does not finish. The engine checks for signals as it backtracks, so an
    interval timer stops it (the main thread, where a hook and the command line run);
    elsewhere (the MCP server's worker threads, or no `setitimer`) the search runs in a
    child process, killed at the limit."""
    import re
    import signal

    try:
        previous = signal.signal(signal.SIGALRM, _over_limit)
    except (ValueError, AttributeError):  # not the main thread; no SIGALRM here
        return _search_in_child(pattern, texts, limit)
    try:
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            compiled = re.compile(pattern)
            return any(compiled.search(text) for text in texts)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OverLimit:
        return None
    finally:
        signal.signal(signal.SIGALRM, previous)


#: The child of `_search_in_child`: reads [pattern, texts] as JSON, prints 1 or 0.
_CHILD = (
    "import json, re, sys; p, t = json.load(sys.stdin); "
    "c = re.compile(p); print(1 if any(c.search(x) for x in t) else 0)"
)


def _search_in_child(pattern: str, texts: list[str], limit: float) -> bool | None:
    import json
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _CHILD],
            input=json.dumps([pattern, texts]),  # ASCII: a lone surrogate travels escaped
            capture_output=True,
            text=True,
            timeout=limit + 0.2,  # the child's own start-up
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0 or done.stdout.strip() not in ("0", "1"):
        return None  # a child that failed decided nothing: counted as over its limit
    return done.stdout.strip() == "1"

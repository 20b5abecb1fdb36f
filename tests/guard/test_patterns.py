"""Every pattern runs in bounded time: the patterns that stalled the check for minutes,
RE2's translation meaning what Python's engine means, and the time limit of the patterns
only Python's engine can run (issue 26)."""

from __future__ import annotations

import re
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voyager_brain.guard import patterns
from voyager_brain.guard.check import evaluate
from voyager_brain.guard.rules import Rule

#: Generous for a loaded machine: each of these took 30 to 90+ s before.
BOUND = 2.0


def rule(id: int, pattern: str, action: str = "block") -> Rule:
    values: dict[str, object] = {c: None for c in Rule._fields}
    values.update(id=id, type="regex", pattern=pattern, description=f"rule {id}")
    values.update(action=action, active=1, priority=0)
    return Rule(**values)  # type: ignore[arg-type]


# -- the attacks: patterns that stalled the hook -----------------------------------------

SLOW = [
    # (pattern, the character it stalls on, whether that input matches)
    (r"a*a*a*a*a*a*a*a*c", "a", False),
    (r".*.*.*.*.*=z", "=", False),
    (r"\s*\s*\s*\s*\s*\s*\s*;", " ", False),
    (r"(?:a?){30}a{30}", "a", True),
    (r"\s+;", " ", False),  # one quantifier, quadratic under search
]


@pytest.mark.parametrize("size", [400, 100_000, 1_000_000])
@pytest.mark.parametrize(("pattern", "char", "matches"), SLOW, ids=[s[0] for s in SLOW])
def test_a_pattern_that_stalled_the_check_decides_within_the_bound(
    pattern: str, char: str, matches: bool, size: int
) -> None:
    start = time.monotonic()
    decision = evaluate([rule(1, pattern)], "Bash", {"command": char * size})
    assert time.monotonic() - start < BOUND
    assert decision.action == ("block" if matches else "allow")
    assert decision.problems == ()
    assert patterns.engine_for(pattern) == patterns.RE2


def test_the_rule_still_matches_what_it_is_for() -> None:
    assert evaluate([rule(1, r"\s*\s*\s*\s*\s*\s*\s*;")], "Bash", {"command": "a ;"}).action == (
        "block"
    )
    assert evaluate([rule(1, r"a*a*a*a*a*a*a*a*c")], "Bash", {"command": "aac"}).action == "block"
    assert evaluate([rule(1, r".*.*.*.*.*=z")], "Bash", {"command": "x=z"}).action == "block"


@pytest.mark.parametrize("size", [400, 100_000, 1_000_000])
def test_a_look_around_over_its_time_limit_counts_as_matched(size: int) -> None:
    pattern = r"(?=a*a*a*a*a*a*a*c)"
    start = time.monotonic()
    decision = evaluate([rule(1, pattern)], "Bash", {"command": "a" * size})
    assert time.monotonic() - start < BOUND
    assert decision.action == "block"  # an input slow to match buys no allow
    (match,) = decision.matches
    assert match.reasoning is not None and "counted as matched" in match.reasoning
    assert decision.problems == (f"rule 1 {match.reasoning}",)  # said on stderr by hooks
    assert patterns.engine_for(pattern) == patterns.LIMITED


def test_a_back_reference_over_its_time_limit_counts_as_matched_for_its_action() -> None:
    decision = evaluate([rule(1, r"(\w+)\1", "warn")], "Bash", {"command": "ab" * 50_000})
    assert decision.action == "warn"
    assert "ran over its 0.5 s" in (decision.matches[0].reasoning or "")


def test_every_slow_rule_together_stays_within_the_checks_limit() -> None:
    rules = [rule(n, r"(?=a*a*a*a*a*a*a*c)a{0," + str(n) + "}") for n in range(1, 6)]
    start = time.monotonic()
    decision = evaluate(rules, "Bash", {"command": "a" * 400})
    assert time.monotonic() - start < patterns.CHECK_LIMIT + 1.0
    assert [m.rule.id for m in decision.matches] == [1, 2, 3, 4, 5]
    assert "ran out before this one was decided" in (decision.matches[-1].reasoning or "")


def test_a_quick_look_around_decides_by_its_match() -> None:
    rules = [rule(1, r"git push(?!.*--dry-run)")]
    assert evaluate(rules, "Bash", {"command": "git push origin"}).action == "block"
    assert evaluate(rules, "Bash", {"command": "git push --dry-run"}).action == "allow"


def test_a_lone_surrogate_is_matched_on_re2_not_an_error() -> None:
    decision = evaluate([rule(1, r"\bpip install\b")], "Bash", {"command": "pip install \ud800"})
    assert decision.action == "block" and decision.problems == ()
    assert evaluate([rule(1, "x.y")], "Bash", {"command": "x\udfffy"}).action == "block"


# -- engines and messages ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"a(?=b)", "a look-around"),
        (r"(?<!x)a", "a look-around"),
        (r"(a)\1", "a back-reference"),
        (r"(?P<q>a)(?P=q)", "a back-reference"),
        (r"a*+b", "a possessive quantifier"),
        (r"(?>a|ab)c", "an atomic group"),
        (r"a$b|c", "'$' before the end of the pattern"),
        (r"(?ai)k", "ASCII case folding"),
        (r"a{1001}", "a count above 1000"),
    ],
)
def test_what_re2_cannot_mean_runs_with_a_time_limit_and_says_why(pattern: str, why: str) -> None:
    assert patterns.engine_for(pattern) == patterns.LIMITED
    note = patterns.note(pattern)
    assert note is not None and f"it has {why}" in note
    assert "at most 0.5 s a check; over that the rule counts as matched" in note


def test_python_syntax_that_re2_spells_otherwise_runs_on_re2() -> None:
    for pattern in (r"end\Z", r"(?P<name>x)", r"foo$", r"(?i)rm\s+-rf", r"\d+\w*\s"):
        assert patterns.engine_for(pattern) == patterns.RE2, pattern
        assert patterns.note(pattern) is None
    assert evaluate([rule(1, r"end\Z")], "Bash", {"command": "the end"}).action == "block"
    assert evaluate([rule(1, "foo$")], "Bash", {"command": "foo\n"}).action == "block"
    assert evaluate([rule(1, "foo$")], "Bash", {"command": "foo\n\n"}).action == "allow"


def test_off_the_main_thread_the_timed_engine_runs_in_a_child_killed_at_the_limit() -> None:
    """The MCP server checks calls on worker threads, where no interval timer can be
    set: the same decisions, the same bound."""
    from concurrent.futures import ThreadPoolExecutor

    slow = [rule(1, r"(?=a*a*a*a*a*a*a*c)")]
    quick = [rule(2, r"git push(?!.*--dry-run)")]
    with ThreadPoolExecutor(1) as pool:
        start = time.monotonic()
        over = pool.submit(evaluate, slow, "Bash", {"command": "a" * 400}).result()
        assert time.monotonic() - start < BOUND
        pushed = pool.submit(evaluate, quick, "Bash", {"command": "git push \ud800"}).result()
        dry = pool.submit(evaluate, quick, "Bash", {"command": "git push --dry-run"}).result()
    assert over.action == "block" and "counted as matched" in (over.matches[0].reasoning or "")
    assert pushed.action == "block" and pushed.matches[0].reasoning is None
    assert dry.action == "allow"


# -- RE2 means what Python's engine means ------------------------------------------------


def test_unicode_classes_are_pythons_for_every_character_python_knows() -> None:
    import re2  # type: ignore[import-untyped, unused-ignore]

    from voyager_brain.guard.re2syntax import translate

    known = "".join(
        chr(n)
        for n in range(0x110000)
        if not 0xD800 <= n <= 0xDFFF and unicodedata.category(chr(n)) != "Cn"
    )
    for python in (r"\w", r"\d", r"\s", r"\W", r"\D", r"\S", r"[\s\d]", r"(?a)\w", r"(?a)\s"):
        ours = re2.compile(translate(patterns.parse(python)).pattern)
        assert ours.findall(known) == re.findall(python, known), python


ATOMS = [
    *("a", "b", "K", "é", "\\n", " ", "-", ".", "\\v", "\\x1c", "[ab]", "[^a]", "[a-c]"),
    *(r"\d", r"\w", r"\s", r"\W", r"\D", r"\S", r"[\s-]", r"[\Wa]", r"[^\W\d]"),
    *("^", "$", r"\b", r"\B", r"\A", r"\Z"),
    # only Python's engine, timed: these check that the timing changes nothing
    *("(?=a)", "(?!b)", "(?<=a)", "(?P<n>a)(?P=n)", "a*+", "(?>a|ab)"),
]
SUFFIXES = ["*", "+", "?", "{2}", "{1,3}", "*?", "+?", "{0,2}?"]


def _pattern(depth: int) -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)
    if depth == 0:
        return atom
    sub = _pattern(depth - 1)
    return st.one_of(
        atom,
        st.lists(sub, min_size=1, max_size=3).map("".join),
        st.tuples(sub, sub).map(lambda t: f"(?:{t[0]}|{t[1]})"),
        st.tuples(sub, st.sampled_from(SUFFIXES)).map(lambda t: f"(?:{t[0]}){t[1]}"),
        sub.map(lambda s: f"({s})"),
        st.tuples(st.sampled_from(["i", "s", "m", "-i", "a", "x"]), sub).map(
            lambda t: f"(?{t[0]}:{t[1]})"
        ),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.tuples(st.sampled_from(["", "(?i)", "(?m)", "(?s)", "(?a)", "(?ms)"]), _pattern(3)).map(
        "".join
    ),
    st.text(alphabet="aAbKk é٣_\n\t\v\x1c-\xa0\u212a", max_size=12),
)
def test_a_rule_decides_as_pythons_engine_would(pattern: str, text: str) -> None:
    """Moving rules to RE2 changes no decision: for patterns of a small grammar, the
    check finds a pattern exactly where `re.search` does."""
    try:
        expected = re.search(pattern, text) is not None
    except re.error:
        return  # e.g. a flag Python refuses in that place
    compiler = patterns.Compiler()
    matcher = compiler.compile(pattern)
    assert matcher is not None, compiler.errors
    assert compiler.search(matcher, [text]) is expected

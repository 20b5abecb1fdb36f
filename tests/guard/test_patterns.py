"""Every pattern runs in bounded time: the patterns that stalled the check for minutes,
RE2's translation meaning what Python's engine means, and the time limit of the patterns
only Python's engine can run (issue 26)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from conftest import git, run_cli
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
    decision = evaluate([rule(1, r"(\w+)\1;", "warn")], "Bash", {"command": "a" * 100_000 + "b;"})
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


def test_a_word_boundary_in_non_ascii_text_is_ruled_out_by_re2_first() -> None:
    """RE2's \\b knows ASCII words only, so Python's engine decides a text that is not
    ASCII, but only where RE2 finds the pattern without its \\b and \\B: a slow input
    that cannot match never reaches the time limit (and never counts as matched)."""
    rules = [rule(1, r"\s+\B\s*;")]
    start = time.monotonic()
    decision = evaluate(rules, "Bash", {"command": "é" + " " * 100_000})
    assert time.monotonic() - start < BOUND
    assert decision.action == "allow" and decision.problems == ()
    assert evaluate(rules, "Bash", {"command": "é" + " " * 100_000 + ";"}).action == "block"
    assert evaluate([rule(2, r"\bé\b")], "Bash", {"command": "café"}).action == "allow"
    assert evaluate([rule(2, r"\bé\b")], "Bash", {"command": "à é"}).action == "block"


def test_a_call_holding_no_rules_literal_text_needs_no_engine() -> None:
    """Every match of `\\brm\\s+-rf` holds "rm": a call without it is decided by a
    substring test, without importing or compiling RE2 once the plans are cached (the
    common case: most calls hold none of the rules' command names)."""
    code = (
        "import sys\n"
        "from voyager_brain.guard.check import evaluate\n"
        "from voyager_brain.guard.rules import Rule\n"
        "def rule(id, pattern, action='block'):\n"
        "    values = dict.fromkeys(Rule._fields)\n"
        "    values.update(id=id, type='regex', pattern=pattern, action=action, active=1,\n"
        "                  priority=0)\n"
        "    return Rule(**values)\n"
        "rules = [rule(1, r'\\brm\\s+-rf'), rule(2, r'curl.*\\|\\s*sh', 'warn')]\n"
        "quiet = evaluate(rules, 'Bash', {'command': 'ls -la src'}).action\n"
        "print(quiet, 're2' in sys.modules)\n"
        "print(evaluate(rules, 'Bash', {'command': 'rm  -rf x'}).action, 're2' in sys.modules)\n"
    )

    def run() -> str:
        argv = [sys.executable, "-c", code]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    run()  # the first check works out each plan (RE2 checks it) and keeps it in the cache
    assert run() == "allow False\nblock True\n"


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


def test_a_cached_plan_this_build_cannot_use_is_worked_out_again() -> None:
    """A cache file is only a speed-up: a foreign or broken entry never skips a rule."""
    from voyager_brain import regexcache

    regexcache.remember("pip", ("re2", "(unclosed", None, None, None), group=patterns.GROUP)
    regexcache.remember("rm -rf", "not a plan", group=patterns.GROUP)
    rules = [rule(1, "pip"), rule(2, "rm -rf", "warn")]
    decision = evaluate(rules, "Bash", {"command": "pip install x; rm -rf /"})
    assert [m.rule.id for m in decision.matches] == [1, 2] and decision.problems == ()
    assert regexcache.lookup("pip", group=patterns.GROUP)[1] == "pip"


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


@pytest.mark.parametrize(
    "category",
    [r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", r"[a\W]", r"[^a\w]", r"[^\W]", r"[\W\d]"],
)
@pytest.mark.parametrize("form", ["(?a:{})", "(((?a:{})))", "(?a:x|{})", "(?a){}"])
def test_a_scoped_ascii_flag_means_what_it_means_to_python(form: str, category: str) -> None:
    """Found by the property above: Python 3.11 reads \\W, \\D, \\S and the
    categories of a negated class as Unicode inside (?a:...), unless the whole pattern is
    ASCII: (?a:\\W) does not match "é", (?a)\\W does."""
    pattern = form.format(category)
    compiler = patterns.Compiler()
    matcher = compiler.compile(pattern)
    assert matcher is not None, compiler.errors
    for text in ("é", "٣", "\xa0", "a", "K", "\u212a", "1", " ", "_", "\x1c", ""):
        assert compiler.search(matcher, [text]) is (re.search(pattern, text) is not None), text


# -- a cloned repository, the command line and doctor ------------------------------------

RULES_TOML = """\
[[rules]]
description = "no bare semicolons"
pattern = '\\s*\\s*\\s*\\s*\\s*\\s*\\s*;'
tool = "Bash"

[[rules]]
description = "push only with --dry-run"
pattern = 'git push(?!.*--dry-run)'
tool = "Bash"
action = "warn"
"""


def cloned(repo: Path) -> Path:
    """A repository as cloned: its tracked .voyager/rules.toml holds the `\\s*` rule."""
    (repo / ".voyager").mkdir(exist_ok=True)
    (repo / ".voyager" / "rules.toml").write_text(RULES_TOML)
    git(repo, "add", ".voyager/rules.toml")
    git(repo, "commit", "-q", "-m", "team rules")
    return repo


def pre_tool_use(repo: Path, command: str) -> tuple[subprocess.CompletedProcess[str], float]:
    payload = {
        "session_id": "s1",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": f"t{len(command)}",
    }
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", "pre-tool-use"],
        input=json.dumps(payload),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,  # the stall this replaces lasted past 90 s
    )
    return done, time.monotonic() - start


@pytest.mark.parametrize("spaces", [400, 100_000])
def test_a_cloned_repos_slow_rule_no_longer_stalls_the_hook(repo: Path, spaces: int) -> None:
    cloned(repo)
    done, took = pre_tool_use(repo, "echo" + " " * spaces + "x")
    assert done.returncode == 0 and took < 10  # the hook timeout install writes
    assert done.stdout == "" and "Traceback" not in done.stderr
    blocked, took = pre_tool_use(repo, "echo" + " " * spaces + ";")
    assert took < 10 and json.loads(blocked.stdout)["hookSpecificOutput"]["permissionDecision"] == (
        "deny"
    )


def test_doctor_names_the_rule_that_runs_with_a_time_limit(repo: Path) -> None:
    cloned(repo)
    out = run_cli("doctor", cwd=repo).stdout
    assert "ok    .voyager/rules.toml loads cleanly" in out
    timed = [line for line in out.splitlines() if "runs on Python's engine" in line]
    assert len(timed) == 1  # the look-around; the \s* rule runs on RE2
    assert timed[0].startswith("warn  rule ") and "(it has a look-around)" in timed[0]
    assert "over that the rule counts as matched" in timed[0]


def test_rules_add_accepts_each_slow_pattern_and_says_which_are_timed(repo: Path) -> None:
    quick = run_cli(
        "rules", "add", "--pattern", r"a*a*a*a*a*a*a*a*c", "--description", "x", cwd=repo
    )
    assert quick.returncode == 0 and quick.stderr == ""
    timed = run_cli(
        "rules", "add", "--pattern", r"(?=a*a*a*a*a*a*a*c)", "--description", "y", cwd=repo
    )
    assert timed.returncode == 0
    assert timed.stderr == (
        f"voyager-brain: rule {timed.stdout.strip()}: regex '(?=a*a*a*a*a*a*a*c)' runs on "
        "Python's engine (it has a look-around), at most 0.5 s a check; over that the rule "
        "counts as matched\n"
    )
    bad = run_cli("rules", "add", "--pattern", "pip(install", "--description", "z", cwd=repo)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "unterminated subpattern at position 3" in bad.stderr


def test_rules_test_says_a_timed_rule_counted_as_matched(repo: Path) -> None:
    cloned(repo)
    done = run_cli(
        "rules",
        "test",
        "--tool",
        "Bash",
        "--input",
        json.dumps({"command": "git push " + "a" * 400}),
        cwd=repo,
    )
    assert done.returncode == 0 and done.stdout.startswith("decision: warn")
    assert "runs on Python's engine (it has a look-around)" in done.stderr
    rule = run_cli(
        "rules", "add", "--pattern", r"(?=a*a*a*a*a*a*a*c)", "--description", "slow", cwd=repo
    )
    start = time.monotonic()
    over = run_cli(
        "rules", "test", "--tool", "Bash", "--input", json.dumps({"command": "a" * 400}), cwd=repo
    )
    assert time.monotonic() - start < 10
    assert over.stdout.startswith("decision: block")
    assert f"rule {rule.stdout.strip()} counted as matched: its pattern ran over" in over.stderr

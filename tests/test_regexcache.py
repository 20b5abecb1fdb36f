"""Compiled regexes kept across processes: the same matches as re.compile, and a cache
file that is damaged or foreign is never trusted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain import regexcache

PATTERNS = [
    r"\bpip\s+install\b",
    r"(?i)pip",
    r"rm\s+-rf\s+(?P<where>/\S*)",
    r"\w+",
    r"^a.*b$",
    r"(?P<x>a)(?P=x)",
    r"(?m)^#.*$",
]
TEXTS = ["pip install x", "PIP INSTALL", "rm -rf /tmp", "é", "aab", "a\nb", "# x\ny", "", "aa"]


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    """Each test starts as a new process would: nothing read from the cache file yet."""
    regexcache._known.clear()
    regexcache._learnt.clear()


def test_a_new_process_rebuilds_the_same_patterns_from_the_cache() -> None:
    for p in PATTERNS:
        regexcache.compile(p, save=False)
    regexcache.compile("x", re.VERBOSE | re.DOTALL)
    code = (
        "import sys, json; from voyager_brain import regexcache as r\n"
        "pats = json.loads(sys.argv[1]); texts = json.loads(sys.argv[2])\n"
        "assert all(r.known(p) for p in pats), 'not cached'\n"
        "out = [[[m.span(), m.groups()] if (m := r.compile(p).search(t)) else None"
        " for t in texts] for p in pats]\n"
        "assert not r._learnt, 'compiled anew'\n"
        "print(json.dumps(out))"
    )
    import json

    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(PATTERNS), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout)
    expected = [
        [[list(m.span()), list(m.groups())] if (m := re.search(p, t)) else None for t in TEXTS]
        for p in PATTERNS
    ]
    assert found == expected


def test_groups_are_kept_apart() -> None:
    regexcache.compile("abc", group="guard")
    regexcache._known.clear()
    assert regexcache.known("abc", group="guard") and not regexcache.known("abc")


def test_flags_are_part_of_the_key() -> None:
    regexcache.compile("abc")
    assert regexcache.known("abc") and not regexcache.known("abc", re.IGNORECASE)
    assert regexcache.compile("abc", re.IGNORECASE).search("ABC")
    assert not regexcache.compile("abc").search("ABC")


def test_a_truncated_cache_file_is_ignored(isolated_env: Path) -> None:
    regexcache.compile("abc")
    path = Path(regexcache._cache_file("main"))
    path.write_bytes(path.read_bytes()[:-5])
    regexcache._known.clear()
    assert not regexcache.known("abc")
    assert regexcache.compile("abc").search("xabcx")


def test_a_program_the_engine_refuses_falls_back_to_re_compile() -> None:
    regexcache.compile("abc", save=False)
    programs = regexcache._known["main"]
    flags, code, groups, groupindex = programs[("abc", 0)]
    programs[("abc", 0)] = (flags, [999999] * len(code), groups, groupindex)
    assert regexcache.compile("abc").search("xabcx")


def test_an_invalid_pattern_raises_like_re_compile() -> None:
    with pytest.raises(re.error):
        regexcache.compile("a(b")


@given(st.from_regex(r"[a-c()|*+?.\\^$]{0,12}", fullmatch=True), st.text("abc\n", max_size=12))
def test_rebuilt_patterns_match_as_re_does(pattern: str, text: str) -> None:
    try:
        expected = re.compile(pattern)
    except re.error:
        return
    regexcache._known.clear()
    regexcache.compile(pattern, save=False)
    rebuilt = regexcache._rebuild(pattern, regexcache._known["main"][(pattern, 0)])
    m, e = rebuilt.search(text), expected.search(text)
    assert (m and (m.span(), m.groups())) == (e and (e.span(), e.groups()))


def test_a_remembered_value_is_kept_beside_the_programs() -> None:
    regexcache.compile("abc", group="plans", save=False)
    regexcache.remember("abc", ("re2", "abc", False, None), group="plans")
    regexcache.save_cache("plans")
    regexcache._known.clear()
    assert regexcache.lookup("abc", group="plans") == ("re2", "abc", False, None)
    assert regexcache.known("abc", group="plans")  # the program too, under its own key
    assert regexcache.compile("abc", group="plans").search("xabc")
    assert regexcache.lookup("abd", group="plans") is None

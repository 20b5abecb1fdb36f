"""untrusted: what an agent sends, made fit to match and to store. Property tests: the
deep reader gives the standard reader's values; scrubbing leaves text SQLite stores and
changes nothing else; `shallow` keeps every text."""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain import untrusted

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(alphabet=st.characters(codec="utf-8"))
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=30,
)
#: Text that may hold lone surrogates (any code point but the null character).
RAW_TEXT = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x10FFFF))


@given(JSON, st.sampled_from([None, 2, "\t"]))
def test_the_deep_reader_reads_what_the_standard_one_does(value: Any, indent: Any) -> None:
    text = json.dumps(value, indent=indent)
    assert untrusted._loads_deep(text) == json.loads(text)
    assert untrusted.loads(text) == json.loads(text)


@given(st.text(max_size=30))
def test_the_deep_reader_refuses_what_the_standard_one_refuses(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            untrusted._loads_deep(text)
    else:
        got = untrusted._loads_deep(text)
        assert got == expected or (isinstance(got, float) and math.isnan(got))


@pytest.mark.parametrize("levels", [1_000, 20_000])
def test_any_depth_is_read(levels: int) -> None:
    text = '{"a": [' * levels + '"rm -rf /"' + "]}" * levels
    value = untrusted.loads(text)
    assert untrusted.strings(value) == ["rm -rf /"]
    stored = json.dumps(untrusted.shallow(value))
    assert json.loads(stored)["a"][0]["a"][0] is not None and "rm -rf /" in stored


@given(RAW_TEXT)
def test_scrub_gives_text_sqlite_stores_and_changes_only_surrogates(text: str) -> None:
    clean = untrusted.scrub(text)
    clean.encode("utf-8")  # never raises
    assert len(clean) == len(text)
    for before, after in zip(text, clean, strict=True):
        assert after == before or (0xD800 <= ord(before) <= 0xDFFF and after == "\ufffd")
    db = sqlite3.connect(":memory:")
    assert db.execute("SELECT ?", (clean,)).fetchone()[0] == clean


def test_escaped_surrogates_are_scrubbed_and_pairs_kept() -> None:
    value = untrusted.loads('{"c\\ud800": ["pip install x \\udfff", "\\ud83d\\ude00"]}')
    assert value == {"c\ufffd": ["pip install x \ufffd", "\U0001f600"]}


@given(JSON)
def test_shallow_keeps_every_text(value: Any) -> None:
    kept = untrusted.shallow(value, depth=1)
    texts = untrusted._texts(value)
    assert sorted(untrusted._texts(kept)) == sorted(texts)
    assert untrusted.shallow(value, depth=100) == value


def test_decode_replaces_bytes_that_are_not_utf8() -> None:
    assert untrusted.decode(b"rm -rf / \xff\xc3") == "rm -rf / \ufffd\ufffd"


@pytest.mark.parametrize("deep", [False, True], ids=["flat", "deep"])
def test_an_integer_past_pythons_digit_limit_is_kept_as_its_text(deep: bool) -> None:
    # json.loads raises a plain ValueError (not a JSONDecodeError) for it: a hook that
    # let that through failed open, and the blocked command beside it ran.
    digits = "9" * 5000
    inner = f'{{"command": "rm -rf build", "n": {digits}, "small": -12}}'
    text = '{"a": ' * 2000 + inner + "}" * 2000 if deep else inner
    value = untrusted.loads(text)
    while deep and "a" in value:
        value = value["a"]
    assert value == {"command": "rm -rf build", "n": digits, "small": -12}

"""jsonfile: one reader for the JSON files voyager-brain keeps. Property tests: the
standard reader's values, and for any other text one JSONTextError (never another
exception); what is read is written back unchanged, lone surrogates included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from voyager_brain.jsonfile import JSONTextError, decode, dumps, loads

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=25,
)


@given(JSON, st.sampled_from([None, 2]))
def test_a_json_text_reads_as_the_standard_reader_reads_it(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert loads(text) == json.loads(text)


@given(st.binary(max_size=60))
@example(b"\xef\xbb\xbf{}")
@example(b'{"a": 1}\n{"b": 2}')
@example(b'{\n"a": ' + b"9" * 5000 + b"}")
@example(b"[" * 100_000)
def test_any_bytes_give_a_value_or_one_error(data: bytes) -> None:
    try:
        loads(data)
    except JSONTextError as exc:
        assert exc.detail and "\n" not in exc.detail
        assert exc.line is None or exc.line >= 1


def test_an_integer_too_long_names_its_line_and_size() -> None:
    text = '{\n  "version": 1,\n  "sessionCount": -' + "9" * 5000 + "\n}"
    with pytest.raises(JSONTextError) as info:
        loads(text)
    assert (info.value.line, info.value.detail) == (
        3,
        "an integer of 5,000 digits; at most 4,300 can be read",
    )


def test_nesting_too_deep_names_its_line() -> None:
    with pytest.raises(JSONTextError) as info:
        loads('{"a":\n' + "[" * 100_000 + "]" * 100_000 + "}")
    assert info.value.line == 2 and "nested" in info.value.detail


def test_bytes_that_are_not_utf8_name_the_line_and_the_byte() -> None:
    with pytest.raises(JSONTextError) as info:
        decode(b'{\n"caf\xe9": 1}')
    assert (info.value.line, info.value.detail) == (
        2,
        "not valid UTF-8 (byte 0xe9); expected a JSON text file",
    )
    assert decode(b"\xef\xbb\xbf{}") == "{}"


def test_not_json_gives_the_decoders_words_and_column() -> None:
    with pytest.raises(JSONTextError) as info:
        loads('{\n  "a": 1,\n}')
    assert info.value.line == 3
    assert info.value.detail.startswith("not valid JSON: ") and "(column " in info.value.detail


@given(
    JSON
    | st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters())
)
@example({"text": "lone \ud800 surrogate", "\udc80key": ["\udfff"]})
def test_what_is_read_is_written_back_unchanged(value: Any) -> None:
    text = dumps(value)
    text.encode("utf-8")  # always UTF-8: a lone surrogate is written as its escape
    assert loads(text) == value
    assert loads(dumps(value, indent=2)) == value

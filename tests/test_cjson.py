"""cjson: the json package's reading and writing without the package. Property tests: the
same values and the same text as `json.loads` and `json.dumps`, the same errors."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from voyager_brain import cjson

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities too: json writes and reads them
    | st.text()  # lone surrogates too
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=30,
)
OPTIONS = st.fixed_dictionaries(
    {
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([None, (",", ":"), (", ", ": "), (";", "=")]),
        "sort_keys": st.booleans(),
    }
)


def outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """What `call` gives: its value, or its error's type and message."""
    try:
        return ("value", call(*args, **kwargs))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@given(JSON, OPTIONS)
def test_dumps_writes_what_json_writes(value: Any, options: dict[str, Any]) -> None:
    assert outcome(cjson.dumps, value, **options) == outcome(json.dumps, value, **options)


@given(JSON, st.sampled_from([None, 2]))
def test_loads_reads_what_json_reads(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    # repr: NaN is not equal to itself, and -0.0 equals 0.0
    assert repr(cjson.loads(text)) == repr(json.loads(text))


@given(st.text(alphabet=' \t\n\r{}[]":,.-+0123456789eEaflnrstuINfy\\\ufeff', max_size=40))
@example('{"a": 1} x')  # extra data
@example(" \n[1, 2] \t")  # whitespace around the value
@example("\ufeff{}")  # a byte order mark
@example("[1, 2")  # cut short
@example("")
@example("1" * 5_000)  # past int()'s digit limit
@example("[" * 100_000)  # past the recursion limit
def test_loads_fails_as_json_fails(text: str) -> None:
    got, expected = outcome(cjson.loads, text), outcome(json.loads, text)
    assert repr(got) == repr(expected)


def test_unwritable_values_fail_as_in_json() -> None:
    for value in ({"a": {1, 2}}, [object()], {(1, 2): "tuple key"}):
        assert outcome(cjson.dumps, value) == outcome(json.dumps, value)
        assert outcome(cjson.dumps, value)[0] == "TypeError"
    loop: list[Any] = []
    loop.append(loop)
    assert (
        outcome(cjson.dumps, loop)
        == outcome(json.dumps, loop)
        == (
            "ValueError",
            "Circular reference detected",
        )
    )


def test_reading_and_writing_leave_the_json_package_unimported() -> None:
    script = (
        "import sys\n"
        "from voyager_brain import cjson\n"
        'value = cjson.loads(\' {"tool": ["Bash", 1.5, null, true]} \')\n'
        "text = cjson.dumps(value, ensure_ascii=False)\n"
        'assert text == \'{"tool": ["Bash", 1.5, null, true]}\', text\n'
        "print(sorted(m for m in ('json', 're') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("text", ["{", "nul", '{"a" 1}'])
def test_an_error_is_the_json_package_s(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        cjson.loads(text)


def test_a_bad_escape_is_the_json_package_s_error_in_a_fresh_process() -> None:
    """The C scanner builds the error of a bad escape or a control character from
    json.decoder, which it looks up without importing: in a process that has not imported
    json (every hook), it raised SystemError, "returned NULL without setting an
    exception", which no reader catches."""
    script = (
        "import json.decoder as never_imported_here\n"
        "import sys\n"
        "del sys.modules['json.decoder'], sys.modules['json']\n"
        "from voyager_brain import cjson\n"
        r"for text in ('{\"a\": \"\\s\"}', '[\"tab\there\"]', '\"\\u12\"'):"
        "\n"
        "    try:\n"
        "        cjson.loads(text)\n"
        "    except ValueError as exc:\n"
        "        print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["JSONDecodeError"] * 3

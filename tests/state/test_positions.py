"""brain.json errors name the line: the position-keeping scan (`state.positions`) and the
one-line errors of `show` and `status` on a file with a bad field."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from hypothesis import assume, given
from hypothesis import strategies as st

from voyager_brain import CorruptFileError
from voyager_brain.state import brainjson as state
from voyager_brain.state.positions import parse_path, value_line

# -- the CLI ------------------------------------------------------------------------------

BAD_FIELDS = [
    (
        """\
        {
          "project": "nity",
          "decisions": [
            {
              "what": null
            }
          ]
        }
        """,
        5,
        "decisions[0].what: expected a string, got null",
    ),
    (
        """\
        {
          "project": "nity",
          "knownIssues": [
            {"issue": "flaky CI", "severity": "low"},
            {
              "issue": "x",
              "severity": "urgent"
            }
          ]
        }
        """,
        7,
        'knownIssues[1].severity: expected one of low, medium, high, critical, got "urgent"',
    ),
    (
        """\
        {
          "project": "nity",
          "facts": {
            "stack": [
              "Python",
              3
            ]
          }
        }
        """,
        6,
        "facts.stack[1]: expected a string, got 3",
    ),
]


@pytest.mark.parametrize(("text", "line", "detail"), BAD_FIELDS)
@pytest.mark.parametrize("command", ["show", "status"])
def test_a_bad_field_is_one_line_naming_file_line_and_field(
    repo: Path, command: str, text: str, line: int, detail: str
) -> None:
    path = repo / ".voyager" / "brain.json"
    path.parent.mkdir()
    data = textwrap.dedent(text).encode()
    path.write_bytes(data)
    result = run_cli(command, cwd=repo)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"voyager-brain: {path}:{line}: {detail}"]
    assert path.read_bytes() == data


def test_loads_names_the_line_of_a_bad_field() -> None:
    path = Path("brain.json")
    with pytest.raises(CorruptFileError) as info:
        state.loads(b'{\n  "decisions": [{"what": null}]\n}\n', path)
    assert (info.value.path, info.value.line) == (path, 2)
    assert str(info.value) == "brain.json:2: decisions[0].what: expected a string, got null"


def test_a_field_not_in_the_text_keeps_the_message_without_a_line() -> None:
    # The checker reports the missing key `what`: no line holds it.
    with pytest.raises(CorruptFileError) as info:
        state.loads(b'{\n  "decisions": [{"why": "x"}]\n}\n', Path("brain.json"))
    assert info.value.line is None
    assert str(info.value) == "brain.json: decisions[0].what: expected a string, got null"


# -- the scan -----------------------------------------------------------------------------

NESTED = textwrap.dedent(
    """\
    {
      "a": {
        "b": [
          1,
          {"c": [true, false,
                 null]},
          [[], {}, [3]]
        ]
      },
      "d": "x"
    }
    """
)


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("", 1),
        ("a", 2),
        ("a.b", 3),
        ("a.b[0]", 4),
        ("a.b[1]", 5),
        ("a.b[1].c", 5),
        ("a.b[1].c[1]", 5),
        ("a.b[1].c[2]", 6),
        ("a.b[2]", 7),
        ("a.b[2][2][0]", 7),
        ("d", 10),
    ],
)
def test_nested_objects_and_arrays(path: str, line: int) -> None:
    assert value_line(NESTED, path) == line


@pytest.mark.parametrize(
    "path", ["e", "a.b[3]", "a.b[2][0][0]", "a.b.c", "d.x", "d[0]", "a[0]", "a.b[1].c[3]"]
)
def test_a_path_not_in_the_text_is_none(path: str) -> None:
    assert value_line(NESTED, path) is None


def test_strings_with_braces_quotes_escapes_and_newlines() -> None:
    text = (
        "{\n"
        '  "a": "}]{[,:",\n'
        '  "b\\"}": "say \\"hi\\" \\\\",\n'
        '  "c": "line one\\nline two\\n}\\u007d",\n'
        '  "\\u0064": [\n'
        '    "\\\\", "\\"],[{"\n'
        "  ],\n"
        '  "e": {"f": "{\\"g\\": 1}", "g": 2}\n'
        "}\n"
    )
    document = json.loads(text)
    assert document["d"] == ["\\", '"],[{']
    assert value_line(text, "a") == 2
    assert value_line(text, ['b"}']) == 3
    assert value_line(text, "c") == 4
    assert value_line(text, "d") == 5  # the key written as an escape
    assert value_line(text, "d[1]") == 6
    assert value_line(text, "e.g") == 8
    assert value_line(text, "e.f") == 8
    assert value_line(text, "g") is None  # only inside a string


def test_a_value_on_the_line_after_its_key() -> None:
    text = '{\r\n  "what":\r\n\r\n    null\r\n}'
    assert value_line(text, "what") == 4


def test_a_repeated_key_is_the_last_one_as_json_loads_keeps_it() -> None:
    text = '{\n  "a": 1,\n  "a": {"b": 2}\n}\n'
    assert json.loads(text) == {"a": {"b": 2}}
    assert value_line(text, "a") == 3
    assert value_line(text, "a.b") == 3


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("", []),
        ("a", ["a"]),
        ("decisions[0].what", ["decisions", 0, "what"]),
        ("a[1][2].b.c", ["a", 1, 2, "b", "c"]),
        ("a[x]", None),
        ("a..b", None),
        (".a", None),
        ("a.", None),
        ("a[0]b", None),
        ("a[-1]", None),
    ],
)
def test_parse_path(path: str, parts: list[str | int] | None) -> None:
    assert parse_path(path) == parts


@pytest.mark.parametrize(
    "text",
    ["", "   ", "{", '{"a": ', '{"a": [1, ', '{"a": "\\', "[}", '{"a" 1}', '{"a": 1,}'],
)
def test_text_that_does_not_scan_is_none(text: str) -> None:
    assert value_line(text, "a") is None
    assert value_line(text, "a[0]") is None


def test_deep_nesting_does_not_raise() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    text = f"[\n{deep},\n2]"
    assert value_line(text, [0] * 5) == 2
    assert value_line(text, [1]) == 3  # after skipping the deep array
    assert value_line(deep, [1]) is None
    assert value_line(text, "a") is None


# -- properties ---------------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_documents = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=25,
)

Part = str | int


def _paths(value: Any, prefix: tuple[Part, ...] = ()) -> list[tuple[Part, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            out += _paths(item, (*prefix, n))
    return out


def _replaced(value: Any, path: tuple[Part, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: _replaced(v, rest, new) if k == head else v for k, v in value.items()}
    return [_replaced(v, rest, new) if n == head else v for n, v in enumerate(value)]


MARKER = "\u2603marker\u2603"


def _expected_line(document: Any, path: tuple[Part, ...], ensure_ascii: bool) -> int:
    """The line of the value at `path`, told apart from the scan: the value replaced by a
    marker string, serialized the same way. Everything before a value is the same text
    whatever the value is, so the marker starts where the value does."""
    text = json.dumps(_replaced(document, path, MARKER), indent=2, ensure_ascii=ensure_ascii)
    marker = json.dumps(MARKER, ensure_ascii=ensure_ascii)
    assume(text.count(marker) == 1)
    return text[: text.index(marker)].count("\n") + 1


def _as_string(path: tuple[Part, ...]) -> str | None:
    """`path` as ``a[0].b``, None when a key cannot be written that way."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[^.\[\]]+", part):
            out += f".{part}" if out else part
        else:
            return None
    return out


@given(_documents, st.booleans())
def test_the_scan_finds_every_path_of_a_pretty_printed_document(
    document: Any, ensure_ascii: bool
) -> None:
    text = json.dumps(document, indent=2, ensure_ascii=ensure_ascii)
    for path in _paths(document):
        expected = _expected_line(document, path, ensure_ascii)
        assert value_line(text, path) == expected, path
        written = _as_string(path)
        if written is not None:
            assert value_line(text, written) == expected, written


@given(_documents, st.lists(st.text(max_size=3) | st.integers(0, 5), max_size=4))
def test_a_path_the_document_lacks_is_none(document: Any, path: list[Part]) -> None:
    assume(tuple(path) not in _paths(document))
    text = json.dumps(document, indent=2)
    assert value_line(text, path) is None


_paths_anywhere = st.text(alphabet="ab0.[]", max_size=8) | st.lists(
    st.text(max_size=3) | st.integers(-1, 5), max_size=4
)


@given(st.text(), _paths_anywhere)
def test_the_scan_never_raises_on_arbitrary_text(text: str, path: Any) -> None:
    line = value_line(text, path)
    assert line is None or 1 <= line <= text.count("\n") + 1


@given(_documents, st.integers(0, 10_000), _paths_anywhere)
def test_the_scan_never_raises_on_cut_json(document: Any, cut: int, path: Any) -> None:
    text = json.dumps(document, indent=2)
    for piece in (text[:cut], text[cut:], text[:cut] + "}" + text[cut:]):
        line = value_line(piece, path)
        assert line is None or 1 <= line <= piece.count("\n") + 1

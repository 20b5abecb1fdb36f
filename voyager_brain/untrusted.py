"""Text and JSON from outside, made fit to match and to store, whatever they hold.

An agent's hook payload may hold what Python's readers and SQLite refuse: bytes that are
not UTF-8, ``\\ud800`` escapes that decode to lone surrogates (no UTF-8 encoder takes
them), objects nested deeper than the standard library's recursive JSON reader and
writer go. None of it may turn a guard check into an error, so:

- `decode`: bytes as UTF-8, each invalid byte replaced by U+FFFD (the ``replace`` error
  handler), never an error;
- `scrub`: each lone surrogate in a text replaced by U+FFFD (a valid pair never reaches
  here: the JSON reader joins it into one character); `scrub_json` does it to every
  string of a JSON value, object keys included;
- `loads`: a JSON text at any depth (the standard reader first; past its depth, an
  iterative reader that gives the same values), an integer past Python's 4,300 digits
  kept as its text;
- `shallow`: a JSON value whose containers below `depth` levels are replaced by the list
  of the strings they hold, in order: what a recursive writer can store, every text kept.

Standard library only: the hooks read their stdin through this.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Patterns as text, compiled (and cached by `re`) on first use: every tool-call hook
# imports this module, few of them meet a text that needs it (nor `re` nor `json`).
_SURROGATE = "[\ud800-\udfff]"
#: An escape that may decode to a lone surrogate (\uD800 to \uDFFF, any case).
_SURROGATE_ESCAPE = r"\\u[dD][89abcdefABCDEF]"
#: How deep `shallow` keeps a value as it is (the standard writer's limit is ~1,000).
STORED_DEPTH = 100


def decode(data: bytes) -> str:
    """`data` as UTF-8 text, invalid bytes replaced by U+FFFD."""
    return data.decode("utf-8", "replace")


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (the text itself when it has
    none, which is checked at the speed of the UTF-8 encoder)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub(_SURROGATE, "\ufffd", text)
    return text


def may_hold_surrogates(text: str) -> bool:
    """Whether the JSON `text` could decode to a lone surrogate (it has one, or an
    escape of one): only then must its values be scrubbed."""
    import re

    return re.search(_SURROGATE_ESCAPE, text) is not None or (
        re.search(_SURROGATE, text) is not None
    )


def scrub_json(value: Any) -> Any:
    """`value` (a JSON value) with `scrub` applied to every string, keys included,
    level by level without recursion."""
    if isinstance(value, str):
        return scrub(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, item = stack.pop()
        if isinstance(item, dict):
            copy: dict[str, Any] = {}
            for k, v in item.items():
                copy[scrub(k)] = v
                stack.append((copy, scrub(k), v))
            parent[key] = copy
        elif isinstance(item, list):
            items = list(item)
            for i, v in enumerate(items):
                stack.append((items, i, v))
            parent[key] = items
        elif isinstance(item, str):
            parent[key] = scrub(item)
    return root[0]


def loads(text: str) -> Any:
    """The JSON value in `text`, at any depth; `ValueError` (a `json.JSONDecodeError`
    where the standard reader finds the fault) when it is not JSON. Lone surrogates
    are scrubbed from its strings."""
    import json

    try:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:
            # An integer past Python's digit limit for int() (4,300): the standard
            # reader raises, and a guard check must not. Read again, keeping it as text.
            value = json.loads(text, parse_int=json_int)
    except RecursionError:
        value = _loads_deep(text)
    return scrub_json(value) if may_hold_surrogates(text) else value


def json_int(literal: str) -> int | str:
    """A JSON integer's value; its digits as a string when there are more than Python
    converts (a hostile payload's number: nothing computes with it, a rule may match it)."""
    try:
        return int(literal)
    except ValueError:
        return literal


_WHITESPACE = r"[ \t\n\r]*"
_NUMBER = r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?"
#: The words the standard reader takes (NaN and the infinities too), longest first.
_LITERALS = {
    "-Infinity": float("-inf"),
    "Infinity": float("inf"),
    "NaN": float("nan"),
    "true": True,
    "false": False,
    "null": None,
}


def _loads_deep(text: str) -> Any:
    """A JSON reader with its own stack instead of recursion: slower than the standard
    one, used only for a text nested deeper than that one reads."""
    import json
    import re
    from json.decoder import scanstring  # type: ignore[attr-defined]

    whitespace, number_re = re.compile(_WHITESPACE), re.compile(_NUMBER)

    def fail(message: str, pos: int) -> json.JSONDecodeError:
        return json.JSONDecodeError(message, text, pos)

    def skip(pos: int) -> int:
        found = whitespace.match(text, pos)
        return found.end() if found else pos

    def key_at(pos: int) -> tuple[str, int]:
        """An object's key and its colon at `pos`, and where its value starts."""
        if not text.startswith('"', pos):
            raise fail("Expecting property name enclosed in double quotes", pos)
        key, pos = scanstring(text, pos + 1)
        pos = skip(pos)
        if not text.startswith(":", pos):
            raise fail("Expecting ':' delimiter", pos)
        return key, skip(pos + 1)

    # Each open container: the container, and for an object the key being read.
    stack: list[tuple[Any, str | None]] = []
    pos = skip(0)
    while True:
        # Read one value at `pos` (opening a container pushes it and reads on inside).
        if pos >= len(text):
            raise fail("Expecting value", pos)
        char = text[pos]
        value: Any
        if char == '"':
            value, pos = scanstring(text, pos + 1)
        elif char in "{[":
            pos = skip(pos + 1)
            closer = "}" if char == "{" else "]"
            if text.startswith(closer, pos):
                value, pos = ({} if char == "{" else []), pos + 1
            else:
                container: Any = {} if char == "{" else []
                key = None
                if char == "{":
                    key, pos = key_at(pos)
                stack.append((container, key))
                continue
        else:
            word = next((w for w in _LITERALS if text.startswith(w, pos)), None)
            number = None if word else number_re.match(text, pos)
            if number:
                literal = number.group()
                value = float(literal) if any(c in literal for c in ".eE") else json_int(literal)
                pos = number.end()
            elif word is not None:
                value, pos = _LITERALS[word], pos + len(word)
            else:
                raise fail("Expecting value", pos)
        # Put the value in its container; close every container that ends here.
        while True:
            pos = skip(pos)
            if not stack:
                if pos != len(text):
                    raise fail("Extra data", pos)
                return value
            container, key = stack[-1]
            if key is None:
                container.append(value)
            else:
                container[key] = value
            closer = "}" if key is not None else "]"
            if text.startswith(",", pos):
                pos = skip(pos + 1)
                if key is not None:
                    new_key, pos = key_at(pos)
                    stack[-1] = (container, new_key)
                break
            if not text.startswith(closer, pos):
                raise fail(f"Expecting ',' delimiter or '{closer}'", pos)
            stack.pop()
            value, pos = container, pos + 1


def strings(value: Any) -> list[str]:
    """Every string in a JSON value (object keys excluded), depth first, in order,
    without recursion."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


def _texts(value: Any) -> list[str]:
    """Every string in a JSON value, object keys included, in order."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            for k, v in reversed(list(item.items())):
                stack.extend((v, k))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


def shallow(value: Any, depth: int = STORED_DEPTH) -> Any:
    """`value` with each container `depth` levels down replaced by the list of the
    strings it holds (object keys included): no text is lost, and a recursive writer
    (`json.dumps`, the redaction of a JSON value) can take it."""
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any, int]] = [(root, 0, value, 0)]
    while stack:
        parent, key, item, level = stack.pop()
        if not isinstance(item, (dict, list)):
            parent[key] = item
        elif level >= depth:
            parent[key] = _texts(item)
        elif isinstance(item, dict):
            copy: dict[str, Any] = {}
            for k, v in item.items():
                copy[k] = v
                stack.append((copy, k, v, level + 1))
            parent[key] = copy
        else:
            items = list(item)
            for i, v in enumerate(items):
                stack.append((items, i, v, level + 1))
            parent[key] = items
    return root[0]

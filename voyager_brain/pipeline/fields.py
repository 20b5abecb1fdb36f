"""The checks that read pipeline-state.json's fields: each failure is a `ValueError`
naming the field by its path in the document (``stages[1].status``) and saying what was
expected and what was there."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list"}


def kind(value: object) -> str:
    """What a JSON value is, in words ("a string", "null")."""
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int():
            return "an integer"
        case float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "a list"
        case dict():
            return "an object"
    return type(value).__name__


def _is(value: object, of: type) -> bool:
    # JSON's true and false are ints to Python; never to us.
    return isinstance(value, of) and not (of is int and isinstance(value, bool))


def _name(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def field(document: dict[str, Any], key: str, of: type, where: str) -> Any:
    """`document[key]`, which must be there and of type `of`."""
    if key not in document:
        raise ValueError(f"{_name(where, key)}: missing")
    value = document[key]
    if not _is(value, of):
        raise ValueError(f"{_name(where, key)}: expected {_TYPE_NAMES[of]}, got {kind(value)}")
    return value


def optional(document: dict[str, Any], key: str, of: type, where: str) -> Any:
    """`document[key]` of type `of`, or None when it is null or absent."""
    value = document.get(key)
    if value is not None and not _is(value, of):
        raise ValueError(
            f"{_name(where, key)}: expected {_TYPE_NAMES[of]} or null, got {kind(value)}"
        )
    return value


def choice(document: dict[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    """`document[key]`, one of the strings `allowed`."""
    value: str = field(document, key, str, where)
    if value not in allowed:
        raise ValueError(f"{_name(where, key)}: {value!r}, expected one of {', '.join(allowed)}")
    return value


def strings(document: dict[str, Any], key: str, where: str) -> list[str]:
    """`document[key]`, a list of strings."""
    values: list[Any] = field(document, key, list, where)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise ValueError(f"{_name(where, key)}[{i}]: expected a string, got {kind(value)}")
    return values

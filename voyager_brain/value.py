"""The base of the immutable value classes that hooks create or import.

A session-start hook runs in a fresh process on every agent launch. Importing
`dataclasses` (it imports `inspect`, and with it ast, dis and tokenize) and generating
each class's methods cost a hook about 20 ms, a tenth of its whole run, for classes whose
methods this base provides in a few lines. Values that need nothing but fields and
defaults are `typing.NamedTuple`s instead; dataclasses stay where no hook goes.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar


class Value:
    """A frozen value: its `_fields` are set once by the subclass's ``__init__`` (with
    ``object.__setattr__``) and never again. It equals another of the same class with
    the same fields (or the same `_compared` ones) and hashes by them; it copies and
    pickles by its fields; `replace` makes a changed copy through ``__init__``, so its
    checks run again."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    #: The fields that equality and the hash look at, when not all of them.
    _compared: ClassVar[tuple[str, ...] | None] = None
    _values: ClassVar[attrgetter[Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._values = attrgetter(*(cls._compared or cls._fields))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) == self._values(other))

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), tuple(getattr(self, name) for name in self._fields)

    def replace(self, **changes: Any) -> Any:
        """A copy with `changes` applied, checked like a new value."""
        current = {name: getattr(self, name) for name in self._fields}
        return type(self)(**{**current, **changes})

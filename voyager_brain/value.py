"""The bases of the immutable value classes that hooks create or import.

A session-start hook runs in a fresh process on every agent launch, so what its imports
cost counts. Importing `dataclasses` (it imports `inspect`, and with it ast, dis and
tokenize) and generating each class's methods cost a hook about 20 ms, a tenth of its
whole run, for classes whose methods `Value` provides in a few lines. Values that need
nothing but fields and defaults are `Record`s: NamedTuples made without importing
`typing` (about 4 ms, and more for each class it checks). Dataclasses and typing stay
where no hook goes.
"""

from __future__ import annotations

import collections
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar
    from typing import NamedTuple as Record
else:

    class _RecordMeta(type):
        # What typing.NamedTuple does with a class body, minus its type checks: the
        # annotated names are the fields (those with a value, the last ones, have it as
        # their default); everything else (methods, properties, the docstring) is set on
        # the namedtuple made of them.
        def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
            if not bases:
                return super().__new__(mcls, name, bases, ns)
            fields = list(ns.get("__annotations__", {}))
            defaults = [ns[field] for field in fields if field in ns]
            made = collections.namedtuple(name, fields, defaults=defaults, module=ns["__module__"])
            for key, value in ns.items():
                if key not in fields and key not in ("__module__", "__annotations__"):
                    setattr(made, key, value)
            return made

    class Record(metaclass=_RecordMeta):
        """Subclassed like `typing.NamedTuple` (which type checkers see)."""


__all__ = ["Record", "Value"]


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

    def _assign(self, *values: Any) -> None:
        """Set the fields, in `_fields` order: once, from ``__init__``."""
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

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

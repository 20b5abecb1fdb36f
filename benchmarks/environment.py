"""Environment variables set for a block of a benchmark and put back after it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def environment(**values: str | None) -> Iterator[None]:
    """Each name set to its value for the block (None: unset), then restored as it was,
    set or not, whatever the block raises."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        _put(values)
        yield
    finally:
        _put(saved)


def _put(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

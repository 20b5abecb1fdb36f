"""Compiled regular expressions kept from one process to the next.

Hooks start a fresh interpreter for every agent turn and tool call, and compiling a
regex is most of what some of them pay for their patterns: about 90 µs for a short
pattern, several milliseconds for config.toml's line grammar. The compiled program of
each pattern (what ``re.compile`` hands to the regex engine) is kept in
``$VOYAGER_HOME/cache/``, one file per Python version and engine version with a
length check, and turned back into a pattern object with ``_sre.compile`` (a few µs), the
same call ``re.compile`` ends with. Anything unexpected falls back to ``re.compile``.

Standard library only.
"""

from __future__ import annotations

import os
import sys

from .paths import cache_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

    Programs = dict[tuple[str, int], tuple[Any, ...]]

#: Programs by group, then by (pattern, flags); a group is read from its file on first
#: use. Groups keep what one path needs apart: config.toml's grammar is not read with
#: the programs of a thousand guard rules.
_known: dict[str, Programs] = {}
_learnt: set[str] = set()


def _cache_file(group: str) -> str:
    import _sre  # type: ignore[import-not-found, unused-ignore]

    version = "".join(str(n) for n in sys.version_info[:3])
    return os.path.join(cache_folder(), f"regex-{group}-{version}-{_sre.MAGIC}.marshal")


def _programs(group: str) -> Programs:
    found = _known.get(group)
    if found is None:
        found = _known[group] = _load(group)
    return found


def _load(group: str) -> Programs:
    import marshal

    try:
        with open(_cache_file(group), "rb") as f:
            data = f.read()
        # The file is replaced atomically, so a short one is foreign: ignored. No
        # checksum: importing zlib or hashlib costs a hook more than the cache saves,
        # and _sre.compile checks every program it is given (a bad one falls back to
        # re.compile).
        if int.from_bytes(data[:8], "big") != len(data) - 8:
            return {}
        known = marshal.loads(data[8:])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return known if isinstance(known, dict) else {}


def known(pattern: str, flags: int = 0, *, group: str = "main") -> bool:
    """Whether the cache of `group` holds the program of `pattern`."""
    return (pattern, int(flags)) in _programs(group)


def compile(
    pattern: str, flags: int = 0, *, group: str = "main", save: bool = True
) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, from the cache of `group` when it has the
    program. A pattern compiled anew is added to it (written now when `save`, else by
    `save_cache`). Raises ``re.error`` for an invalid pattern, as re.compile does."""
    programs = _programs(group)
    key = (pattern, int(flags))
    entry = programs.get(key)
    if entry is not None:
        try:
            return _rebuild(pattern, entry)
        except Exception:  # a cache of another build: compile as usual
            pass
    compiled, entry = _compile(pattern, int(flags))
    programs[key] = entry
    _learnt.add(group)
    if save:
        save_cache(group)
    return compiled


def save_cache(group: str = "main") -> None:
    """Write the cache of `group` if a pattern was added to it (atomically; errors are
    ignored: the cache only saves time)."""
    if group not in _learnt:
        return
    import marshal

    path = _cache_file(group)
    try:
        payload = marshal.dumps(_known[group])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "wb") as f:
            f.write(len(payload).to_bytes(8, "big") + payload)
        os.replace(temp, path)
        _learnt.discard(group)
    except (OSError, ValueError):
        pass


def _compile(pattern: str, flags: int) -> tuple[re.Pattern[str], tuple[Any, ...]]:
    import re
    from re import _compiler, _parser  # type: ignore[attr-defined]

    compiled = re.compile(pattern, flags)
    tree = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(tree, flags)]
    entry = (int(tree.state.flags), code, tree.state.groups - 1, dict(tree.state.groupdict))
    return compiled, entry


def _rebuild(pattern: str, entry: tuple[Any, ...]) -> re.Pattern[str]:
    import _sre  # type: ignore[import-not-found, unused-ignore]

    flags, code, groups, groupindex = entry
    indexgroup: list[str | None] = [None] * (groups + 1)
    for name, index in groupindex.items():
        indexgroup[index] = name
    compiled: re.Pattern[str] = _sre.compile(
        pattern, flags, code, groups, groupindex, tuple(indexgroup)
    )
    return compiled


def lookup(key: str, *, group: str) -> Any:
    """The value kept under `key` in the cache of `group` (see `remember`), or None."""
    return _programs(group).get((key, -1))


def remember(key: str, value: Any, *, group: str) -> None:
    """Keep `value` (anything marshal writes: tuples, strings, numbers) under `key` in
    the cache of `group`, for what a pattern costs to work out other than its program;
    written by `save_cache`. Flags -1 keep these apart from programs."""
    programs = _programs(group)
    if programs.get((key, -1)) != value:
        programs[(key, -1)] = value
        _learnt.add(group)

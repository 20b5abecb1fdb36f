"""Git conflict markers in a brain file: where they are, and each side of them.

A merge done without the merge driver (a clone that never ran ``voyager-brain install
git``, a rebase, a tool that merges text) leaves ``<<<<<<<`` / ``=======`` / ``>>>>>>>``
regions in the file, with ``|||||||`` and the base between them in git's diff3 style.
Such a file is never read as content: its regions would be injected into the agent's
context as if they were memory, and the next write would bury them. Readers raise
`ConflictError`; the session-start context leaves the regions out and says so; `doctor
--repair` merges the two sides with the merge driver's rules.

A marker is a whole line that is the marker alone or the marker, a space and a label, at
the start of the line, as git writes them. A brain.md entry whose text has such a line
gets it escaped (see `session.escaping`); no JSON line of a log or line of brain.json
can start with one. Standard library only, and one substring search when there is no
conflict: every read of a brain file goes through here.
"""

from __future__ import annotations

from .errors import CorruptFileError
from .value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

OPEN, BASE, SPLIT, CLOSE = b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>"
OPEN_TEXT = OPEN.decode()
_OURS, _BASE, _THEIRS = 0, 1, 2


class ConflictError(CorruptFileError):
    """A brain file holds git conflict markers: it is not read, and never written."""

    def __init__(self, path: Path, region: Conflict) -> None:
        what = f"unresolved git conflict (lines {region.start}-{region.end})"
        super().__init__(
            path,
            f"{what}; `voyager-brain doctor --repair` merges both sides, or resolve it by hand",
            region.start,
        )
        self.region = region
        #: The message without the advice.
        self.summary = f"{path}:{region.start}: {what}"


class Conflict(Record):
    """One conflicted region: its first and last line (1-based, the markers included),
    and whether it holds a base (diff3 style)."""

    start: int
    end: int
    has_base: bool = False


def _marker(line: bytes, marker: bytes) -> bool:
    line = line.rstrip(b"\r")
    return line == marker or (line.startswith(marker) and line[7:8] == b" ")


def _split(data: bytes) -> list[tuple[int | None, bytes]]:
    """Each line (with its newline) and the side it is on (None: outside any region,
    -1: a marker line)."""
    out: list[tuple[int | None, bytes]] = []
    side: int | None = None
    for line in data.splitlines(keepends=True):
        bare = line.rstrip(b"\n")
        if side is None and _marker(bare, OPEN):
            side, mark = _OURS, -1
        elif side == _OURS and _marker(bare, BASE):
            side, mark = _BASE, -1
        elif side is not None and side != _THEIRS and _marker(bare, SPLIT):
            side, mark = _THEIRS, -1
        elif side is not None and _marker(bare, CLOSE):
            side, mark = None, -1
        else:
            out.append((side, line))
            continue
        out.append((mark, line))
    return out


def find(data: bytes) -> list[Conflict]:
    """The conflicted regions of `data`; an opening marker without its closing one runs
    to the end of the file."""
    if OPEN not in data:
        return []
    regions: list[Conflict] = []
    start: int | None = None
    has_base = False
    side: int | None = None
    for number, (where, line) in enumerate(_split(data), start=1):
        if where != -1:
            continue
        bare = line.rstrip(b"\n")
        if start is None:
            start, has_base, side = number, False, _OURS
        elif _marker(bare, BASE):
            has_base = True
        elif _marker(bare, SPLIT) and side == _OURS:
            side = _THEIRS
        else:
            regions.append(Conflict(start, number, has_base))
            start = None
    if start is not None:
        regions.append(Conflict(start, data.count(b"\n") + (not data.endswith(b"\n")), has_base))
    return regions


def check(data: bytes, path: Path) -> None:
    """Raise `ConflictError` for the first conflicted region of `data`, if any."""
    regions = find(data)
    if regions:
        raise ConflictError(path, regions[0])


def without(data: bytes) -> bytes:
    """`data` with every conflicted region left out, both sides and the markers."""
    return b"".join(line for where, line in _split(data) if where is None)


def sides(data: bytes) -> tuple[bytes, bytes, bytes]:
    """The file as each side of the merge had it: ours, theirs, and the base (the
    regions' base parts when every region has one, else empty: a merge that adds what
    each side has)."""
    lines = _split(data)
    with_base = all(r.has_base for r in find(data))

    def side(name: int) -> bytes:
        return b"".join(line for where, line in lines if where is None or where == name)

    return side(_OURS), side(_THEIRS), side(_BASE) if with_base else b""

"""``voyager-brain pipeline watch``: call back when a project's ``.brain/BACKLOG.md``
settles after an edit (issue 15).

`watch_backlog` watches the ``.brain/`` folder of each project (not recursively) with
watchfiles and keeps only the events that name ``BACKLOG.md``, so an editor that writes
a temporary file and renames it over BACKLOG.md counts like one that writes in place.
The quiet period is our own timer, not watchfiles' grouping: every event restarts it,
and once the file has been quiet for `debounce` seconds it is read and, if its bytes
differ from the last content seen, ``on_change(root, text)`` is called once with that
final text.

- The content when watching starts is the baseline: an existing BACKLOG.md does not
  fire, creating one afterwards does (even empty).
- A save that leaves the bytes as they were (an editor saving twice) does not fire, and
  neither does a deletion; the content before the deletion stays the one compared with,
  so a file deleted and written back as it was does not fire either.
- Each project has its own timer.
- An exception from `on_change` is written to stderr (one line for a `BrainError`, the
  traceback for anything else) and watching goes on; that content counts as seen, so
  the next different edit fires again. `KeyboardInterrupt` and `SystemExit` propagate.
- Setting `stop` returns within about a tenth of a second (changes still waiting for
  their quiet period are dropped). Ctrl-C raises `KeyboardInterrupt` out of the
  function, for the command line to catch.

Where watchfiles polls instead of getting the OS's events (WSL, or
``WATCHFILES_FORCE_POLLING``), an edit is seen up to its poll delay (300 ms) late, so a
`debounce` shorter than that may fire in the middle of a burst of edits.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import storage
from ..errors import BrainError
from .state import BRAIN_DIR

__all__ = ["BACKLOG_FILE", "NoBlackboardError", "watch_backlog"]

BACKLOG_FILE = "BACKLOG.md"

#: How often, at most, the quiet periods are checked while nothing happens (ms): the
#: lateness of a callback, and the longest watchfiles groups a burst of events.
_TICK_MS = 100


class NoBlackboardError(BrainError):
    """A project to watch has no ``.brain/`` folder."""

    def __init__(self, root: Path) -> None:
        super().__init__(
            f"{root}: no {BRAIN_DIR}/ folder to watch (run `voyager-brain pipeline init` first)"
        )
        self.root = root


def watch_backlog(
    roots: Sequence[Path],
    on_change: Callable[[Path, str], None],
    *,
    debounce: float = 5.0,
    stop: threading.Event | None = None,
) -> None:
    """Watch ``ROOT/.brain/BACKLOG.md`` of every root until `stop` is set, calling
    ``on_change(root, text)`` once per settled edit (see the module's docstring).

    Raises `NoBlackboardError` before watching when a root has no ``.brain/`` folder,
    and `ValueError` for no roots or a negative `debounce`. A root listed twice is
    watched once."""
    import watchfiles

    if not roots:
        raise ValueError("no project to watch")
    if debounce < 0:
        raise ValueError(f"debounce must be zero or more seconds, not {debounce}")
    projects: dict[Path, Path] = {}  # the resolved .brain/ folder -> the root as given
    for root in roots:
        brain = Path(root) / BRAIN_DIR
        if not brain.is_dir():
            raise NoBlackboardError(root)
        projects.setdefault(brain.resolve(), root)
    seen = {brain: _read(brain / BACKLOG_FILE) for brain in projects}
    due: dict[Path, float] = {}  # when each pending quiet period ends (time.monotonic)
    started = False
    for changes in watchfiles.watch(
        *projects,
        watch_filter=None,
        debounce=_TICK_MS,
        rust_timeout=_TICK_MS,
        yield_on_timeout=True,
        stop_event=stop,
        recursive=False,
        raise_interrupt=True,
    ):
        now = time.monotonic()
        if not started:
            # An edit made between reading the baselines and the watcher's start has no
            # event: look at every file once, a quiet period from now.
            started = True
            due = dict.fromkeys(projects, now + debounce)
        for _change, name in changes:
            path = Path(name)
            if path.name == BACKLOG_FILE and path.parent in projects:
                due[path.parent] = now + debounce
        for brain, when in list(due.items()):
            if when > now:
                continue
            del due[brain]
            data = _read(brain / BACKLOG_FILE)
            if data is None or data == seen[brain]:
                continue
            seen[brain] = data
            _call(on_change, projects[brain], data.decode("utf-8", errors="replace"))


def _read(path: Path) -> bytes | None:
    """The file's bytes, or None when it is missing (or is not a readable file)."""
    try:
        return storage.read_bytes(path)
    except BrainError as exc:  # a link out of the repository, a FIFO: refused
        print(f"voyager-brain pipeline watch: {exc}", file=sys.stderr)
        return None
    except OSError as exc:
        print(f"voyager-brain pipeline watch: {path}: {exc.strerror or exc}", file=sys.stderr)
        return None


def _call(on_change: Callable[[Path, str], None], root: Path, text: str) -> None:
    try:
        on_change(root, text)
    except BrainError as exc:
        print(f"voyager-brain pipeline watch: {root}: {exc}", file=sys.stderr)
    except Exception as exc:
        print(
            f"voyager-brain pipeline watch: {root}: the backlog handler failed",
            "".join(traceback.format_exception(exc)),
            sep="\n",
            end="",
            file=sys.stderr,
        )

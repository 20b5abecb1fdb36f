"""Where memory entries live: the personal log and the project log.

* Personal: ``$VOYAGER_HOME/memory.jsonl`` (``~/.voyager``), or the file
  ``$VOYAGER_MEMORY_PATH`` names. Identity, user, behaviors and preferences go here.
* Project: ``.voyager/memory.jsonl`` in a repository that has ``.voyager/`` (tracked by
  git). Everything else goes here when there is one; ``store=personal|project``
  overrides, except that identity and user are always personal.

Reads fold both logs, the project's after the personal one, so a project entry wins on
the same id. An update or removal goes to the log that holds the entry. In the project
log, paths (``context.path``, ``projectPath``) are stored relative to the repository top
and resolved when read, so they match in every clone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from .. import conflicts, filelock, repo, storage
from ..conflicts import ConflictError
from ..errors import EntryError
from ..paths import decay_stamp_path, personal_log_path
from ..value import Record
from . import log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .view import MemoryView

PERSONAL, PROJECT = "personal", "project"
ALWAYS_PERSONAL = ("identity", "user")
PERSONAL_BY_DEFAULT = ("behavior", "preference")


class Snapshot(Record):
    """Both logs folded: live entries by id, which log holds each, each log's health."""

    state: log.Folded
    origin: dict[str, str]
    health: dict[str, log.Health]


class MemoryStore:
    """The memory logs seen from `cwd`."""

    def __init__(
        self,
        cwd: str | os.PathLike[str] = ".",
        *,
        clock: Callable[[], datetime] | None = None,
        redact: bool = True,
        lock_timeout: float = 10.0,
    ) -> None:
        self.cwd = Path(cwd).absolute()
        self.top = repo.find_top(self.cwd)
        self.personal = personal_log_path()
        voyager = self.top / ".voyager" if self.top else None
        self.project = voyager / "memory.jsonl" if voyager and voyager.is_dir() else None
        self.clock = clock or (lambda: datetime.now(UTC))
        self.redact = redact
        self.lock_timeout = lock_timeout
        self._held: frozenset[Path] = frozenset()  # logs whose lock `exclusive` holds

    def path_of(self, store: str) -> Path:
        if store == PROJECT:
            if self.project is None:
                raise EntryError(
                    f"{self.cwd}: store=project needs a repository with .voyager/ "
                    "(run voyager-brain init)"
                )
            return self.project
        return self.personal

    def store_for(self, entry_type: str, store: str | None = None) -> str:
        """Which log a new entry of `entry_type` goes to."""
        if store not in (None, PERSONAL, PROJECT):
            raise EntryError(f"store: expected personal or project, got {store!r}")
        if entry_type in ALWAYS_PERSONAL:
            return PERSONAL
        if store is not None:
            return store
        if entry_type in PERSONAL_BY_DEFAULT or self.project is None:
            return PERSONAL
        return PROJECT

    # -- reading ----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Fold the personal log, then the project log over it (cached folds are reused
        while a log has only grown)."""
        from .cache import read_folded

        personal, personal_health = read_folded(
            self.personal, self.personal.parent / "cache" / f"{self.personal.name}.fold"
        )
        health = {PERSONAL: personal_health}
        state = log.Folded(dict(personal.entries), dict(personal.dead))
        origin = dict.fromkeys(personal.entries, PERSONAL)
        if self.project is not None:
            project, health[PROJECT] = read_folded(
                self.project, self.project.parent / "cache" / "memory.jsonl.fold", self.top
            )
            # Folding the project's lines over the personal state: its tombstones remove,
            # its entries replace, whichever came last in the project log.
            for target in project.dead:
                state.entries.pop(target, None)
                origin.pop(target, None)
            state.dead.update(project.dead)
            for entry_id, entry in project.entries.items():
                state.put(entry_id, entry)  # a keyed entry replaces the personal one
                origin[entry_id] = PROJECT
            if len(origin) != len(state.entries):
                origin = {i: origin[i] for i in state.entries}
        return Snapshot(state, origin, health)

    def folded_leaving_out_conflicts(self) -> tuple[log.Folded, list[ConflictError]]:
        """Both logs folded as `snapshot` folds them, each git conflict region left out,
        and the conflict of each log that had one; nothing is cached. What the
        session-start context reads while a merge is unresolved."""
        state = log.Folded()
        found = []
        for path, top in ((self.personal, None), (self.project, self.top)):
            data = storage.read_bytes(path) if path is not None else None
            if not data:
                continue
            regions = conflicts.find(data)
            if regions:
                assert path is not None
                found.append(ConflictError(path, regions[0]))
                data = conflicts.without(data)
            entries, _ = log.parse(data)
            log.fold(entries, state, top=str(top) if top is not None else None)
        return state, found

    def view(self) -> MemoryView:
        """Both logs as the context reads them (live entries by type, learnings ranked),
        kept by the process and brought up to date with only the lines appended since
        its last look. Read-only: the entries are shared, not copied."""
        from .view import current_view

        return current_view(self.personal, self.project, self.top if self.project else None)

    def project_path(self, value: str) -> str:
        """A path as the project log stores it: relative to the repository top when it
        is an absolute path inside the repository, else as given."""
        if self.top and os.path.isabs(value):
            try:
                return Path(value).resolve().relative_to(self.top).as_posix() or "."
            except ValueError:
                pass  # outside the repository: kept absolute
        return value

    def personal_path(self, value: str) -> str:
        """A path as the personal log stores it: absolute, a relative one taken against
        the working folder (the personal log, Rho's brain.jsonl too, is read from every
        folder, and Rho matches a context by its absolute path)."""
        if not value or os.path.isabs(value):
            return value
        return os.path.normpath(os.path.join(self.cwd, value))

    @staticmethod
    def _with_path(entry: Mapping[str, Any], stored: Callable[[str], str]) -> dict[str, Any]:
        """`entry` with its path field (a context's, a learning's) as `stored` gives it."""
        field = log.PATH_FIELDS.get(str(entry.get("type")))
        value = entry.get(field) if field else None
        if field and isinstance(value, str):
            return {**entry, field: stored(value)}
        return dict(entry)

    # -- writing ----------------------------------------------------------------------

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Both logs locked while a change is read, checked and written (the seed's
        brain tool takes the lock before reading): two processes adding the same text
        store it once, and an update never drops a field another wrote meanwhile. The
        personal log is locked first, then the project log, in every process."""
        held = [self.personal]
        # VOYAGER_MEMORY_PATH may name the project log itself: one file, one lock.
        if self.project is not None and not _same_file(self.project, self.personal):
            held.append(self.project)
        with contextlib.ExitStack() as stack:
            for path in held:
                stack.enter_context(filelock.locked(path, self.lock_timeout, "read-write"))
            self._held = frozenset(held)
            try:
                yield
            finally:
                self._held = frozenset()

    def decay_stamp(self) -> Path:
        """Where the day of the last automatic decay is kept (local, never in git)."""
        return decay_stamp_path()

    def decay_due(self) -> bool:
        """True at most once a UTC day: automatic decay runs at the first session start
        of the day. Marks the day as done."""
        today = self.clock().astimezone(UTC).date().isoformat()
        stamp = self.decay_stamp()
        with storage.locked(stamp, self.lock_timeout):
            try:
                if stamp.read_text().strip() == today:
                    return False
            except FileNotFoundError:
                pass
            # A marker, not data: lost in a crash, decay only runs again.
            storage.atomic_write(stamp, today.encode(), durable=False)
        return True

    def seed_personal(self) -> bool:
        """Write the default personal log when there is none yet (under its lock, so two
        first runs cannot both seed it). Returns whether it did."""
        if self.personal.exists():
            return False
        from .defaults import default_entries

        with filelock.locked(self.personal, self.lock_timeout, "seed"):
            if self.personal.exists():
                return False
            lines = default_entries(self.now())
            for n, entry in enumerate(lines):
                log.validate(entry, f"default entry {n + 1}")
            storage.atomic_write(self.personal, b"".join(log.encode(e) for e in lines))
        return True

    def write(self, entries: Iterable[Mapping[str, Any]], store: str) -> list[dict[str, Any]]:
        """Append `entries` to one log (redacted, paths made relative for the project).
        Returns the lines as written. The project log is tracked by git: it is redacted
        even when `redact` is off, which only the personal log follows."""
        lines = [dict(e) for e in entries]
        if self.redact or store == PROJECT:
            lines = [_redact_entry(e) for e in lines]
        stored = self.project_path if store == PROJECT else self.personal_path
        lines = [self._with_path(e, stored) for e in lines]
        path = self.path_of(store)
        held = any(_same_file(path, other) for other in self._held)
        log.append(path, lines, self.lock_timeout, held=held)
        return lines

    def now(self) -> str:
        """The time written in ``created`` and ``updated``: the seed's format."""
        moment = self.clock().astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _same_file(a: Path, b: Path) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def _redact_entry(entry: dict[str, Any]) -> dict[str, Any]:
    from ..redact import redact_json

    # Ids, types and times are ours; every other string could carry a pasted secret.
    keep = ("id", "type", "created", "updated", "target_id", "target_type")
    return {key: value if key in keep else redact_json(value) for key, value in entry.items()}

"""The projects a dashboard shows, and what is costly to read about each, kept while the
files are unchanged.

A dashboard opens on one folder (its project is "here") and knows every project the
history has seen. A page names a project by its row id in history.db, never by a path:
no request can make the dashboard read a folder the history or the person did not name.

The server is one long-lived process, so a parsed brain.md (10,000 entries take ~120 ms)
and a built context document are kept, keyed by the size, time and inode of the files
they came from, and read again only when one changes.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import repo
from ..context.cache import fingerprint
from ..errors import BrainError
from ..guard import db as history_db
from ..paths import history_file
from ..session.manager import BrainManager, utc_now
from ..session.model import BrainEntry
from ..state.brainjson import ProjectState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..context.build import ContextDocument

Clock = Callable[[], datetime]

#: What a page says when there is no history.db yet.
NO_HISTORY = (
    "No history yet: it starts with the first session of an agent whose hooks are "
    "installed (`voyager-brain install claude`, or codex, gemini, cursor, copilot), or "
    "import Claude Code transcripts with `voyager-brain history import`."
)


class PageError(BrainError):
    """A page asked for something that is not there (a project, a session, a rule)."""


@dataclass(frozen=True, slots=True)
class Project:
    """A project the dashboard can show: its row in history.db (None for the folder the
    dashboard was opened on when the history has not seen it), its folder, its name."""

    id: int | None
    path: Path
    name: str
    here: bool

    @property
    def ref(self) -> str:
        """The value of ``?project=`` that names it ("" for here)."""
        return "" if self.here or self.id is None else str(self.id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "name": self.name,
            "here": self.here,
            "exists": self.path.is_dir(),
        }


@dataclass(frozen=True, slots=True)
class Brain:
    """brain.md and brain.json of one project as read at one moment."""

    project: str
    entries: tuple[BrainEntry, ...]
    state: ProjectState
    compact_budget_tokens: int
    chars_per_token: int
    chars: int
    last_compaction: datetime | None


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class Dashboard:
    """What every page of one dashboard shares: the folder it was opened on, the
    history, the clock, and the files read so far."""

    def __init__(
        self, root: Path, *, clock: Clock = utc_now, history_path: str | None = None
    ) -> None:
        self.root = root.resolve()
        self.top = (repo.find_top(self.root) or self.root).resolve()
        self.clock = clock
        self.history_path = history_path or history_file()
        self._brains: dict[Path, tuple[Any, Brain]] = {}
        self._contexts: dict[Path, tuple[Any, ContextDocument]] = {}

    # -- the history ------------------------------------------------------------------

    def history(self) -> sqlite3.Connection | None:
        """history.db, or None when there is none yet (it is never created here).

        Raises `HistoryError` when it cannot be opened (not a database, too new)."""
        if not os.path.exists(self.history_path):
            return None
        return history_db.connect(self.history_path)

    def history_problem(self) -> str | None:
        """Why history.db cannot be read, or None when it can (or is absent)."""
        try:
            self.history()
        except BrainError as exc:
            return str(exc)
        return None

    def _readable_history(self) -> sqlite3.Connection | None:
        """history.db for the pages that can do without it (the overview, the brain
        pages): None when it cannot be read, as the history pages say why."""
        try:
            return self.history()
        except BrainError:
            return None

    # -- projects ---------------------------------------------------------------------

    def projects(self) -> list[Project]:
        """Here first, then every project the history knows, the latest session first."""
        here = self.here()
        found = [here]
        db = self._readable_history()
        if db is None:
            return found
        rows = db.execute(
            "SELECT p.id, p.path, p.name, MAX(s.started_at) AS last FROM projects p"
            " LEFT JOIN sessions s ON s.project_id = p.id GROUP BY p.id"
            " ORDER BY last IS NULL, last DESC, p.id"
        ).fetchall()
        for row in rows:
            if here.id is not None and row["id"] == here.id:
                continue
            path = Path(row["path"])
            found.append(Project(row["id"], path, row["name"] or path.name, here=False))
        return found

    def here(self) -> Project:
        """The project the dashboard was opened on."""
        row_id = None
        db = self._readable_history()
        if db is not None:
            row = db.execute(
                "SELECT id FROM projects WHERE path = ?", (os.path.realpath(self.top),)
            ).fetchone()
            row_id = int(row[0]) if row is not None else None
        return Project(row_id, self.top, repo.detect_project_name(self.top), here=True)

    def project(self, ref: str | None) -> Project:
        """The project ``?project=`` names: a row id of history.db, or here when empty."""
        here = self.here()
        if not ref or (here.id is not None and ref == str(here.id)):
            return here
        from ..guard.queries import row_id

        db = self.history()
        number = row_id(ref)
        if number is None or db is None:
            shown = ref if len(ref) <= 80 else ref[:80] + "…"
            raise PageError(f"no project {shown!r} in the history (see the overview)")
        row = db.execute("SELECT id, path, name FROM projects WHERE id = ?", (number,)).fetchone()
        if row is None:
            raise PageError(f"no project {ref} in the history (see the overview)")
        path = Path(row["path"])
        return Project(row["id"], path, row["name"] or path.name, here=False)

    # -- what is costly to read -------------------------------------------------------

    def manager(self, project: Project) -> BrainManager:
        if not project.path.is_dir():
            raise PageError(f"{project.path}: the folder is gone (the history remembers it)")
        return BrainManager(project.path, clock=self.clock)

    def brain(self, project: Project) -> Brain:
        """brain.md and brain.json, parsed again only when either file changed.

        Raises the library's one-line errors (a corrupt file names file and line)."""
        bm = self.manager(project)
        key = (_stat(bm.path), _stat(bm.state_path))
        kept = self._brains.get(bm.top)
        if kept is not None and kept[0] == key:
            return kept[1]
        state = bm.load()
        brain = Brain(
            project=bm.project,
            entries=state.entries,
            state=bm.state,
            compact_budget_tokens=bm.config.compact_budget_tokens,
            chars_per_token=bm.config.chars_per_token,
            chars=len(state.content),
            last_compaction=bm.last_compaction,
        )
        self._brains[bm.top] = (key, brain)
        return brain

    def context(self, project: Project) -> ContextDocument:
        """The session-start document with every candidate line (as `context --json`),
        built again when a file it reads changed or its day passed."""
        bm = self.manager(project)
        now = self.clock()
        key = fingerprint(bm.root, None)
        kept = self._contexts.get(bm.top)
        if kept is not None and kept[0] == key:
            doc = kept[1]
            if doc.valid_until is None or now < doc.valid_until:
                return doc
        doc = bm.context_document(None, explain=True)
        self._contexts[bm.top] = (key, doc)
        return doc

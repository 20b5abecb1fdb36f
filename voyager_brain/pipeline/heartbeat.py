"""The heartbeat (seed 004's stall detection): a pipeline whose agent died leaves its state
`running` forever, so something outside the engine has to notice. `check_projects` looks
at every project where a pipeline ran and marks a `running` pipeline `stalled` when its
`updatedAt` is strictly more than `STALL_AFTER_MS` old, with a ``pipeline.stalled`` event.

The projects are remembered in ``$VOYAGER_HOME/pipeline-projects.json``, because the
heartbeat runs from a timer with no project of its own::

    {
      "projects": [
        "/abs/path/one",
        "/abs/path/two"
      ]
    }

A heartbeat only reads, except for the one transition it makes: a completed, failed or
already stalled pipeline, a project without a pipeline, a missing folder and a file it
cannot read are reported and left exactly as they are (not even a lock file is created).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .. import paths, storage
from ..errors import CorruptFileError
from ..session.manager import Clock, utc_now
from ..value import Record
from . import state as ps
from .events import append_event
from .state import STALL_AFTER_MS, PipelineState, epoch_ms, json_document

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REGISTRY_FILE = "pipeline-projects.json"

#: What a check did to one project.
ACTIONS = ("stalled", "ok", "no pipeline", "missing project", "corrupt")

_MINUTE_MS = 60_000


# -- the registry of projects ---------------------------------------------------------


def registry_path() -> Path:
    """``pipeline-projects.json`` in the personal folder (``$VOYAGER_HOME``)."""
    return paths.voyager_home() / REGISTRY_FILE


def _parse_registry(data: bytes, path: Path) -> tuple[list[str], dict[str, Any]]:
    """The project paths, and the whole document (keys we do not know are kept)."""
    document = json_document(data, path)
    if not isinstance(document, dict):
        raise CorruptFileError(path, 'expected a JSON object {"projects": [...]}')
    projects = document.get("projects")
    if not isinstance(projects, list):
        raise CorruptFileError(path, "projects: expected a list of absolute paths")
    for i, project in enumerate(projects):
        # A relative path would mean whatever folder the heartbeat happens to run in.
        if not isinstance(project, str) or not os.path.isabs(project):
            raise CorruptFileError(path, f"projects[{i}]: expected an absolute path")
    return projects, document


def _read_registry(path: Path) -> tuple[list[str], dict[str, Any]]:
    data = storage.read_bytes(path)
    return ([], {}) if data is None else _parse_registry(data, path)


def _dump_registry(projects: Iterable[str], document: dict[str, Any]) -> bytes:
    # Sorted and deduplicated, "projects" first: the same set always gives the same bytes.
    out = {"projects": sorted(set(projects))}
    out.update((k, v) for k, v in document.items() if k != "projects")
    from ..jsonfile import dumps

    return (dumps(out, indent=2) + "\n").encode()


def known_projects() -> list[Path]:
    """The remembered projects, sorted. Raises `CorruptFileError` when the registry
    cannot be read (it is then left for a person to fix, never rewritten)."""
    projects, _ = _read_registry(registry_path())
    return [Path(p) for p in sorted(set(projects))]


def remember_project(root: Path) -> None:
    """Add `root` (made absolute) to the registry, under its lock so that pipelines
    starting at once in several projects all stay remembered. Nothing is written when it
    is already there; a registry that cannot be read raises `CorruptFileError`."""
    project = os.path.abspath(root)
    path = registry_path()
    with storage.locked(path):
        projects, document = _read_registry(path)
        if project in projects:
            return
        storage.atomic_write(path, _dump_registry([*projects, project], document))


def forget_project(root: Path) -> bool:
    """Remove `root` from the registry (a project that no longer exists); False when it
    was not there, and nothing is written then."""
    project = os.path.abspath(root)
    path = registry_path()
    with storage.locked(path):
        projects, document = _read_registry(path)
        if project not in projects:
            return False
        storage.atomic_write(path, _dump_registry((p for p in projects if p != project), document))
        return True


# -- the check ------------------------------------------------------------------------


class Report(Record):
    """What a check found in one project and did to it. `action` is one of `ACTIONS`;
    the statuses are None when there is no readable state; `stage`, `role`, `task` and
    `idle_minutes` (whole minutes since `updatedAt`) are None when not known; `error` is
    the one-line reason of a ``corrupt`` report."""

    project: str
    action: str
    status_before: str | None = None
    status_after: str | None = None
    stage: int | None = None
    role: str | None = None
    task: str | None = None
    idle_minutes: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The report for ``--json``: every field, snake_case, nulls included."""
        out: dict[str, Any] = self._asdict()
        return out

    def describe(self) -> str:
        """One line for people: ``/p: stalled, stage 2 (builder), no update for 31 min``."""
        if self.action == "corrupt":
            return f"{self.project}: corrupt: {self.error}"
        if self.action in ("no pipeline", "missing project"):
            return f"{self.project}: {self.action}"
        what = "stalled" if self.action == "stalled" else self.status_after
        # People count stages from 1 (as `pipeline status` does); `stage` is the index.
        where = f"stage {self.stage + 1} ({self.role})" if self.stage is not None else ""
        if what in ("running", "stalled"):
            where += f", no update for {self.idle_minutes} min"
        return f"{self.project}: {what}" + (f", {where}" if where else "")


def _report(
    project: str, action: str, before: PipelineState, after: PipelineState, now_ms: int
) -> Report:
    stage = before.stage
    return Report(
        project=project,
        action=action,
        status_before=before.status,
        status_after=after.status,
        stage=before.current_stage,
        role=stage.agent if stage is not None else None,
        task=before.task,
        # A clock behind the writer's (another machine, a skewed clock) reads as idle 0.
        idle_minutes=max(0, now_ms - before.updated_at) // _MINUTE_MS,
    )


def check_project(root: Path, clock: Clock = utc_now, threshold_ms: int = STALL_AFTER_MS) -> Report:
    """Mark the project's pipeline `stalled` when it is `running` and its `updatedAt` is
    strictly more than `threshold_ms` before `clock()` (read once: the new `updatedAt` and
    the event's time are the same moment), and append a ``pipeline.stalled`` event.

    A missing folder, no state and a state that cannot be read give a report, never an
    exception and never a write."""
    moment = clock()
    now_ms = epoch_ms(moment)
    project = os.path.abspath(root)
    if not root.is_dir():
        return Report(project, "missing project")
    try:
        # First without the lock: the heartbeat passes most projects by, and locking
        # would create .brain/ (or a lock file) in them.
        seen = ps.load(root)
    except CorruptFileError as exc:
        return Report(project, "corrupt", error=str(exc))
    if seen is None:
        return Report(project, "no pipeline")
    if not ps.mark_stalled(seen, now_ms, threshold_ms)[1]:
        return _report(project, "ok", seen, seen, now_ms)

    # It looks stalled: decide again under the lock, on what is there now (the engine
    # may have moved on since), so that nothing slips in between the read and the write.
    found: list[PipelineState] = []

    def change(current: PipelineState | None) -> PipelineState | None:
        if current is None:
            return None
        found.append(current)
        stalled, changed = ps.mark_stalled(current, now_ms, threshold_ms)
        return stalled if changed else None

    try:
        after = ps.update(root, change)
    except CorruptFileError as exc:
        return Report(project, "corrupt", error=str(exc))
    if after is None or not found:
        return Report(project, "no pipeline")
    before = found[0]
    if after is before:
        return _report(project, "ok", before, after, now_ms)
    report = _report(project, "stalled", before, after, now_ms)
    # Appended once the state is written, so the log never tells of a stall that did not
    # happen; a crash right between leaves a stalled state without its event.
    append_event(
        root,
        "pipeline.stalled",
        lambda: moment,
        stage=report.stage,
        role=report.role,
        task=report.task,
        idle_minutes=report.idle_minutes,
    )
    return report


def check_projects(
    roots: Iterable[Path], clock: Clock = utc_now, threshold_ms: int = STALL_AFTER_MS
) -> list[Report]:
    """`check_project` for each root, in the given order, all at the same moment (the
    clock is read once) so that one heartbeat judges every project alike."""
    moment = clock()
    return [check_project(root, lambda: moment, threshold_ms) for root in roots]

"""What this user started on this machine: each project's run, the runner command given
with ``--runner`` and the pid of the agent running now, in
``$VOYAGER_HOME/pipeline-runs.json``.

``.brain/pipeline-state.json`` lives in the project, where a cloned repository can put
anything (the file is ignored by git, but a force-committed one is checked out like any
other): a runner to run on `resume`, a `runnerPid` for `cancel` to signal. So the engine
uses a runner or a pid from that file only when this record, which only the engine
writes, names the same run (its random ``runId``) in the same project (its resolved
path)::

    {
      "projects": {
        "/resolved/project": {
          "runId": "3f2a9c0e5b7d1a46",
          "engineId": "9b1e4d2c7a5f3e80",
          "runner": "my-agent --fast",
          "runnerPid": 41235
        }
      }
    }

One entry per project (one pipeline runs there at a time): a new run replaces it.
``runner`` is there only when the user gave one; ``runnerPid`` only while the engine
named by ``engineId`` runs an agent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from .. import paths, storage
from ..errors import BrainError, CorruptFileError
from .state import BRAIN_DIR, STATE_FILE, PipelineState, json_document

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RECORD_FILE = "pipeline-runs.json"

Entry = dict[str, object]


def record_path() -> Path:
    """``pipeline-runs.json`` in the personal folder (``$VOYAGER_HOME``)."""
    return paths.voyager_home() / RECORD_FILE


def _key(root: Path) -> str:
    # Resolved, so that a state copied into another folder (or reached by another name
    # of the same folder) is judged by the project it is in now.
    return os.path.realpath(root)


def _read(path: Path) -> dict[str, Any]:
    data = storage.read_bytes(path)
    if data is None:
        return {"projects": {}}
    document = json_document(data, path)
    if not isinstance(document, dict) or not isinstance(document.get("projects"), dict):
        raise CorruptFileError(path, 'expected a JSON object {"projects": {...}}')
    return document


def entry(root: Path) -> Entry | None:
    """This project's record, None when there is none. `CorruptFileError` when the
    record cannot be read."""
    found = _read(record_path())["projects"].get(_key(root))
    return found if isinstance(found, dict) else None


def _change(root: Path, change: Callable[[Entry | None], Entry | None]) -> None:
    """A locked read-change-write of this project's entry (None from `change`: no write)."""
    path = record_path()
    key = _key(root)
    with storage.locked(path):
        document = _read(path)
        current = document["projects"].get(key)
        new = change(current if isinstance(current, dict) else None)
        if new is None:
            return
        document["projects"][key] = new
        document["projects"] = dict(sorted(document["projects"].items()))
        storage.atomic_write(path, (json.dumps(document, indent=2) + "\n").encode())


def start(root: Path, run_id: str, engine_id: str, runner: str | None) -> None:
    """An engine starts (`run`) or takes over (`resume`) the run `run_id`: the runner is
    `runner` when the user gave one, else the one recorded for this same run (a resume
    without ``--runner``); a pid recorded by an earlier engine is dropped."""

    def change(current: Entry | None) -> Entry:
        new: Entry = {"runId": run_id, "engineId": engine_id}
        kept = current.get("runner") if current and current.get("runId") == run_id else None
        if runner is not None or isinstance(kept, str):
            new["runner"] = runner if runner is not None else kept
        return new

    _change(root, change)


def note_pid(root: Path, engine_id: str, pid: int) -> None:
    """The engine `engine_id` started its agent as `pid` (nothing is written when the
    record is another engine's by now)."""

    def change(current: Entry | None) -> Entry | None:
        if current is None or current.get("engineId") != engine_id:
            return None
        return {**current, "runnerPid": pid}

    _change(root, change)


class ForeignRunnerError(BrainError):
    """pipeline-state.json stores a runner this user did not give this run here."""


def stored_runner(root: Path, state: PipelineState) -> str | None:
    """The runner `run --runner` (or `resume --runner`) stored in `state`, None when it
    stores none. `ForeignRunnerError` when the record does not name the same command for
    the same run in this project: the state may come from a cloned repository, and its
    command is never run."""
    runner = state.extra.get("runner")
    if runner is None:
        return None
    found = entry(root)
    if (
        isinstance(runner, str)
        and found is not None
        and found.get("runId") == state.extra.get("runId")
        and found.get("runner") == runner
    ):
        return runner
    shown = runner if not isinstance(runner, str) or len(runner) <= 60 else runner[:57] + "..."
    raise ForeignRunnerError(
        f"{root / BRAIN_DIR / STATE_FILE}: runner {shown!r} was not given to this run by"
        " `pipeline run --runner` here; pass --runner CMD to resume with a command of your own"
    )


def our_agent_pid(root: Path, state: PipelineState) -> int | None:
    """The pid of the agent our engine started for the run `state` is at (the engine that
    wrote it), None when there is none or the record cannot be read. The number comes
    from the record, never from the state."""
    try:
        found = entry(root)
    except CorruptFileError:
        return None
    if found is None:
        return None
    pid = found.get("runnerPid")
    same = found.get("runId") == state.extra.get("runId") and found.get(
        "engineId"
    ) == state.extra.get("engineId")
    return pid if same and isinstance(pid, int) and not isinstance(pid, bool) and pid > 1 else None

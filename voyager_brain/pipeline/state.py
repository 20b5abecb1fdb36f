"""``.brain/pipeline-state.json``: where a pipeline is (what happened to it is in
`events`).

The state keeps the original tool's stage-based shape (its readers keep working)::

    {"project": "/abs/path", "task": "...", "pipeline": ["architect", "builder", "reviewer"],
     "status": "running", "currentStage": 1, "startedAt": 1774103400000,
     "updatedAt": 1774103460000,
     "stages": [{"agent": "architect", "status": "completed", "startedAt": ...,
                 "completedAt": ..., "sessionId": "...", "validation": "passed"}, ...],
     "retries": 0, "finalVerdict": "APPROVE", "error": "..."}

Times are epoch milliseconds. `finalVerdict` and `error` are written only when set; a
stage's `startedAt`, `completedAt`, `sessionId` and `validation` are always written
(null until set). Keys we do not know are kept, in the document and in each stage.

Every transition is a pure function from one `PipelineState` to the next; `save` writes
one atomically under the file's lock and refuses to replace a file it cannot read, so a
corrupt state is never overwritten: `reset` moves it aside.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .. import storage
from ..errors import CorruptFileError
from ..session.manager import Clock
from ..value import Value
from .codename import HEAD_KEYS, as_seed, head_document, head_fields, is_head_only
from .fields import choice, field, kind, optional, strings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


BRAIN_DIR = ".brain"
STATE_FILE = "pipeline-state.json"

PIPELINE_STATUSES = ("running", "completed", "failed", "stalled")
STAGE_STATUSES = ("pending", "running", "completed", "failed")
STALL_AFTER_MS = 30 * 60 * 1000

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_ms(moment: datetime) -> int:
    """`moment` as integer milliseconds since the epoch (a naive datetime is UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def state_path(root: Path) -> Path:
    return root / BRAIN_DIR / STATE_FILE


# -- the values -----------------------------------------------------------------------


class StageState(Value):
    """One stage: the role that runs it and how far it got.

    `validation` is ``"passed"`` or the reason the stage's output was refused; `extra`
    holds keys of the stage object that we do not know, kept as they were.
    """

    __slots__ = _fields = (  # in the file's order
        "agent",
        "status",
        "started_at",
        "completed_at",
        "session_id",
        "validation",
        "extra",
    )
    agent: str
    status: str
    started_at: int | None
    completed_at: int | None
    session_id: str | None
    validation: str | None
    extra: Mapping[str, Any]

    def __init__(
        self,
        agent: str,
        status: str = "pending",
        started_at: int | None = None,
        completed_at: int | None = None,
        session_id: str | None = None,
        validation: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if status not in STAGE_STATUSES:
            raise ValueError(
                f"stage status {status!r}: expected one of {', '.join(STAGE_STATUSES)}"
            )
        self._assign(
            agent, status, started_at, completed_at, session_id, validation, dict(extra or {})
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "agent": self.agent,
            "status": self.status,
            "startedAt": self.started_at,
            "completedAt": self.completed_at,
            "sessionId": self.session_id,
            "validation": self.validation,
        }
        out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out

    @classmethod
    def from_json(cls, document: object, where: str = "stages[0]") -> StageState:
        """Read one stage object; a `ValueError` names the field (``stages[1].status``)."""
        if not isinstance(document, dict):
            raise ValueError(f"{where}: expected an object, got {kind(document)}")
        return cls(
            agent=field(document, "agent", str, where),
            status=choice(document, "status", STAGE_STATUSES, where),
            started_at=optional(document, "startedAt", int, where),
            completed_at=optional(document, "completedAt", int, where),
            session_id=optional(document, "sessionId", str, where),
            validation=optional(document, "validation", str, where),
            extra={k: v for k, v in document.items() if k not in _STAGE_KEYS},
        )


_STAGE_KEYS = frozenset({"agent", "status", "startedAt", "completedAt", "sessionId", "validation"})


class PipelineState(Value):
    """The whole of pipeline-state.json; `extra` keeps the keys we do not know.

    `head` holds codename-claude's current fields when the file was in that format alone
    (its engine wrote it): the seed's fields are derived from them (`codename.as_seed`)
    and the file is written back in that format alone (`codename.head_document`)."""

    __slots__ = _fields = (  # in the file's order
        "project",
        "task",
        "pipeline",
        "status",
        "current_stage",
        "started_at",
        "updated_at",
        "stages",
        "retries",
        "final_verdict",
        "error",
        "extra",
        "head",
    )
    project: str
    task: str
    pipeline: tuple[str, ...]
    status: str
    current_stage: int
    started_at: int
    updated_at: int
    stages: tuple[StageState, ...]
    retries: int
    final_verdict: str | None
    error: str | None
    extra: Mapping[str, Any]
    head: Mapping[str, Any] | None

    def __init__(
        self,
        project: str,
        task: str,
        pipeline: Sequence[str],
        status: str,
        current_stage: int,
        started_at: int,
        updated_at: int,
        stages: Sequence[StageState],
        retries: int = 0,
        final_verdict: str | None = None,
        error: str | None = None,
        extra: Mapping[str, Any] | None = None,
        head: Mapping[str, Any] | None = None,
    ) -> None:
        if status not in PIPELINE_STATUSES:
            raise ValueError(f"status {status!r}: expected one of {', '.join(PIPELINE_STATUSES)}")
        self._assign(
            project,
            task,
            tuple(pipeline),
            status,
            current_stage,
            started_at,
            updated_at,
            tuple(stages),
            retries,
            final_verdict,
            error,
            dict(extra or {}),
            None if head is None else dict(head),
        )

    @property
    def stage(self) -> StageState | None:
        """The stage at `current_stage`, or None when the index is out of range."""
        if 0 <= self.current_stage < len(self.stages):
            return self.stages[self.current_stage]
        return None

    def to_json(self) -> dict[str, Any]:
        """The document, its keys in the original tool's order, unknown keys last."""
        if self.head is not None:
            return head_document(self, self.head)
        out: dict[str, Any] = {
            "project": self.project,
            "task": self.task,
            "pipeline": list(self.pipeline),
            "status": self.status,
            "currentStage": self.current_stage,
            "startedAt": self.started_at,
            "updatedAt": self.updated_at,
            "stages": [stage.to_json() for stage in self.stages],
            "retries": self.retries,
        }
        if self.final_verdict is not None:
            out["finalVerdict"] = self.final_verdict
        if self.error is not None:
            out["error"] = self.error
        out.update((k, v) for k, v in self.extra.items() if k not in _STATE_KEYS)
        out.update(head_fields(self))
        return out

    def head_fields(self) -> dict[str, Any]:
        """codename-claude's current fields, made from ours (`codename.head_fields`)."""
        return head_fields(self)

    def dumps(self) -> str:
        """The file's text: two-space indent, UTF-8 as is (a lone surrogate escaped), a
        final newline."""
        from ..jsonfile import dumps

        return dumps(self.to_json(), indent=2) + "\n"

    @classmethod
    def from_json(cls, document: object, path: Path | None = None) -> PipelineState:
        """Read the document. Raises `CorruptFileError` naming `path` (default
        ``pipeline-state.json``) and the field when the shape or a type is wrong."""
        where = path or Path(STATE_FILE)
        try:
            return cls._from_json(document)
        except ValueError as exc:
            raise CorruptFileError(where, str(exc)) from None

    @classmethod
    def _from_json(cls, document: object) -> PipelineState:
        if not isinstance(document, dict):
            raise ValueError(f"expected a JSON object, got {kind(document)}")
        head = None
        if is_head_only(document):
            document, head = as_seed(document)
        # Checked in the file's key order, so the first problem reported is the first one.
        project = field(document, "project", str, "")
        task = field(document, "task", str, "")
        pipeline = strings(document, "pipeline", "")
        status = choice(document, "status", PIPELINE_STATUSES, "")
        current_stage = field(document, "currentStage", int, "")
        started_at = field(document, "startedAt", int, "")
        updated_at = field(document, "updatedAt", int, "")
        raw_stages = field(document, "stages", list, "")
        stages = [StageState.from_json(s, f"stages[{i}]") for i, s in enumerate(raw_stages)]
        return cls(
            project=project,
            task=task,
            pipeline=pipeline,
            status=status,
            current_stage=current_stage,
            started_at=started_at,
            updated_at=updated_at,
            stages=stages,
            retries=field(document, "retries", int, ""),
            final_verdict=optional(document, "finalVerdict", str, ""),
            error=optional(document, "error", str, ""),
            extra={k: v for k, v in document.items() if k not in _STATE_KEYS | HEAD_KEYS},
            head=head,
        )


_STATE_KEYS = frozenset(
    {
        "project",
        "task",
        "pipeline",
        "status",
        "currentStage",
        "startedAt",
        "updatedAt",
        "stages",
        "retries",
        "finalVerdict",
        "error",
    }
)

# -- transitions ----------------------------------------------------------------------


def new_state(project: Path | str, task: str, roles: Sequence[str], clock: Clock) -> PipelineState:
    """A running pipeline at stage 0, every stage pending. An empty role list is refused."""
    if not roles:
        raise ValueError("a pipeline needs at least one stage")
    now = epoch_ms(clock())
    return PipelineState(
        project=os.path.abspath(project),
        task=task,
        pipeline=roles,
        status="running",
        current_stage=0,
        started_at=now,
        updated_at=now,
        stages=[StageState(role) for role in roles],
    )


def _with_stage(
    state: PipelineState, index: int, stage: StageState, now: int, **changes: Any
) -> PipelineState:
    stages = list(state.stages)
    stages[index] = stage
    result: PipelineState = state.replace(
        stages=stages, current_stage=index, updated_at=now, **changes
    )
    return result


def _check_index(state: PipelineState, index: int) -> StageState:
    if not 0 <= index < len(state.stages):
        raise ValueError(f"stage {index}: the pipeline has {len(state.stages)} stages")
    return state.stages[index]


def start_stage(state: PipelineState, index: int, clock: Clock) -> PipelineState:
    """Stage `index` running (its earlier outcome cleared), the pipeline running there."""
    stage = _check_index(state, index)
    now = epoch_ms(clock())
    started = StageState(stage.agent, "running", started_at=now, extra=stage.extra)
    return _with_stage(state, index, started, now, status="running", error=None)


def finish_stage(
    state: PipelineState, index: int, clock: Clock, session_id: str | None = None
) -> PipelineState:
    """Stage `index` completed and validated (``validation`` = ``"passed"``)."""
    stage = _check_index(state, index)
    now = epoch_ms(clock())
    done = stage.replace(
        status="completed",
        completed_at=now,
        session_id=session_id if session_id is not None else stage.session_id,
        validation="passed",
    )
    return _with_stage(state, index, done, now)


def fail_stage(
    state: PipelineState,
    index: int,
    reason: str,
    clock: Clock,
    validation: str | None = None,
    session_id: str | None = None,
) -> PipelineState:
    """Stage `index` and the pipeline failed, `reason` in `error`. `validation` is the
    reason the stage's output was refused, when that is why it failed."""
    stage = _check_index(state, index)
    now = epoch_ms(clock())
    failed = stage.replace(
        status="failed",
        completed_at=now,
        session_id=session_id if session_id is not None else stage.session_id,
        validation=validation if validation is not None else stage.validation,
    )
    return _with_stage(state, index, failed, now, status="failed", error=reason)


def restart_from(state: PipelineState, index: int, clock: Clock) -> PipelineState:
    """A retry: `retries` + 1, stages from `index` on pending again, running at `index`."""
    _check_index(state, index)
    now = epoch_ms(clock())
    stages = [
        *state.stages[:index],
        *(StageState(s.agent, extra=s.extra) for s in state.stages[index:]),
    ]
    result: PipelineState = state.replace(
        stages=stages,
        current_stage=index,
        status="running",
        retries=state.retries + 1,
        updated_at=now,
        final_verdict=None,
        error=None,
    )
    return result


def complete(state: PipelineState, verdict: str | None, clock: Clock) -> PipelineState:
    """The pipeline completed with `verdict` as its `finalVerdict`."""
    result: PipelineState = state.replace(
        status="completed", final_verdict=verdict, error=None, updated_at=epoch_ms(clock())
    )
    return result


def fail(state: PipelineState, reason: str, verdict: str | None, clock: Clock) -> PipelineState:
    """The pipeline failed as a whole (max retries, a REDESIGN without an architect...)."""
    result: PipelineState = state.replace(
        status="failed", final_verdict=verdict, error=reason, updated_at=epoch_ms(clock())
    )
    return result


def mark_stalled(
    state: PipelineState, now_ms: int, threshold_ms: int = STALL_AFTER_MS
) -> tuple[PipelineState, bool]:
    """`stalled` when the pipeline is `running` and its `updatedAt` is strictly more than
    `threshold_ms` old (`updatedAt` then becomes `now_ms`); otherwise `state` unchanged.
    The flag says whether it changed."""
    if state.status != "running" or now_ms - state.updated_at <= threshold_ms:
        return state, False
    stalled: PipelineState = state.replace(status="stalled", updated_at=now_ms)
    return stalled, True


# -- the file -------------------------------------------------------------------------


def json_document(data: bytes, path: Path) -> Any:
    """`data` parsed as JSON; `CorruptFileError` naming `path` (and the line) if it is not
    (`jsonfile`: not UTF-8, not JSON, nested too deep, an integer too long)."""
    from ..jsonfile import JSONTextError
    from ..jsonfile import loads as read_json

    try:
        return read_json(data)
    except JSONTextError as exc:
        raise CorruptFileError(path, exc.detail, exc.line) from None


def _parse(data: bytes, path: Path) -> PipelineState:
    return PipelineState.from_json(json_document(data, path), path)


def load(root: Path) -> PipelineState | None:
    """The project's pipeline state, or None when no pipeline ever ran. Raises
    `CorruptFileError` (naming the file, and the field or line) when it cannot be read."""
    path = state_path(root)
    data = storage.read_bytes(path)
    return None if data is None else _parse(data, path)


def save(root: Path, state: PipelineState) -> None:
    """Write `state` atomically under the file's lock. A file already there that cannot
    be read is never replaced: `CorruptFileError` (run `reset` first)."""
    path = state_path(root)
    with storage.locked(path):
        data = storage.read_bytes(path)
        if data is not None:
            _parse(data, path)
        storage.atomic_write(path, state.dumps().encode())


def update(
    root: Path, change: Callable[[PipelineState | None], PipelineState | None]
) -> PipelineState | None:
    """Read the state, pass it to `change` and write what it returns, all under the
    file's lock, so that no other writer (the engine, `cancel`, the heartbeat) slips in
    between. `change` gets None when there is no state and returns None to write
    nothing. Returns the state now on disk. A file that cannot be read raises
    `CorruptFileError` and is left as it is."""
    path = state_path(root)
    with storage.locked(path):
        data = storage.read_bytes(path)
        current = None if data is None else _parse(data, path)
        new = change(current)
        if new is None:
            return current
        storage.atomic_write(path, new.dumps().encode())
        return new


def reset(root: Path, clock: Clock) -> Path | None:
    """Move the state file aside (``pipeline-state.json.<stamp>.corrupt``), readable or
    not, so that a new run can start. Returns where it went, None when there was none."""
    path = state_path(root)
    stamp = clock().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    with storage.locked(path):
        if not path.exists():
            return None
        return storage.move_aside(path, stamp)

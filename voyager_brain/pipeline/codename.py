"""codename-claude's current pipeline-state.json format, beside the seed's.

codename-claude (github.com/CodenameDwayne/codename-claude) replaced the seed's stages with
a builder's loop over PLAN.md's items at its commit 374e3fe. Its current readers
(src/pipeline/state.ts, src/heartbeat/loop.ts, src/agents/runner.ts, src/cli.ts) read::

    {"project": ..., "task": ..., "agentPipeline": ["architect", "builder", "reviewer"],
     "status": "running", "phase": "building", "startedAt": ..., "updatedAt": ...,
     "tasks": [{"title": "...", "status": "in_progress", "attempts": 1,
                "lastVerdict": "...", "lastSessionId": "...", "completedAt": ...}],
     "currentTaskIndex": 0, "totalIterations": 1, "retries": 0,
     "finalVerdict": "APPROVE", "error": "..."}

Every save of ours writes these fields, made from the seed's (`head_fields`), so that
both versions' readers work on our file. A file in only this format (its engine wrote it)
reads as a seed state derived from it (`as_seed`) and is written back in this format alone
(`head_document`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .fields import choice, field, kind, strings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .state import PipelineState

#: The fields only the current format has.
HEAD_KEYS = frozenset({"agentPipeline", "phase", "tasks", "currentTaskIndex", "totalIterations"})
#: The seed's fields that the current format dropped.
SEED_KEYS = frozenset({"pipeline", "currentStage", "stages"})
TASK_STATUSES = ("pending", "in_progress", "completed", "failed")
#: A stage's status as the current format names a task's.
_TASK_STATUS = {"running": "in_progress"}


def is_head_only(document: dict[str, Any]) -> bool:
    """Whether `document` is in the current format alone."""
    return "agentPipeline" in document and not SEED_KEYS & document.keys()


def _phase(state: PipelineState) -> str:
    if state.status in ("completed", "failed"):
        return state.status
    agent = state.stage.agent if state.stage is not None else ""
    if "build" in agent or "review" in agent:
        return "building"
    return "scouting" if "scout" in agent else "planning"


def head_fields(state: PipelineState) -> dict[str, Any]:
    """The current format's fields for a state of ours: `agentPipeline` (the pipeline),
    `phase` (from the current stage's role, or the end), a task per stage (its role as
    `title`), `currentTaskIndex` (the current stage), `totalIterations` (builder runs)."""
    tasks = []
    for stage in state.stages:
        task: dict[str, Any] = {
            "title": stage.agent,
            "status": _TASK_STATUS.get(stage.status, stage.status),
            "attempts": 0 if stage.status == "pending" else 1,
        }
        if stage.session_id is not None:
            task["lastSessionId"] = stage.session_id
        if stage.completed_at is not None:
            task["completedAt"] = stage.completed_at
        tasks.append(task)
    return {
        "agentPipeline": list(state.pipeline),
        "phase": _phase(state),
        "tasks": tasks,
        "currentTaskIndex": state.current_stage if state.stage is not None else -1,
        "totalIterations": sum(t["attempts"] for t in tasks if "build" in t["title"]),
    }


def head_document(state: PipelineState, head: Mapping[str, Any]) -> dict[str, Any]:
    """A state read from a file in the current format alone, as that format: its keys
    in the order of codename-claude's `PipelineState`, its `tasks` as they were (they are
    PLAN.md's, which we do not track), `phase` following an end we wrote (a cancel fails
    it), as its own engine's writes do; a stall leaves `phase`, as its heartbeat does."""
    out: dict[str, Any] = {
        "project": state.project,
        "task": state.task,
        "agentPipeline": list(state.pipeline),
        "status": state.status,
        "phase": state.status if state.status in ("completed", "failed") else head["phase"],
        "startedAt": state.started_at,
        "updatedAt": state.updated_at,
        "tasks": head["tasks"],
        "currentTaskIndex": head["currentTaskIndex"],
        "totalIterations": head["totalIterations"],
        "retries": state.retries,
    }
    if state.final_verdict is not None:
        out["finalVerdict"] = state.final_verdict
    if state.error is not None:
        out["error"] = state.error
    out.update((k, v) for k, v in state.extra.items() if k not in out)
    return out


def as_seed(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A document in the current format alone as one in the seed's, and the current
    format's own fields (`phase`, `tasks`, `currentTaskIndex`, `totalIterations`).

    The pipeline is `agentPipeline` (every role: its engine stores them all). Its engine
    runs the roles that neither build nor review first (`phase` ``scouting`` for a scout,
    ``planning`` for the others), then the builder's loop (``building``); the stage
    `phase` points at has the pipeline's status (running when stalled), those before it
    completed, those after it pending. A ValueError names a field that is missing or of
    the wrong type."""
    roles = strings(document, "agentPipeline", "")
    phase = field(document, "phase", str, "")
    tasks = field(document, "tasks", list, "")
    for i, item in enumerate(tasks):
        where = f"tasks[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where}: expected an object, got {kind(item)}")
        field(item, "title", str, where)
        choice(item, "status", TASK_STATUSES, where)
    head = {
        "phase": phase,
        "tasks": tasks,
        "currentTaskIndex": field(document, "currentTaskIndex", int, ""),
        "totalIterations": field(document, "totalIterations", int, ""),
    }
    status = str(document.get("status"))  # checked with the seed's fields
    current = _phase_stage(roles, phase, status, looped=bool(tasks))
    now = {"stalled": "running"}.get(status, status)
    stages = [
        {
            "agent": role,
            "status": "completed" if i < current else now if i == current else "pending",
        }
        for i, role in enumerate(roles)
    ]
    seed = {k: v for k, v in document.items() if k not in HEAD_KEYS}
    seed.update(pipeline=roles, currentStage=current, stages=stages)
    return seed, head


def _phase_stage(roles: Sequence[str], phase: str, status: str, looped: bool) -> int:
    # A failed pipeline failed in the loop when the loop had made its tasks; otherwise its
    # file does not say where, and the first stage stands for it.
    def first(match: Callable[[str], bool]) -> int:
        return next((i for i, role in enumerate(roles) if match(role)), 0)

    def in_loop(role: str) -> bool:
        return "build" in role or "review" in role

    if status == "completed" or phase == "completed":
        return max(len(roles) - 1, 0)
    if phase == "building" or (phase == "failed" and looped):
        return first(in_loop)
    if phase == "scouting":
        return first(lambda role: "scout" in role)
    if phase == "planning":
        return first(lambda role: "scout" not in role and not in_loop(role))
    return 0

"""What each stage's agent is told: its task (stdin) and its system prompt.

The system prompt, in order (seed 004's, plus the project's memory):

1. the role's instructions, ``templates/pipeline/<role>.md.j2`` (a project overrides one
   with ``.voyager/templates/pipeline/<role>.md.j2``);
2. voyager-brain's budgeted context: what the project's memory holds (brain.md, brain.json,
   the memory logs), as a session start injects it;
3. the ``.brain/`` files: PROJECT.md, DECISIONS.md, PATTERNS.md, MISTAKES.md (its newest
   entries within 3,000 characters), REVIEW.md, RESEARCH/*.md (2,000 characters of each,
   6,000 in all); empty files are left out;
4. where the pipeline is: the task, each stage's status, the retries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from .. import storage
from ..render import Templates
from ..session.manager import Clock
from . import blackboard
from .runner import StageRun
from .state import PipelineState, epoch_ms
from .verdict import schema_text

MISTAKES_CAP = 3000
RESEARCH_CAP_EACH = 2000
RESEARCH_CAP_TOTAL = 6000

#: The .brain/ files put in every system prompt, in this order, with how each is capped.
PROMPT_FILES = ("PROJECT.md", "DECISIONS.md", "PATTERNS.md", "MISTAKES.md", "REVIEW.md")


def templates_for(root: Path) -> Templates:
    return Templates(root / ".voyager" / "templates")


def stage_task(
    templates: Templates, role: str, task: str, *, after: str | None, research: list[str]
) -> str:
    """The text a stage's agent gets on stdin. `after` is the verdict that sent the
    pipeline back to this stage (REVISE or REDESIGN), None on the first pass."""
    text = templates.render_with_jinja(
        "pipeline/task.md.j2",
        role=role,
        task=task.strip(),
        revise=after == "REVISE",
        redesign=after == "REDESIGN",
        research=[f".brain/RESEARCH/{name}" for name in research],
    )
    return text.strip() + "\n"


def memory_context(root: Path, budget: int | None = None) -> str:
    """voyager-brain's own context for the project (what a session start injects); a
    line saying why when it cannot be built, so that a broken memory never stops a run."""
    from ..errors import BrainError
    from ..session.manager import BrainManager

    try:
        return BrainManager(root).context(budget).strip()
    except (BrainError, OSError) as exc:
        return f"(The project's memory could not be read: {exc})"


def system_prompt(
    root: Path,
    state: PipelineState,
    index: int,
    templates: Templates,
    memory: str,
    *,
    after: str | None = None,
) -> str:
    """The system prompt of stage `index` of `state` (see the module's docstring)."""
    role = state.pipeline[index]
    parts = [
        templates.render_with_jinja(
            f"pipeline/{role}.md.j2", redesign=after == "REDESIGN", revise=after == "REVISE"
        ).strip()
    ]
    if memory:
        parts.append(f"# The project's memory (voyager-brain)\n\n{memory}")
    brain = blackboard.brain_dir(root)
    for name in PROMPT_FILES:
        text = _read(brain / name).strip()
        if not text:
            continue
        heading = f"# .brain/{name}"
        if name == "MISTAKES.md":
            text = blackboard.capped(text, MISTAKES_CAP).strip()
            heading += f" (the newest lessons, within {MISTAKES_CAP} characters)"
        parts.append(f"{heading}\n\n{text}")
    for note, text in blackboard.research_texts(root, RESEARCH_CAP_EACH, RESEARCH_CAP_TOTAL):
        parts.append(f"# .brain/RESEARCH/{note}\n\n{text}")
    parts.append(pipeline_summary(state, index))
    return "\n\n".join(parts) + "\n"


def pipeline_summary(state: PipelineState, index: int) -> str:
    """Where the pipeline is, for the agent of stage `index`."""
    lines = ["# The pipeline", "", f"Task: {state.task.strip()}", ""]
    for i, stage in enumerate(state.stages):
        status = "you, now" if i == index else stage.status
        when = ""
        if stage.completed_at is not None and i != index:
            when = f", {_iso(stage.completed_at)}"
        lines.append(f"{i + 1}. {stage.agent}: {status}{when}")
    max_retries = state.extra.get("maxRetries")
    limit = f" of {max_retries}" if isinstance(max_retries, int) else ""
    lines += ["", f"Retries so far: {state.retries}{limit}."]
    return "\n".join(lines)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _read(path: Path) -> str:
    # Checked: a .brain file linked out of the repository is refused (`UnsafePathError`),
    # never put into a prompt.
    try:
        data = storage.read_bytes(path)
    except OSError:
        return ""
    return (data or b"").decode("utf-8", errors="replace")


def stage_run(
    root: Path, state: PipelineState, index: int, after: str | None, clock: Clock
) -> StageRun:
    """Everything stage `index`'s agent gets: its task, its system prompt (also written to
    ``.brain/logs/stage-N-ROLE.prompt.md``, which it is pointed at), the reviewer's schema
    file, the ``VOYAGER_*`` variables, and the log its output is appended to."""
    role = state.pipeline[index]
    templates = templates_for(root)
    research = [name for name, _ in blackboard.research_texts(root)]
    task_text = stage_task(templates, role, state.task, after=after, research=research)
    system = system_prompt(root, state, index, templates, memory_context(root), after=after)
    logs = blackboard.brain_dir(root) / blackboard.LOGS_DIR
    logs.mkdir(exist_ok=True)
    stem = f"stage-{index + 1}-{role}"
    prompt_path = logs / f"{stem}.prompt.md"
    _write(prompt_path, system)
    env = {
        "VOYAGER_PIPELINE_ROLE": role,
        "VOYAGER_PIPELINE_STAGE": str(index),
        "VOYAGER_PIPELINE_TASK": state.task,
        "VOYAGER_PIPELINE_SYSTEM_PROMPT": str(prompt_path),
        "VOYAGER_PIPELINE_PROJECT": str(root),
        "VOYAGER_SUBAGENT": "1",
    }
    schema_path = None
    if role == "reviewer":
        schema_path = logs / "review-schema.json"
        _write(schema_path, schema_text())
        env["VOYAGER_PIPELINE_SCHEMA"] = str(schema_path)
    log_path = logs / f"{stem}.log"
    with storage.open_append(log_path) as log:
        log.write(f"\n=== {epoch_ms(clock())} retry {state.retries} ===\n".encode())
    return StageRun(
        root, role, index, state.task, task_text, system, prompt_path, schema_path, env, log_path
    )


def _write(path: Path, text: str) -> None:
    # No lock: only the engine, which holds engine.lock, writes in logs/.
    storage.atomic_write(path, text.encode("utf-8"), durable=False)

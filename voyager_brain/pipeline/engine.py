"""The engine: runs a pipeline's stages in order, checks what each left, routes the
reviewer's verdict, and keeps pipeline-state.json and events.jsonl true at every step.

Three promises the original tool did not keep:

- **The state never stays ``running`` after the engine stops.** Whatever ends a run (an
  agent's failure, an exception, Ctrl-C), the stage and the pipeline are marked failed
  with the reason, and `resume` continues from there.
- **One engine per project.** An engine holds ``.brain/engine.lock`` for as long as it
  runs; a second `run` or `resume` is refused, naming the running pipeline.
- **No lost update.** Every write is a locked read-change-write that first checks that
  the state on disk is still this engine's (a random ``engineId``): after `cancel`, or a
  `reset`, the engine stops its agent and writes nothing more.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import confine, storage
from ..config import Config, load_config
from ..errors import BrainError, CorruptFileError
from ..redact import redact
from ..session.manager import Clock, utc_now
from . import blackboard, ownership, prompt, validate
from . import state as ps
from .events import append_event
from .routing import StagesError, route, validate_roles
from .runner import (
    DEFAULT_REVIEWER_RUNNER,
    DEFAULT_RUNNER,
    Control,
    RunnerResult,
    ShellRunner,
    StageRun,
    call_runner,
    stop_process_group,
)
from .state import PipelineState
from .verdict import (
    VerdictError,
    decide,
    fresh_review_text,
    render_review,
    stage_clock_ms,
)

#: A Python runner: takes the stage, returns a RunnerResult or Claude Code's JSON dict.
Runner = Callable[[StageRun], Any]

ENGINE_LOCK = "engine.lock"
#: How often a running engine refreshes ``updatedAt`` (the heartbeat's stall test is 30
#: minutes without one).
REFRESH_SECONDS = 60.0


class PipelineError(BrainError):
    """A pipeline command that cannot be done as asked (one is already running, there is
    nothing to resume ...): the command exits 2 and nothing is written."""


class _Superseded(Exception):
    """The state on disk is no longer this engine's (cancelled, reset): stop quietly."""


class Pipeline:
    """The pipeline of the project at `root`.

    `runner` is what runs each stage's agent: a Python callable (`Runner`), a shell
    command for every role, or None for ``[pipeline]`` in config.toml (``runner``, and
    ``[pipeline.runners]`` per role), else Claude Code in print mode. `say` gets one line
    per step, for progress.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        runner: Runner | str | None = None,
        config: Config | None = None,
        clock: Clock | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.root = Path(root).absolute()
        self.config = config or load_config(self.root / ".voyager")
        self.clock: Clock = clock or utc_now
        self._runner = runner
        self._say = say or (lambda line: None)
        self._token = secrets.token_hex(8)
        self._state: PipelineState | None = None
        self._last_refresh = 0.0

    # -- the commands ---------------------------------------------------------------------

    def status(self) -> PipelineState | None:
        """The state on disk (None when no pipeline ran); `CorruptFileError` if unreadable."""
        return ps.load(self.root)

    def run(
        self, task: str, stages: Sequence[str] | None = None, max_retries: int | None = None
    ) -> PipelineState:
        """Run `task` through `stages` (default: ``[pipeline] stages``) to the end; the
        final state. Refused (`PipelineError`, `StagesError`, `CorruptFileError`) before
        anything is written when the stages are wrong, a pipeline is running or stalled,
        or the state cannot be read."""
        roles = validate_roles(list(stages) if stages is not None else self.config.pipeline.stages)
        retries = self._max_retries(max_retries)
        if self._runner is None:
            self._refuse_untrusted_runners()
        if not task.strip():
            raise PipelineError("the task is empty; say what the pipeline should do")
        blackboard.check_files(self.root)
        # The task is kept in .brain/ (PROJECT.md, the state, the events) and given to
        # every agent from there: redacted once, here, so all of them hold the same text.
        task = redact(task)
        _load_or_explain(self.root)  # a corrupt state is refused before anything is written
        with self._engine_lock():
            current = _load_or_explain(self.root)
            if current is not None and current.status in ("running", "stalled"):
                raise PipelineError(_busy(current))  # its engine died: resume or cancel it
            blackboard.init_brain(self.root)
            blackboard.bootstrap_project(self.root, task)
            run_id = secrets.token_hex(8)
            extra: dict[str, Any] = {"maxRetries": retries, "runId": run_id, **self._owner()}
            if isinstance(self._runner, str):
                extra["runner"] = self._runner
            ownership.start(self.root, run_id, self._token, self._own_command())
            fresh: PipelineState = ps.new_state(self.root, task, roles, self.clock).replace(
                extra=extra
            )

            def start(current: PipelineState | None) -> PipelineState:
                if current is not None and current.status in ("running", "stalled"):
                    raise PipelineError(_busy(current))
                return fresh

            self._state = ps.update(self.root, start)
            self._remember()
            self._event("pipeline.started", task=task, stages=list(roles), maxRetries=retries)
            self._say(f"pipeline started: {', '.join(roles)} (max retries {retries})")
            return self._drive()

    def resume(self, max_retries: int | None = None) -> PipelineState:
        """Continue the pipeline from its current stage, running that stage again (it was
        running when its engine died, stalled, or failed). `max_retries` replaces the
        stored limit (to give a failed pipeline more rounds)."""
        blackboard.check_files(self.root)
        with self._engine_lock():
            current = _load_or_explain(self.root)
            if current is None:
                raise PipelineError("no pipeline to resume: start one with `pipeline run`")
            if current.status == "completed":
                raise PipelineError("the pipeline already completed; nothing to resume")
            if current.status == "running" and current.head is not None:
                raise PipelineError(_busy(current))
            if current.stage is None:
                raise PipelineError(
                    f"pipeline-state.json: currentStage {current.current_stage} is not a stage"
                )
            try:
                # A cloned state may name any role: it becomes a file name and a template
                # name (.brain/logs/stage-N-ROLE.*), so only the known roles are run.
                validate_roles(current.pipeline)
            except StagesError as exc:
                raise PipelineError(f"pipeline-state.json: pipeline: {exc}") from None
            limit = max_retries
            if limit is None:
                stored = current.extra.get("maxRetries")
                limit = stored if isinstance(stored, int) and not isinstance(stored, bool) else None
            limit = self._max_retries(limit)
            if current.retries > limit:
                raise PipelineError(
                    f"retries is {current.retries}, over max_retries {limit}; pass a higher"
                    " --max-retries"
                )
            if self._runner is None:
                self._runner = ownership.stored_runner(self.root, current)
            if self._runner is None:
                self._refuse_untrusted_runners()
            run_id = current.extra.get("runId")
            run_id = run_id if isinstance(run_id, str) else secrets.token_hex(8)
            runner_extra = {"runner": self._runner} if isinstance(self._runner, str) else {}
            owner = {"maxRetries": limit, "runId": run_id, **self._owner(), **runner_extra}

            def take(on_disk: PipelineState | None) -> PipelineState:
                if on_disk != current:
                    raise PipelineError("pipeline-state.json changed meanwhile; try again")
                # A runnerPid is an earlier engine's agent: never ours to signal now.
                kept = {k: v for k, v in current.extra.items() if k != "runnerPid"}
                # A state in codename-claude's current format alone goes on in ours.
                taken: PipelineState = current.replace(
                    head=None,
                    status="running",
                    error=None,
                    final_verdict=None,
                    updated_at=ps.epoch_ms(self.clock()),
                    extra={**kept, **owner},
                )
                return taken

            ownership.start(self.root, run_id, self._token, self._own_command())
            self._state = ps.update(self.root, take)
            self._remember()
            role = current.pipeline[current.current_stage]
            self._event(
                "pipeline.started", task=current.task, resumed=True, stage=current.current_stage
            )
            self._say(f"pipeline resumed at stage {current.current_stage + 1} ({role})")
            return self._drive()

    def cancel(self) -> PipelineState:
        """Stop the running agent, and mark its stage and the pipeline failed with error
        ``cancelled``. Refused when no pipeline is running or stalled."""

        def change(current: PipelineState | None) -> PipelineState:
            if current is None:
                raise PipelineError("no pipeline to cancel")
            if current.status not in ("running", "stalled"):
                raise PipelineError(f"nothing to cancel: the pipeline is {current.status}")
            if current.stage is None:
                return ps.fail(current, "cancelled", None, self.clock)
            return ps.fail_stage(current, current.current_stage, "cancelled", self.clock)

        before = ps.load(self.root)
        cancelled = ps.update(self.root, change)
        assert cancelled is not None and before is not None
        stage, role = before.current_stage, before.stage.agent if before.stage else None
        append_event(
            self.root, "stage.failed", self.clock, stage=stage, role=role, reason="cancelled"
        )
        append_event(self.root, "pipeline.failed", self.clock, reason="cancelled")
        # The pid comes from our own record, never from the state (a cloned file names
        # any process it likes), and only while an engine holds its lock: after a crash
        # the number may belong to anything by now.
        pid = ownership.our_agent_pid(self.root, before)
        if pid is not None and self.engine_running():
            stop_process_group(pid)
        return cancelled

    # -- running stages -------------------------------------------------------------------

    def _drive(self) -> PipelineState:
        try:
            while self._current().status == "running":
                self._run_stage(self._current().current_stage)
        except _Superseded:
            self._say("the pipeline was cancelled or reset meanwhile; stopping")
        except KeyboardInterrupt:
            self._abort("interrupted (Ctrl-C)")
            raise
        except BaseException as exc:
            self._abort(f"engine stopped: {type(exc).__name__}: {exc}")
            raise
        finally:
            if self._state is not None and self._state.status == "running":
                self._abort("engine stopped before the pipeline ended")
        return ps.load(self.root) or self._current()

    def _run_stage(self, index: int) -> None:
        current = self._current()
        role = current.pipeline[index]
        total = len(current.pipeline)
        after = current.extra.get("lastVerdict") if current.retries else None
        # The stage's start on the clock files are stamped with, taken before the agent
        # runs: what it writes is never older than this (see verdict.stage_clock_ms).
        started_ms = stage_clock_ms()
        self._save(ps.start_stage(current, index, self.clock))
        self._event("stage.started", stage=index, role=role)
        self._say(f"[{index + 1}/{total}] {role}: running")
        before = validate.work_fingerprint(self.root) if role == "builder" else None

        runner = self._runner_for(role)
        run = prompt.stage_run(self.root, self._current(), index, after, self.clock)
        if isinstance(runner, ShellRunner):
            result = call_runner(runner, run, _Watch(self))
        else:
            with self._kept_fresh():
                result = call_runner(runner, run, _Watch(self))
        session = result.session_id
        if result.error is not None:
            self._fail_stage(index, result.error, session=session)
            return
        verdict, problem = "APPROVE", None
        match role:
            case "scout":
                problem = validate.check_scout(self.root, started_ms * 1_000_000)
            case "architect":
                problem = validate.check_architect(self.root, started_ms * 1_000_000)
            case "builder":
                problem = validate.check_builder(before, validate.work_fingerprint(self.root))
            case "reviewer":
                verdict, problem = self._verdict(result, started_ms)
        problem = problem or validate.check_conflicts(self.root)
        if problem is not None:
            self._fail_stage(index, f"{role} stage failed validation: {problem}", problem, session)
            return
        self._save(ps.finish_stage(self._current(), index, self.clock, session))
        self._event("stage.completed", stage=index, role=role, sessionId=session)
        self._say(
            f"[{index + 1}/{total}] {role}: done" + (f", {verdict}" if role == "reviewer" else "")
        )
        self._route(index, verdict)

    def _verdict(self, result: RunnerResult, started_ms: int) -> tuple[str, str | None]:
        review_md = blackboard.brain_dir(self.root) / "REVIEW.md"
        try:
            decision = decide(result.structured, fresh_review_text(review_md, started_ms))
        except VerdictError as exc:
            return "", str(exc)
        fields: dict[str, Any] = {"verdict": decision.verdict, "source": decision.source}
        if decision.review is not None:
            review = decision.review
            fields.update(score=review.score, issues=len(review.issues))
            # REVIEW.md is tracked by git: what the reviewer quoted is redacted first.
            text = redact(render_review(review))
            with storage.locked(review_md):
                storage.atomic_write(review_md, text.encode())
        self._event("review.verdict", stage=self._current().current_stage, **fields)
        if decision.review is not None and not decision.review.patterns_compliance:
            self._event("patterns.noncompliant", stage=self._current().current_stage)
            self._say("warning: the reviewer found the code does not follow PATTERNS.md")
        return decision.verdict, None

    def _route(self, index: int, verdict: str) -> None:
        current = self._current()
        limit = current.extra.get("maxRetries", self.config.pipeline.max_retries)
        step = route(current.pipeline, index, verdict, current.retries, limit)
        match step.action:
            case "next":
                assert step.stage is not None
                moved: PipelineState = current.replace(
                    current_stage=step.stage, updated_at=ps.epoch_ms(self.clock())
                )
                self._save(moved)  # the loop starts it
            case "completed":
                self._save(ps.complete(current, step.final_verdict, self.clock))
                self._event("pipeline.completed", finalVerdict=step.final_verdict)
                self._say("pipeline completed: APPROVE")
            case "restart":
                assert step.stage is not None
                restarted = ps.restart_from(current, step.stage, self.clock)
                restarted = restarted.replace(extra={**restarted.extra, "lastVerdict": verdict})
                self._save(restarted)
                role = current.pipeline[step.stage]
                self._event(
                    "pipeline.retry",
                    verdict=verdict,
                    stage=step.stage,
                    role=role,
                    retries=step.retries,
                )
                self._say(
                    f"{verdict}: back to stage {step.stage + 1} ({role}),"
                    f" retry {step.retries} of {limit}"
                )
            case "failed":
                assert step.error is not None
                self._save(ps.fail(current, step.error, step.final_verdict, self.clock))
                self._event("pipeline.failed", reason=step.error, finalVerdict=step.final_verdict)
                self._say(f"pipeline failed: {step.error}")

    def _fail_stage(
        self, index: int, reason: str, validation: str | None = None, session: str | None = None
    ) -> None:
        failed = ps.fail_stage(self._current(), index, reason, self.clock, validation, session)
        self._save(failed)
        role = failed.pipeline[index]
        self._event("stage.failed", stage=index, role=role, reason=reason)
        self._event("pipeline.failed", reason=reason)
        self._say(f"[{index + 1}/{len(failed.pipeline)}] {role}: failed: {reason}")

    def _abort(self, reason: str) -> None:
        """Mark the stage and the pipeline failed, if the state is still ours."""
        current = self._state
        if current is None or current.status != "running":
            return
        with contextlib.suppress(_Superseded):
            if current.stage is not None and current.stage.status == "running":
                self._fail_stage(current.current_stage, reason)
            else:
                self._save(ps.fail(current, reason, None, self.clock))
                self._event("pipeline.failed", reason=reason)

    # -- the stage's agent ----------------------------------------------------------------

    def _refuse_untrusted_runners(self) -> None:
        """Refuse a run whose agents would come from the project's runner settings while
        they are ignored (config.toml not trusted): falling back to the default agent is
        not what the file asks for, and running its command is not ours to decide."""
        ignored = [
            entry.rsplit(": ", 1)
            for entry in self.config.ignored_keys
            if entry.rsplit(": ", 1)[1].startswith("pipeline.runner")
        ]
        if ignored:
            keys = ", ".join(key for _, key in ignored)
            raise PipelineError(
                f"{ignored[0][0]}: {keys} ignored, the file is not trusted; review it and run"
                " `voyager-brain trust`, or give --runner"
            )

    def _own_command(self) -> str | None:
        return self._runner if isinstance(self._runner, str) else None

    def _runner_for(self, role: str) -> Runner | ShellRunner:
        if self._runner is not None and not isinstance(self._runner, str):
            return self._runner
        command = self._runner or self.config.pipeline.runner_for(role)
        if not command:
            command = DEFAULT_REVIEWER_RUNNER if role == "reviewer" else DEFAULT_RUNNER
        pipeline = self.config.pipeline
        return ShellRunner(
            command, time_limit=pipeline.stage_timeout_seconds, idle_limit=pipeline.idle_seconds
        )

    # -- the state on disk ----------------------------------------------------------------

    def _current(self) -> PipelineState:
        assert self._state is not None
        return self._state

    def _ours(self, on_disk: PipelineState | None) -> bool:
        return (
            on_disk is not None
            and on_disk.status in ("running", "stalled")
            and on_disk.extra.get("engineId") == self._token
        )

    def _save(self, new: PipelineState) -> None:
        """Write `new` if the state on disk is still ours, else raise `_Superseded`."""
        lost: list[PipelineState | None] = []

        def change(on_disk: PipelineState | None) -> PipelineState | None:
            if not self._ours(on_disk):
                lost.append(on_disk)
                return None
            return new

        try:
            ps.update(self.root, change)
        except CorruptFileError:
            raise _Superseded from None
        if lost:
            self._state = lost[0]
            raise _Superseded
        self._state = new
        self._last_refresh = time.monotonic()

    def refresh(self) -> str | None:
        """While an agent runs: keep ``updatedAt`` fresh (and take back a state the
        heartbeat marked stalled); the reason to stop when the state is no longer ours."""
        try:
            on_disk = ps.load(self.root)
        except CorruptFileError as exc:
            return f"pipeline-state.json became unreadable: {exc}"
        if not self._ours(on_disk):
            assert on_disk is None or isinstance(on_disk, PipelineState)
            return (on_disk.error if on_disk is not None else None) or "pipeline state replaced"
        assert on_disk is not None
        stale = time.monotonic() - self._last_refresh >= REFRESH_SECONDS
        if on_disk.status == "stalled" or stale:
            try:
                self._save(
                    self._current().replace(status="running", updated_at=ps.epoch_ms(self.clock()))
                )
            except _Superseded:
                return "pipeline state replaced"
        return None

    @contextmanager
    def _kept_fresh(self) -> Iterator[None]:
        """While a Python runner runs (it cannot be polled as a process is): refresh
        ``updatedAt`` from a thread, so the heartbeat does not take it for stalled. A
        cancel meanwhile takes effect when the runner returns."""
        done = threading.Event()

        def keep() -> None:
            while not done.wait(2.0):
                if self.refresh() is not None:
                    return

        thread = threading.Thread(target=keep, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def note_runner(self, pid: int) -> None:
        with contextlib.suppress(BrainError):  # unrecorded, `cancel` leaves it to us
            ownership.note_pid(self.root, self._token, pid)
        current = self._current()
        # When the state is no longer ours, the next refresh stops the agent.
        with contextlib.suppress(_Superseded):
            self._save(current.replace(extra={**current.extra, "runnerPid": pid}))

    def _owner(self) -> dict[str, Any]:
        return {"engineId": self._token, "enginePid": os.getpid()}

    def _event(self, name: str, **fields: Any) -> None:
        append_event(self.root, name, self.clock, **fields)

    def _remember(self) -> None:
        from .heartbeat import remember_project

        try:
            remember_project(self.root)
        except BrainError as exc:
            self._say(f"warning: the heartbeat will not know this project: {exc}")

    def _max_retries(self, value: int | None) -> int:
        limit = self.config.pipeline.max_retries if value is None else value
        if limit < 0:
            raise PipelineError(f"max retries {limit}: expected 0 or more")
        return limit

    @contextmanager
    def _engine_lock(self) -> Iterator[None]:
        path = blackboard.brain_dir(self.root) / ENGINE_LOCK
        confine.check(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = confine.open_checked(path, os.O_RDWR | os.O_CREAT)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                current = None
                with contextlib.suppress(CorruptFileError):
                    current = ps.load(self.root)
                raise PipelineError(
                    _busy(current) if current else "another engine is starting a pipeline here"
                ) from None
            yield
        finally:
            os.close(fd)

    def engine_running(self) -> bool:
        """Whether an engine (this process or another) holds the project's engine lock."""
        path = blackboard.brain_dir(self.root) / ENGINE_LOCK
        try:
            fd = confine.open_checked(path, os.O_RDWR)
        except (OSError, BrainError):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)
        return False


class _Watch(Control):
    """The engine's side of a running shell agent."""

    def __init__(self, engine: Pipeline) -> None:
        self.engine = engine

    def started(self, pid: int) -> None:
        self.engine.note_runner(pid)

    def alive(self) -> str | None:
        return self.engine.refresh()


def _busy(current: PipelineState) -> str:
    stage = current.stage
    where = f"stage {current.current_stage + 1} ({stage.agent})" if stage else "no stage"
    task = current.task if len(current.task) <= 60 else current.task[:57] + "..."
    if current.status == "stalled":
        hint = "`voyager-brain pipeline resume` continues it, `pipeline cancel` ends it"
    elif current.head is not None:  # written by codename-claude's engine, alive or not
        hint = "codename-claude's engine may run it: resume it once stalled, or `pipeline cancel`"
    else:
        hint = "wait for it, or stop it with `voyager-brain pipeline cancel`"
    return f"a pipeline is already {current.status} here ({where}, task {task!r}): {hint}"


def _load_or_explain(root: Path) -> PipelineState | None:
    try:
        return ps.load(root)
    except CorruptFileError as exc:
        raise PipelineError(
            f"{exc} (`voyager-brain pipeline reset` moves it aside; nothing was run)"
        ) from None

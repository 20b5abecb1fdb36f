"""`voyager-brain pipeline ...`: the multi-agent pipeline over `.brain/` (seed 004).

Exit codes: 0 done (a run that completed, a command that did what it said), 1 a run that
ended failed (its stage and reason are printed), 2 refused or bad input (nothing written).
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from .. import repo, storage
from ..pipeline import blackboard
from ..pipeline import state as ps
from ..pipeline.blackboard import LOGS_DIR
from ..pipeline.engine import Pipeline, PipelineError
from ..pipeline.events import read_events
from ..timestamps import parse_timestamp
from .common import UserError, cli, json_option, print_json, start_folder
from .plain import relative

#: What the watcher's runs are asked to do; the backlog's first characters follow.
BACKLOG_TASK = "The backlog (.brain/BACKLOG.md) was updated; plan and build what it now asks:"
BACKLOG_CHARS = 2000


def _root(ctx: click.Context) -> Path:
    start = start_folder(ctx).absolute()
    return repo.find_top(start) or start


def _say(line: str) -> None:
    click.echo(line, err=True)


@cli.group()
def pipeline() -> None:
    """Run a task through several agents (scout, architect, builder, reviewer).

    The agents hand work to each other through files in .brain/ (RESEARCH/, PLAN.md,
    REVIEW.md ...). The engine runs one agent per stage, checks what each left, and
    sends the work back when the reviewer says REVISE (to the builder) or REDESIGN (to
    the architect), up to max_retries times. Where it is: .brain/pipeline-state.json;
    what happened: .brain/events.jsonl. Settings: [pipeline] in config.toml.
    """


@pipeline.command("init")
def init_command() -> None:
    """Create .brain/ and its files (nothing that exists is overwritten)."""
    root = _root(click.get_current_context())
    created = blackboard.init_brain(root)
    for path in created:
        click.echo(f"created {relative(path)}")
    if not created:
        click.echo(f"{relative(blackboard.brain_dir(root))} is complete; nothing to create")


def _stages(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",")]


def _exit_for(final: ps.PipelineState) -> None:
    if final.status == "completed":
        retries = f"{final.retries} {'retry' if final.retries == 1 else 'retries'}"
        click.echo(f"completed: {final.final_verdict or 'APPROVE'} after {retries}")
        return
    click.echo(f"{final.status}: {final.error or 'no reason recorded'}")
    raise SystemExit(1)


@pipeline.command("run")
@click.argument("task")
@click.option(
    "--stages",
    default=None,
    help="Comma-separated roles in order (default: [pipeline] stages, architect,builder,reviewer).",
)
@click.option(
    "--runner",
    default=None,
    help="Shell command that runs each agent (default: [pipeline] runner, else Claude Code).",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=None,
    help="How often a review may send the work back (default: [pipeline] max_retries, 2).",
)
def run_command(task: str, stages: str | None, runner: str | None, max_retries: int | None) -> None:
    """Run TASK through the pipeline's stages, to the end.

    Progress goes to stderr, one line per step; the last line on stdout says how it
    ended. Exit 0 when the reviewer approved, 1 when the pipeline failed, 2 when it was
    refused (bad stages, a pipeline already running, an unreadable state).
    """
    root = _root(click.get_current_context())
    engine = Pipeline(root, runner=runner, say=_say)
    _exit_for(engine.run(task, _stages(stages), max_retries))


@pipeline.command("resume")
@click.option("--runner", default=None, help="Shell command that runs each agent from now on.")
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=None,
    help="A new retry limit (to give a pipeline that failed on it more rounds).",
)
def resume_command(runner: str | None, max_retries: int | None) -> None:
    """Continue the pipeline from its current stage, running that stage again.

    For a pipeline whose engine died (still marked running), one the heartbeat marked
    stalled, or one that failed (a crashed agent, a cancel). Exit codes as for run.

    Without --runner: the runner you gave this run here (`run --runner`), else
    [pipeline] in config.toml. A runner in pipeline-state.json that was not given here
    (a cloned file) is refused.
    """
    root = _root(click.get_current_context())
    _exit_for(Pipeline(root, runner=runner, say=_say).resume(max_retries))


@pipeline.command("cancel")
def cancel_command() -> None:
    """Stop the running agent; mark its stage and the pipeline failed (cancelled)."""
    root = _root(click.get_current_context())
    cancelled = Pipeline(root).cancel()
    stage = cancelled.stage
    where = f" at stage {cancelled.current_stage + 1} ({stage.agent})" if stage else ""
    click.echo(f"cancelled{where}; `voyager-brain pipeline resume` continues it")


@pipeline.command("reset")
def reset_command() -> None:
    """Move pipeline-state.json aside (readable or not) so that a new run can start."""
    ctx = click.get_current_context()
    root = _root(ctx)
    engine = Pipeline(root)
    if engine.engine_running():
        raise UserError("an engine is running this pipeline; `pipeline cancel` it first")
    moved = ps.reset(root, engine.clock)
    if moved is None:
        click.echo("no pipeline-state.json; nothing to reset")
    else:
        click.echo(f"moved {relative(ps.state_path(root))} to {relative(moved)}")


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@pipeline.command("status")
@click.option(
    "--events",
    "last",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="How many of the latest events to show.",
)
@json_option
def status_command(last: int, as_json: bool) -> None:
    """Where the pipeline is: its stages, retries, verdict or error, latest events."""
    root = _root(click.get_current_context())
    try:
        current = ps.load(root)
    except Exception as exc:
        raise UserError(f"{exc} (`voyager-brain pipeline reset` moves it aside)") from None
    events = read_events(root)[-last:] if last else []
    if as_json:
        document: dict[str, Any] = current.to_json() if current else {"status": None}
        print_json({**document, "events": events})
        return
    if current is None:
        click.echo("no pipeline has run here; start one with `voyager-brain pipeline run TASK`")
        return
    click.echo(f"task:     {current.task}")
    click.echo(f"status:   {current.status}")
    click.echo(f"started:  {_when(current.started_at)}")
    click.echo(f"updated:  {_when(current.updated_at)}")
    click.echo(f"retries:  {current.retries}")
    if current.head is not None:  # codename-claude's current format: its PLAN.md items
        tasks, index = current.head["tasks"], current.head["currentTaskIndex"]
        done = sum(1 for task in tasks if task["status"] == "completed")
        now = tasks[index]["title"] if 0 <= index < len(tasks) else "none"
        click.echo(f"phase:    {current.head['phase']} (codename-claude's current format)")
        click.echo(f"tasks:    {done}/{len(tasks)} done, current: {now}")
    if current.final_verdict:
        click.echo(f"verdict:  {current.final_verdict}")
    if current.error:
        click.echo(f"error:    {current.error}")
    click.echo("stages:")
    for i, stage in enumerate(current.stages):
        mark = ">" if i == current.current_stage and current.status != "completed" else " "
        check = f" ({stage.validation})" if stage.validation not in (None, "passed") else ""
        session = f" session {stage.session_id}" if stage.session_id else ""
        click.echo(f" {mark} {i + 1}. {stage.agent:<9} {stage.status}{session}{check}")
    if events:
        click.echo("events:")
        for event in events:
            # Stages count from 1 here, as in the list above; the JSON keeps the index.
            fields = {k: v for k, v in event.items() if k not in ("event", "at", "task")}
            if isinstance(fields.get("stage"), int):
                fields["stage"] += 1
            detail = " ".join(
                f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in fields.items()
            )
            click.echo(f"  {event['at']} {event['event']} {detail}".rstrip())


def _clock(at: str | None) -> Any:
    if at is None:
        return None
    try:
        moment = parse_timestamp(at)
    except ValueError:
        raise UserError(f"--at {at!r}: expected a time like 2026-11-25T10:00:00Z") from None
    return lambda: moment


@pipeline.command("heartbeat")
@click.argument("projects", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--recover", is_flag=True, help="Then resume the first stalled pipeline, in the background."
)
@click.option("--at", default=None, help="Judge as of this time (ISO 8601) instead of now.")
@json_option
def heartbeat_command(
    projects: tuple[Path, ...], recover: bool, at: str | None, as_json: bool
) -> None:
    """Mark stalled every pipeline running with no update for over 30 minutes.

    PROJECTS default to every project where a pipeline ran (remembered in
    $VOYAGER_HOME/pipeline-projects.json). Other statuses are never touched. Run it from
    cron or a timer; with --recover it also restarts the first stalled pipeline.
    """
    from ..pipeline.heartbeat import check_projects, known_projects
    from ..session.manager import utc_now

    roots = [p.absolute() for p in projects] if projects else known_projects()
    reports = check_projects(roots, _clock(at) or utc_now)
    recovered = None
    if recover:
        stalled = next((r for r in reports if r.action == "stalled"), None)
        if stalled is not None:
            recovered = str(_resume_in_background(Path(stalled.project)))
    if as_json:
        print_json({"projects": [r.to_json() for r in reports], "recovered": recovered})
        return
    if not reports:
        click.echo("no projects to check (no pipeline has run yet)")
    for report in reports:
        click.echo(report.describe())
    if recovered:
        click.echo(f"resuming {recovered} in the background")


def _resume_in_background(root: Path) -> Path:
    """Start `pipeline resume` for `root` detached from us; its output goes to a log."""
    logs = blackboard.brain_dir(root) / LOGS_DIR
    logs.mkdir(parents=True, exist_ok=True)
    with storage.open_append(logs / "resume.log") as log:
        subprocess.Popen(
            [sys.executable, "-m", "voyager_brain", "-C", str(root), "pipeline", "resume"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    return root


@pipeline.command("watch")
@click.argument("projects", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--debounce",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds BACKLOG.md must be quiet before a run starts ([pipeline] debounce_seconds, 5).",
)
def watch_command(projects: tuple[Path, ...], debounce: float | None) -> None:
    """Start a pipeline whenever .brain/BACKLOG.md changes. Stop with Ctrl-C.

    A change fires once BACKLOG.md has been quiet for the debounce (three quick edits,
    one run, with the final text); the file as it is at start does not fire. Each fire
    writes a backlog.changed event and starts an architect-first run in the background
    (unless a pipeline is already running there). PROJECTS default to this one.
    """
    from ..config import load_config
    from ..pipeline.watch import watch_backlog

    roots = [p.absolute() for p in projects] or [_root(click.get_current_context())]
    seconds = debounce
    if seconds is None:
        seconds = load_config(roots[0] / ".voyager").pipeline.debounce_seconds
    click.echo(
        f"watching {', '.join(str(r / '.brain' / 'BACKLOG.md') for r in roots)}"
        f" (debounce {seconds:g}s); Ctrl-C stops"
    )
    try:
        watch_backlog(roots, _backlog_changed, debounce=seconds)
    except KeyboardInterrupt:
        click.echo("stopped watching")


def _backlog_changed(root: Path, text: str) -> None:
    from ..config import load_config
    from ..pipeline.events import append_event
    from ..session.manager import utc_now

    current = ps.load(root)
    busy = current.status if current and current.status in ("running", "stalled") else None
    append_event(root, "backlog.changed", utc_now, chars=len(text), started=busy is None)
    if busy:
        click.echo(f"{root}: BACKLOG.md changed, but a pipeline is {busy}; not started")
        return
    stages = list(load_config(root / ".voyager").pipeline.stages)
    stages = stages[stages.index("architect") :] if "architect" in stages else []
    stages = stages or ["architect", "builder", "reviewer"]
    task = f"{BACKLOG_TASK}\n\n{text[:BACKLOG_CHARS]}"
    logs = blackboard.brain_dir(root) / LOGS_DIR
    logs.mkdir(parents=True, exist_ok=True)
    with storage.open_append(logs / "watch-run.log") as log:
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "voyager_brain",
                "-C",
                str(root),
                "pipeline",
                "run",
                "--stages",
                ",".join(stages),
                task,
            ],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ},
        )
    click.echo(f"{root}: BACKLOG.md changed; started a pipeline ({', '.join(stages)})")


__all__ = ["PipelineError", "pipeline"]


@pipeline.command("example-runner")
def example_runner_command() -> None:
    """A stand-in agent for trying the engine without a model: give it as `--runner
    "voyager-brain pipeline example-runner"`. Each role does its file work the simplest
    way (the builder writes hello.sh); the reviewer asks for one revision, then approves."""
    from ..pipeline.example import main

    main()

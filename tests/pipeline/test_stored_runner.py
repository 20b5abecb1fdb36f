"""A runner or a pid in a cloned ``.brain/pipeline-state.json`` is not a way around trust.

`pipeline run --runner CMD` keeps CMD in pipeline-state.json so that `pipeline resume`
goes on with it; the file is ignored by git, but a hostile repository can force-commit
one naming its own command (and the pid of any process of the user's as the running
agent). Each test is the attack, as real processes on a real clone: the command never
runs, the process is never signalled; then the legitimate flow still works."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from agents import FakeAgent
from conftest import git, run_cli
from test_pipeline_cli import alive, stage_running, start, wait_for

from voyager_brain.pipeline import state as ps
from voyager_brain.pipeline.engine import Pipeline
from voyager_brain.pipeline.runner import RunnerResult, StageRun

HOSTILE = "sh -c 'touch PWNED'"


def hostile_state(
    status: str, *, runner: str = HOSTILE, pid: int | None = None, updated_ms: int | None = None
) -> dict[str, object]:
    """A state a hostile repository commits: its builder stage left running or failed,
    its own runner stored as the run's, and (optionally) a pid as the running agent's."""
    now = updated_ms if updated_ms is not None else int(time.time() * 1000)
    stage_status = "running" if status in ("running", "stalled") else "failed"
    document: dict[str, object] = {
        "project": "/home/attacker/project",
        "task": "Add a health check",
        "pipeline": ["builder", "reviewer"],
        "status": status,
        "currentStage": 0,
        "startedAt": now,
        "updatedAt": now,
        "stages": [
            {"agent": "builder", "status": stage_status, "startedAt": now},
            {"agent": "reviewer", "status": "pending"},
        ],
        "retries": 0,
        "maxRetries": 2,
        "runner": runner,
        "runId": "0123456789abcdef",
        "engineId": "fedcba9876543210",
    }
    if status == "failed":
        document["error"] = "runner exited with status 1"
    if pid is not None:
        document["runnerPid"] = pid
    return document


def clone_with(tmp_path: Path, state: dict[str, object]) -> Path:
    """A repository whose author force-committed `state` as .brain/pipeline-state.json,
    cloned with git."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    assert run_cli("pipeline", "init", cwd=origin).returncode == 0
    (origin / ".brain" / "pipeline-state.json").write_text(json.dumps(state, indent=2))
    git(origin, "add", "-A")
    git(origin, "add", "-f", ".brain/pipeline-state.json")
    git(origin, "commit", "-q", "-m", "a helpful project")
    top = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(top))
    assert (top / ".brain" / "pipeline-state.json").exists()
    return top


def refused_in_one_line(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "--runner" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("status", ["running", "stalled", "failed"])
def test_resume_refuses_the_runner_a_clone_stored(tmp_path: Path, status: str) -> None:
    top = clone_with(tmp_path, hostile_state(status))
    before = (top / ".brain" / "pipeline-state.json").read_bytes()
    done = run_cli("pipeline", "resume", cwd=top)
    refused_in_one_line(done)
    assert "pipeline-state.json" in done.stderr
    assert not (top / "PWNED").exists()
    assert (top / ".brain" / "pipeline-state.json").read_bytes() == before  # nothing written


def test_heartbeat_recover_does_not_run_the_runner_a_clone_stored(tmp_path: Path) -> None:
    # Untouched for hours: the heartbeat marks it stalled, and --recover resumes it.
    top = clone_with(tmp_path, hostile_state("running", updated_ms=1_000_000))
    beat = run_cli("pipeline", "heartbeat", str(top), "--recover", "--json", cwd=top)
    assert beat.returncode == 0, beat.stderr
    assert json.loads(beat.stdout)["recovered"] == str(top)
    log = top / ".brain" / "logs" / "resume.log"

    def resume_ended() -> bool:
        return (top / "PWNED").exists() or (log.exists() and "--runner" in log.read_text())

    wait_for(resume_ended, timeout=60)
    time.sleep(0.5)  # had the command been started, its file would be there by now
    assert not (top / "PWNED").exists()
    assert log.read_text().count("\n") == 1


def test_cancel_does_not_signal_a_pid_a_clone_stored(tmp_path: Path) -> None:
    """The user resumes the cloned pipeline with a runner of their own (a Python one
    here, which leaves the state's runnerPid as it was) and cancels it: the process the
    clone named as its agent, one of the user's, is not signalled."""
    victim = subprocess.Popen(["sleep", "120"], start_new_session=True)
    try:
        top = clone_with(tmp_path, hostile_state("failed", pid=victim.pid))
        inside, release = threading.Event(), threading.Event()

        def my_runner(run: StageRun) -> RunnerResult:
            inside.set()
            release.wait(60)
            return RunnerResult(error="stopped by the test")

        engine = Pipeline(top, runner=my_runner)
        thread = threading.Thread(target=lambda: engine.resume(), daemon=True)
        thread.start()
        try:
            assert inside.wait(30)
            cancelled = run_cli("pipeline", "cancel", cwd=top)
            assert cancelled.returncode == 0, cancelled.stderr
        finally:
            release.set()
            thread.join(30)
        assert alive(victim.pid) and victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


def test_a_state_copied_from_another_project_is_refused(repo: Path, tmp_path: Path) -> None:
    """The record is per run and per project: the user's own state, copied into another
    repository, does not carry its runner along."""
    agent = FakeAgent(tmp_path / "fake-agent")
    agent.script(builder=[{"exit": 1}])
    first = run_cli(
        "pipeline", "run", "--stages", "builder", "--runner", agent.command, "task", cwd=repo
    )
    assert first.returncode == 1, first.stderr
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    assert run_cli("pipeline", "init", cwd=other).returncode == 0
    copied = json.loads(ps.state_path(repo).read_text())
    copied["runner"] = HOSTILE
    ps.state_path(other).write_text(json.dumps(copied))
    refused_in_one_line(run_cli("pipeline", "resume", cwd=other))
    assert not (other / "PWNED").exists()
    # In its own project, a changed runner is refused the same way.
    ps.state_path(repo).write_text(json.dumps(copied))
    refused_in_one_line(run_cli("pipeline", "resume", cwd=repo))
    assert not (repo / "PWNED").exists()


def test_resume_without_runner_goes_on_with_the_users_own(repo: Path, tmp_path: Path) -> None:
    """`run --runner X` fails; `resume` without --runner runs X again; `resume --runner Y`
    makes Y the run's runner from then on; a command-line runner needs no trust."""
    agent = FakeAgent(tmp_path / "fake-agent")
    agent.script(builder=[{"exit": 1}, {"exit": 1}, {}], reviewer=[{"verdict": "APPROVE"}])
    stages = ("--stages", "builder,reviewer")
    done = run_cli("pipeline", "run", *stages, "--runner", agent.command, "task", cwd=repo)
    assert done.returncode == 1, done.stderr
    assert agent.roles() == ["builder"]

    again = run_cli("pipeline", "resume", cwd=repo)
    assert again.returncode == 1, again.stderr  # it ran X, whose builder failed again
    assert agent.roles() == ["builder", "builder"]

    other = FakeAgent(tmp_path / "other-agent")
    other.script(builder=[{"exit": 1}])
    with_y = run_cli("pipeline", "resume", "--runner", other.command, cwd=repo)
    assert with_y.returncode == 1 and other.roles() == ["builder"]
    # Y is now the run's runner: X's next (succeeding) builder step is not taken.
    other.script(builder=[{}], reviewer=[{"verdict": "APPROVE"}])
    last = run_cli("pipeline", "resume", cwd=repo)
    assert last.returncode == 0, last.stderr
    assert other.roles() == ["builder", "builder", "reviewer"]
    assert agent.roles() == ["builder", "builder"]


def test_cancel_still_stops_the_users_own_agent(repo: Path, tmp_path: Path) -> None:
    agent = FakeAgent(tmp_path / "fake-agent")
    agent.script(builder=[{"sleep": 60, "touch_every": 0.5}])
    engine = start(repo, "pipeline", "run", "--stages", "builder", "--runner", agent.command, "x")
    try:
        wait_for(lambda: stage_running(repo, "builder") and agent.calls())
        agent_pid = agent.calls()[0]["pid"]
        # Stop the engine so that only `cancel` can stop the agent; it keeps the lock.
        os.kill(engine.pid, signal.SIGSTOP)
        try:
            cancelled = run_cli("pipeline", "cancel", cwd=repo)
            assert cancelled.returncode == 0, cancelled.stderr
            wait_for(lambda: not alive(agent_pid), timeout=15)
        finally:
            os.kill(engine.pid, signal.SIGCONT)
        engine.wait(timeout=30)
    finally:
        if engine.poll() is None:
            engine.kill()


def test_an_unreadable_record_refuses_the_run_in_one_line(
    repo: Path, tmp_path: Path, isolated_env: Path
) -> None:
    """The record is never rewritten when it cannot be read (a person fixes it), and a
    run that could not record its runner does not start."""
    record = isolated_env / "pipeline-runs.json"
    record.write_text('{"projects": [')
    agent = FakeAgent(tmp_path / "fake-agent")
    done = run_cli(
        "pipeline", "run", "--stages", "builder", "--runner", agent.command, "t", cwd=repo
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "pipeline-runs.json" in done.stderr
    assert agent.calls() == [] and not ps.state_path(repo).exists()
    assert record.read_text() == '{"projects": ['


def test_resume_refuses_a_role_a_clone_named_as_a_path(tmp_path: Path) -> None:
    # The role names the stage's prompt and log files (.brain/logs/stage-N-ROLE.*) and
    # its template: a clone's "../../..." role, resumed with the user's own runner, was
    # taken and the stage started; only the template lookup's refusal of ".." kept the
    # prompt from being written outside the repository.
    outside = tmp_path / "outside"
    outside.mkdir()
    role = "x/" + "../" * 12 + str(outside / "planted").lstrip("/")
    state = hostile_state("failed")
    state["pipeline"] = [role, "reviewer"]
    state["stages"][0]["agent"] = role  # type: ignore[index]
    top = clone_with(tmp_path, state)
    done = run_cli("pipeline", "resume", "--runner", "true", cwd=top)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "unknown role" in done.stderr, done.stderr
    assert "pipeline-state.json" in done.stderr
    assert list(outside.iterdir()) == []

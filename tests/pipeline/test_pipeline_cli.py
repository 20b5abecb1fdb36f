"""`voyager-brain pipeline ...` as real processes: run, refuse, cancel, kill and resume,
the heartbeat, reset, and the BACKLOG.md watcher."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from agents import FakeAgent
from conftest import INTERRUPTIBLE, run_cli, trusted

from voyager_brain.pipeline import state as ps
from voyager_brain.pipeline.events import read_events


@pytest.fixture
def agent(tmp_path: Path) -> FakeAgent:
    return FakeAgent(tmp_path / "fake-agent")


def configure(repo: Path, agent: FakeAgent, extra: str = "") -> None:
    """The project's config.toml: the fake agent as the runner of every stage."""
    voyager = repo / ".voyager"
    voyager.mkdir(exist_ok=True)
    runner = agent.command.replace("\\", "\\\\").replace('"', '\\"')
    (voyager / "config.toml").write_text(f'[pipeline]\nrunner = "{runner}"\n{extra}')
    trusted(repo)


def wait_for(check: Callable[[], object], timeout: float = 30.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {check}")


def start(repo: Path, *args: str, capture: bool = False) -> subprocess.Popen[str]:
    """`voyager-brain ARGS` started in the background (its output read only if `capture`),
    Ctrl-C reaching it whatever the test run inherited."""
    where = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen(
        [*INTERRUPTIBLE, sys.executable, "-m", "voyager_brain", *args],
        cwd=repo,
        stdout=where,
        stderr=where,
        text=True,
    )


def stage_running(repo: Path, role: str) -> bool:
    try:
        state = ps.load(repo)
    except Exception:
        return False
    return bool(
        state
        and state.status == "running"
        and state.stage is not None
        and state.stage.agent == role
        and state.stage.status == "running"
        and "runnerPid" in state.extra
    )


def kill_engine_and_agent(repo: Path, engine: subprocess.Popen[str], agent: FakeAgent) -> None:
    """SIGKILL the engine mid-stage, and its agent (in a process group of its own, which
    outlives the engine), as a crash of the machine's session would."""
    wait_for(lambda: stage_running(repo, "builder") and agent.calls())
    state = ps.load(repo)
    assert state is not None
    engine.send_signal(signal.SIGKILL)
    engine.wait(timeout=10)
    os.killpg(state.extra["runnerPid"], signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_run_completes_with_progress_and_exit_0(repo: Path, agent: FakeAgent) -> None:
    configure(repo, agent)
    agent.script(reviewer=[{"verdict": "REVISE"}, {"verdict": "APPROVE"}])
    done = run_cli("pipeline", "run", "Add a greeting", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "completed: APPROVE after 1 retry\n"
    assert "[1/3] architect: running" in done.stderr
    assert "REVISE: back to stage 2 (builder), retry 1 of 2" in done.stderr
    assert agent.roles() == ["architect", "builder", "reviewer", "builder", "reviewer"]

    status = run_cli("pipeline", "status", "--json", cwd=repo)
    document = json.loads(status.stdout)
    assert document["status"] == "completed" and document["finalVerdict"] == "APPROVE"
    assert [e["event"] for e in document["events"]][-1] == "pipeline.completed"
    text = run_cli("pipeline", "status", cwd=repo).stdout
    assert "status:   completed" in text and "3. reviewer  completed" in text
    # the engine's own files are ignored by git, the agents' files are not
    tracked = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", ".brain"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert ".brain/PLAN.md" in tracked and ".brain/REVIEW.md" in tracked
    for ignored in ("pipeline-state.json", "events.jsonl", "logs/", ".lock"):
        assert ignored not in tracked


def test_a_failed_run_exits_1_and_says_why(repo: Path, agent: FakeAgent) -> None:
    configure(repo, agent)
    agent.script(builder=[{"exit": 4, "stderr": "out of tokens"}])
    done = run_cli("pipeline", "run", "task", "--stages", "builder,reviewer", cwd=repo)
    assert done.returncode == 1
    assert done.stdout == "failed: runner exited with status 4: out of tokens\n"
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("stages", "message"),
    [
        ("", "no stages given"),
        (" , ", "no stages given"),
        ("builder,wizard", "stage 2: unknown role 'wizard'"),
        ("Builder", "unknown role 'Builder'"),
    ],
)
def test_bad_stages_are_refused_before_anything_is_written(
    repo: Path, agent: FakeAgent, stages: str, message: str
) -> None:
    configure(repo, agent)
    done = run_cli("pipeline", "run", "task", "--stages", stages, cwd=repo)
    assert done.returncode == 2
    assert done.stderr.startswith("voyager-brain: ") and message in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not (repo / ".brain").exists()
    assert agent.calls() == []


def test_empty_task_and_negative_retries_are_refused(repo: Path, agent: FakeAgent) -> None:
    configure(repo, agent)
    assert run_cli("pipeline", "run", "  ", cwd=repo).returncode == 2
    assert run_cli("pipeline", "run", "t", "--max-retries", "-1", cwd=repo).returncode == 2
    assert not (repo / ".brain").exists()


def test_second_run_refused_then_cancel_then_resume(repo: Path, agent: FakeAgent) -> None:
    configure(repo, agent)
    agent.script(builder=[{"sleep": 60, "touch_every": 0.5}, {}], reviewer=[{"verdict": "APPROVE"}])
    engine = start(repo, "pipeline", "run", "slow task", "--stages", "builder,reviewer")
    try:
        wait_for(lambda: stage_running(repo, "builder") and agent.calls())
        second = run_cli("pipeline", "run", "another", "--stages", "builder", cwd=repo)
        assert second.returncode == 2
        assert "a pipeline is already running here (stage 1 (builder), task 'slow task')" in (
            second.stderr
        )
        agent_pid = agent.calls()[0]["pid"]
        assert alive(agent_pid)

        cancelled = run_cli("pipeline", "cancel", cwd=repo)
        assert cancelled.returncode == 0, cancelled.stderr
        assert "cancelled at stage 1 (builder)" in cancelled.stdout
        engine.wait(timeout=30)
    finally:
        if engine.poll() is None:
            engine.kill()
    assert engine.returncode == 1
    wait_for(lambda: not alive(agent_pid), timeout=15)
    state = ps.load(repo)
    assert state is not None
    assert (state.status, state.error, state.stages[0].status) == ("failed", "cancelled", "failed")
    reasons = [e.get("reason") for e in read_events(repo) if e["event"] == "pipeline.failed"]
    assert reasons == ["cancelled"]  # the engine wrote nothing after the cancel

    again = run_cli("pipeline", "cancel", cwd=repo)
    assert again.returncode == 2 and "nothing to cancel: the pipeline is failed" in again.stderr

    resumed = run_cli("pipeline", "resume", cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    assert agent.roles() == ["builder", "builder", "reviewer"]


def test_killed_engine_is_refused_stalled_by_heartbeat_and_resumed(
    repo: Path, agent: FakeAgent
) -> None:
    configure(repo, agent)
    agent.script(builder=[{"sleep": 60, "touch_every": 0.5}, {}], reviewer=[{"verdict": "APPROVE"}])
    engine = start(repo, "pipeline", "run", "task", "--stages", "builder,reviewer")
    kill_engine_and_agent(repo, engine, agent)

    state = ps.load(repo)
    assert state is not None and state.status == "running"  # its engine died with it
    doctor = run_cli("doctor", cwd=repo)
    assert "pipeline running, but no engine is running it" in doctor.stdout
    assert "`voyager-brain pipeline resume` continues it" in doctor.stdout
    refused = run_cli("pipeline", "run", "new task", "--stages", "builder", cwd=repo)
    assert refused.returncode == 2 and "already running" in refused.stderr

    updated = datetime.fromtimestamp(state.updated_at / 1000, UTC)
    for minutes, action in ((29, "ok"), (30, "ok"), (31, "stalled")):
        at = (updated + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
        beat = run_cli("pipeline", "heartbeat", str(repo), "--at", at, "--json", cwd=repo)
        assert beat.returncode == 0, beat.stderr
        assert json.loads(beat.stdout)["projects"][0]["action"] == action
    state = ps.load(repo)
    assert state is not None and state.status == "stalled"
    assert [e["event"] for e in read_events(repo)].count("pipeline.stalled") == 1

    refused = run_cli("pipeline", "run", "new task", "--stages", "builder", cwd=repo)
    assert refused.returncode == 2 and "`voyager-brain pipeline resume` continues it" in (
        refused.stderr
    )
    resumed = run_cli("pipeline", "resume", cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    assert agent.roles() == ["builder", "builder", "reviewer"]


def test_heartbeat_recover_resumes_in_the_background(repo: Path, agent: FakeAgent) -> None:
    configure(repo, agent)
    agent.script(builder=[{"sleep": 60, "touch_every": 0.5}, {}], reviewer=[{"verdict": "APPROVE"}])
    engine = start(repo, "pipeline", "run", "task", "--stages", "builder,reviewer")
    kill_engine_and_agent(repo, engine, agent)

    # no project named: the heartbeat checks every project where a pipeline ran
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    beat = run_cli("pipeline", "heartbeat", "--recover", "--at", later, "--json", cwd=repo)
    assert beat.returncode == 0, beat.stderr
    report = json.loads(beat.stdout)
    assert report["recovered"] == str(repo)
    assert [p["action"] for p in report["projects"]] == ["stalled"]

    def completed() -> bool:
        state = ps.load(repo)
        return state is not None and state.status == "completed"

    wait_for(completed, timeout=60)
    assert agent.roles() == ["builder", "builder", "reviewer"]


def test_corrupt_state_is_reported_never_overwritten_and_reset(
    repo: Path, agent: FakeAgent
) -> None:
    configure(repo, agent)
    path = ps.state_path(repo)
    path.parent.mkdir()
    path.write_text('{"project": "/x", "task": 3}')
    status = run_cli("pipeline", "status", cwd=repo)
    assert status.returncode == 2
    assert "pipeline-state.json: task: expected a string" in status.stderr
    assert "pipeline reset" in status.stderr
    refused = run_cli("pipeline", "run", "task", "--stages", "builder", cwd=repo)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert path.read_text() == '{"project": "/x", "task": 3}'
    assert agent.calls() == []
    doctor = run_cli("doctor", cwd=repo)
    assert doctor.returncode == 1
    assert "pipeline-state.json: task: expected a string" in doctor.stdout
    assert "pipeline reset" in doctor.stdout
    assert path.read_text() == '{"project": "/x", "task": 3}'

    reset = run_cli("pipeline", "reset", cwd=repo)
    assert reset.returncode == 0 and "moved" in reset.stdout
    assert not path.exists()
    assert [p.name for p in path.parent.glob("pipeline-state.json.*.corrupt")]
    assert run_cli("pipeline", "run", "task", "--stages", "builder", cwd=repo).returncode == 0


def test_init_creates_the_blackboard_once(repo: Path) -> None:
    first = run_cli("pipeline", "init", cwd=repo)
    assert first.returncode == 0 and "created .brain/PLAN.md" in first.stdout
    second = run_cli("pipeline", "init", cwd=repo)
    assert second.stdout == ".brain is complete; nothing to create\n"


def test_status_without_a_pipeline(repo: Path) -> None:
    done = run_cli("pipeline", "status", cwd=repo)
    assert done.returncode == 0 and "no pipeline has run here" in done.stdout
    assert json.loads(run_cli("pipeline", "status", "--json", cwd=repo).stdout) == {
        "status": None,
        "events": [],
    }


@pytest.mark.parametrize(
    "command", ["init", "run", "status", "resume", "cancel", "reset", "heartbeat", "watch"]
)
def test_every_command_has_help(repo: Path, command: str) -> None:
    done = run_cli("pipeline", command, "--help", cwd=repo)
    assert done.returncode == 0 and "Usage: voyager-brain pipeline" in done.stdout


def test_watch_fires_once_after_quick_edits_and_stops_on_ctrl_c(
    repo: Path, agent: FakeAgent
) -> None:
    configure(repo, agent, 'stages = "scout,architect,builder,reviewer"\n')
    agent.script(reviewer=[{"verdict": "APPROVE"}])
    assert run_cli("pipeline", "init", cwd=repo).returncode == 0
    backlog = repo / ".brain" / "BACKLOG.md"
    backlog.write_text("# Backlog\n\n- old item\n")  # there at start: does not fire
    watcher = start(repo, "pipeline", "watch", "--debounce", "0.5", capture=True)
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().startswith("watching ")
        time.sleep(1.0)
        for item in ("one", "two", "three"):
            backlog.write_text(f"# Backlog\n\n- add {item}\n")
            time.sleep(0.1)

        def fired() -> list[dict[str, object]]:
            return [e for e in read_events(repo) if e["event"] == "backlog.changed"]

        wait_for(fired)

        def finished() -> bool:
            state = ps.load(repo)
            return state is not None and state.status == "completed"

        wait_for(finished, timeout=60)
        time.sleep(1.5)  # three debounces: nothing more fires
        assert len(fired()) == 1
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=15)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
    assert watcher.returncode == 0, err
    assert "stopped watching" in out and "Traceback" not in err
    assert agent.roles() == ["architect", "builder", "reviewer"]  # architect first
    task = agent.calls()[0]["env"]["VOYAGER_PIPELINE_TASK"]
    assert "BACKLOG.md" in task and "- add three" in task and "add two" not in task

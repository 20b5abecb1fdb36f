"""The engine driving real subprocess runners (the scripted fake agent) end to end."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from agents import FakeAgent

from voyager_brain.config import Config
from voyager_brain.pipeline import state as ps
from voyager_brain.pipeline.engine import Pipeline
from voyager_brain.pipeline.events import read_events

FOUR = ["scout", "architect", "builder", "reviewer"]


@pytest.fixture
def agent(tmp_path: Path) -> FakeAgent:
    return FakeAgent(tmp_path / "fake-agent")


def config(**pipeline: object) -> Config:
    return Config.from_mapping({"pipeline": {"idle_seconds": 30, **pipeline}})


def engine(repo: Path, agent: FakeAgent, **pipeline: object) -> Pipeline:
    return Pipeline(repo, runner=agent.command, config=config(**pipeline))


def names(root: Path) -> list[str]:
    return [e["event"] for e in read_events(root)]


def test_happy_path_with_four_stages(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "APPROVE"}])
    final = engine(repo, agent).run("Add a greeting module", FOUR)

    assert (final.status, final.final_verdict, final.retries, final.error) == (
        "completed",
        "APPROVE",
        0,
        None,
    )
    assert agent.roles() == FOUR
    assert [s.status for s in final.stages] == ["completed"] * 4
    assert [s.validation for s in final.stages] == ["passed"] * 4
    assert [s.session_id for s in final.stages] == [f"fake-{r}-0" for r in FOUR]
    assert all(s.started_at is not None and s.completed_at is not None for s in final.stages)
    assert final.project == str(repo)
    # the file on disk is the state returned, in the original tool's shape
    document = json.loads(ps.state_path(repo).read_text())
    assert document["status"] == "completed" and document["finalVerdict"] == "APPROVE"
    assert document["pipeline"] == FOUR and document["currentStage"] == 3
    assert "engineId" in document and document["maxRetries"] == 2

    assert names(repo) == [
        "pipeline.started",
        *(e for _ in range(3) for e in ("stage.started", "stage.completed")),
        "stage.started",
        "review.verdict",
        "stage.completed",
        "pipeline.completed",
    ]
    # the engine wrote REVIEW.md from the structured verdict
    review = (repo / ".brain" / "REVIEW.md").read_text()
    assert "**Verdict:** APPROVE" in review and "a nit" in review


def test_each_agent_gets_the_protocol(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "APPROVE"}])
    engine(repo, agent).run("Add a greeting module", FOUR)
    calls = {call["role"]: call for call in agent.calls()}
    for index, role in enumerate(FOUR):
        env = calls[role]["env"]
        assert env["VOYAGER_PIPELINE_ROLE"] == role
        assert env["VOYAGER_PIPELINE_STAGE"] == str(index)
        assert env["VOYAGER_PIPELINE_TASK"] == "Add a greeting module"
        assert env["VOYAGER_SUBAGENT"] == "1"
        assert env["VOYAGER_PIPELINE_PROJECT"] == str(repo)
        system = Path(env["VOYAGER_PIPELINE_SYSTEM_PROMPT"]).read_text()
        assert f"# Your role: {role}" in system
        assert "# .brain/PROJECT.md" in system and "Add a greeting module" in system
        assert "# The pipeline" in system
        assert ("VOYAGER_PIPELINE_SCHEMA" in env) == (role == "reviewer")
        assert "Add a greeting module" in calls[role]["stdin"]
    schema = json.loads(Path(calls["reviewer"]["env"]["VOYAGER_PIPELINE_SCHEMA"]).read_text())
    assert schema["title"] == "ReviewOutput"
    assert ".brain/RESEARCH/findings.md" in calls["architect"]["stdin"]
    assert (
        "# .brain/RESEARCH/findings.md"
        in Path(calls["architect"]["env"]["VOYAGER_PIPELINE_SYSTEM_PROMPT"]).read_text()
    )
    assert ".brain/PLAN.md" in calls["builder"]["stdin"]
    assert ".brain/PLAN.md" in calls["reviewer"]["stdin"]


def test_one_revise_goes_back_to_the_builder(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REVISE"}, {"verdict": "APPROVE"}])
    final = engine(repo, agent).run("task", ["architect", "builder", "reviewer"])
    assert agent.roles() == ["architect", "builder", "reviewer", "builder", "reviewer"]
    assert (final.status, final.retries, final.final_verdict) == ("completed", 1, "APPROVE")
    second_builder = [c for c in agent.calls() if c["role"] == "builder"][1]
    assert ".brain/REVIEW.md" in second_builder["stdin"]
    retry = [e for e in read_events(repo) if e["event"] == "pipeline.retry"]
    assert retry == [{**retry[0], "verdict": "REVISE", "stage": 1, "role": "builder", "retries": 1}]


def test_one_redesign_goes_back_to_the_architect(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REDESIGN"}, {"verdict": "APPROVE"}])
    final = engine(repo, agent).run("task", ["architect", "builder", "reviewer"])
    assert agent.roles() == ["architect", "builder", "reviewer"] * 2
    assert (final.status, final.retries) == ("completed", 1)
    second_architect = [c for c in agent.calls() if c["role"] == "architect"][1]
    assert "redesign" in second_architect["stdin"]


def test_every_review_revise_makes_exactly_six_runs(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REVISE"}])
    final = engine(repo, agent).run("task", ["builder", "reviewer"], max_retries=2)
    assert agent.roles() == ["builder", "reviewer"] * 3
    assert (final.status, final.retries, final.final_verdict) == ("failed", 2, "REVISE")
    assert "REVISE after 2 retries" in (final.error or "")


def test_max_retries_zero_fails_on_the_first_revise(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REVISE"}])
    final = engine(repo, agent, max_retries=0).run("task", ["builder", "reviewer"])
    assert agent.roles() == ["builder", "reviewer"]
    assert (final.status, final.retries, final.final_verdict) == ("failed", 0, "REVISE")


def test_revise_and_redesign_share_one_counter(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REVISE"}, {"verdict": "REDESIGN"}, {"verdict": "REVISE"}])
    final = engine(repo, agent).run("task", ["architect", "builder", "reviewer"])
    assert agent.roles() == [
        "architect", "builder", "reviewer",  # REVISE: retry 1
        "builder", "reviewer",  # REDESIGN: retry 2
        "architect", "builder", "reviewer",  # REVISE: no retry left
    ]  # fmt: skip
    assert (final.status, final.retries, final.final_verdict) == ("failed", 2, "REVISE")


def test_redesign_without_an_architect_fails_clearly(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REDESIGN"}])
    final = engine(repo, agent).run("task", ["builder", "reviewer"])
    assert final.status == "failed" and final.final_verdict == "REDESIGN"
    assert "no architect runs before the reviewer" in (final.error or "")
    assert agent.roles() == ["builder", "reviewer"]


def test_a_crashing_runner_fails_the_stage_and_can_be_resumed(repo: Path, agent: FakeAgent) -> None:
    agent.script(builder=[{"exit": 3, "stderr": "segfault in the agent"}, {}],
                 reviewer=[{"verdict": "APPROVE"}])  # fmt: skip
    pipeline = engine(repo, agent)
    failed = pipeline.run("task", ["builder", "reviewer"])
    assert failed.status == "failed" and failed.current_stage == 0
    assert failed.error == "runner exited with status 3: segfault in the agent"
    assert failed.stages[0].status == "failed"
    assert names(repo)[-2:] == ["stage.failed", "pipeline.failed"]

    resumed = engine(repo, agent).resume()
    assert resumed.status == "completed"
    assert agent.roles() == ["builder", "builder", "reviewer"]


def test_an_idle_runner_fails_with_stage_idle(repo: Path, agent: FakeAgent) -> None:
    agent.script(builder=[{"sleep": 60}])
    final = engine(repo, agent, idle_seconds=1).run("task", ["builder"])
    assert final.status == "failed"
    assert (final.error or "").startswith("STAGE_IDLE")
    assert final.stages[0].status == "failed"


def test_a_quiet_runner_that_changes_files_is_not_idle(repo: Path, agent: FakeAgent) -> None:
    agent.script(builder=[{"sleep": 3, "touch_every": 0.3}])
    final = engine(repo, agent, idle_seconds=1).run("task", ["builder"])
    assert final.status == "completed", final.error


def test_stage_time_limit(repo: Path, agent: FakeAgent) -> None:
    agent.script(builder=[{"sleep": 60, "touch_every": 0.2}])
    final = engine(repo, agent, stage_timeout_seconds=1.5).run("task", ["builder"])
    assert final.status == "failed" and (final.error or "").startswith("STAGE_TIMEOUT")


def test_a_python_runner_that_raises_fails_the_stage(repo: Path) -> None:
    def runner(run: object) -> None:
        raise RuntimeError("model API down")

    final = Pipeline(repo, runner=runner, config=config()).run("task", ["builder"])
    assert final.status == "failed"
    assert final.error == "runner raised RuntimeError: model API down"


def test_an_interrupted_engine_never_leaves_the_state_running(repo: Path) -> None:
    def runner(run: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Pipeline(repo, runner=runner, config=config()).run("task", ["builder"])
    state = ps.load(repo)
    assert state is not None and state.status == "failed"
    assert state.error == "interrupted (Ctrl-C)"
    assert state.stages[0].status == "failed"


def test_fixed_clock_gives_the_same_state_bytes(repo: Path, agent: FakeAgent) -> None:
    moment = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    agent.script(reviewer=[{"verdict": "APPROVE"}])
    pipeline = Pipeline(repo, runner=agent.command, config=config(), clock=lambda: moment)
    final = pipeline.run("task", ["architect", "reviewer"])
    assert final.started_at == final.updated_at == ps.epoch_ms(moment)


def test_python_api_with_a_runner_callable(repo: Path) -> None:
    from voyager_brain import Pipeline as PublicPipeline
    from voyager_brain import RunnerResult, StageRun

    seen: list[tuple[str, int, str]] = []

    def runner(stage: StageRun) -> RunnerResult | dict[str, object]:
        seen.append((stage.role, stage.stage, stage.env["VOYAGER_PIPELINE_ROLE"]))
        assert stage.system_prompt == stage.system_prompt_path.read_text()
        if stage.role == "architect":
            (stage.root / ".brain" / "PLAN.md").write_text("- [ ] write hello.txt\n")
            return RunnerResult(session_id="arch-1")
        if stage.role == "builder":
            (stage.root / "hello.txt").write_text("hello\n")
            return {"type": "result", "session_id": "build-1", "result": "done"}
        assert stage.schema_path is not None and stage.schema_path.exists()
        verdict = {
            "verdict": "APPROVE",
            "score": 9,
            "summary": "fine",
            "issues": [],
            "patternsCompliance": True,
        }
        return RunnerResult(session_id="rev-1", structured=verdict)

    final = PublicPipeline(repo, runner=runner, config=config()).run("Say hello")
    assert final.status == "completed"  # the default stages: architect, builder, reviewer
    assert seen == [("architect", 0, "architect"), ("builder", 1, "builder"),
                    ("reviewer", 2, "reviewer")]  # fmt: skip
    assert [s.session_id for s in final.stages] == ["arch-1", "build-1", "rev-1"]


def test_the_system_prompt_carries_the_projects_memory(repo: Path, agent: FakeAgent) -> None:
    from voyager_brain import BrainManager

    manager = BrainManager(repo)
    manager.merge_state({"activeState": {"currentGoal": "Ship the greeting API by Friday"}})
    manager.persist()
    agent.script(reviewer=[{"verdict": "APPROVE"}])
    engine(repo, agent).run("task", ["builder", "reviewer"])
    for call in agent.calls():
        system = Path(call["env"]["VOYAGER_PIPELINE_SYSTEM_PROMPT"]).read_text()
        assert "# The project's memory (voyager-brain)" in system
        assert "Ship the greeting API by Friday" in system


def test_secrets_never_reach_the_tracked_brain_files(repo: Path, agent: FakeAgent) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    review = {
        "verdict": "APPROVE",
        "score": 8,
        "summary": f"The builder pasted {token} into config.py",
        "issues": [{"severity": "critical", "description": f"remove {token}"}],
        "patternsCompliance": True,
    }
    agent.script(reviewer=[{"structured": review}])
    final = engine(repo, agent).run(f"Rotate the leaked token {token}", ["builder", "reviewer"])
    assert final.status == "completed"
    for name in ("PROJECT.md", "REVIEW.md"):
        text = (repo / ".brain" / name).read_text()
        assert token not in text and "[REDACTED" in text, name


def test_a_live_engine_takes_back_a_state_the_heartbeat_marked_stalled(repo: Path) -> None:
    from datetime import timedelta

    from voyager_brain.pipeline.heartbeat import check_project

    seen: list[str] = []

    def runner(stage: object) -> dict[str, object]:
        later = datetime.now(UTC) + timedelta(hours=1)
        seen.append(check_project(repo, lambda: later).action)  # as if the machine slept
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the engine's refresh thread takes it back
            state = ps.load(repo)
            if state is not None and state.status == "running":
                break
            time.sleep(0.1)
        (repo / "work.txt").write_text("done\n")
        return {"session_id": "s"}

    final = Pipeline(repo, runner=runner, config=config()).run("task", ["builder"])
    assert seen == ["stalled"]
    assert final.status == "completed", final.error
    assert "pipeline.stalled" in names(repo)

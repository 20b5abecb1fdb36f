"""pipeline-state.json read by both of codename-claude's formats (github.com/
CodenameDwayne/codename-claude): the seed's stage-based one (commit 55b46fe) and its current
one (HEAD 2138f3e; `agentPipeline`, `phase`, `tasks` since 374e3fe). Every save writes both,
so that both versions' readers work on our file and reach the same status and stall; a file
its current engine wrote, in that format alone, is read here (status, stage, stall) and
written back in that format alone.

`seed_reader` and `head_reader` restate, in Python, what each version's heartbeat and
runner read (src/heartbeat/loop.ts, src/agents/runner.ts, src/pipeline/state.ts): HEAD's
runner throws on a file without a `tasks` array; both call a running pipeline stalled
strictly after 30 minutes without an update.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.errors import CorruptFileError
from voyager_brain.pipeline import codename
from voyager_brain.pipeline import heartbeat as hb
from voyager_brain.pipeline import state as ps

START = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
THIRTY_MINUTES = 30 * 60 * 1000


def clock(at: datetime = START) -> Any:
    return lambda: at


def seed_reader(document: dict[str, Any], now: int) -> dict[str, Any]:
    stage = document["stages"][document["currentStage"]]
    stalled = document["status"] == "running" and now - document["updatedAt"] > THIRTY_MINUTES
    return {"status": document["status"], "agent": stage["agent"], "stalled": stalled}


def head_reader(document: dict[str, Any], now: int) -> dict[str, Any]:
    tasks = document["tasks"]
    if not isinstance(tasks, list):
        raise TypeError("tasks.filter is not a function")  # what HEAD's runner throws
    done = sum(1 for t in tasks if t["status"] == "completed")
    stalled = document["status"] == "running" and now - document["updatedAt"] > THIRTY_MINUTES
    index = document["currentTaskIndex"]
    return {
        "status": document["status"],
        "agent": tasks[index]["title"] if 0 <= index < len(tasks) else None,
        "stalled": stalled,
        "done": done,
        "phase": document["phase"],
    }


def test_a_running_pipeline_reads_the_same_in_both_formats(tmp_path: Path) -> None:
    state = ps.new_state(
        tmp_path, "Add rate limiting", ["architect", "builder", "reviewer"], clock()
    )
    state = ps.start_stage(state, 0, clock())
    state = ps.finish_stage(state, 0, clock(START + timedelta(minutes=1)), session_id="s-arch")
    state = ps.start_stage(state, 1, clock(START + timedelta(minutes=2)))
    ps.save(tmp_path, state)
    document = json.loads((tmp_path / ".brain" / "pipeline-state.json").read_text())
    assert document["agentPipeline"] == document["pipeline"]
    assert document["phase"] == "building"
    assert document["currentTaskIndex"] == document["currentStage"] == 1
    assert [t["status"] for t in document["tasks"]] == ["completed", "in_progress", "pending"]
    assert document["tasks"][0]["lastSessionId"] == "s-arch"
    assert document["totalIterations"] == 1
    for minutes, stalled in ((30, False), (31, True)):
        now = document["updatedAt"] + minutes * 60 * 1000
        seed, head = seed_reader(document, now), head_reader(document, now)
        assert seed["status"] == head["status"] == "running"
        assert seed["agent"] == head["agent"] == "builder"
        assert seed["stalled"] is head["stalled"] is stalled
    assert head_reader(document, 0)["done"] == 1
    # Read back, HEAD's fields are made again from the seed's, not kept stale.
    assert ps.load(tmp_path) == state


def test_a_finished_pipeline_says_so_in_both_formats(tmp_path: Path) -> None:
    state = ps.new_state(tmp_path, "t", ["scout", "builder"], clock())
    assert state.head_fields()["phase"] == "scouting"
    for index in (0, 1):
        state = ps.start_stage(state, index, clock())
        state = ps.finish_stage(state, index, clock())
    state = state.replace(status="completed")
    head = state.head_fields()
    assert head["phase"] == "completed" and {t["status"] for t in head["tasks"]} == {"completed"}


def test_the_cli_writes_both_formats(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    done = run_cli(
        "pipeline", "run", "fuzz", "--runner", "true", "--max-retries", "0", cwd=tmp_path
    )
    assert done.returncode == 1  # the runner writes nothing: the first stage fails
    document = json.loads((tmp_path / ".brain" / "pipeline-state.json").read_text())
    assert document["status"] == "failed" and document["phase"] == "failed"
    assert (
        head_reader(document, document["updatedAt"])["agent"]
        == seed_reader(document, document["updatedAt"])["agent"]
    )


# -- a file in the current format alone -------------------------------------------------

START_MS = ps.epoch_ms(START)


def head_state(**changes: Any) -> dict[str, Any]:
    """What codename-claude's engine (HEAD src/pipeline/engine.ts) has written in its
    builder's loop: the init object's keys in its order (L84-96), `tasks` from PLAN.md's
    checkboxes (L203-210; a checked one with its `completedAt`), the second task being
    built (L238-246); `finalVerdict` and `error` only once set."""
    document: dict[str, Any] = {
        "project": "/home/dev/shop",
        "task": "Add rate limiting",
        "agentPipeline": ["scout", "architect", "builder", "reviewer"],
        "status": "running",
        "phase": "building",
        "startedAt": START_MS,
        "updatedAt": START_MS + 60_000,
        "tasks": [
            {
                "title": "Add the limiter middleware",
                "status": "completed",
                "attempts": 1,
                "lastVerdict": "APPROVE",
                "lastSessionId": "s-b1",
                "completedAt": START_MS + 30_000,
            },
            {"title": "Wire it into the router", "status": "in_progress", "attempts": 1},
            {"title": "Document the limits", "status": "pending", "attempts": 0},
        ],
        "currentTaskIndex": 1,
        "totalIterations": 2,
        "retries": 0,
    }
    document.update(changes)
    return document


def write_head(root: Path, document: dict[str, Any]) -> Path:
    # As its writePipelineState does: JSON.stringify(state, null, 2), no final newline.
    path = root / ".brain" / "pipeline-state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False))
    return path


def test_a_file_in_the_current_format_alone_is_read(tmp_path: Path) -> None:
    write_head(tmp_path, head_state())
    state = ps.load(tmp_path)
    assert state is not None
    assert (state.status, state.task, state.retries) == ("running", "Add rate limiting", 0)
    assert state.pipeline == ("scout", "architect", "builder", "reviewer")
    assert state.stage is not None and state.stage.agent == "builder"
    assert [s.status for s in state.stages] == ["completed", "completed", "running", "pending"]
    assert state.head is not None and state.head["tasks"][1]["title"] == "Wire it into the router"
    # Written back unchanged: the same document, in that format alone.
    assert state.to_json() == head_state()
    assert ps.PipelineState.from_json(state.to_json()) == state


@pytest.mark.parametrize(
    ("phase", "status", "tasks", "role"),
    [
        ("scouting", "running", [], "scout"),
        ("planning", "running", [], "architect"),
        ("building", "running", None, "builder"),
        ("building", "stalled", None, "builder"),
        ("completed", "completed", None, "reviewer"),
        ("failed", "failed", None, "builder"),  # the loop had made its tasks: it failed there
        ("failed", "failed", [], "scout"),  # before: where, the file does not say
        ("reviewing?", "running", [], "scout"),  # a phase its engine never writes
    ],
)
def test_the_stage_is_where_the_phase_points(
    phase: str, status: str, tasks: list[Any] | None, role: str
) -> None:
    changes: dict[str, Any] = {"phase": phase, "status": status}
    if tasks is not None:
        changes["tasks"] = tasks
    state = ps.PipelineState.from_json(head_state(**changes))
    assert state.stage is not None and state.stage.agent == role
    index = state.current_stage
    assert all(s.status == "completed" for s in state.stages[:index])
    assert all(s.status == "pending" for s in state.stages[index + 1 :])
    expected = {"stalled": "running"}.get(status, status)
    assert state.stage.status == expected


def test_a_pipeline_of_builder_and_reviewer_only(tmp_path: Path) -> None:
    # Its engine's own tests run ['builder', 'reviewer']: phase "scouting" until the loop.
    state = ps.PipelineState.from_json(
        head_state(agentPipeline=["builder", "reviewer"], phase="scouting", tasks=[])
    )
    assert state.stage is not None and state.stage.agent == "builder"
    empty = ps.PipelineState.from_json(head_state(agentPipeline=[], tasks=[]))
    assert empty.stage is None and empty.stages == ()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"agentPipeline": "builder"}, "agentPipeline: expected a list, got a string"),
        ({"agentPipeline": ["builder", 3]}, "agentPipeline[1]: expected a string, got an integer"),
        ({"phase": None}, "phase: expected a string, got null"),
        ({"tasks": [{"title": "x", "status": "done"}]}, "tasks[0].status: 'done', expected"),
        ({"tasks": [{"status": "pending"}]}, "tasks[0].title: missing"),
        ({"tasks": ["x"]}, "tasks[0]: expected an object, got a string"),
        ({"currentTaskIndex": "1"}, "currentTaskIndex: expected an integer, got a string"),
        ({"status": "paused"}, "status: 'paused', expected one of"),
        ({"updatedAt": None}, "updatedAt: expected an integer, got null"),
    ],
)
def test_a_broken_file_in_that_format_names_its_field(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    write_head(tmp_path, head_state(**changes))
    with pytest.raises(CorruptFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ps.load(tmp_path)


def test_a_stall_is_found_and_written_as_its_heartbeat_writes_it(tmp_path: Path) -> None:
    path = write_head(tmp_path, head_state())
    before = path.read_bytes()
    updated = START + timedelta(minutes=1)
    assert hb.check_project(tmp_path, clock(updated + timedelta(minutes=30))).action == "ok"
    assert path.read_bytes() == before
    report = hb.check_project(tmp_path, clock(updated + timedelta(minutes=31)))
    assert (report.action, report.role, report.stage) == ("stalled", "builder", 2)
    document = json.loads(path.read_text())
    # Only what its own heartbeat changes (loop.ts L78-80): status and updatedAt.
    now = ps.epoch_ms(updated + timedelta(minutes=31))
    assert document == head_state(status="stalled", updatedAt=now)
    assert list(document) == list(head_state())
    assert head_reader(document, now)["status"] == "stalled"


def test_the_cli_shows_and_cancels_a_state_in_that_format(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    path = write_head(tmp_path, head_state())
    shown = run_cli("pipeline", "status", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "status:   running" in shown.stdout
    assert "phase:    building (codename-claude's current format)" in shown.stdout
    assert "tasks:    1/3 done, current: Wire it into the router" in shown.stdout
    assert " > 3. builder   running" in shown.stdout
    as_json = run_cli("pipeline", "status", "--json", "--events", "0", cwd=tmp_path)
    assert json.loads(as_json.stdout) == {**head_state(), "events": []}
    doctor = run_cli("doctor", cwd=tmp_path)
    assert (
        "pipeline running, in codename-claude's current format: its engine may be running it"
        in doctor.stdout
    )
    refused = run_cli("pipeline", "resume", "--runner", "true", cwd=tmp_path)
    assert refused.returncode == 2
    assert "codename-claude's engine may run it: resume it once stalled" in refused.stderr
    assert json.loads(path.read_text()) == head_state()

    cancelled = run_cli("pipeline", "cancel", cwd=tmp_path)
    assert cancelled.returncode == 0, cancelled.stderr
    assert "at stage 3 (builder)" in cancelled.stdout
    document = json.loads(path.read_text())
    assert (document["status"], document["phase"], document["error"]) == (
        "failed",
        "failed",
        "cancelled",
    )
    assert "pipeline" not in document and document["tasks"] == head_state()["tasks"]


def test_resume_goes_on_in_our_format_with_both_written(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    path = write_head(tmp_path, head_state(status="stalled"))
    resumed = run_cli("pipeline", "resume", "--runner", "true", "--max-retries", "0", cwd=tmp_path)
    # The stand-in runner writes nothing, so the builder's stage fails its validation.
    assert resumed.returncode == 1
    assert "pipeline resumed at stage 3 (builder)" in resumed.stderr
    document = json.loads(path.read_text())
    assert document["pipeline"] == ["scout", "architect", "builder", "reviewer"]
    assert document["currentStage"] == 2 and document["status"] == "failed"
    assert head_reader(document, 0)["agent"] == seed_reader(document, 0)["agent"] == "builder"


_TEXT = st.text(max_size=8)
_TASK = st.fixed_dictionaries(
    {"title": _TEXT, "status": st.sampled_from(codename.TASK_STATUSES)},
    optional={"attempts": st.integers(0, 9), "lastVerdict": _TEXT, "lastSessionId": _TEXT},
)


@given(
    roles=st.lists(st.sampled_from(["scout", "architect", "builder", "reviewer", "x"])),
    status=st.sampled_from(ps.PIPELINE_STATUSES),
    phase=st.one_of(st.sampled_from(["scouting", "planning", "building", "completed"]), _TEXT),
    tasks=st.lists(_TASK, max_size=4),
    index=st.integers(-1, 5),
    verdict=st.none() | _TEXT,
)
def test_property_any_file_in_that_format_reads_and_writes_back_the_same(
    roles: list[str],
    status: str,
    phase: str,
    tasks: list[dict[str, Any]],
    index: int,
    verdict: str | None,
) -> None:
    changes: dict[str, Any] = {"agentPipeline": roles, "status": status, "phase": phase}
    changes.update(tasks=tasks, currentTaskIndex=index)
    if verdict is not None:
        changes["finalVerdict"] = verdict
    if status in ("completed", "failed"):
        changes["phase"] = status  # its engine writes both together
    document = head_state(**changes)
    state = ps.PipelineState.from_json(document)
    assert state.to_json() == document
    assert ps.PipelineState.from_json(json.loads(state.dumps())) == state
    assert len(state.stages) == len(roles)
    assert sum(s.status not in ("completed", "pending") for s in state.stages) <= 1
    # A stall changes only what its heartbeat changes.
    stalled, changed = ps.mark_stalled(state, document["updatedAt"] + ps.STALL_AFTER_MS + 1)
    if changed:
        assert stalled.to_json() == {
            **document,
            "status": "stalled",
            "updatedAt": stalled.updated_at,
        }

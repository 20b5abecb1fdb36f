"""pipeline-state.json and events.jsonl: the shape, the transitions, the file discipline."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from voyager_brain.errors import CorruptFileError
from voyager_brain.pipeline import events as ev
from voyager_brain.pipeline import state as ps
from voyager_brain.pipeline.state import PipelineState

START = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
START_MS = ps.epoch_ms(START)


def fixed(moment: datetime = START) -> ps.Clock:
    return lambda: moment


def running(
    root: Path, roles: tuple[str, ...] = ("architect", "builder", "reviewer")
) -> PipelineState:
    return ps.new_state(root, "add a login page", roles, fixed())


def state_file(root: Path) -> Path:
    return root / ".brain" / "pipeline-state.json"


# -- shape ------------------------------------------------------------------------------


def test_new_state_has_the_original_key_names_in_order(tmp_path: Path) -> None:
    document = ps.new_state(tmp_path, "task", ["architect", "builder"], fixed()).to_json()
    assert list(document) == [
        "project",
        "task",
        "pipeline",
        "status",
        "currentStage",
        "startedAt",
        "updatedAt",
        "stages",
        "retries",
        # codename-claude's current format, made from the fields above
        "agentPipeline",
        "phase",
        "tasks",
        "currentTaskIndex",
        "totalIterations",
    ]
    assert document["project"] == str(tmp_path.absolute())
    assert document["pipeline"] == ["architect", "builder"]
    assert document["status"] == "running"
    assert document["currentStage"] == 0
    assert document["startedAt"] == document["updatedAt"] == 1774103400000
    assert document["stages"][0] == {
        "agent": "architect",
        "status": "pending",
        "startedAt": None,
        "completedAt": None,
        "sessionId": None,
        "validation": None,
    }


def test_new_state_refuses_an_empty_stage_list(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one stage"):
        ps.new_state(tmp_path, "task", [], fixed())


def test_round_trip_keeps_extra_fields_and_final_keys(tmp_path: Path) -> None:
    document = running(tmp_path).to_json()
    head = {k: document.pop(k) for k in list(document) if k in ps.HEAD_KEYS}
    document["finalVerdict"] = "APPROVE"
    document["error"] = "boom"
    document["owner"] = {"pid": 42}
    document["stages"][1]["notes"] = ["kept"]
    document.update(head)  # always last: made again at every save
    loaded = PipelineState.from_json(json.loads(json.dumps(document)))
    assert loaded.to_json() == document
    assert list(loaded.to_json()) == list(document)
    ps.save(tmp_path, loaded)
    assert json.loads(state_file(tmp_path).read_text()) == document
    assert ps.load(tmp_path) == loaded


def test_a_state_written_by_the_original_tool_loads(tmp_path: Path) -> None:
    # The original omits unset stage fields; they read as null.
    document = {
        "project": "/p",
        "task": "t",
        "pipeline": ["builder"],
        "status": "completed",
        "currentStage": 0,
        "startedAt": 1,
        "updatedAt": 2,
        "stages": [{"agent": "builder", "status": "completed", "validation": "passed"}],
        "retries": 0,
        "finalVerdict": "APPROVE",
    }
    loaded = PipelineState.from_json(document)
    assert loaded.stages[0].session_id is None
    assert loaded.final_verdict == "APPROVE"
    assert loaded.error is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"retries": "2"}, "retries: expected an integer, got a string"),
        ({"currentStage": True}, "currentStage: expected an integer, got a boolean"),
        ({"status": "paused"}, "status: 'paused', expected one of running"),
        ({"pipeline": ["builder", 3]}, r"pipeline\[1\]: expected a string"),
        ({"error": 5}, "error: expected a string or null"),
        ({"stages": {}}, "stages: expected a list, got an object"),
    ],
)
def test_a_wrong_type_names_the_field(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    document = {**running(tmp_path).to_json(), **change}
    with pytest.raises(CorruptFileError, match=message):
        PipelineState.from_json(document)


def test_a_wrong_stage_field_names_the_stage(tmp_path: Path) -> None:
    document = running(tmp_path).to_json()
    document["stages"][2]["status"] = "done"
    with pytest.raises(CorruptFileError, match=r"stages\[2\]\.status: 'done'"):
        PipelineState.from_json(document)
    del document["stages"][1]["agent"]
    with pytest.raises(CorruptFileError, match=r"stages\[1\]\.agent: missing"):
        PipelineState.from_json(document)


# -- corrupt files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        ('{"project": ', "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got a list"),
        ('{"project": "/p"}', "task: missing"),
        ("\udcff", "not valid UTF-8"),
    ],
)
def test_a_corrupt_file_is_reported_and_never_overwritten(
    tmp_path: Path, content: str, detail: str
) -> None:
    path = state_file(tmp_path)
    path.parent.mkdir()
    data = content.encode("utf-8", errors="surrogateescape")
    path.write_bytes(data)
    with pytest.raises(CorruptFileError, match=detail) as caught:
        ps.load(tmp_path)
    assert caught.value.path == path
    assert str(path) in str(caught.value)
    with pytest.raises(CorruptFileError):
        ps.save(tmp_path, running(tmp_path))
    assert path.read_bytes() == data


def test_reset_moves_a_corrupt_file_aside_so_a_new_run_can_start(tmp_path: Path) -> None:
    path = state_file(tmp_path)
    path.parent.mkdir()
    path.write_text("not json")
    moved = ps.reset(tmp_path, fixed())
    assert moved == path.with_name("pipeline-state.json.20260321T143000Z.corrupt")
    assert moved.read_text() == "not json"
    assert ps.load(tmp_path) is None
    ps.save(tmp_path, running(tmp_path))
    assert ps.load(tmp_path) == running(tmp_path)
    assert ps.reset(tmp_path, fixed()) != moved  # a second reset keeps the first file
    assert ps.reset(tmp_path, fixed()) is None


def test_load_without_a_file_is_none(tmp_path: Path) -> None:
    assert ps.load(tmp_path) is None


def test_concurrent_saves_by_several_processes_leave_a_parseable_file(tmp_path: Path) -> None:
    writer = textwrap.dedent(
        """
        import sys
        from datetime import UTC, datetime
        from pathlib import Path
        from voyager_brain.pipeline import state as ps

        root, me = Path(sys.argv[1]), sys.argv[2]
        for i in range(40):
            moment = datetime(2026, 3, 21, tzinfo=UTC)
            s = ps.new_state(root, f"task {me} {i} " + "x" * 5000, ["builder"], lambda: moment)
            ps.save(root, s)
            loaded = ps.load(root)
            assert loaded is not None and loaded.task.startswith("task ")
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", writer, str(tmp_path), str(n)]) for n in range(4)
    ]
    assert [p.wait(timeout=120) for p in processes] == [0, 0, 0, 0]
    final = ps.load(tmp_path)
    assert final is not None and final.task.endswith("x" * 5000)
    leftovers = [p.name for p in state_file(tmp_path).parent.iterdir()]
    assert sorted(leftovers) == ["pipeline-state.json", "pipeline-state.json.lock"]


# -- transitions ------------------------------------------------------------------------


def test_a_stage_runs_and_completes(tmp_path: Path) -> None:
    clock = fixed(START + timedelta(seconds=5))
    started = ps.start_stage(running(tmp_path), 0, clock)
    assert started.stage == started.stages[0]
    assert started.stages[0].status == "running"
    assert started.stages[0].started_at == started.updated_at == START_MS + 5000
    done = ps.finish_stage(started, 0, fixed(START + timedelta(seconds=9)), session_id="s-1")
    stage = done.stages[0]
    assert (stage.status, stage.completed_at, stage.session_id, stage.validation) == (
        "completed",
        START_MS + 9000,
        "s-1",
        "passed",
    )
    assert done.status == "running"
    assert done.updated_at == START_MS + 9000
    assert running(tmp_path).stages[0].status == "pending"  # the input is never changed


def test_fail_stage_fails_the_stage_and_the_pipeline(tmp_path: Path) -> None:
    state = ps.start_stage(ps.finish_stage(running(tmp_path), 0, fixed()), 1, fixed())
    failed = ps.fail_stage(state, 1, "builder changed nothing", fixed(), validation="no change")
    assert failed.status == "failed"
    assert failed.error == "builder changed nothing"
    assert failed.current_stage == 1
    assert failed.stages[1].status == "failed"
    assert failed.stages[1].validation == "no change"
    assert failed.to_json()["error"] == "builder changed nothing"


def test_restart_from_resets_later_stages_and_counts_a_retry(tmp_path: Path) -> None:
    state = running(tmp_path)
    for index in range(3):
        state = ps.finish_stage(ps.start_stage(state, index, fixed()), index, fixed(), f"s{index}")
    later = START + timedelta(minutes=3)
    again = ps.restart_from(state, 1, fixed(later))
    assert again.retries == 1
    assert again.status == "running"
    assert again.current_stage == 1
    assert again.updated_at == ps.epoch_ms(later)
    assert again.stages[0] == state.stages[0]
    assert [s.status for s in again.stages] == ["completed", "pending", "pending"]
    assert again.stages[2].to_json()["sessionId"] is None
    assert ps.restart_from(again, 0, fixed()).retries == 2


def test_complete_and_fail_set_the_final_verdict(tmp_path: Path) -> None:
    done = ps.complete(running(tmp_path), "APPROVE", fixed())
    assert (done.status, done.final_verdict, done.error) == ("completed", "APPROVE", None)
    assert done.to_json()["finalVerdict"] == "APPROVE"
    failed = ps.fail(running(tmp_path), "max retries reached", "REVISE", fixed())
    assert (failed.status, failed.final_verdict, failed.error) == (
        "failed",
        "REVISE",
        "max retries reached",
    )


def test_a_stage_index_out_of_range_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="3 stages"):
        ps.start_stage(running(tmp_path), 3, fixed())
    with pytest.raises(ValueError):
        ps.restart_from(running(tmp_path), -1, fixed())


@pytest.mark.parametrize(("minutes", "stalls"), [(29, False), (30, False), (31, True), (45, True)])
def test_stall_only_after_more_than_thirty_minutes(
    tmp_path: Path, minutes: int, stalls: bool
) -> None:
    state = running(tmp_path)
    now = START_MS + minutes * 60 * 1000
    result, changed = ps.mark_stalled(state, now)
    assert changed is stalls
    if stalls:
        assert result.status == "stalled"
        assert result.updated_at == now
    else:
        assert result is state


def test_stall_is_strictly_more_than_the_threshold(tmp_path: Path) -> None:
    state = running(tmp_path)
    assert not ps.mark_stalled(state, START_MS + ps.STALL_AFTER_MS)[1]
    assert ps.mark_stalled(state, START_MS + ps.STALL_AFTER_MS + 1)[1]


@pytest.mark.parametrize("status", ["completed", "failed", "stalled"])
def test_stall_never_touches_other_statuses(tmp_path: Path, status: str) -> None:
    state = running(tmp_path).replace(status=status)
    result, changed = ps.mark_stalled(state, START_MS + 10 * ps.STALL_AFTER_MS)
    assert (result, changed) == (state, False)


# -- events -----------------------------------------------------------------------------


def test_events_are_appended_as_lines_and_read_back(tmp_path: Path) -> None:
    ev.append_event(tmp_path, "pipeline.started", fixed(), task="t", stages=["builder"])
    ev.append_event(tmp_path, "stage.completed", fixed(START + timedelta(seconds=1)), stage=0)
    lines = (tmp_path / ".brain" / "events.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0]) == {
        "event": "pipeline.started",
        "at": "2026-03-21T14:30:00Z",
        "task": "t",
        "stages": ["builder"],
    }
    assert [e["event"] for e in ev.read_events(tmp_path)] == ["pipeline.started", "stage.completed"]
    assert ev.read_events(tmp_path)[1]["at"] == "2026-03-21T14:30:01Z"


def test_read_events_without_a_log_is_empty(tmp_path: Path) -> None:
    assert ev.read_events(tmp_path) == []


def test_a_torn_last_line_is_tolerated_and_not_glued_to_the_next(tmp_path: Path) -> None:
    ev.append_event(tmp_path, "stage.started", fixed(), stage=0)
    log = tmp_path / ".brain" / "events.jsonl"
    with log.open("a") as handle:
        handle.write('{"event": "stage.comp')
    assert [e["event"] for e in ev.read_events(tmp_path)] == ["stage.started"]
    ev.append_event(tmp_path, "stage.failed", fixed(), stage=0, error="crashed")
    assert [e["event"] for e in ev.read_events(tmp_path)] == ["stage.started", "stage.failed"]


def test_a_line_that_is_not_an_event_is_corrupt(tmp_path: Path) -> None:
    log = tmp_path / ".brain" / "events.jsonl"
    log.parent.mkdir()
    log.write_text('{"event": "stage.started", "at": "x"}\n[1, 2]\n')
    with pytest.raises(CorruptFileError, match=r"events.jsonl:2"):
        ev.read_events(tmp_path)


def test_an_unknown_event_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown pipeline event 'stage\.done'"):
        ev.append_event(tmp_path, "stage.done", fixed())
    with pytest.raises(ValueError, match="may not be named at"):
        ev.append_event(tmp_path, "stage.started", fixed(), at="later")
    assert not (tmp_path / ".brain" / "events.jsonl").exists()


def test_the_event_set_is_the_closed_list_of_the_issue() -> None:
    expected = {
        "pipeline.started",
        "stage.started",
        "stage.completed",
        "stage.failed",
        "review.verdict",
        "pipeline.retry",
        "pipeline.completed",
        "pipeline.failed",
        "pipeline.stalled",
        "patterns.noncompliant",
        "backlog.changed",
    }
    assert expected == ev.EVENTS


def test_update_reads_changes_and_writes_under_one_lock(tmp_path: Path) -> None:
    from voyager_brain.pipeline.state import update

    clock = fixed()
    assert update(tmp_path, lambda current: None) is None
    assert not ps.state_path(tmp_path).exists()
    first = ps.new_state(tmp_path, "task", ["builder"], clock)
    assert update(tmp_path, lambda current: first) == first
    seen: list[object] = []

    def stall(current: PipelineState | None) -> PipelineState | None:
        seen.append(current)
        return None

    assert update(tmp_path, stall) == first  # nothing written, the state on disk returned
    assert seen == [first]
    assert ps.load(tmp_path) == first


def test_update_leaves_a_corrupt_file_alone(tmp_path: Path) -> None:
    from voyager_brain.pipeline.state import update

    path = ps.state_path(tmp_path)
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(CorruptFileError):
        update(tmp_path, lambda current: ps.new_state(tmp_path, "t", ["builder"], fixed()))
    assert path.read_text() == "{not json"

"""pipeline-state.json read by both of codename-claude's formats (github.com/
CodenameDwayne/codename-claude): the seed's stage-based one (commit 55b46fe) and its current
one (HEAD 2138f3e; `agentPipeline`, `phase`, `tasks` since 374e3fe). Every save writes both,
so that both versions' readers work on our file and reach the same status and stall.

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

from conftest import git, run_cli

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

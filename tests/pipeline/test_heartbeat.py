"""The heartbeat: stall detection over the remembered projects, and their registry."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.errors import CorruptFileError
from voyager_brain.pipeline import events as ev
from voyager_brain.pipeline import heartbeat as hb
from voyager_brain.pipeline import state as ps

START = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
START_MS = ps.epoch_ms(START)


def fixed(moment: datetime) -> ps.Clock:
    return lambda: moment


def after(minutes: float) -> ps.Clock:
    return fixed(START + timedelta(minutes=minutes))


def state_file(root: Path) -> Path:
    return root / ".brain" / "pipeline-state.json"


def write_state(root: Path, status: str = "running", updated_at: int = START_MS) -> bytes:
    """A pipeline at stage 1 (the builder), last updated at `updated_at`; its bytes."""
    state = ps.new_state(root, "add a login page", ["architect", "builder"], fixed(START))
    state = ps.finish_stage(state, 0, fixed(START))
    state = ps.start_stage(state, 1, fixed(START))
    state = state.replace(status=status, updated_at=updated_at)
    ps.save(root, state)
    return state_file(root).read_bytes()


def registry(home: Path) -> Path:
    return home / "pipeline-projects.json"


# -- stall detection --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("minutes", "action"), [(29, "ok"), (30, "ok"), (31, "stalled"), (45, "stalled")]
)
def test_a_running_pipeline_stalls_only_strictly_after_thirty_minutes(
    tmp_path: Path, minutes: int, action: str
) -> None:
    before = write_state(tmp_path)
    report = hb.check_project(tmp_path, after(minutes))
    assert report.action == action
    assert report.status_before == "running"
    assert (report.stage, report.role, report.idle_minutes) == (1, "builder", minutes)
    if action == "ok":
        assert report.status_after == "running"
        assert state_file(tmp_path).read_bytes() == before
        assert ev.read_events(tmp_path) == []


def test_one_millisecond_past_the_threshold_stalls(tmp_path: Path) -> None:
    write_state(tmp_path)
    moment = START + timedelta(milliseconds=ps.STALL_AFTER_MS + 1)
    assert hb.check_project(tmp_path, fixed(moment)).action == "stalled"


def test_a_stall_sets_updated_at_to_now_and_writes_the_event(tmp_path: Path) -> None:
    write_state(tmp_path)
    now = START + timedelta(minutes=31, seconds=20)
    report = hb.check_project(tmp_path, fixed(now))
    assert report == hb.Report(
        project=str(tmp_path.absolute()),
        action="stalled",
        status_before="running",
        status_after="stalled",
        stage=1,
        role="builder",
        task="add a login page",
        idle_minutes=31,
    )
    loaded = ps.load(tmp_path)
    assert loaded is not None
    assert (loaded.status, loaded.updated_at) == ("stalled", ps.epoch_ms(now))
    assert loaded.stages[1].status == "running"  # only the pipeline's status changes
    assert ev.read_events(tmp_path) == [
        {
            "event": "pipeline.stalled",
            "at": "2026-03-21T15:01:20Z",
            "stage": 1,
            "role": "builder",
            "task": "add a login page",
            "idle_minutes": 31,
        }
    ]


def test_a_second_heartbeat_leaves_a_stalled_pipeline_alone(tmp_path: Path) -> None:
    write_state(tmp_path)
    assert hb.check_project(tmp_path, after(40)).action == "stalled"
    stalled = state_file(tmp_path).read_bytes()
    report = hb.check_project(tmp_path, after(120))
    assert (report.action, report.status_before, report.status_after) == (
        "ok",
        "stalled",
        "stalled",
    )
    assert state_file(tmp_path).read_bytes() == stalled
    assert len(ev.read_events(tmp_path)) == 1


@pytest.mark.parametrize("status", ["completed", "failed", "stalled"])
def test_a_pipeline_that_is_not_running_is_never_touched(tmp_path: Path, status: str) -> None:
    before = write_state(tmp_path, status)
    names = sorted(p.name for p in (tmp_path / ".brain").iterdir())
    report = hb.check_project(tmp_path, after(24 * 60))
    assert (report.action, report.status_before, report.status_after) == ("ok", status, status)
    assert state_file(tmp_path).read_bytes() == before
    assert sorted(p.name for p in (tmp_path / ".brain").iterdir()) == names


def test_a_custom_threshold(tmp_path: Path) -> None:
    write_state(tmp_path)
    assert hb.check_project(tmp_path, after(6), threshold_ms=5 * 60_000).action == "stalled"


def test_a_project_without_a_pipeline_gets_no_brain_folder(tmp_path: Path) -> None:
    report = hb.check_project(tmp_path, after(60))
    assert report == hb.Report(str(tmp_path.absolute()), "no pipeline")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"project": "/p"}', "task: missing"),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
)
def test_a_corrupt_state_is_reported_and_left_as_it_is(
    tmp_path: Path, content: bytes, detail: str
) -> None:
    path = state_file(tmp_path)
    path.parent.mkdir()
    path.write_bytes(content)
    report = hb.check_project(tmp_path, after(60))
    assert report.action == "corrupt"
    assert report.error is not None and "\n" not in report.error
    assert str(path) in report.error and detail in report.error
    assert path.read_bytes() == content
    assert [p.name for p in path.parent.iterdir()] == ["pipeline-state.json"]


def test_a_missing_project_is_reported_and_not_created(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    report = hb.check_project(gone, after(60))
    assert report == hb.Report(str(gone), "missing project")
    assert not gone.exists()


def test_check_projects_reports_every_project_in_order_without_raising(tmp_path: Path) -> None:
    stale, done, empty, broken, gone = (tmp_path / n for n in ("s", "d", "e", "b", "g"))
    for root in (stale, done, empty, broken):
        root.mkdir()
    write_state(stale)
    write_state(done, "completed")
    state_file(broken).parent.mkdir()
    state_file(broken).write_text("[]")
    reports = hb.check_projects([gone, broken, empty, done, stale], after(31))
    assert [(Path(r.project).name, r.action) for r in reports] == [
        ("g", "missing project"),
        ("b", "corrupt"),
        ("e", "no pipeline"),
        ("d", "ok"),
        ("s", "stalled"),
    ]


def test_check_projects_reads_the_clock_once() -> None:
    reads: list[datetime] = []

    def clock() -> datetime:
        reads.append(START)
        return START

    with tempfile.TemporaryDirectory() as folder:
        roots = [Path(folder) / str(n) for n in range(3)]
        hb.check_projects(roots, clock)
    assert len(reads) == 1


def test_the_report_as_json_and_as_a_line(tmp_path: Path) -> None:
    write_state(tmp_path)
    report = hb.check_project(tmp_path, after(45))
    document = json.loads(json.dumps(report.to_json()))
    assert document == {
        "project": str(tmp_path.absolute()),
        "action": "stalled",
        "status_before": "running",
        "status_after": "stalled",
        "stage": 1,
        "role": "builder",
        "task": "add a login page",
        "idle_minutes": 45,
        "error": None,
    }
    line = f"{tmp_path.absolute()}: stalled, stage 2 (builder), no update for 45 min"
    assert report.describe() == line
    done = hb.Report("/p", "ok", "completed", "completed", stage=2, role="reviewer")
    assert done.describe() == "/p: completed, stage 3 (reviewer)"
    assert hb.Report("/p", "no pipeline").describe() == "/p: no pipeline"
    assert hb.Report("/p", "corrupt", error="/p/x: bad").describe() == "/p: corrupt: /p/x: bad"


_UPDATED = st.integers(min_value=0, max_value=2**45)
_GAP = st.integers(min_value=-(10**9), max_value=10**9)


@given(status=st.sampled_from(["completed", "failed", "stalled"]), updated=_UPDATED, gap=_GAP)
def test_property_a_state_that_is_not_running_never_changes(
    status: str, updated: int, gap: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        before = write_state(root, status, updated)
        now = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=updated + gap)
        report = hb.check_project(root, fixed(now))
        assert (report.action, report.status_after) == ("ok", status)
        assert state_file(root).read_bytes() == before
        assert not ev.events_path(root).exists()


@given(updated=_UPDATED, gap=_GAP)
def test_property_a_running_state_stalls_exactly_when_strictly_past_the_threshold(
    updated: int, gap: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        before = write_state(root, "running", updated)
        now_ms = updated + gap
        now = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=now_ms)
        report = hb.check_project(root, fixed(now))
        stalls = gap > ps.STALL_AFTER_MS
        assert report.action == ("stalled" if stalls else "ok")
        assert report.idle_minutes == max(0, gap) // 60_000
        loaded = ps.load(root)
        assert loaded is not None
        if stalls:
            assert (loaded.status, loaded.updated_at) == ("stalled", now_ms)
            assert len(ev.read_events(root)) == 1
        else:
            assert state_file(root).read_bytes() == before


# -- the registry -----------------------------------------------------------------------


def test_no_registry_means_no_projects(isolated_env: Path) -> None:
    assert hb.known_projects() == []
    assert hb.registry_path() == registry(isolated_env)
    assert hb.forget_project(Path("/nowhere")) is False
    assert not registry(isolated_env).exists()


def test_remember_twice_keeps_one_sorted_entry(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b, a = tmp_path / "b", tmp_path / "a"
    hb.remember_project(b)
    hb.remember_project(a)
    written = registry(isolated_env).read_bytes()
    hb.remember_project(a)
    monkeypatch.chdir(tmp_path)
    hb.remember_project(Path("b"))  # relative: made absolute, the same project
    assert registry(isolated_env).read_bytes() == written
    assert hb.known_projects() == [a, b]
    assert written.decode() == json.dumps({"projects": [str(a), str(b)]}, indent=2) + "\n"


def test_forget_removes_one_and_keeps_the_others(isolated_env: Path, tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        hb.remember_project(tmp_path / name)
    assert hb.forget_project(tmp_path / "b") is True
    assert hb.known_projects() == [tmp_path / "a", tmp_path / "c"]
    assert hb.forget_project(tmp_path / "b") is False


def test_unknown_registry_keys_are_kept(isolated_env: Path, tmp_path: Path) -> None:
    registry(isolated_env).write_text('{"note": "mine", "projects": []}')
    hb.remember_project(tmp_path)
    document = json.loads(registry(isolated_env).read_text())
    assert document == {"projects": [str(tmp_path)], "note": "mine"}


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        ('{"projects": [', "not valid JSON"),
        ("[]", "expected a JSON object"),
        ('{"projects": "/p"}', "projects: expected a list"),
        ('{"projects": ["/p", 3]}', r"projects\[1\]: expected an absolute path"),
        ('{"projects": ["relative"]}', r"projects\[0\]: expected an absolute path"),
    ],
)
def test_a_corrupt_registry_is_never_overwritten(
    isolated_env: Path, tmp_path: Path, content: str, detail: str
) -> None:
    path = registry(isolated_env)
    path.write_text(content)
    for call in (
        hb.known_projects,
        lambda: hb.remember_project(tmp_path),
        lambda: hb.forget_project(Path("/p")),
    ):
        with pytest.raises(CorruptFileError, match=detail) as raised:
            call()
        assert raised.value.path == path
        assert path.read_text() == content


def test_concurrent_remembers_from_six_processes_lose_nothing(tmp_path: Path) -> None:
    # VOYAGER_HOME (set by the isolated_env fixture) is inherited by the children.
    writer = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from voyager_brain.pipeline import heartbeat as hb

        base, me = Path(sys.argv[1]), sys.argv[2]
        for i in range(15):
            hb.remember_project(base / f"p{me}-{i:02d}")
            hb.remember_project(base / "shared")
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", writer, str(tmp_path), str(n)]) for n in range(6)
    ]
    assert [p.wait(timeout=120) for p in processes] == [0] * 6
    expected = sorted([tmp_path / f"p{n}-{i:02d}" for n in range(6) for i in range(15)])
    assert hb.known_projects() == sorted([*expected, tmp_path / "shared"])

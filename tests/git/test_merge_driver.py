"""The merge driver end to end: real `git merge` of two branches in a real repository,
git running ``voyager-brain merge-driver`` from the PATH as it does for a user whose
virtual environment is active."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import TickingClock, git, run_cli

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.memory import log
from voyager_brain.memory.tool import brain_tool
from voyager_brain.session import brainfile
from voyager_brain.state import brainjson as state

BRAIN_FILES = ("brain.md", "brain.json", "memory.jsonl")
MARKERS = ("<<<<<<<", ">>>>>>>", "=======", "|||||||")


@pytest.fixture(autouse=True)
def driver_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment's scripts folder first on PATH: what an activated venv gives."""
    scripts = sysconfig.get_path("scripts")
    monkeypatch.setenv("PATH", scripts + os.pathsep + os.environ.get("PATH", ""))
    assert shutil.which("voyager-brain"), f"no voyager-brain script in {scripts}: pip install -e ."


def install_git(top: Path) -> None:
    done = run_cli("install", "git", cwd=top)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def commit(top: Path, message: str) -> None:
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", message)


def merge(top: Path, branch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "merge", "--no-edit", branch],
        cwd=top,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_no_markers(top: Path) -> None:
    for name in BRAIN_FILES:
        path = top / ".voyager" / name
        if path.exists():
            lines = path.read_text(encoding="utf-8").split("\n")
            assert not [x for x in lines if x.startswith(MARKERS)], f"conflict markers in {name}"


class Session:
    """One agent's writes, through the library, with its own clock."""

    def __init__(self, top: Path, start: datetime) -> None:
        self.top = top
        self.clock = TickingClock(start, timedelta(seconds=7))

    def note(self, type_: str, text: str) -> BrainEntry:
        bm = BrainManager(self.top, clock=self.clock)
        bm.load()
        entry = BrainEntry(type_, text, self.clock())
        bm.update(entry)
        bm.persist()
        return entry

    def save(self, update: dict[str, Any]) -> None:
        bm = BrainManager(self.top, clock=self.clock)
        bm.load()
        bm.merge_state(update)
        bm.persist()

    def memory(self, action: str, **params: Any) -> dict[str, Any]:
        result = brain_tool(action, cwd=str(self.top), clock=self.clock, **params)
        assert result["ok"], result
        return result


def entries(top: Path) -> tuple[BrainEntry, ...]:
    path = top / ".voyager" / "brain.md"
    return brainfile.parse(path.read_bytes(), path).entries


def project_state(top: Path) -> dict[str, Any]:
    path = top / ".voyager" / "brain.json"
    return state.loads(path.read_bytes(), path)


def memories(top: Path) -> dict[str, dict[str, Any]]:
    lines, health = log.read(top / ".voyager" / "memory.jsonl")
    assert health.bad_lines == 0
    return log.fold(lines).entries


T0 = datetime(2026, 3, 21, 9, 0, tzinfo=UTC)


@pytest.fixture
def team(repo: Path) -> Iterator[dict[str, Any]]:
    """A repository with the driver registered and brain files in the first commit."""
    assert run_cli("init", cwd=repo).returncode == 0
    base = Session(repo, T0)
    found = {
        "kept": base.note("observation", "Base: the API runs on port 3000"),
        "doomed": base.note("observation", "Base: a note someone deletes by hand"),
    }
    base.save(
        {
            "decisions": [
                {"what": "Use PostgreSQL", "why": "relational data"},
                {"what": "Use SOAP", "why": "a mistake"},
            ],
            "facts": {"stack": ["Python"]},
        }
    )
    found["learning"] = base.memory("add", type="learning", text="Tests need a running Redis")
    found["forgotten"] = base.memory("add", type="learning", text="The CI runner is flaky")
    install_git(repo)
    commit(repo, "brain: base")
    yield found


def test_two_branches_merge_without_markers_keeping_every_entry(
    repo: Path, team: dict[str, Any]
) -> None:
    forgotten = team["forgotten"]["entries"][0]["id"]

    git(repo, "checkout", "-q", "-b", "feature")
    feature = Session(repo, T0 + timedelta(hours=1))
    f_note = feature.note("decision", "Feature: rate limit per API key")
    feature.save(
        {"decisions": [{"what": "Use Redis", "why": "rate limits"}], "nextSteps": ["ship"]}
    )
    f_learning = feature.memory("add", type="learning", text="Redis keys expire after 60 s")
    feature.memory("remove", id=forgotten, reason="fixed")
    commit(repo, "brain: feature")

    git(repo, "checkout", "-q", "main")
    main = Session(repo, T0 + timedelta(hours=2))
    m_note = main.note("observation", "Main: upgraded the ORM")
    main.save({"decisions": [{"what": "Use JWT", "why": "stateless"}]})
    m_learning = main.memory("add", type="learning", text="The ORM needs explicit commits")
    # A concurrent update of what the feature branch deleted: the deletion must win.
    main.memory("update", id=forgotten, text="The CI runner is flaky on Mondays")
    # Hand deletions on main: a brain.md entry and a decision.
    bm = BrainManager(repo)
    bm.load()
    assert bm.remove(team["doomed"])
    bm.persist()
    document = project_state(repo)
    document["decisions"] = [d for d in document["decisions"] if d["what"] != "Use SOAP"]
    (repo / ".voyager" / "brain.json").write_text(state.dumps(document))
    commit(repo, "brain: main")

    done = merge(repo, "feature")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CONFLICT" not in done.stdout
    assert git(repo, "status", "--porcelain") == ""
    assert_no_markers(repo)

    assert set(entries(repo)) == {team["kept"], f_note, m_note}
    result = project_state(repo)
    assert [d["what"] for d in result["decisions"]] == ["Use PostgreSQL", "Use JWT", "Use Redis"]
    assert result["nextSteps"] == ["ship"]
    assert result["sessionCount"] == 3
    live = memories(repo)
    assert forgotten not in live
    for added in (team["learning"], f_learning, m_learning):
        assert added["entries"][0]["id"] in live
    # The merged files are what the library itself writes: loading and saving changes nothing.
    before = {n: (repo / ".voyager" / n).read_bytes() for n in ("brain.md", "brain.json")}
    BrainManager(repo).persist()
    assert {n: (repo / ".voyager" / n).read_bytes() for n in before} == before


def test_a_fresh_clone_merges_after_install_git_alone(
    repo: Path, team: dict[str, Any], tmp_path: Path
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    feature = Session(repo, T0 + timedelta(hours=1))
    f_note = feature.note("observation", "feature: cache warmed at start")
    feature.save({"facts": {"stack": ["Redis"]}})
    f_learning = feature.memory("add", type="learning", text="Warm the cache before tests")
    commit(repo, "brain: feature")
    git(repo, "checkout", "-q", "main")
    main = Session(repo, T0 + timedelta(hours=2))
    m_note = main.note("observation", "main: logging in JSON")
    main.save({"facts": {"stack": ["structlog"]}})
    m_learning = main.memory("add", type="learning", text="Logs are JSON lines")
    commit(repo, "brain: main")

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert "merge.voyager-brain" not in git(clone, "config", "--local", "--list")
    install_git(clone)
    assert git(clone, "status", "--porcelain") == ""  # .gitattributes came with the clone

    done = merge(clone, "origin/feature")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_no_markers(clone)
    assert {f_note, m_note, team["kept"]} <= set(entries(clone))
    assert project_state(clone)["facts"]["stack"] == ["Python", "structlog", "Redis"]
    live = memories(clone)
    for added in (f_learning, m_learning):
        assert added["entries"][0]["id"] in live


def test_both_branches_compacted(repo: Path, team: dict[str, Any]) -> None:
    config = repo / ".voyager" / "config.toml"
    config.write_text("compact_budget_tokens = 150\nauto_compact = false\n")
    base = Session(repo, T0 + timedelta(minutes=30))
    for n in range(8):
        base.note("observation", f"Base observation {'ABCDEFGH'[n]}: {'lorem ipsum ' * 4}")
    decision = base.note("decision", "Use one summary per compaction")
    commit(repo, "brain: more")

    summaries = {}
    git(repo, "branch", "feature")
    for branch, start in (("feature", 1), ("main", 2)):
        git(repo, "checkout", "-q", branch)
        session = Session(repo, T0 + timedelta(hours=start))
        session.note("observation", f"{branch}: one more note")
        bm = BrainManager(repo, clock=session.clock)
        bm.load()
        report = bm.compact()
        assert report.summary is not None
        summaries[branch] = report.summary
        commit(repo, f"brain: {branch} compacted")

    done = merge(repo, "feature")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_no_markers(repo)
    merged = entries(repo)
    assert summaries["feature"] in merged and summaries["main"] in merged
    assert decision in merged
    assert "Base observation A" not in "".join(e.content for e in merged if e.source != "compact")


def test_a_side_that_cannot_be_read_leaves_gits_conflict(repo: Path, team: dict[str, Any]) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    Session(repo, T0 + timedelta(hours=1)).note("observation", "feature note")
    (repo / ".voyager" / "brain.json").write_text('{"facts": \n')  # a broken hand edit
    commit(repo, "brain: broken")
    git(repo, "checkout", "-q", "main")
    main = Session(repo, T0 + timedelta(hours=2))
    main.note("observation", "main note")
    main.save({"nextSteps": ["fix the build"]})
    ours = (repo / ".voyager" / "brain.json").read_bytes()
    commit(repo, "brain: main")

    done = merge(repo, "feature")
    assert done.returncode == 1
    assert "CONFLICT (content): Merge conflict in .voyager/brain.json" in done.stdout
    assert "voyager-brain merge-driver: theirs:.voyager/brain.json:2: not valid JSON" in done.stderr
    conflicted = git(repo, "diff", "--name-only", "--diff-filter=U").split()
    assert conflicted == [".voyager/brain.json"]
    assert (repo / ".voyager" / "brain.json").read_bytes() == ours  # untouched, no markers
    assert {e.content for e in entries(repo)} >= {"feature note", "main note"}
    assert_no_markers(repo)


def test_the_driver_command_writes_ours_or_exits_1_leaving_it(tmp_path: Path) -> None:
    one = log.encode({"id": "a", "type": "learning", "text": "a", "created": "2026-01-01"})
    two = log.encode({"id": "b", "type": "learning", "text": "b", "created": "2026-01-02"})
    for name, data in (("base", b""), ("ours", one), ("theirs", two), ("bad", b"{x\n")):
        (tmp_path / name).write_bytes(data)
    args = ["merge-driver", "base", "ours", "theirs", ".voyager/memory.jsonl"]
    done = run_cli(*args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "ours").read_bytes() == one + two

    args[3] = "bad"
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "voyager-brain merge-driver: theirs:.voyager/memory.jsonl:1: not a JSON object with "
        "a string id and type; left for a manual merge\n"
    )
    assert (tmp_path / "ours").read_bytes() == one + two
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "base", "ours", "theirs"]

    done = run_cli("merge-driver", "base", "ours", "theirs", "notes.txt", cwd=tmp_path)
    assert done.returncode == 1 and "notes.txt: no merge for this file" in done.stderr
    assert (
        "Usage: voyager-brain merge-driver"
        in run_cli("merge-driver", "--help", cwd=tmp_path).stdout
    )


def test_the_driver_imports_no_heavy_library(tmp_path: Path) -> None:
    for name in ("base", "ours", "theirs"):
        (tmp_path / name).write_bytes(b"# p Brain \xe2\x80\x94 Session Context\n")
    code = (
        "import sys, json\nfrom voyager_brain.__main__ import main\n"
        "sys.argv = ['voyager-brain', 'merge-driver', 'base', 'ours', 'theirs', "
        "'.voyager/brain.md']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jinja2', 'markdown_it', 'yaml', 'frontmatter', 'git', 'click'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []

"""The cached session-start document: served only while it is exactly what a build would
give, through real files and real hook processes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import run_cli

from voyager_brain import BrainManager, storage
from voyager_brain.context import cache as context_cache
from voyager_brain.memory import log
from voyager_brain.memory.tool import brain_tool


def settle(*folders: Path) -> None:
    """Date every file back a minute: files written this instant are not trusted to show
    their next change in their modification time, so nothing fresh is cached."""
    past = time.time() - 60
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            # A memory log's lock (Rho's protocol) or a cache's temporary file may be
            # gone by now: a detached child that wrote a cache has just let go of it.
            with contextlib.suppress(FileNotFoundError):
                os.utime(path, (past, past))


def build(repo: Path, budget: int | None = None) -> tuple[str, bool]:
    """A full build, as the hook does it; the text and whether it was cached."""
    bm = BrainManager(repo)
    before = context_cache.fingerprint(bm.root, budget)
    doc = bm.context_document(budget, explain=False)
    kept = context_cache.store(
        bm.root, budget, before, doc.text, doc.valid_until, doc.paths_checked
    )
    return doc.text, kept


@pytest.fixture
def project(repo: Path, isolated_env: Path) -> Path:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="learning", text="CI must use Node 22")
    run_cli("save", "-", cwd=repo, input='{"keyFiles": [{"path": "README.md", "role": "intro"}]}')
    BrainManager(repo).context()  # seeds the personal log
    settle(repo / ".voyager", isolated_env)
    return repo


def test_a_hit_is_the_document_a_build_gives(project: Path) -> None:
    text, kept = build(project)
    assert kept
    assert context_cache.lookup(project, None) == text
    assert "- CI must use Node 22" in text


@pytest.mark.parametrize(
    "change",
    [
        "brain.md",
        "brain.json",
        "memory.jsonl",
        "config.toml",
        "personal log",
        "template override",
        "key file removed",
    ],
)
def test_any_change_to_an_input_is_a_miss(project: Path, isolated_env: Path, change: str) -> None:
    _, kept = build(project)
    assert kept
    voyager = project / ".voyager"
    match change:
        case "personal log":
            with (isolated_env / "memory.jsonl").open("a") as f:
                f.write("\n")
        case "template override":
            (voyager / "templates").mkdir()
            (voyager / "templates" / "x.j2").write_text("x")
        case "key file removed":
            (project / "README.md").unlink()
        case _:
            with (voyager / change).open("a") as f:
                f.write("\n")
    assert context_cache.lookup(project, None) is None


def test_another_directory_or_budget_is_a_miss(project: Path) -> None:
    build(project)
    (project / "src").mkdir()
    assert context_cache.lookup(project / "src", None) is None
    assert context_cache.lookup(project, 500) is None


def test_the_clock_ends_a_document_at_its_valid_until(project: Path) -> None:
    text, _ = build(project)
    record = json.loads((project / ".voyager" / "cache" / "context.json").read_text())
    until = datetime.fromisoformat(record["valid_until"])
    # The header shows the UTC date, so no document outlives the day it was built.
    now = datetime.now(UTC)
    assert until <= datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    assert context_cache.lookup(project, None, until - timedelta(microseconds=1)) == text
    assert context_cache.lookup(project, None, until) is None


def test_nothing_is_cached_when_an_input_changes_during_the_build(project: Path) -> None:
    bm = BrainManager(project)
    before = context_cache.fingerprint(bm.root, None)
    doc = bm.context_document(explain=False)
    brain_tool("add", cwd=str(project), type="learning", text="Written while building")
    settle(project / ".voyager")
    assert not context_cache.store(
        bm.root, None, before, doc.text, doc.valid_until, doc.paths_checked
    )
    assert context_cache.lookup(project, None) is None


def test_files_written_a_moment_ago_are_not_trusted(project: Path) -> None:
    brain_tool("add", cwd=str(project), type="learning", text="Just now")
    assert build(project) == (BrainManager(project).context(), False)


@pytest.mark.parametrize("content", [b"", b"{", b"[]", b'{"fingerprint": 1}', b"\xff"])
def test_a_broken_cache_file_is_a_miss(project: Path, content: bytes) -> None:
    build(project)
    (project / ".voyager" / "cache" / "context.json").write_bytes(content)
    assert context_cache.lookup(project, None) is None


# -- the hook -----------------------------------------------------------------------------


def session_start(cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-m", "voyager_brain", "hook", "claude", "session-start"],
        input=json.dumps({"session_id": "s1", "cwd": str(cwd), "hook_event_name": "SessionStart"}),
        capture_output=True,
        text=True,
        timeout=60,
    )


def context_of(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])


def test_the_hook_serves_a_hit_with_almost_nothing_imported(
    project: Path, isolated_env: Path
) -> None:
    first = context_of(session_start(project))  # builds, decays, caches
    settle(project / ".voyager", isolated_env)
    first = context_of(session_start(project))  # the files it wrote are settled now
    result = session_start(project, "-X", "importtime")
    assert context_of(result) == first
    imported = {
        line.split("|")[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert {name for name in imported if "voyager_brain" in name} == {
        "voyager_brain",
        "voyager_brain.cjson",
        "voyager_brain.context",
        "voyager_brain.context.cache",
        "voyager_brain.errors",
        "voyager_brain.integrations",
        # The cache file is read through the one checked read (a link out of the
        # repository or a FIFO is refused, not followed).
        "voyager_brain.confine",
        "voyager_brain.integrations.cached",
        "voyager_brain.integrations.claude",  # the adapter
        "voyager_brain.integrations.hookio",
        "voyager_brain.integrations.hooks",
        "voyager_brain.paths",
        "voyager_brain.value",
        "voyager_brain.worktree",
    }
    # pathlib brings urllib.parse and ipaddress: about 4 ms of a hit's ~30.
    assert not imported & {"pathlib", "urllib.parse", "typing", "subprocess"}


def test_the_hook_rebuilds_after_a_change_and_without_todays_decay(
    project: Path, isolated_env: Path
) -> None:
    context_of(session_start(project))
    settle(project / ".voyager", isolated_env)
    context_of(session_start(project))
    brain_tool("add", cwd=str(project), type="learning", text="A brand new lesson")
    assert "- A brand new lesson" in context_of(session_start(project))
    # No decay stamp for today: the full hook runs (and decays) before anything is served.
    (isolated_env / "cache" / "last-decay").write_text("2000-01-01")
    settle(project / ".voyager", isolated_env)
    result = session_start(project, "-X", "importtime")
    assert "voyager_brain.session.manager" in result.stderr
    assert (isolated_env / "cache" / "last-decay").read_text() == datetime.now(
        UTC
    ).date().isoformat()


def test_the_context_command_writes_and_serves_the_same_cache(project: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "voyager_brain", "context"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert built.returncode == 0
    assert "click" not in built.stderr  # a plain `context` builds without the CLI framework
    assert built.stdout == BrainManager(project).context()
    assert context_cache.lookup(project, None) == built.stdout
    served = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "voyager_brain", "context"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.stdout == built.stdout
    assert "click" not in served.stderr and "voyager_brain.session.manager" not in served.stderr
    # --explain and --json always build (they list what a cached text cannot say).
    assert "total: ~" in run_cli("context", "--explain", cwd=project).stdout


def test_the_built_in_context_templates_are_part_of_the_fingerprint(project: Path) -> None:
    from voyager_brain.render import builtin_template_dir

    shipped = {str(p) for p in (builtin_template_dir() / "context").glob("*.j2")}
    package = context_cache.fingerprint(project, None)["package"]
    assert shipped and shipped <= {entry[0] for entry in package}


def test_the_fold_caches_are_written_after_the_output_by_a_child(
    project: Path, isolated_env: Path
) -> None:
    """`context` and the session-start hook print first; a forked child then writes the
    fold caches, having let go of stdout (the caller's read ends with the output). The
    child holds each cache's lock until it is written: whoever takes it finds the save
    done (a log of thousands of lines takes the child a while to save)."""
    fold = project / ".voyager" / "cache" / "memory.jsonl.fold"
    old = "2020-01-01T00:00:00.000Z"  # ranked below the fixture's learnings; never decays:
    many = [
        {"id": f"b{n:07x}", "type": "learning", "text": f"Old fact {n}", "created": old}
        | {"source": "manual", "scope": "project", "projectPath": "."}
        for n in range(4000)
    ]
    log.append(project / ".voyager" / "memory.jsonl", many)
    for args, stdin in (
        (["context"], None),
        (["hook", "claude", "session-start"], json.dumps({"cwd": str(project)})),
    ):
        for path in (project / ".voyager" / "cache").glob("*"):
            path.unlink()
        done = run_cli(*args, cwd=project, input=stdin)
        assert done.returncode == 0 and "CI must use Node 22" in done.stdout, done.stderr
        assert done.stderr == ""
        with storage.locked(fold, timeout=30):
            assert fold.exists()
        again = run_cli(*args, cwd=project, input=stdin)
        assert again.stdout == done.stdout

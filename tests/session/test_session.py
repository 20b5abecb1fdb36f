"""BrainManager: the seed 002 lifecycle over a real brain.md in a real git repository."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import TickingClock

from voyager_brain import (
    BrainEntry,
    BrainManager,
    CorruptFileError,
    InvalidEntryError,
)
from voyager_brain.render import Templates
from voyager_brain.session.brainfile import parse, render

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)


def brain_entries(top: Path) -> tuple[BrainEntry, ...]:
    path = top / ".voyager" / "brain.md"
    return parse(path.read_bytes(), path).entries


def test_missing_brain_loads_as_empty_uncompacted_state(repo: Path) -> None:
    state = BrainManager(repo).load()
    assert (state.content, state.entry_count, state.compacted, state.last_updated) == (
        "",
        0,
        False,
        None,
    )


def test_seed_lifecycle_writes_the_seed_shape(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(repo, clock=clock)
    bm.load()
    bm.update(BrainEntry(type="observation", content="Task: Implement auth flow"))
    bm.update(BrainEntry(type="loop_status", content="Iteration: 4/10"))
    bm.persist()
    text = (repo / ".voyager" / "brain.md").read_text()
    assert text == (
        "# project Brain — Session Context\n\n"
        "## Observation — 2026-03-21T14:30:00Z\nTask: Implement auth flow\n\n"
        "## Loop Status — 2026-03-21T14:31:00Z\nIteration: 4/10\n"
    )
    status = bm.get_status()
    assert (status.loaded, status.entry_count, status.size_bytes) == (True, 2, len(text.encode()))
    assert status.path == repo / ".voyager" / "brain.md"


def test_persist_creates_voyager_folder_and_its_files(repo: Path) -> None:
    bm = BrainManager(repo)
    bm.persist()
    assert sorted(p.name for p in (repo / ".voyager").iterdir()) == [
        ".gitignore",
        "brain.json",
        "brain.json.lock",
        "brain.md",
        "brain.md.lock",
        "config.toml",
    ]
    # The lock file is ignored by git; brain.md and config.toml are not.
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".voyager/brain.md" in out and ".voyager/config.toml" in out
    assert ".voyager/brain.json" in out
    assert ".lock" not in out


def test_root_may_be_any_folder_inside_the_repository(repo: Path) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    bm = BrainManager(str(sub))
    bm.update(BrainEntry("decision", "Use PostgreSQL"))
    bm.persist()
    assert (repo / ".voyager" / "brain.md").exists()
    assert not (sub / ".voyager").exists()


def test_update_stamps_to_the_second_in_utc(repo: Path) -> None:
    moment = datetime(2026, 3, 21, 16, 30, 15, 987654, tzinfo=UTC) + timedelta(0)
    bm = BrainManager(repo, clock=lambda: moment)
    bm.update(BrainEntry("observation", "x"))
    assert bm.entries[-1].timestamp == datetime(2026, 3, 21, 16, 30, 15, tzinfo=UTC)


def test_given_timestamp_is_kept_and_normalized_to_utc(repo: Path) -> None:
    from datetime import timezone

    paris = timezone(timedelta(hours=1))
    entry = BrainEntry("observation", "x", datetime(2026, 3, 21, 15, 30, 0, 5, tzinfo=paris))
    assert entry.timestamp == T0


def test_unknown_entry_type_is_a_clear_value_error() -> None:
    with pytest.raises(InvalidEntryError) as info:
        BrainEntry("note", "x")
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        "entry type: expected one of observation, decision, loop_status, reflection, got 'note'"
    )


def test_same_type_time_and_content_is_written_once(repo: Path) -> None:
    bm = BrainManager(repo)
    bm.update(BrainEntry("observation", "x", T0))
    bm.update(BrainEntry("observation", "x", T0, source="other"))
    bm.update(BrainEntry("observation", "x", T0 + timedelta(seconds=1)))
    bm.persist()
    assert len(brain_entries(repo)) == 2


def test_second_session_sees_the_first(repo: Path, clock: TickingClock) -> None:
    first = BrainManager(repo, clock=clock)
    first.update(BrainEntry("decision", "Chose JWT"))
    first.persist()
    state = BrainManager(repo).load()
    assert state.entry_count == 1
    assert "## Decision — 2026-03-21T14:30:00Z\nChose JWT" in state.content
    assert state.last_updated == T0


def test_secrets_are_redacted_before_they_are_kept(repo: Path) -> None:
    key = "sk-ant-api03-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    bm = BrainManager(repo)
    bm.update(BrainEntry("observation", f"ANTHROPIC_API_KEY={key}", T0))
    assert key not in bm.entries[0].content
    bm.persist()
    assert key not in (repo / ".voyager" / "brain.md").read_text()
    assert "[REDACTED:" in (repo / ".voyager" / "brain.md").read_text()


def test_redaction_can_be_turned_off(repo: Path) -> None:
    key = "ghp_" + "a1B2c3D4e5" * 4
    bm = BrainManager(repo, config={"redact_secrets": False})
    bm.update(BrainEntry("observation", f"token {key}", T0))
    assert key in bm.entries[0].content


# -- persist merges with what is on disk ----------------------------------------------------


def test_entries_added_elsewhere_stay(repo: Path, clock: TickingClock) -> None:
    a, b = BrainManager(repo, clock=clock), BrainManager(repo, clock=clock)
    a.load()
    b.load()
    a.update(BrainEntry("observation", "from a"))
    a.persist()
    b.update(BrainEntry("observation", "from b"))
    b.persist()
    assert [e.content for e in brain_entries(repo)] == ["from a", "from b"]


def test_entries_deleted_elsewhere_stay_deleted(repo: Path, clock: TickingClock) -> None:
    seed = BrainManager(repo, clock=clock)
    seed.update(BrainEntry("observation", "keep"))
    seed.update(BrainEntry("observation", "delete me"))
    seed.persist()
    session = BrainManager(repo, clock=clock)
    session.load()
    path = repo / ".voyager" / "brain.md"
    text = path.read_text()
    path.write_text(text[: text.index("\n## Observation — 2026-03-21T14:31:00Z")] + "\n")
    session.update(BrainEntry("decision", "new"))
    session.persist()
    assert [e.content for e in brain_entries(repo)] == ["keep", "new"]


def test_reworded_by_hand_is_old_removed_and_new_added(repo: Path, clock: TickingClock) -> None:
    seed = BrainManager(repo, clock=clock)
    seed.update(BrainEntry("observation", "API on port 3000"))
    seed.persist()
    session = BrainManager(repo, clock=clock)
    session.load()
    path = repo / ".voyager" / "brain.md"
    path.write_text(path.read_text().replace("port 3000", "port 8080"))
    session.update(BrainEntry("observation", "more"))
    session.persist()
    assert [e.content for e in brain_entries(repo)] == ["API on port 8080", "more"]


def test_removal_in_this_session_wins_over_unrelated_edits(repo: Path, clock: TickingClock) -> None:
    seed = BrainManager(repo, clock=clock)
    seed.update(BrainEntry("observation", "old"))
    seed.persist()
    session = BrainManager(repo, clock=clock)
    session.load()
    other = BrainManager(repo, clock=clock)
    other.update(BrainEntry("observation", "other"))
    other.persist()
    assert session.remove(session.entries[0])
    session.persist()
    assert [e.content for e in brain_entries(repo)] == ["other"]


def test_unchanged_file_gets_new_sections_appended(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(repo, clock=clock)
    bm.update(BrainEntry("observation", "one"))
    bm.persist()
    path = repo / ".voyager" / "brain.md"
    before_bytes, inode = path.read_bytes(), path.stat().st_ino
    bm.update(BrainEntry("observation", "two"))
    bm.persist()
    # Appended in place (same inode), and identical to a full render.
    assert path.stat().st_ino == inode
    assert path.read_bytes().startswith(before_bytes)
    assert render(parse(path.read_bytes(), path), Templates()) == path.read_text()
    assert path.read_text().endswith(f"## Observation — {bm.entries[-1].key[1]}\ntwo\n")


def test_corrupt_brain_is_never_overwritten(repo: Path) -> None:
    path = repo / ".voyager" / "brain.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nproject: [oops\n---\n# x\n")
    with pytest.raises(CorruptFileError, match=r"brain\.md:3: front matter is not valid YAML"):
        BrainManager(repo).load()
    bm = BrainManager(repo)
    with pytest.raises(CorruptFileError):
        bm.update(BrainEntry("observation", "x"))
    assert path.read_bytes() == b"---\nproject: [oops\n---\n# x\n"


def test_file_corrupted_during_a_session_is_not_overwritten(repo: Path) -> None:
    bm = BrainManager(repo)
    bm.update(BrainEntry("observation", "x", T0))
    bm.persist()
    path = repo / ".voyager" / "brain.md"
    path.write_bytes(b"\xff\xfe broken")
    bm.update(BrainEntry("observation", "y", T0))
    with pytest.raises(CorruptFileError, match="not valid UTF-8"):
        bm.persist()
    assert path.read_bytes() == b"\xff\xfe broken"


def test_auto_compaction_when_persist_goes_over_budget(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(repo, clock=clock, config={"compact_budget_tokens": 200})
    for n in range(40):
        bm.update(BrainEntry("observation", f"Observation number {n} about {'x' * (n % 7)}"))
    bm.persist()
    assert bm.last_compaction is not None
    assert len((repo / ".voyager" / "brain.md").read_text()) <= 200 * 4


def test_auto_compaction_can_be_turned_off(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(
        repo, clock=clock, config={"compact_budget_tokens": 200, "auto_compact": False}
    )
    for n in range(40):
        bm.update(BrainEntry("observation", f"Observation number {n}"))
    bm.persist()
    assert len(brain_entries(repo)) == 40


# -- real processes -----------------------------------------------------------------------

# Each cycle is a whole session: load, add an observation, persist (an append), and
# every third cycle also a loop status and a compaction, which rewrites the whole file
# (atomic replace) to drop the older loop statuses. Observations are never dropped: the
# budget is huge, and texts differ by letters (compaction merges observations that differ
# only in digits). A line is printed once persist() or compact() has returned.
WRITER = textwrap.dedent(
    """
    import sys
    from voyager_brain import BrainEntry, BrainManager
    root, name, cycles = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = {"auto_compact": False, "compact_budget_tokens": 10**9}
    for n in range(cycles):
        text = f"{name} cycle " + "".join("abcdefghij"[int(d)] for d in str(n))
        bm = BrainManager(root, config=config)
        bm.load()
        bm.update(BrainEntry("observation", text))
        if n % 3 == 2:
            bm.update(BrainEntry("loop_status", f"{name} iteration {n}"))
            bm.compact()
        else:
            bm.persist()
        print(text, flush=True)
    """
)


def letters(n: int) -> str:
    return "".join("abcdefghij"[int(d)] for d in str(n))


def test_four_processes_times_25_cycles_lose_nothing(repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(repo), f"writer-{letters(w)}", "25"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    for p in procs:
        p.communicate(timeout=300)
        assert p.returncode == 0
    observations = {e.content for e in brain_entries(repo) if e.type == "observation"}
    expected = {f"writer-{letters(w)} cycle {letters(n)}" for w in range(4) for n in range(25)}
    assert observations == expected


def test_sigkill_at_random_moments_never_loses_a_persisted_entry(repo: Path) -> None:
    rng = random.Random(20260321)
    path = repo / ".voyager" / "brain.md"
    committed: set[str] = set()
    for trial in range(100):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(repo), f"t-{letters(trial)}", "1000"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        # Wait for the first persisted entry, then kill at a random moment after it.
        first = proc.stdout.readline().strip()
        if first:
            committed.add(first)
        time.sleep(rng.uniform(0, 0.05))
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
        committed.update(line for line in rest.splitlines() if line)
        entries = {e.content for e in parse(path.read_bytes(), path).entries}
        assert committed <= entries, f"trial {trial}: lost {committed - entries}"
    assert len(committed) >= 100

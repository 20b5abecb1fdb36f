"""The in-process memory view: kept current with only the appended lines, it must read
exactly as folding both logs from scratch does, whatever happens to the files."""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from voyager_brain.context.candidates import Grouped
from voyager_brain.memory import log
from voyager_brain.memory.cache import read_folded
from voyager_brain.memory.rank import decay_candidates
from voyager_brain.memory.view import MemoryView

NOW = datetime(2026, 6, 1, 12, 0, 0, 250_000, tzinfo=UTC)
TYPES = ["learning", "learning", "learning", "preference", "behavior", "task", "context"]


def seed_time(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


TIMES = [
    seed_time(NOW - timedelta(days=d, hours=h)) for d in (0, 3, 9, 30, 70, 120) for h in (0, 5)
]
TIMES += ["2026-05-20T08:00:00+02:00"]  # another spelling: ranked the slow way


def reference(home: Path, top: Path) -> tuple[log.Folded, set[str]]:
    """The snapshot's rule, from scratch: the personal fold, then the project's
    tombstones remove and its entries replace (in place) or come after, a keyed one
    replacing the entry of its key. And the ids the project log holds."""
    personal = log.fold(log.read(home / "memory.jsonl")[0])
    entries, _ = log.read(top / ".voyager" / "memory.jsonl")
    log.resolve_paths(entries, str(top))
    project = log.fold(entries)
    merged = dict(personal.entries)
    for target in project.dead:
        merged.pop(target, None)
    for entry_id, entry in project.entries.items():
        key = log.natural_key(entry["type"], entry)  # one live entry per key
        for other in [i for i, e in merged.items() if i != entry_id]:
            if key is not None and log.natural_key(merged[other]["type"], merged[other]) == key:
                del merged[other]
        merged[entry_id] = entry
    return log.Folded(merged, {}), set(project.entries)


def entry(kind: str, n: int, created: str, extra: dict[str, Any]) -> dict[str, Any]:
    base: dict[str, Any] = {"id": f"id{n:02d}", "type": kind, "created": created}
    if kind == "learning":
        base |= {"text": f"learned {n}", "source": extra.get("source", "auto")}
        if extra.get("scope"):
            base |= {"scope": "project", "projectPath": extra["path"]}
    elif kind == "preference":
        base |= {"text": f"prefers {n}", "category": "Code"}
    elif kind == "behavior":
        base |= {"text": f"does {n}", "category": "do"}
    elif kind == "task":
        base |= {"description": f"task {n}", "status": "pending", "priority": "normal"}
    else:
        base |= {"path": extra["path"], "content": f"context {n}", "project": "p"}
    if extra.get("updated") is not None:
        base["updated"] = extra["updated"]
    return base


operation = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(["personal", "project"]),
        st.sampled_from(TYPES),
        st.integers(0, 11),
        st.sampled_from(TIMES),
        st.fixed_dictionaries(
            {
                "source": st.sampled_from(["auto", "manual"]),
                "scope": st.booleans(),
                "path": st.sampled_from([".", "sub", "/elsewhere"]),
                "updated": st.none() | st.sampled_from(TIMES),
            }
        ),
    ),
    st.tuples(st.just("remove"), st.sampled_from(["personal", "project"]), st.integers(0, 11)),
    st.tuples(st.just("gc"), st.sampled_from(["personal", "project"])),
    st.tuples(st.just("torn"), st.sampled_from(["personal", "project"])),
)


def apply(op: tuple[Any, ...], paths: dict[str, Path]) -> None:
    path = paths[op[1]]
    if op[0] == "add":
        _, _, kind, n, created, extra = op
        log.append(path, [entry(kind, n, created, extra)])
    elif op[0] == "remove":
        stone = {"id": f"t{op[2]:07d}", "type": "tombstone", "target_id": f"id{op[2]:02d}"}
        stone |= {"target_type": "learning", "reason": "removed", "created": TIMES[0]}
        log.append(path, [stone])
    elif op[0] == "gc":
        if path.exists():
            log.gc(path)
    else:  # half a line: not folded until a later append closes it (as a bad line)
        with path.open("ab") as f:
            f.write(json.dumps({"id": "torn", "type": "learning"})[:12].encode())


def check(view: MemoryView, home: Path, top: Path) -> None:
    folded, in_project = reference(home, top)
    expected = Grouped(folded)
    for entry_id in folded.entries:
        assert view.origin(entry_id) == ("project" if entry_id in in_project else "personal")
    for kind in set(TYPES):
        assert view.of_type(kind) == expected.of_type(kind), kind
        assert view.count(kind) == expected.count(kind)
    for cwd in (str(top), str(top / "sub"), "/elsewhere"):
        for limit in (None, 0, 1, 3):
            got, until = view.top_learnings(NOW, cwd, limit)
            want, soonest = expected.top_learnings(NOW, cwd, limit)
            assert got == want, (cwd, limit)
            # Never later than the truth: a drop it has not seen only ends the cache early.
            assert soonest is None or (until is not None and until <= soonest)
        for after_days, min_score in ((90, 3), (30, 8), (1, 18)):
            stale = view.stale_learnings(NOW, cwd, after_days, min_score)
            expected_stale = decay_candidates(
                expected.of_type("learning"),
                NOW,
                after_days=after_days,
                min_score=min_score,
                cwd=cwd,
            )
            assert stale == expected_stale, (cwd, after_days)


_CONTEXT = {"source": "auto", "scope": False, "path": "/elsewhere", "updated": None}
_LEARNING = {"source": "auto", "scope": False, "path": ".", "updated": None}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(operation, min_size=1, max_size=4), min_size=1, max_size=8))
# Found by CI: a project context shadowing a personal one of its path, then replaced by a
# learning of its id; the personal context holds the path again.
@example(
    rounds=[
        [
            ("add", "personal", "context", 0, "2026-06-01T12:00:00.250Z", _CONTEXT),
            ("add", "project", "context", 1, "2026-06-01T12:00:00.250Z", _CONTEXT),
        ],
        [("add", "project", "learning", 1, "2026-06-01T12:00:00.250Z", _LEARNING)],
    ]
)
def test_a_view_kept_current_reads_as_folding_from_scratch(
    rounds: list[list[tuple[Any, ...]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, top = Path(tmp) / "home", Path(tmp) / "repo"
        (top / ".voyager").mkdir(parents=True)
        home.mkdir()
        paths = {"personal": home / "memory.jsonl", "project": top / ".voyager" / "memory.jsonl"}
        apply(("add", "personal", "behavior", 0, TIMES[0], {"path": "."}), paths)
        apply(("add", "project", "learning", 1, TIMES[1], {"path": "."}), paths)
        view = MemoryView(paths["personal"], paths["project"], top)
        check(view, home, top)
        for ops in rounds:
            for op in ops:
                apply(op, paths)
            view.refresh()
            check(view, home, top)


def eight_learnings(tmp_path: Path) -> tuple[MemoryView, Path, Path]:
    """A view of a personal log with one behavior and a project log of eight learnings:
    the view, the project log, the repository's top."""
    home, top = tmp_path / "home", tmp_path / "repo"
    (top / ".voyager").mkdir(parents=True)
    home.mkdir()
    project = top / ".voyager" / "memory.jsonl"
    log.append(home / "memory.jsonl", [entry("behavior", 0, TIMES[0], {})])
    log.append(project, [entry("learning", n, TIMES[n % 4], {}) for n in range(1, 9)])
    return MemoryView(home / "memory.jsonl", project, top), project, top


def test_an_append_is_applied_without_reading_the_log_again(tmp_path: Path) -> None:
    """After an append the view folds the new bytes only: a log whose earlier bytes
    no longer parse (changed behind its back, same file, same size, between the first
    and the last bytes the view checks) is not read again."""
    view, project, top = eight_learnings(tmp_path)
    data = project.read_bytes()
    starts = [0] + [n + 1 for n, byte in enumerate(data) if byte == ord("\n")]
    middle = [(a, b) for a, b in itertools.pairwise(starts) if a >= 256 and b <= len(data) - 256]
    start, end = middle[0]
    with project.open("r+b") as f:  # garble a middle line in place (same inode, size)
        f.seek(start)
        f.write(b"#" * (end - start - 1))
    log.append(project, [entry("learning", 9, TIMES[0], {"source": "manual"})])
    view.refresh()
    assert len(view.of_type("learning")) == 9  # the garbled line is still seen as before
    ranked, _ = view.top_learnings(NOW, str(top), 1)
    assert ranked[0]["id"] == "id09"


def test_a_rewritten_log_is_read_again(tmp_path: Path) -> None:
    home, top = tmp_path / "home", tmp_path / "repo"
    (top / ".voyager").mkdir(parents=True)
    home.mkdir()
    project = top / ".voyager" / "memory.jsonl"
    log.append(project, [entry("learning", n, TIMES[0], {}) for n in range(3)])
    view = MemoryView(home / "memory.jsonl", project, top)
    assert view.count("learning") == 3
    kept = b"".join(project.read_bytes().splitlines(keepends=True)[:1])
    project.write_bytes(kept)  # a shorter file: not growth
    view.refresh()
    assert [e["id"] for e in view.of_type("learning")] == ["id00"]
    os.replace(project, project.with_suffix(".old"))
    view.refresh()
    assert view.count("learning") == 0


def test_an_entry_updated_keeps_its_place(tmp_path: Path) -> None:
    home, top = tmp_path / "home", tmp_path / "repo"
    (top / ".voyager").mkdir(parents=True)
    home.mkdir()
    paths = {"personal": home / "memory.jsonl", "project": top / ".voyager" / "memory.jsonl"}
    apply(("add", "personal", "behavior", 0, TIMES[0], {}), paths)
    apply(("add", "project", "task", 1, TIMES[0], {}), paths)
    view = MemoryView(paths["personal"], paths["project"], top)
    for n in (2, 3, 4):
        apply(("add", "project", "learning", n, TIMES[0], {}), paths)
    view.refresh()
    apply(("add", "project", "learning", 2, TIMES[0], {"updated": TIMES[0]}), paths)
    apply(("add", "personal", "learning", 3, TIMES[0], {}), paths)  # masked by the project's
    apply(("add", "personal", "learning", 5, TIMES[0], {}), paths)  # before the project's own
    view.refresh()
    assert [e["id"] for e in view.of_type("learning")] == ["id03", "id05", "id02", "id04"]
    check(view, home, top)


def test_a_view_changes_copies_of_the_cached_fold_never_the_fold_itself(tmp_path: Path) -> None:
    """A cold read hands the view the dicts the process memo keeps (no copy of ten
    thousand entries); the view copies them before its first change, so another read
    in the same process still folds the memo and only what was appended since."""
    from voyager_brain.memory import cache

    home, top = tmp_path / "home", tmp_path / "repo"
    (top / ".voyager").mkdir(parents=True)
    home.mkdir()
    project = top / ".voyager" / "memory.jsonl"
    created = seed_time(NOW)
    log.append(project, [entry("learning", n, created, {}) for n in range(5)])
    cache._memory.clear()
    first = MemoryView(home / "memory.jsonl", project, top)
    # Applying these twice would not give the same order: a second pass would move id08
    # behind id09. So a memo changed by the first view would show in the second.
    tomb = {"id": "t1", "type": "tombstone", "target_id": "id08", "target_type": "learning"}
    log.append(
        project,
        [
            entry("learning", 8, created, {}),
            tomb | {"reason": "test", "created": created},
            entry("learning", 8, created, {}),
            entry("learning", 9, created, {}),
        ],
    )
    first.refresh()
    later = MemoryView(home / "memory.jsonl", project, top)  # the memo, then the new lines
    for view in (first, later):
        check(view, home, top)


def test_a_log_written_over_at_the_same_size_is_read_again(tmp_path: Path) -> None:
    """The file system hands a freed inode out again: after two gc runs the log can be a
    new file under the inode the view saw, of the same size. Written in place here (same
    inode, same size, a changed text in the middle), it is read again all the same."""
    view, project, top = eight_learnings(tmp_path)
    data = project.read_bytes()
    assert data.count(b"learned 4") == 1
    time.sleep(0.01)  # a modification time of its own, even on a coarse clock
    project.write_bytes(data.replace(b"learned 4", b"LEARNED 4"))
    view.refresh()
    assert "LEARNED 4" in [e["text"] for e in view.of_type("learning")]
    folded, _ = read_folded(project, None, top)
    assert "LEARNED 4" in [e["text"] for e in folded.live("learning")]

"""The cached fold: reused while a log only grows, rebuilt whenever it changed otherwise,
and always equal to a full fold."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import storage
from voyager_brain.memory import cache, log

CREATED = "2026-02-10T00:00:00.000Z"


def learning(n: int, text: str = "") -> dict[str, Any]:
    return {"id": f"{n:08x}", "type": "learning", "text": text or f"fact {n}", "created": CREATED}


def full(path: Path) -> log.Folded:
    return log.fold(log.read(path)[0])


def fresh_process() -> None:
    cache._memory.clear()  # what a new hook process starts with


def test_appended_lines_are_folded_onto_the_cached_state(tmp_path: Path) -> None:
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "cache" / "memory.fold"
    log.append(path, [learning(n) for n in range(50)])
    state, health = cache.read_folded(path, cache_file)
    assert len(state.entries) == 50 and health.total == 50
    offset = marshal.loads(cache_file.read_bytes())["offset"]
    assert offset == path.stat().st_size

    log.append(path, [learning(1, "fact one, reworded"), learning(60)])
    fresh_process()
    state, health = cache.read_folded(path, cache_file)
    assert state.entries == full(path).entries
    assert health == log.read(path)[1]
    # A small growth is folded again by the next reader rather than saved every time ...
    assert marshal.loads(cache_file.read_bytes())["offset"] == offset
    fresh_process()
    assert cache.read_folded(path, cache_file)[0].entries == full(path).entries
    # ... a large one is saved.
    log.append(path, [learning(n, "x" * 300) for n in range(100, 1100)])
    fresh_process()
    assert cache.read_folded(path, cache_file)[0].entries == full(path).entries
    assert marshal.loads(cache_file.read_bytes())["offset"] == path.stat().st_size


def test_a_rewritten_log_is_folded_from_scratch(tmp_path: Path) -> None:
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "memory.fold"
    log.append(path, [learning(n) for n in range(20)])
    cache.read_folded(path, cache_file)
    # A hand edit (or a merge) that changes earlier bytes but keeps the size growing.
    path.write_bytes(log.encode(learning(99, "entirely different")) * 30)
    state, _ = cache.read_folded(path, cache_file)
    assert list(state.entries) == ["00000063"]


def test_a_damaged_cache_file_is_ignored(tmp_path: Path) -> None:
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "memory.fold"
    log.append(path, [learning(n) for n in range(5)])
    cache_file.write_bytes(b"not marshal at all")
    fresh_process()
    state, _ = cache.read_folded(path, cache_file)
    assert state.entries == full(path).entries


@pytest.mark.parametrize(
    "change",
    [{"head": None}, {"entries": []}, {"offset": "12"}, {"file": None}],
    ids=["no head", "entries a list", "offset a string", "no file"],
)
def test_a_cache_of_this_version_in_another_shape_is_ignored(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    # A development build wrote a record of the current version without "head": every
    # command then stopped with a KeyError.
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "memory.fold"
    log.append(path, [learning(n) for n in range(5)])
    cache.read_folded(path, cache_file)
    record = marshal.loads(cache_file.read_bytes())
    record.update(change)
    if change.get("head", 0) is None:
        del record["head"]
    cache_file.write_bytes(marshal.dumps(record))
    fresh_process()
    state, _ = cache.read_folded(path, cache_file)
    assert state.entries == full(path).entries


def test_a_torn_tail_is_read_again_once_closed(tmp_path: Path) -> None:
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "memory.fold"
    path.write_bytes(log.encode(learning(1)) + b'{"id":"00000002","ty')
    state, health = cache.read_folded(path, cache_file)
    assert list(state.entries) == ["00000001"] and health.truncated_tail
    log.append(path, [learning(3)])  # closes the torn line with a newline first
    state, health = cache.read_folded(path, cache_file)
    assert list(state.entries) == ["00000001", "00000003"]
    assert (health.bad_lines, health.truncated_tail) == (1, False)


_op = st.one_of(
    st.tuples(st.just("add"), st.lists(st.integers(0, 15), min_size=1, max_size=5)),
    st.tuples(st.just("remove"), st.integers(0, 15)),
    st.tuples(st.just("gc"), st.none()),
    st.tuples(st.just("new-process"), st.none()),
)


@settings(max_examples=80)
@given(st.lists(_op, max_size=12))
def test_the_cached_fold_always_equals_a_full_fold(tmp_path_factory: Any, ops: list[Any]) -> None:
    folder = tmp_path_factory.mktemp("log")
    path, cache_file = folder / "memory.jsonl", folder / "memory.fold"
    fresh_process()
    for kind, arg in ops:
        if kind == "add":
            log.append(path, [learning(n, f"v{len(ops)} {n}") for n in arg])
        elif kind == "remove":
            log.append(
                path,
                [
                    {
                        "id": f"t{arg}",
                        "type": "tombstone",
                        "target_id": f"{arg:08x}",
                        "target_type": "learning",
                        "reason": "r",
                        "created": CREATED,
                    }
                ],
            )
        elif kind == "gc" and path.exists():
            log.gc(path)
        else:
            fresh_process()
        state, health = cache.read_folded(path, cache_file)
        expected = full(path) if path.exists() else log.Folded()
        assert state.entries == expected.entries
        assert set(state.dead) == set(expected.dead)
        assert health == (log.read(path)[1] if path.exists() else log.Health())


def test_project_paths_are_cached_resolved_for_one_location_only(tmp_path: Path) -> None:
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "cache" / "memory.fold"
    scoped = {**learning(1), "scope": "project", "projectPath": "."}
    context = {"id": "c1", "type": "context", "project": "p", "path": "src", "content": "x"}
    context["created"] = CREATED
    log.append(path, [scoped, context])
    here, moved = tmp_path / "clone", tmp_path / "moved"

    state, _ = cache.read_folded(path, cache_file, here)
    assert state.entries[scoped["id"]]["projectPath"] == str(here)
    assert state.entries["c1"]["path"] == str(here / "src")
    fresh_process()
    state, _ = cache.read_folded(path, cache_file, here)  # from the cache file
    assert state.entries["c1"]["path"] == str(here / "src")
    fresh_process()
    state, _ = cache.read_folded(path, cache_file, moved)  # the clone was moved
    assert state.entries[scoped["id"]]["projectPath"] == str(moved)
    assert state.entries["c1"]["path"] == str(moved / "src")
    # The file itself keeps the relative paths.
    assert log.read(path)[0][1]["path"] == "src"


def test_a_rewrite_that_ends_in_the_same_bytes_is_read_again(tmp_path: Path) -> None:
    """gc after an update of an early entry: the same size and the same last bytes, but
    a new file; neither the cache file nor the process's memo may serve the old fold."""
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "cache" / "memory.fold"
    log.append(path, [learning(n) for n in range(20)])
    cache.read_folded(path, cache_file)
    before = path.read_bytes()
    log.append(path, [learning(0, "fact 9")])  # as long as "fact 0"
    log.gc(path)
    assert len(path.read_bytes()) == len(before) and path.read_bytes()[-256:] == before[-256:]
    for drop_memo in (False, True):
        if drop_memo:
            fresh_process()
        state, _ = cache.read_folded(path, cache_file)
        assert state.entries[f"{0:08x}"]["text"] == "fact 9"


def test_a_held_back_save_is_dropped_while_another_process_is_saving(tmp_path: Path) -> None:
    path, cache_file = tmp_path / "memory.jsonl", tmp_path / "cache" / "memory.fold"
    log.append(path, [learning(n) for n in range(20)])
    cache.defer_saves()
    try:
        cache.read_folded(path, cache_file)
        assert not cache_file.exists()  # held back
        with storage.locked(cache_file):  # as a detached saver holds it
            cache.flush_saves()
        assert not cache_file.exists()  # left to the one saving it
    finally:
        cache.flush_saves()
    fresh_process()
    cache.defer_saves()
    cache.read_folded(path, cache_file)
    cache.flush_saves()
    assert marshal.loads(cache_file.read_bytes())["offset"] == path.stat().st_size


def test_the_process_keeps_the_folds_of_the_latest_logs_only(tmp_path: Path) -> None:
    """A process going through many repositories does not keep every fold it made."""
    fresh_process()
    paths = []
    for n in range(cache.KEEP + 3):
        path = tmp_path / f"repo{n}" / "memory.jsonl"
        path.parent.mkdir()
        log.append(path, [learning(n)])
        paths.append(path)
        cache.read_folded(path, None)
    cache.read_folded(paths[0], None)  # used again: now the most recent
    assert list(cache._memory) == [*paths[-(cache.KEEP - 1) :], paths[0]]
    assert cache.read_folded(paths[1], None)[0].entries == full(paths[1]).entries

"""The memory log's format (seed 001): reading with health, the schema registry, ids,
fold with tombstones, torn-tail repair, appends from many processes, gc."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain.errors import EntryError
from voyager_brain.memory import lines, log
from voyager_brain.memory.lines import Health, parse, parse_lines
from voyager_brain.memory.log import (
    append,
    compacted_lines,
    deterministic_id,
    encode,
    fold,
    gc,
    new_id,
    read,
    validate,
)

# Every example line of the seed, verbatim.
SEED_LINES = """\
{"id":"b0000001","type":"behavior","category":"do","text":"Be direct — skip filler, get to the point","created":"2026-01-01T00:00:00.000Z"}
{"id":"b0000006","type":"behavior","category":"dont","text":"Use performative phrases like 'Great question!'","created":"2026-01-01T00:00:00.000Z"}
{"id":"b0000009","type":"behavior","category":"value","text":"Clarity over diplomacy","created":"2026-01-01T00:00:00.000Z"}
{"id":"a1b2c3d4","type":"identity","key":"name","value":"rho","created":"2026-01-01T00:00:00.000Z"}
{"id":"e5f6g7h8","type":"identity","key":"role","value":"A persistent coding agent with memory and heartbeat","created":"2026-01-01T00:00:00.000Z"}
{"id":"f1e2d3c4","type":"user","key":"timezone","value":"US/Central","created":"2026-01-15T00:00:00.000Z"}
{"id":"b5a6c7d8","type":"user","key":"editor","value":"Neovim","created":"2026-01-20T00:00:00.000Z"}
{"id":"a1b2c3d5","type":"learning","text":"This repo uses pnpm not npm","source":"auto","created":"2026-01-15T00:00:00.000Z"}
{"id":"e5f6g7h9","type":"preference","category":"Code","text":"User prefers early returns over nested ifs","created":"2026-01-20T00:00:00.000Z"}
{"id":"ctx00001","type":"context","project":"rho","path":"/home/user/projects/rho","content":"TypeScript monorepo. Use pnpm. Extensions in extensions/.","created":"2026-01-01T00:00:00.000Z"}
{"id":"t-abc123","type":"task","description":"Fix the flaky test in CI","status":"pending","priority":"high","due":"2026-02-15","tags":["code","ci"],"completedAt":null,"created":"2026-02-10T00:00:00.000Z"}
{"id":"rem00001","type":"reminder","text":"Run backup script","cadence":{"kind":"interval","every":"6h"},"enabled":true,"priority":"normal","tags":[],"last_run":null,"next_due":null,"last_result":null,"last_error":null,"created":"2026-02-01T00:00:00.000Z"}
{"id":"deadbeef","type":"tombstone","target_id":"a1b2c3d5","target_type":"learning","reason":"decay","created":"2026-02-10T00:00:00.000Z"}
{"id":"meta0001","type":"meta","key":"schema_version","value":"1","created":"2026-02-10T00:00:00.000Z"}
"""  # noqa: E501
CREATED = "2026-02-10T00:00:00.000Z"


def entry(id_: str, type_: str = "learning", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": id_, "type": type_, "created": CREATED}
    if type_ == "learning":
        base["text"] = fields.pop("text", f"learning {id_}")
    return {**base, **fields}


def test_the_seeds_example_lines_load_unchanged() -> None:
    entries, health = parse(SEED_LINES.encode())
    assert health == Health(total=14, bad_lines=0, truncated_tail=False)
    for e in entries:
        validate(e)
    state = fold(entries)
    # The tombstone removed the learning it targets and is remembered.
    assert "a1b2c3d5" not in state.entries and "a1b2c3d5" in state.dead
    assert [e["id"] for e in state.live("identity")] == ["a1b2c3d4", "e5f6g7h8"]
    assert state.entries["t-abc123"]["tags"] == ["code", "ci"]
    # Re-encoding a line gives the seed's bytes back (compact JSON, UTF-8 as is).
    assert encode(entries[0]) == SEED_LINES.splitlines()[0].encode() + b"\n"


def test_deterministic_ids_are_the_sha256_of_type_and_natural_key() -> None:
    assert deterministic_id("identity", "name") == hashlib.sha256(b"identity:name").hexdigest()[:8]
    assert new_id({"type": "user", "key": "editor"}) == deterministic_id("user", "editor")
    assert new_id({"type": "context", "path": "/p"}) == deterministic_id("context", "/p")
    assert new_id({"type": "meta", "key": "schema_version"}) == deterministic_id(
        "meta", "schema_version"
    )


def test_other_types_get_random_8_hex_ids() -> None:
    ids = {new_id({"type": "learning", "text": "x"}) for _ in range(50)}
    assert len(ids) == 50
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids)


def test_same_id_upserts_in_file_order_not_created_order() -> None:
    newer_first = entry("x1", text="second write", created="2026-03-01T00:00:00.000Z")
    older_second = entry("x1", text="third write", created="2026-01-01T00:00:00.000Z")
    state = fold([entry("x1", text="first"), newer_first, older_second])
    assert state.entries["x1"]["text"] == "third write"


def test_tombstone_removes_and_is_remembered() -> None:
    tomb = {
        "id": "t1",
        "type": "tombstone",
        "target_id": "x1",
        "target_type": "learning",
        "reason": "decay",
        "created": CREATED,
    }
    state = fold([entry("x1"), entry("x2"), tomb])
    assert list(state.entries) == ["x2"]
    assert state.dead["x1"] is tomb


def test_tombstone_then_same_id_resurrects() -> None:
    tomb = {
        "id": "t1",
        "type": "tombstone",
        "target_id": "x1",
        "target_type": "learning",
        "reason": "r",
        "created": CREATED,
    }
    state = fold([entry("x1"), entry("x2"), tomb, entry("x1", text="back")])
    assert list(state.entries) == ["x2", "x1"]
    assert state.entries["x1"]["text"] == "back" and "x1" not in state.dead


def test_any_id_string_is_accepted() -> None:
    state = fold(parse(b'{"id":"t-abc123","type":"task","description":"d","created":"x"}\n')[0])
    assert "t-abc123" in state.entries


def test_bad_lines_are_skipped_and_counted() -> None:
    data = (
        b'{"id":"a","type":"learning","text":"ok","created":"c"}\nnot json\n[1,2]\n{"type":"x"}\n\n'
    )
    entries, health = parse(data)
    assert [e["id"] for e in entries] == ["a"]
    assert health == Health(total=1, bad_lines=3, truncated_tail=False)


def test_a_torn_last_line_is_the_truncated_tail() -> None:
    entries, health = parse(
        b'{"id":"a","type":"learning","text":"ok","created":"c"}\n{"id":"b","ty'
    )
    assert len(entries) == 1 and health.truncated_tail and health.bad_lines == 1


def test_append_closes_a_torn_tail_so_the_new_line_stands_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_bytes(encode(entry("a")) + b'{"id":"b","type":"lear')
    append(path, [entry("c")])
    entries, health = read(path)
    assert [e["id"] for e in entries] == ["a", "c"]
    assert health == Health(total=2, bad_lines=1, truncated_tail=False)


def test_read_of_a_missing_log_is_empty_and_healthy(tmp_path: Path) -> None:
    assert read(tmp_path / "none.jsonl") == ([], Health())


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "a", "type": "note", "created": CREATED}, "type: expected one of behavior"),
        ({"id": "a", "type": "learning", "created": CREATED}, "text: required for a learning"),
        (
            {"id": "a", "type": "behavior", "text": "x", "category": "maybe", "created": CREATED},
            "category: expected one of do, dont, value, got 'maybe'",
        ),
        (
            {"id": "a", "type": "learning", "text": "x", "created": "yesterday"},
            "created: expected an ISO 8601 time, got 'yesterday'",
        ),
        ({"type": "learning", "text": "x", "created": CREATED}, "id: required"),
        (
            {"id": "a", "type": "reminder", "text": "x", "enabled": True, "created": CREATED},
            "cadence: required for a reminder entry",
        ),
        (
            {
                "id": "a",
                "type": "tombstone",
                "target_id": "b",
                "target_type": "learning",
                "created": CREATED,
            },
            "reason: required",
        ),
    ],
)
def test_the_schema_registry_is_checked_before_every_write(
    tmp_path: Path, bad: dict[str, Any], message: str
) -> None:
    path = tmp_path / "memory.jsonl"
    with pytest.raises(EntryError, match=message):
        append(path, [entry("ok"), bad])
    assert not path.exists()  # nothing of a rejected batch is written


def test_gc_rewrites_the_folded_state_and_keeps_tombstones(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    tomb = {
        "id": "t1",
        "type": "tombstone",
        "target_id": "x2",
        "target_type": "learning",
        "reason": "r",
        "created": CREATED,
    }
    lines = [entry("x1", text="v1"), entry("x2"), entry("x1", text="v2"), tomb]
    path.write_bytes(b"".join(encode(e) for e in lines) + b"garbage\n")
    before, after, rejected = gc(path)
    assert before > after == path.stat().st_size and rejected == 1
    entries, health = read(path)
    assert health.bad_lines == 0
    assert entries == [entry("x1", text="v2"), tomb]
    assert gc(path) == (after, after, 0)


def test_gc_keeps_the_lines_it_cannot_read_beside_the_log(tmp_path: Path) -> None:
    """A hand edit with a trailing comma, a torn line: moved to memory.jsonl.rejected,
    appended there (a second gc adds, never replaces), counted; the log keeps the rest."""
    path = tmp_path / "memory.jsonl"
    edit = b'{"id": "x9", "type": "learning", "text": "hand edit",}'
    torn = b'{"id": "x8", "type": "lear'
    path.write_bytes(encode(entry("x1")) + edit + b"\n" + encode(entry("x2")) + torn + b"\n")
    assert gc(path)[2] == 2
    kept = tmp_path / "memory.jsonl.rejected"
    assert kept.read_bytes() == edit + b"\n" + torn + b"\n"
    assert [e["id"] for e in read(path)[0]] == ["x1", "x2"]
    path.write_bytes(path.read_bytes() + b"oops\n")
    assert gc(path)[2] == 1
    assert kept.read_bytes() == edit + b"\n" + torn + b"\n" + b"oops\n"


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from voyager_brain.memory.log import append, new_id
    path, name = Path(sys.argv[1]), sys.argv[2]
    for n in range(100):
        entry = {"type": "learning", "text": f"{name} learned {n}",
                 "created": "2026-02-10T00:00:00Z"}
        append(path, [{"id": new_id(entry), **entry}])
    """
)


def test_four_processes_times_100_appends_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"w{w}"]) for w in range(4)]
    for p in procs:
        assert p.wait(timeout=300) == 0
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 401
    assert all(isinstance(json.loads(line), dict) for line in lines[:-1])
    texts = {e["text"] for e in read(path)[0]}
    assert texts == {f"w{w} learned {n}" for w in range(4) for n in range(100)}


# -- properties -------------------------------------------------------------------------

_ids = st.sampled_from(["a", "b", "c", "d"])
_line = st.one_of(
    st.builds(lambda i, t: entry(i, text=t), _ids, st.text(max_size=5)),
    st.builds(
        lambda i, t: {
            "id": f"t{i}",
            "type": "tombstone",
            "target_id": t,
            "target_type": "learning",
            "reason": "r",
            "created": CREATED,
        },
        st.integers(0, 99),
        _ids,
    ),
)


@settings(max_examples=200)
@given(st.lists(_line, max_size=30), st.lists(_line, max_size=10))
def test_folding_more_lines_continues_a_fold(
    first: list[dict[str, Any]], more: list[dict[str, Any]]
) -> None:
    whole = fold(first + more)
    continued = fold(more, into=fold(first))
    assert continued.entries == whole.entries and continued.dead == whole.dead
    assert list(continued.entries) == list(whole.entries)


def reference_fold(lines: list[dict[str, Any]], top: str | None) -> log.Folded:
    """The seed's rule one line at a time, as plainly as it can be written."""
    state = log.Folded()
    for line in lines:
        line = dict(line)
        field = {"learning": "projectPath", "context": "path"}.get(line.get("type"))  # type: ignore[arg-type]
        if top is not None and field and isinstance(line.get(field), str):
            value = line[field]
            line[field] = (
                value if os.path.isabs(value) else os.path.normpath(os.path.join(top, value))
            )
        if line.get("type") == "tombstone":
            if isinstance(line.get("target_id"), str):
                state.entries.pop(line["target_id"], None)
                state.dead[line["target_id"]] = line
            continue
        state.dead.pop(line["id"], None)
        key = keyed(line)
        if key is not None:  # Rho's maps by key: the live entry of the same key goes
            for other in [i for i, e in state.entries.items() if i != line["id"]]:
                if keyed(state.entries[other]) == key:
                    del state.entries[other]
        state.entries[line["id"]] = line
    return state


def keyed(line: dict[str, Any]) -> tuple[str, str] | None:
    """identity, user and meta by `key`; context by its normalized `path`."""
    field = {"identity": "key", "user": "key", "meta": "key", "context": "path"}.get(
        line.get("type")  # type: ignore[arg-type]
    )
    value = line.get(field) if field else None
    if not isinstance(value, str):
        return None
    return (line["type"], os.path.normpath(value) if field == "path" else value)


_path_value = st.sampled_from(
    [".", "sub/dir", "sub/dir/", "/abs/path", "/abs/path/.", "/repo/top", "", None, 3, ["x"]]
)
_any_line = st.one_of(
    _line,
    st.builds(
        lambda i, p, kind: (
            {"id": i, "type": kind, "created": CREATED}
            | ({} if p is None else {("projectPath" if kind == "learning" else "path"): p})
        ),
        _ids,
        _path_value,
        st.sampled_from(["learning", "context", "task"]),
    ),
    st.builds(
        lambda i, kind, key: {"id": i, "type": kind, "created": CREATED, "key": key},
        _ids,
        st.sampled_from(["identity", "user", "meta"]),
        st.sampled_from(["name", "role", "schema_version"]),
    ),
    st.builds(
        lambda i, t: {"id": i, "type": "tombstone", "target_id": t},
        _ids,
        st.sampled_from(["a", 1, None]),
    ),
)


@settings(max_examples=300)
@given(
    st.lists(_any_line, max_size=40),
    st.sampled_from([None, "/repo/top"]),
    st.sampled_from([1, 3, 2048]),
)
def test_fold_is_the_seed_rule_line_by_line(
    lines: list[dict[str, Any]], top: str | None, batch: int
) -> None:
    """Runs between tombstones are folded with one dict.update, a batch of lines at a
    time: the same entries, dead ids, dict orders and resolved paths as applying the
    lines one by one."""
    expected = reference_fold(lines, top)
    got = fold([dict(line) for line in lines], top=top, batch=batch)
    assert list(got.entries.items()) == list(expected.entries.items())
    assert list(got.dead.items()) == list(expected.dead.items())


@settings(max_examples=200)
@given(st.lists(_line, max_size=30))
def test_gc_output_folds_to_the_same_state(lines: list[dict[str, Any]]) -> None:
    state = fold(lines)
    again = fold(compacted_lines(state))
    assert again.entries == state.entries
    assert set(again.dead) == {i for i in state.dead if i not in state.entries}


# Pieces a log line can be made of: good lines, near misses, whitespace of every kind,
# objects split over lines, two objects on a line, non-UTF-8 bytes.
_fragment = st.sampled_from(
    [
        b'{"id":"a","type":"learning","text":"x"}',
        b'{"id":"b","type":"learning","text":"caf\xc3\xa9"}',
        b'{"id":"c","type":"tombstone","target_id":"a"}',
        b'{"id":1,"type":"learning"}',
        b'{"type":"learning"}',
        b"[1, 2]",
        b'"text"',
        b"{",
        b"}",
        b'{"id":"d",',
        b'"type":"x"}',
        b"},{",
        b" ",
        b"\t",
        b"\r",
        b"\x0b",
        b"\xc2\xa0",
        b"\xff",
        b"\xef\xbb\xbf",
        b"NaN",
        b",",
        b"\n",
    ]
)


@settings(max_examples=2000)
@given(st.lists(_fragment, max_size=20), st.sampled_from([1, 2, 7, 40, 1 << 18]))
def test_the_fast_parse_reads_exactly_what_json_loads_per_line_reads(
    parts: list[bytes], chunk: int
) -> None:
    """Also when read in pieces (a large log is decoded a piece at a time)."""
    data = b"".join(parts)
    entries, health = parse(data, chunk=chunk)
    assert (entries, health.bad_lines) == parse_lines(data)
    assert health.total == len(entries)
    assert health.truncated_tail == (bool(data) and not data.endswith(b"\n"))


# Whole lines, for the path that reads a piece of lines as one JSON array: lines that are
# each an entry, and lines that make entries only when joined with commas, such as an
# entry whose list goes on over the next line (`[{}` then `{}]}`: one element of two
# lines) beside a line of two entries (two elements of one line), so the counts agree.
_whole_line = st.sampled_from(
    [
        b'{"id":"a","type":"learning","text":"x"}',
        b'{"id":"b","type":"task","text":"caf\xc3\xa9 \\n },{ [1,"}',
        b'  {"id":"c","type":"tombstone","target_id":"a"}\r',
        b'{"id":"e","type":"learning","v":[{}',
        b"{}]}",
        b'{"id":"f","type":"learning","v":{}',
        b'"k":1}',
        b'{"id":"g","type":"learning"},{"id":"h","type":"task"}',
        b'{"id":"i","type":"learning"} \t, {"id":"j","type":"task"}',
        b'{"id":"k","type":"learning"}, 1',
        b'{"type":"learning"}',
        b'{"id":"m","type":7}',
        b"[]",
        b"",
        b" ",
    ]
)


@settings(max_examples=1000)
@given(
    st.lists(_whole_line, max_size=12),
    st.booleans(),
    st.sampled_from([1, 60, 1 << 18]),
)
def test_reading_lines_as_one_array_reads_what_json_loads_per_line_reads(
    lines: list[bytes], newline_at_end: bool, chunk: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    entries, health = parse(data, chunk=chunk)
    assert (entries, health.bad_lines) == parse_lines(data)


def test_reading_leaves_the_cycle_collector_as_it_found_it() -> None:
    """Reading turns the collector off while it makes one container per line (a
    process that keeps it on would walk the entries again every few hundred lines)."""
    import gc

    data = b"".join(log.encode(entry(f"x{n}")) for n in range(50))
    assert gc.isenabled()
    try:
        assert len(parse(data)[0]) == 50 and gc.isenabled()
        gc.disable()
        assert len(parse(data)[0]) == 50 and not gc.isenabled()
        gc.enable()
        with pytest.raises(RuntimeError), lines.no_cycle_collection():
            assert not gc.isenabled()
            raise RuntimeError("a failure inside")
        assert gc.isenabled()
    finally:
        gc.enable()


def test_an_append_cut_short_is_taken_back_and_names_the_file(repo: Path) -> None:
    """A full disk or a file size limit stops an append part way: nothing of it stays
    (no torn line for the next reader), and the one line names the log."""
    from conftest import run_cli

    assert run_cli("init", cwd=repo).returncode == 0
    first = run_cli("brain", "action=add", "type=learning", "text=first lesson", cwd=repo)
    assert first.returncode == 0, first.stderr
    log_path = repo / ".voyager" / "memory.jsonl"
    before = log_path.read_bytes()
    limit = len(before) + 100  # room for part of the next line, not all of it

    def small_files() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "voyager_brain",
            "brain",
            "action=add",
            "type=learning",
            "text=" + "a long lesson " * 40,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=small_files,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.splitlines() == [f"voyager-brain: {log_path}: cannot append: File too large"]
    assert log_path.read_bytes() == before

"""Git conflict markers in brain files (issue 18): a conflicted file is never read as
content. Loading reports it (file and line, exit 2); the session-start context leaves
the conflicted regions out and says so; the hooks fail open without writing; `check`
reports each region; `doctor --repair` merges both sides with the merge driver's rules.

The conflicted files come from real merges done without the merge driver."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import commit_all, git, run_cli
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager, conflicts
from voyager_brain.memory.tool import brain_tool


def merged_without_driver(repo: Path, change: object, *, diff3: bool = False) -> None:
    """Commit the brain, change it on a branch and on main (`change(side)`), then merge
    with plain git (no merge driver): the brain files are left conflicted."""
    assert callable(change)
    commit_all(repo, "brain")
    git(repo, "checkout", "-q", "-b", "topic")
    change("theirs")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    change("ours")
    commit_all(repo, "ours")
    style = ["-c", "merge.conflictStyle=diff3"] if diff3 else []
    done = subprocess.run(
        ["git", *style, "merge", "-q", "topic"], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode != 0, "the merge was expected to conflict"


def add_on_each_side(repo: Path) -> None:
    def change(side: str) -> None:
        run_cli("add", "observation", f"seen on {side}", cwd=repo)

    run_cli("init", cwd=repo)
    run_cli("add", "observation", "before the branches", cwd=repo)
    merged_without_driver(repo, change)


# -- finding the regions ----------------------------------------------------------------


def test_find_without_and_sides_of_a_plain_and_a_diff3_region() -> None:
    plain = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\nz\n"
    assert conflicts.find(plain) == [conflicts.Conflict(2, 6, False)]
    assert conflicts.without(plain) == b"a\nz\n"
    assert conflicts.sides(plain) == (b"a\nours\nz\n", b"a\ntheirs\nz\n", b"")
    diff3 = b"<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> topic\n"
    assert conflicts.find(diff3) == [conflicts.Conflict(1, 7, True)]
    assert conflicts.sides(diff3) == (b"ours\n", b"theirs\n", b"old\n")


def test_what_is_not_a_conflict() -> None:
    for text in (
        b"Title\n=======\ntext\n",  # a setext underline
        b">>>>>>> alone\n",  # a closing marker without its opening one
        b"<<<<<<<< eight\n",  # not git's seven
        b"  <<<<<<< indented\n=======\n>>>>>>> x\n",
        b"\\<<<<<<< escaped\n",
    ):
        assert conflicts.find(text) == [], text


def test_an_unterminated_region_runs_to_the_end() -> None:
    data = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs"
    assert conflicts.find(data) == [conflicts.Conflict(2, 5, False)]
    assert conflicts.without(data) == b"a\n"


_MARKERISH = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?: |$)")
_line = st.text(alphabet="abc #=<", min_size=0, max_size=12).map(lambda t: t + "\n")
_block = st.lists(_line, max_size=4).map("".join)


@given(st.lists(st.tuples(_block, _block, _block), min_size=1, max_size=4), _block)
def test_sides_give_back_each_version(regions: list[tuple[str, str, str]], tail: str) -> None:
    """A file made of common text and conflicted regions: each side is the common text
    with that side's part; without the regions, the common text alone. (Content lines
    are never shaped like markers: escaped in brain.md, impossible in JSON.)"""
    parts = [part for r in regions for part in r] + [tail]
    if any(_MARKERISH.match(line) for part in parts for line in part.splitlines()):
        return
    data = ours = theirs = common = ""
    for common_part, our_part, their_part in regions:
        data += common_part + f"<<<<<<< HEAD\n{our_part}=======\n{their_part}>>>>>>> b\n"
        ours += common_part + our_part
        theirs += common_part + their_part
        common += common_part
    got = conflicts.sides((data + tail).encode())
    assert got == ((ours + tail).encode(), (theirs + tail).encode(), b"")
    assert conflicts.without((data + tail).encode()) == (common + tail).encode()


# -- brain.md ---------------------------------------------------------------------------


def test_an_entry_that_quotes_conflict_markers_is_escaped_and_reads_back(repo: Path) -> None:
    """An agent that saw a conflict may record it: the file must not look conflicted."""
    text = "git said:\n<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> topic\ndone"
    bm = BrainManager(repo)
    bm.update(BrainEntry("observation", text))
    bm.persist()
    data = (repo / ".voyager" / "brain.md").read_bytes()
    assert conflicts.find(data) == []
    again = BrainManager(repo)
    again.load()
    assert [e.content for e in again.entries] == [text]


def test_a_conflicted_brain_md_is_reported_and_never_written(repo: Path) -> None:
    add_on_each_side(repo)
    path = repo / ".voyager" / "brain.md"
    before = path.read_bytes()
    region = conflicts.find(before)[0]
    for args in (("status",), ("add", "observation", "after"), ("compact",)):
        done = run_cli(*args, cwd=repo)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert f"brain.md:{region.start}: unresolved git conflict" in done.stderr
    assert path.read_bytes() == before


def test_the_context_leaves_the_region_out_and_says_so(repo: Path) -> None:
    add_on_each_side(repo)
    done = run_cli("context", cwd=repo)
    assert done.returncode == 0
    region = conflicts.find((repo / ".voyager" / "brain.md").read_bytes())[0]
    assert (
        f"> Warning: .voyager/brain.md (lines {region.start}-{region.end}) holds an "
        "unresolved git conflict, left out" in done.stdout
    )
    assert "before the branches" in done.stdout
    assert "seen on ours" not in done.stdout and "seen on theirs" not in done.stdout
    assert "<<<<<<<" not in done.stdout


def test_hooks_fail_open_without_writing(repo: Path) -> None:
    add_on_each_side(repo)
    path = repo / ".voyager" / "brain.md"
    before = path.read_bytes()
    payload = {"session_id": "s1", "cwd": str(repo), "transcript_path": str(repo / "none")}
    for event in ("stop", "pre-compact", "session-end"):
        done = run_cli("hook", "claude", event, cwd=repo, input=json.dumps(payload))
        assert done.returncode == 0 and done.stdout == ""
        assert path.read_bytes() == before
    start = run_cli("hook", "claude", "session-start", cwd=repo, input=json.dumps(payload))
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "unresolved git conflict" in context and "seen on ours" not in context
    assert path.read_bytes() == before


def test_check_reports_each_region_and_doctor_repair_merges_both_sides(repo: Path) -> None:
    add_on_each_side(repo)
    path = repo / ".voyager" / "brain.md"
    region = conflicts.find(path.read_bytes())[0]
    checked = run_cli("check", cwd=repo)
    assert checked.returncode == 1
    assert (
        f".voyager/brain.md:{region.start}: unresolved git conflict "
        f"(lines {region.start}-{region.end})" in checked.stdout
    )
    report = run_cli("doctor", cwd=repo)
    assert "unresolved git conflict" in report.stdout + report.stderr
    assert conflicts.find(path.read_bytes())  # doctor alone changes nothing
    repaired = run_cli("doctor", "--repair", cwd=repo)
    assert f"brain.md:{region.start}: unresolved git conflict" in repaired.stdout
    assert "merged, both sides kept" in repaired.stdout
    assert conflicts.find(path.read_bytes()) == []
    bm = BrainManager(repo)
    bm.load()
    contents = [e.content for e in bm.entries]
    assert {"before the branches", "seen on ours", "seen on theirs"} <= set(contents)
    assert run_cli("check", cwd=repo).returncode == 0


# -- brain.json -------------------------------------------------------------------------


def update_file(repo: Path) -> Path:
    """Outside the repository: never merged."""
    return repo.parent / "update.json"


def decide_on_each_side(repo: Path, *, diff3: bool = False) -> None:
    def change(side: str) -> None:
        update = {"decisions": [{"what": f"Decided on {side}", "why": side}]}
        update_file(repo).write_text(json.dumps(update))
        assert run_cli("save", str(update_file(repo)), cwd=repo).returncode == 0

    run_cli("init", cwd=repo)
    update_file(repo).write_text(json.dumps({"activeState": {"currentGoal": "Ship"}}))
    run_cli("save", str(update_file(repo)), cwd=repo)
    merged_without_driver(repo, change, diff3=diff3)


@pytest.mark.parametrize("diff3", [False, True])
def test_a_conflicted_brain_json_is_reported_left_out_of_the_context_and_merged(
    repo: Path, diff3: bool
) -> None:
    decide_on_each_side(repo, diff3=diff3)
    path = repo / ".voyager" / "brain.json"
    before = path.read_bytes()
    region = conflicts.find(before)[0]
    assert region.has_base == diff3
    saved = run_cli("save", str(update_file(repo)), cwd=repo)
    assert saved.returncode == 2 and saved.stderr.count("\n") == 1
    assert f"brain.json:{region.start}: unresolved git conflict" in saved.stderr
    assert path.read_bytes() == before
    context = run_cli("context", cwd=repo)
    assert context.returncode == 0
    assert "brain.json (lines " in context.stdout and "the project state left out" in context.stdout
    assert "Decided on" not in context.stdout
    run_cli("doctor", "--repair", cwd=repo)
    state = json.loads(path.read_text())
    assert {d["what"] for d in state["decisions"]} == {"Decided on ours", "Decided on theirs"}
    assert state["activeState"]["currentGoal"] == "Ship"


def test_doctor_leaves_a_conflict_it_cannot_merge_for_a_person(repo: Path) -> None:
    decide_on_each_side(repo)
    path = repo / ".voyager" / "brain.json"
    broken = path.read_bytes().replace(b"=======\n", b"=======\n{{ not json\n", 1)
    path.write_bytes(broken)
    repaired = run_cli("doctor", "--repair", cwd=repo)
    assert "cannot merge it" in repaired.stdout and "resolve it by hand" in repaired.stdout
    assert path.read_bytes() == broken


# -- the memory logs --------------------------------------------------------------------


def learn_on_each_side(repo: Path) -> None:
    def change(side: str) -> None:
        brain_tool("add", cwd=str(repo), type="learning", text=f"Learned on {side}")

    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="learning", text="Learned before the branches")
    merged_without_driver(repo, change)


def test_a_conflicted_memory_log_is_refused_left_out_and_merged(repo: Path) -> None:
    learn_on_each_side(repo)
    path = repo / ".voyager" / "memory.jsonl"
    before = path.read_bytes()
    assert conflicts.find(before)
    added = run_cli("brain", "action=add", "type=learning", "text=Another one", cwd=repo)
    assert added.returncode != 0 and "unresolved git conflict" in added.stdout + added.stderr
    assert "Traceback" not in added.stdout + added.stderr
    assert path.read_bytes() == before
    context = run_cli("context", cwd=repo)
    assert context.returncode == 0 and "memory.jsonl (lines " in context.stdout
    assert "Learned before the branches" in context.stdout
    assert "Learned on ours" not in context.stdout
    run_cli("doctor", "--repair", cwd=repo)
    assert conflicts.find(path.read_bytes()) == []
    texts = context_texts(repo)
    assert {"Learned on ours", "Learned on theirs", "Learned before the branches"} <= texts


def context_texts(repo: Path) -> set[str]:
    listed = run_cli("brain", "--json", "action=list", "type=learning", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    return {e["text"] for e in json.loads(listed.stdout)["entries"]}

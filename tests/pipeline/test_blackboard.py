"""The `.brain/` files: creating them, PROJECT.md's bootstrap, the MISTAKES and RESEARCH caps."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.pipeline import blackboard as bb


def brain(root: Path) -> Path:
    return root / ".brain"


# -- init_brain -------------------------------------------------------------------------


def test_init_creates_every_file_and_the_gitignore(tmp_path: Path) -> None:
    created = bb.init_brain(tmp_path)
    names = sorted(p.relative_to(tmp_path).as_posix() for p in created)
    expected = [".brain", ".brain/.gitignore"] + [f".brain/{n.rstrip('/')}" for n in bb.FILES]
    assert names == sorted(expected)
    assert (brain(tmp_path) / "RESEARCH").is_dir()
    ignored = (brain(tmp_path) / ".gitignore").read_text().splitlines()
    for line in ("pipeline-state.json", "events.jsonl", "*.lock"):
        assert line in ignored


def test_init_twice_creates_nothing_and_changes_nothing(tmp_path: Path) -> None:
    bb.init_brain(tmp_path)
    before = {p: p.read_bytes() for p in brain(tmp_path).rglob("*") if p.is_file()}
    assert bb.init_brain(tmp_path) == []
    after = {p: p.read_bytes() for p in brain(tmp_path).rglob("*") if p.is_file()}
    assert after == before


def test_init_never_overwrites_and_keeps_the_users_gitignore_lines(tmp_path: Path) -> None:
    brain(tmp_path).mkdir()
    (brain(tmp_path) / "PROJECT.md").write_text("# Mine\n")
    (brain(tmp_path) / ".gitignore").write_text("scratch/\n*.lock")  # no final newline
    created = bb.init_brain(tmp_path)
    assert brain(tmp_path) / "PROJECT.md" not in created
    assert brain(tmp_path) / ".gitignore" not in created
    assert (brain(tmp_path) / "PROJECT.md").read_text() == "# Mine\n"
    lines = (brain(tmp_path) / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["scratch/", "*.lock"]
    assert lines.count("*.lock") == 1
    assert "pipeline-state.json" in lines and "events.jsonl" in lines


# -- PROJECT.md bootstrap ---------------------------------------------------------------


def test_bootstrap_writes_a_scaffold_when_project_md_is_missing(tmp_path: Path) -> None:
    assert bb.bootstrap_project(tmp_path, "Build a todo app with FastAPI") is True
    text = (brain(tmp_path) / "PROJECT.md").read_text()
    assert "Build a todo app with FastAPI" in text
    assert len(text.strip()) > bb.PROJECT_MIN_CHARS
    assert bb.bootstrap_project(tmp_path, "another task") is False  # the scaffold is kept


@pytest.mark.parametrize(("length", "written"), [(0, True), (50, True), (51, False)])
def test_bootstrap_boundary_at_fifty_characters(tmp_path: Path, length: int, written: bool) -> None:
    path = brain(tmp_path) / "PROJECT.md"
    path.parent.mkdir()
    original = "\n  " + "p" * length + "  \n\n"  # whitespace around does not count
    path.write_text(original)
    assert bb.bootstrap_project(tmp_path, "the task") is written
    assert ("the task" in path.read_text()) is written
    if not written:
        assert path.read_text() == original


# -- MISTAKES.md cap --------------------------------------------------------------------


def section(n: int, size: int = 100) -> str:
    heading = f"## Mistake {n}\n"
    return heading + "x" * (size - len(heading) - 1) + "\n"


def test_a_text_under_the_cap_is_unchanged() -> None:
    text = section(1) + "\n" + section(2)
    assert bb.capped(text, cap=3000) == text


def test_a_text_exactly_at_the_cap_is_unchanged() -> None:
    text = "x" * 3000 + "\n"
    assert bb.capped(text) == text
    assert bb.capped("x" * 3001).startswith("[0 older entries cut")


def test_the_newest_whole_entries_are_kept_with_a_marker() -> None:
    text = "".join(section(n) + "\n" for n in range(1, 41))  # 40 entries, ~4000 characters
    result = bb.capped(text, cap=1000)
    marker, _, kept = result.partition("\n\n")
    assert marker.startswith("[31 older entries cut")
    assert kept.startswith("## Mistake 32\n")
    assert kept.rstrip().endswith(section(40).rstrip())
    assert "## Mistake 31\n" not in kept
    assert len(kept) <= 1000 + 1
    titles = [line for line in kept.splitlines() if line.startswith("##")]
    assert titles == [f"## Mistake {n}" for n in range(32, 41)]  # newest last, as in the file


def test_an_over_long_newest_entry_keeps_its_tail() -> None:
    newest = "## Newest\n" + "a" * 2000 + "THE END"
    text = section(1) + "\n" + section(2) + "\n" + newest
    result = bb.capped(text, cap=500)
    marker, _, kept = result.partition("\n\n")
    assert marker.startswith("[2 older entries cut; the newest entry is longer than 500")
    assert kept == newest[-500:] + "\n"


def test_a_file_without_headings_is_cut_by_paragraph() -> None:
    paragraphs = [f"lesson {n}: " + "y" * 80 for n in range(10)]
    result = bb.capped("\n\n".join(paragraphs), cap=300)
    marker, _, kept = result.partition("\n\n")
    assert marker.startswith("[7 older entries cut")
    assert kept.split("\n\n") == [*paragraphs[7:-1], paragraphs[-1] + "\n"]


def test_a_heading_inside_a_code_fence_does_not_start_an_entry() -> None:
    newest = "## Newest\n```bash\n# not a heading\n\necho hi\n```\n"
    text = section(1, 400) + "\n" + newest
    result = bb.capped(text, cap=len(newest) + 5)
    assert result.endswith(newest)
    assert result.startswith("[1 older entry cut")


entry_text = st.text(alphabet=st.sampled_from("ab #\n`~"), max_size=80)


@given(entries=st.lists(entry_text, min_size=1, max_size=15), cap=st.integers(0, 400))
def test_capped_stays_within_the_cap_and_keeps_the_last_entry(entries: list[str], cap: int) -> None:
    text = "\n\n".join(entries)
    result = bb.capped(text, cap)
    if result == text:
        assert len(text.rstrip()) <= cap
        return
    marker, _, kept = result.partition("\n\n")
    assert marker.startswith("[") and "older" in marker
    assert len(result) <= cap + len(marker) + 3  # the marker, its blank line, a final newline
    # The newest entry is there: its last line whole, or as much of it as the cap allows.
    last_line = text.rstrip().splitlines()[-1]
    assert kept.rstrip().endswith(last_line[-cap:] if cap else "")
    assert len(kept.rstrip("\n")) <= cap


# -- RESEARCH/ --------------------------------------------------------------------------


def test_research_notes_are_sorted_and_capped(tmp_path: Path) -> None:
    folder = brain(tmp_path) / "RESEARCH"
    folder.mkdir(parents=True)
    (folder / "b.md").write_text("B" * 50)
    (folder / "a.md").write_text("A" * 3000)
    (folder / "c.md").write_text("C" * 10)
    (folder / "notes.txt").write_text("ignored")
    notes = bb.research_texts(tmp_path, cap_each=100, cap_total=160)
    assert [name for name, _ in notes] == ["a.md", "b.md", "c.md"]
    assert notes[0][1].startswith("A" * 100 + "\n[2900 more characters cut")
    assert notes[1][1] == "B" * 50
    assert notes[2][1] == "C" * 10
    tight = bb.research_texts(tmp_path, cap_each=100, cap_total=120)
    assert tight[1][1].startswith("B" * 20 + "\n[30 more characters cut")
    assert tight[2][1].startswith("[omitted: 10 characters")


def test_no_research_folder_means_no_notes(tmp_path: Path) -> None:
    assert bb.research_texts(tmp_path) == []

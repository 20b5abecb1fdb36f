"""Every console block of README.md and docs/ runs, and prints what the page shows
(`console.py` says how blocks are found, run and compared)."""

from __future__ import annotations

from pathlib import Path

import pytest
from console import check, commands, matches

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_the_page_shows_what_its_commands_print(page: Path, tmp_path: Path) -> None:
    session = check(page, tmp_path)
    assert not session.failures, "\n\n".join(session.failures)


def test_dots_stand_for_lines_and_text() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert not matches(["a", "...", "d"], ["a", "b"])
    assert matches(["took ... in all"], ["took 3 tries in all"])
    assert not matches(["a"], ["a", "b"])
    assert matches(["added at 2026-11-22T06:31:38Z"], ["added at 2027-01-01T00:00:00Z"])
    assert matches(["commit 3f2a9c1 done in 0.4 s"], ["commit 9bc01de done in 12 ms"])
    assert not matches(["project shop"], ["project shop-api"])


def test_a_command_goes_on_while_a_quote_is_open_or_a_line_ends_in_a_backslash() -> None:
    block = '$ echo \'{"a":\n  1}\' \\\n  | cat\n{"a":\n  1}\n$ true\n'
    found = commands(block, 10)
    assert [(c.line, c.text) for c in found] == [
        (10, "echo '{\"a\":\n  1}' \\\n  | cat"),
        (15, "true"),
    ]
    assert found[0].shown == ['{"a":', "  1}"]


def test_a_here_document_is_part_of_its_command() -> None:
    block = '$ cat > a.json <<\'EOF\'\n{"b": 1}\nEOF\n$ cat a.json\n{"b": 1}\n'
    found = commands(block, 1)
    assert [c.text for c in found] == ["cat > a.json <<'EOF'\n{\"b\": 1}\nEOF", "cat a.json"]
    assert found[0].shown == [] and found[1].shown == ['{"b": 1}']

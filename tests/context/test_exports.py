"""`voyager-brain export`: the context in a managed block of AGENTS.md, CLAUDE.md,
GEMINI.md or a Cursor rule; the text around the block is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TickingClock, run_cli
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.context.exports import (
    BEGIN,
    END,
    TARGETS,
    ExportError,
    block,
    export,
    merged,
)

# Text a person may write around the block: anything but a line that is a marker.
_prose = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda t: "voyager-brain:" not in t
)


@given(before=_prose, after=_prose, old=_prose, new=_prose)
def test_the_text_around_the_block_is_kept_byte_for_byte(
    before: str, after: str, old: str, new: str
) -> None:
    head = before if before.endswith("\n") or not before else before + "\n"
    current = head + block(old) + after
    result = merged(current, block(new), "agents-md", Path("AGENTS.md"))
    assert result == head + block(new) + after


def test_a_file_without_a_block_gets_it_appended() -> None:
    assert merged("# Agents\n", block("x"), "agents-md", Path("A")) == "# Agents\n\n" + block("x")
    assert merged("no newline", block("x"), "agents-md", Path("A")) == "no newline\n\n" + block("x")
    assert merged("", block("x"), "agents-md", Path("A")) == block("x")


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (f"{BEGIN}\nno end\n", "1"),
        (f"{END}\n{BEGIN}\n", "1, 2"),
        (f"{BEGIN}\n{BEGIN}\n{END}\n", "1, 2, 3"),
        (f"a\n{END}\n", "2"),
    ],
)
def test_broken_markers_are_refused_with_their_lines(text: str, lines: str) -> None:
    with pytest.raises(ExportError) as info:
        merged(text, block("x"), "agents-md", Path("AGENTS.md"))
    assert f"AGENTS.md: voyager-brain markers broken (lines {lines})" in str(info.value)


def test_secrets_in_the_context_are_redacted() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    assert token not in block(f"Decision: rotate {token}")


def test_only_a_new_date_leaves_the_file_alone(repo: Path) -> None:
    first = export(repo, "claude-md", "# Memory for p (voyager-brain) — 2026-11-24\n\nGoal: x\n")
    assert first.action == "created"
    before = (repo / "CLAUDE.md").read_bytes()
    same = export(repo, "claude-md", "# Memory for p (voyager-brain) — 2026-11-25\n\nGoal: x\n")
    assert same.action == "unchanged" and (repo / "CLAUDE.md").read_bytes() == before
    changed = export(repo, "claude-md", "# Memory for p (voyager-brain) — 2026-11-25\n\nGoal: y\n")
    assert changed.action == "updated" and "Goal: y" in (repo / "CLAUDE.md").read_text()


def test_export_cli_replaces_the_block_in_place(repo: Path) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    agents = repo / "AGENTS.md"
    head, tail = "# Agents\n\nRun `make test` first.\n\n", "\n## Notes by hand\n\nKeep me.\n"
    agents.write_text(head + f"{BEGIN}\nold memory\n{END}\n" + tail)
    run_cli("add", "decision", "Use PostgreSQL for the queue", cwd=repo)

    done = run_cli("export", "agents-md", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "AGENTS.md: updated\n"
    text = agents.read_text()
    assert text.startswith(head + BEGIN) and text.endswith(END + "\n" + tail)
    assert "old memory" not in text and "Use PostgreSQL for the queue" in text
    assert text.count(BEGIN) == 1

    again = run_cli("export", "agents-md", "--check", cwd=repo)
    assert (again.returncode, again.stdout) == (0, "AGENTS.md: unchanged\n")
    run_cli("add", "decision", "Retry failed jobs twice", cwd=repo)
    stale = run_cli("export", "agents-md", "--check", cwd=repo)
    assert (stale.returncode, stale.stdout) == (1, "AGENTS.md: would be updated\n")
    assert "Retry failed jobs twice" not in agents.read_text()  # --check writes nothing


def test_every_target_and_the_cursor_rule_front_matter(repo: Path) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    done = run_cli("export", *TARGETS, "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [e["action"] for e in report["exports"]] == ["created"] * 4
    for target, (name, _) in TARGETS.items():
        text = (repo / name).read_text()
        assert BEGIN in text and END in text, target
    rule = (repo / ".cursor/rules/voyager-brain.mdc").read_text()
    assert rule.startswith("---\ndescription: ") and "alwaysApply: true\n---\n\n" + BEGIN in rule
    # no lock file or temporary file left beside the exported files
    assert sorted(p.name for p in repo.iterdir() if p.name.endswith((".lock", ".tmp"))) == []


def test_budget_bounds_the_block(repo: Path, clock: TickingClock) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    bm = BrainManager(repo, clock=clock)  # the entries as 60 `add`s would leave them
    for n in range(60):
        bm.update(
            BrainEntry(type="decision", content=f"Decision number {n} about the storage layer")
        )
        bm.persist()
    assert run_cli("export", "gemini-md", "--budget", "300", cwd=repo).returncode == 0
    text = (repo / "GEMINI.md").read_text()
    assert len(text) < 300 * 4 + 400  # the budget's characters, plus the markers and a line


def test_broken_markers_exit_2_and_leave_the_file(repo: Path) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    claude = repo / "CLAUDE.md"
    claude.write_text(f"# Notes\n{BEGIN}\nhalf a block\n")
    done = run_cli("export", "claude-md", cwd=repo)
    assert done.returncode == 2
    assert "CLAUDE.md: voyager-brain markers broken (lines 2)" in done.stderr
    assert "Traceback" not in done.stderr
    assert claude.read_text() == f"# Notes\n{BEGIN}\nhalf a block\n"


def test_unknown_target_is_a_usage_error(repo: Path) -> None:
    done = run_cli("export", "windsurf", cwd=repo)
    assert done.returncode == 2 and "windsurf" in done.stderr


def test_session_end_refreshes_the_exports_config_names(repo: Path) -> None:
    from voyager_brain.context.exports import BEGIN as MARK

    assert run_cli("init", cwd=repo).returncode == 0
    config = repo / ".voyager" / "config.toml"
    config.write_text(config.read_text() + '\nauto_export = "agents-md, cursor-rules, nope"\n')
    (repo / "CLAUDE.md").write_text(f"{MARK}\nbroken: no end marker\n")
    run_cli("add", "decision", "Ship on Fridays only", cwd=repo)
    payload = json.dumps(
        {"session_id": "s1", "transcript_path": "", "cwd": str(repo),
         "hook_event_name": "SessionEnd", "reason": "exit"}
    )  # fmt: skip
    done = run_cli("hook", "claude", "session-end", cwd=repo, input=payload)
    assert done.returncode == 0 and done.stdout == ""
    assert "auto_export: unknown target 'nope'" in done.stderr
    assert "Ship on Fridays only" in (repo / "AGENTS.md").read_text()
    assert "Ship on Fridays only" in (repo / ".cursor/rules/voyager-brain.mdc").read_text()
    assert (repo / "CLAUDE.md").read_text() == f"{MARK}\nbroken: no end marker\n"  # not named


def test_doctor_reports_stale_exports_and_repair_refreshes_them(repo: Path) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    assert run_cli("export", "agents-md", cwd=repo).returncode == 0
    assert "AGENTS.md: the exported memory is current" in run_cli("doctor", cwd=repo).stdout
    run_cli("add", "decision", "Deploy with blue-green", cwd=repo)
    stale = run_cli("doctor", cwd=repo)
    assert "AGENTS.md: the exported memory is out of date" in stale.stdout
    assert "`voyager-brain export agents-md`" in stale.stdout
    assert "Deploy with blue-green" not in (repo / "AGENTS.md").read_text()
    repaired = run_cli("doctor", "--repair", cwd=repo)
    assert "AGENTS.md: the exported memory was stale" in repaired.stdout
    assert "Deploy with blue-green" in (repo / "AGENTS.md").read_text()
    (repo / "CLAUDE.md").write_text(f"{BEGIN}\n")
    broken = run_cli("doctor", cwd=repo)
    assert broken.returncode == 1 and "CLAUDE.md: voyager-brain markers broken" in broken.stdout


def test_an_export_in_a_project_without_voyager_makes_no_voyager_folder(repo: Path) -> None:
    # A .voyager/ made for the export's lock would make the next context a project's
    # ("# Memory for project"), so `--check` right after an export said "would be updated".
    assert run_cli("export", "agents-md", cwd=repo).stdout == "AGENTS.md: created\n"
    assert not (repo / ".voyager").exists()
    checked = run_cli("export", "agents-md", "--check", cwd=repo)
    assert (checked.returncode, checked.stdout) == (0, "AGENTS.md: unchanged\n")

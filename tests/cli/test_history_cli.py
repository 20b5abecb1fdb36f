"""`voyager-brain history ...`, run as a real process over the per-test history.db
($VOYAGER_HOME is isolated by an autouse fixture)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from voyager_brain.guard import record
from voyager_brain.guard.db import open_database, transaction
from voyager_brain.paths import history_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
SESSION = "3f7a9c1e-52d4-4b8e-9a0f-6c2d1e8b7a45"
BASH_ID = "toolu_01D1eAf5gHi7jKl9mNo1pQr3"


def transcript(repo: Path, folder: Path) -> Path:
    """The recorded transcript, as Claude Code keeps it, of a session in `repo`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text((FIXTURES / "history-transcript.jsonl").read_text().replace("CWD", str(repo)))
    return path


@pytest.fixture
def imported(repo: Path, tmp_path: Path) -> Path:
    """The transcript imported, and a blocking rule that fired on its Bash call."""
    path = transcript(repo, tmp_path / "claude")
    assert run_cli("history", "import", str(path), cwd=repo).returncode == 0
    db = open_database(history_file())
    try:
        with transaction(db):
            rule = db.execute(
                "INSERT INTO rules (description, pattern, action, tool)"
                " VALUES ('Never import redis at the top level', 'import redis', 'block', 'Bash')"
            ).lastrowid
            call = db.execute("SELECT id FROM tool_calls WHERE external_id = ?", (BASH_ID,))
            record.add_trigger(
                db, int(rule or 0), call.fetchone()[0], "block", timestamp="2025-06-02 18:47:16.000"
            )
    finally:
        db.close()
    return path


# -- import -----------------------------------------------------------------------------


def test_import_prints_a_line_per_file_and_adds_nothing_twice(repo: Path, tmp_path: Path) -> None:
    path = transcript(repo, tmp_path / "claude")
    first = run_cli("history", "import", str(path), cwd=repo)
    assert first.returncode == 0 and first.stderr == ""
    assert first.stdout == (
        f"{path}: session 1 ({SESSION}): +11 messages (0 from hooks), +6 tool calls"
        " (0 from hooks), 6 results; 0 already imported, 8 skipped, 0 bad lines\n"
    )
    again = run_cli("history", "import", str(path), "--json", cwd=repo)
    [report] = json.loads(again.stdout)
    assert report["path"] == str(path) and report["session"] == 1
    assert (report["messages_added"], report["tool_calls_added"]) == (0, 0)
    assert (report["entries_known"], report["results_known"]) == (11, 6)


def test_import_a_folder_of_transcripts(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-project"
    transcript(repo, folder)
    (folder / "empty.jsonl").write_text("")
    result = run_cli("history", "import", str(folder), "--json", cwd=repo)
    assert result.returncode == 0
    assert [Path(r["path"]).name for r in json.loads(result.stdout)] == [
        f"{SESSION}.jsonl",
        "empty.jsonl",
    ]


def test_a_folder_without_transcripts_is_one_line(repo: Path, tmp_path: Path) -> None:
    result = run_cli("history", "import", str(tmp_path), cwd=repo)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"voyager-brain: {tmp_path}: no .jsonl transcripts in this folder\n"


def test_an_unreadable_transcript_is_one_line_and_the_others_are_imported(
    repo: Path, tmp_path: Path
) -> None:
    path = transcript(repo, tmp_path / "claude")
    missing = tmp_path / "missing.jsonl"
    result = run_cli("history", "import", str(missing), str(path), cwd=repo)
    assert result.returncode == 2
    assert result.stderr == (
        f"voyager-brain: {missing}: cannot read the transcript: No such file or directory\n"
    )
    assert result.stdout.startswith(f"{path}: session 1 ")


def test_import_cuts_outputs_to_the_projects_limit(repo: Path, tmp_path: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "config.toml").write_text("tool_output_limit = 16\n")
    path = transcript(repo, tmp_path / "claude")
    assert run_cli("history", "import", str(path), cwd=repo).returncode == 0
    shown = json.loads(run_cli("history", "show", "1", "--json", cwd=repo).stdout)
    bash = next(c for m in shown["messages"] for c in m["tool_calls"] if c["tool"] == "Bash")
    assert bash["output"] == "Traceback (most \n[truncated: 118 bytes in all]"


# -- sessions ---------------------------------------------------------------------------


def test_sessions_lists_the_sessions_newest_first(imported: Path, repo: Path) -> None:
    result = run_cli("history", "sessions", cwd=repo)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "ID  STARTED           STATUS     PROJECT  MSGS  CALLS  RULES  TASK",
        " 1  2025-06-02 18:46  completed  project    11      6      1  Add rate limiting to the"
        " orders endpoint: 100 requests a mi…",
    ]


def test_sessions_json_has_the_seed_columns(imported: Path, repo: Path, tmp_path: Path) -> None:
    [row] = json.loads(run_cli("history", "sessions", "--json", cwd=repo).stdout)
    assert {"id", "project_id", "task", "started_at", "ended_at", "status"} <= set(row)
    assert row["project_path"] == os.path.realpath(repo)
    assert (row["message_count"], row["tool_call_count"], row["trigger_count"]) == (11, 6, 1)
    (repo / "src").mkdir()
    mine = run_cli("history", "sessions", "--project", "src", "--json", cwd=repo)
    assert [r["id"] for r in json.loads(mine.stdout)] == [1]
    other = run_cli("history", "sessions", "--project", str(tmp_path), cwd=repo)
    assert other.stdout == f"no sessions for {os.path.realpath(tmp_path)}\n"
    limited = run_cli("history", "sessions", "--limit", "1", "--json", cwd=repo)
    assert len(json.loads(limited.stdout)) == 1


def test_sessions_of_an_empty_history(tmp_path: Path) -> None:
    result = run_cli("history", "sessions", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "no sessions in the history\n")


# -- show and triggers ------------------------------------------------------------------


def test_show_prints_the_messages_with_their_calls_and_rules(imported: Path, repo: Path) -> None:
    result = run_cli("history", "show", "1", cwd=repo)
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"session 1 ({SESSION}), project ({os.path.realpath(repo)}), ")
    assert lines[1] == (
        "task: Add rate limiting to the orders endpoint: 100 requests a minute per API key."
    )
    assert lines[3] == "2025-06-02"
    assert lines[4] == (
        "18:47:03  user       Add rate limiting to the orders endpoint: 100 requests a minute"
        " per API key."
    )
    read = next(line for line in lines if "-> Read  " in line)
    assert read.startswith("                     -> Read  ")
    assert read.endswith("/project/src/orders/routes.py  [ok]")
    bash = lines.index(
        "                     -> Bash  python -c 'import redis; print(redis.__version__)'  [failed]"
    )
    assert (
        lines[bash + 1]
        == "                        rule 1 block: Never import redis at the top level"
    )
    assert lines[-1].startswith("18:48:10  assistant  Done: over 100 requests a minute")


def test_show_by_agent_session_id_and_json(imported: Path, repo: Path) -> None:
    by_id = run_cli("history", "show", "1", cwd=repo).stdout
    assert run_cli("history", "show", SESSION, cwd=repo).stdout == by_id
    assert run_cli("history", "show", SESSION[:8], cwd=repo).stdout == by_id
    shown = json.loads(run_cli("history", "show", SESSION, "--json", cwd=repo).stdout)
    assert shown["session"]["id"] == 1
    assert [m["role"] for m in shown["messages"]].count("user") == 2
    calls = [c for m in shown["messages"] for c in m["tool_calls"]]
    bash = next(c for c in calls if c["tool"] == "Bash")
    assert {"tool", "input", "output", "success"} <= set(bash) and bash["success"] == 0
    assert bash["triggers"][0]["action_taken"] == "block"


def test_triggers_lists_the_rules_that_fired(imported: Path, repo: Path) -> None:
    result = run_cli("history", "triggers", SESSION, cwd=repo)
    assert result.returncode == 0
    assert result.stdout.splitlines()[1:] == [
        "2025-06-02 18:47:16  block  rule 1: Never import redis at the top level",
        "                     on Bash  python -c 'import redis; print(redis.__version__)'",
    ]
    [trigger] = json.loads(run_cli("history", "triggers", "1", "--json", cwd=repo).stdout)[
        "triggers"
    ]
    assert {"description", "action_taken", "tool", "input", "rule_id"} <= set(trigger)


def test_triggers_of_a_session_where_none_fired(repo: Path, tmp_path: Path) -> None:
    run_cli("history", "import", str(transcript(repo, tmp_path / "claude")), cwd=repo)
    result = run_cli("history", "triggers", "1", cwd=repo)
    assert result.stdout.splitlines()[1] == "no guard rule fired in this session"


@pytest.mark.parametrize("command", ["show", "triggers"])
def test_an_unknown_session_is_one_line_and_exit_2(
    command: str, imported: Path, repo: Path
) -> None:
    result = run_cli("history", command, "12345", cwd=repo)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "voyager-brain: no session '12345' in the history (give a row id or a session id"
        " from `voyager-brain history sessions`)\n"
    )


@pytest.mark.parametrize("ref", ["²", "١٢"])  # digits to str.isdigit, not to int()
def test_a_session_ref_of_other_digits_is_one_line_and_exit_2(
    ref: str, imported: Path, repo: Path
) -> None:
    result = run_cli("history", "show", ref, cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"voyager-brain: no session {ref!r} in the history")

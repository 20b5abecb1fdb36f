"""`voyager-brain rules suggest` as a user runs it: real processes, a real transcript, real
memory logs written with `brain`, and a real history.db in the test's own VOYAGER_HOME."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from conftest import cli_ok, run_cli, trusted

SESSION = "0c9e8d7f-6a5b-4c3d-8e2f-1a0b9c8d7e6f"


def write_transcript(repo: Path) -> Path:
    """A session in `repo` where the user corrects the agent after a `pip install`."""
    entries: list[dict[str, Any]] = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "add requests"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "pip install requests"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": "u2",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
            },
        },
        {
            "type": "user",
            "uuid": "u3",
            "message": {"role": "user", "content": "no, use uv add, never pip install"},
        },
    ]
    path = repo / "session.jsonl"
    lines = [json.dumps({**e, "sessionId": SESSION, "cwd": str(repo)}) for e in entries]
    path.write_text("\n".join(lines) + "\n")
    return path


@contextmanager
def history(home: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(home / "history.db")) as db:
        yield db


def rules(repo: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(cli_ok(repo, "rules", "list", "--all", "--json"))
    return found


PIP = """\
1. Do not run `pip install`; use `uv add` instead
   warn  Bash  /\\bpip\\s+install\\b/
   problem: The user corrected the agent: "no, use uv add, never pip install"
   solution: Use `uv add` instead.
   from: transcript message u3
"""


def test_proposals_are_numbered_and_nothing_is_enforced(repo: Path) -> None:
    (repo / ".voyager").mkdir()
    cli_ok(repo, "brain", "action=add", "type=learning", "text=Never use npm here; use pnpm")
    write_transcript(repo)
    out = cli_ok(repo, "rules", "suggest", "session.jsonl")
    entry = json.loads(cli_ok(repo, "brain", "action=list", "type=learning", "--json"))
    entry_id = entry["entries"][0]["id"]
    assert out == PIP + (
        "2. Do not run `npm`; use `pnpm` instead\n"
        "   warn  Bash  /\\bnpm\\b/\n"
        f'   problem: From the memory log (learning {entry_id}): "Never use npm here; use pnpm"\n'
        "   solution: Use `pnpm` instead.\n"
        f"   from: memory entry {entry_id}\n"
        "Nothing is enforced until accepted: voyager-brain rules suggest session.jsonl"
        " --accept N\n"
    )
    assert rules(repo) == []
    # The same proposals every time: the numbers --accept refers to.
    assert cli_ok(repo, "rules", "suggest", "session.jsonl") == out


def test_accept_adds_the_rule_with_the_message_it_came_from(repo: Path, isolated_env: Path) -> None:
    write_transcript(repo)
    out = cli_ok(repo, "rules", "suggest", "session.jsonl", "--accept", "1")
    [rule] = rules(repo)
    assert out == f"proposal 1 added as rule 1 (from message {rule['source_message_id']}): " + (
        "Do not run `pip install`; use `uv add` instead\n"
    )
    assert (rule["pattern"], rule["action"], rule["tool"]) == (r"\bpip\s+install\b", "warn", "Bash")
    # The transcript was imported to find the message.
    with history(isolated_env) as db:
        row = db.execute(
            "SELECT role, content, external_id FROM messages WHERE id = ?",
            (rule["source_message_id"],),
        ).fetchone()
    assert row == ("user", "no, use uv add, never pip install", "u3")
    # The rule is enforced now: a warning for pip install, nothing for uv add.
    for command, decision in (("pip install x", "warn"), ("uv add x", "allow")):
        call = json.dumps({"command": command})
        tested = cli_ok(repo, "rules", "test", "--tool", "Bash", "--input", call)
        assert tested.startswith(f"decision: {decision}\n")
    assert "no rules to suggest" in cli_ok(repo, "rules", "suggest", "session.jsonl")


def test_accept_after_an_import_points_at_the_imported_message(
    repo: Path, isolated_env: Path
) -> None:
    write_transcript(repo)
    cli_ok(repo, "history", "import", "session.jsonl")
    with history(isolated_env) as db:
        [(message,)] = db.execute("SELECT id FROM messages WHERE external_id = 'u3'").fetchall()
    data = json.loads(cli_ok(repo, "rules", "suggest", "session.jsonl", "--accept", "1", "--json"))
    [accepted] = data["accepted"]
    assert accepted["number"] == 1 and accepted["source_message_id"] == message
    assert data["suggestions"][0]["key"] == r"regex:\bpip\s+install\b"
    with history(isolated_env) as db:
        assert db.execute("SELECT COUNT(*) FROM messages WHERE external_id = 'u3'").fetchone() == (
            1,
        )


def test_json_lists_every_proposal_with_its_source(repo: Path) -> None:
    write_transcript(repo)
    data = json.loads(cli_ok(repo, "rules", "suggest", "session.jsonl", "--json"))
    assert data == {
        "suggestions": [
            {
                "number": 1,
                "description": "Do not run `pip install`; use `uv add` instead",
                "pattern": r"\bpip\s+install\b",
                "type": "regex",
                "action": "warn",
                "tool": "Bash",
                "problem": 'The user corrected the agent: "no, use uv add, never pip install"',
                "solution": "Use `uv add` instead.",
                "source": "transcript",
                "source_id": "u3",
                "key": r"regex:\bpip\s+install\b",
            }
        ],
        "accepted": [],
    }


def test_an_existing_rule_is_not_proposed_again(repo: Path) -> None:
    write_transcript(repo)
    cli_ok(repo, "rules", "add", "--pattern", r"\bpip\s+install\b", "--description", "No pip")
    assert cli_ok(repo, "rules", "suggest", "session.jsonl") == "no rules to suggest\n"


def test_a_number_that_is_no_proposal_is_one_line_and_adds_nothing(repo: Path) -> None:
    write_transcript(repo)
    done = run_cli("rules", "suggest", "session.jsonl", "--accept", "1", "--accept", "2", cwd=repo)
    assert done.returncode == 2
    assert done.stderr == "voyager-brain: --accept 2: there is no proposal 2 (1 in all)\n"
    assert rules(repo) == []


def test_a_missing_transcript_is_one_line_and_exit_2(repo: Path) -> None:
    done = run_cli("rules", "suggest", "nope.jsonl", cwd=repo)
    assert done.returncode == 2
    assert done.stderr.startswith("voyager-brain: nope.jsonl: cannot read the transcript")
    assert done.stderr.count("\n") == 1


def test_project_names_the_memory_logs_to_read(repo: Path, tmp_path: Path) -> None:
    (repo / ".voyager").mkdir()
    cli_ok(repo, "brain", "action=add", "type=learning", "text=Never use yarn in this repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert cli_ok(elsewhere, "rules", "suggest") == "no rules to suggest\n"
    out = cli_ok(elsewhere, "rules", "suggest", "--project", str(repo))
    assert out.startswith("1. Do not run `yarn`\n   warn  Bash  /\\byarn\\b/\n")


def model_script(folder: Path, answer: str, exit_code: int = 0) -> Path:
    script = folder / "model.py"
    script.write_text(f"import sys\nsys.stdin.read()\nprint({answer!r})\nsys.exit({exit_code})\n")
    return script


def test_the_model_command_of_the_project_proposes(repo: Path, tmp_path: Path) -> None:
    write_transcript(repo)
    (repo / ".voyager").mkdir()
    proposal = {
        "source": "T1",
        "description": "Never install with pip; the project is managed by uv",
        "pattern": r"\bpip3?\s+install\b",
        "tool": "Bash",
        "problem": "uv.lock is the source of truth",
        "solution": "uv add PACKAGE",
    }
    script = model_script(tmp_path, json.dumps([proposal]))
    (repo / ".voyager" / "config.toml").write_text(f'model_command = "{sys.executable} {script}"\n')
    trusted(repo)
    data = json.loads(cli_ok(repo, "rules", "suggest", "session.jsonl", "--json", "--accept", "1"))
    [suggested] = data["suggestions"]
    assert suggested["pattern"] == r"\bpip3?\s+install\b" and suggested["source_id"] == "u3"
    [rule] = rules(repo)
    assert (rule["description"], rule["action"]) == (proposal["description"], "warn")


def test_a_failing_model_command_falls_back_to_the_heuristic(repo: Path, tmp_path: Path) -> None:
    write_transcript(repo)
    (repo / ".voyager").mkdir()
    script = model_script(tmp_path, "", exit_code=1)
    (repo / ".voyager" / "config.toml").write_text(f'model_command = "{sys.executable} {script}"\n')
    trusted(repo)
    done = run_cli("rules", "suggest", "session.jsonl", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(PIP)
    assert done.stderr.startswith("warning: model failed (")
    assert done.stderr.endswith("using the offline heuristic\n")

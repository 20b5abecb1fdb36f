"""Rules suggested from the user's corrections and the memory logs: real transcripts in
tmp_path, real memory logs written by the brain tool, a real history.db, and a real
model command (a small script) for the model path."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain.config import Config
from voyager_brain.errors import RuleError
from voyager_brain.guard.check import evaluate
from voyager_brain.guard.corrections import command_pattern, findings, head_of
from voyager_brain.guard.db import open_database
from voyager_brain.guard.patterns import engine_for
from voyager_brain.guard.rules import add_rule, list_rules
from voyager_brain.guard.suggest import ACTION, Suggestion, accept, suggest
from voyager_brain.guard.transcript import import_transcript
from voyager_brain.memory.store import MemoryStore
from voyager_brain.memory.tool import brain_tool

SESSION = "5b2d7c1a-0e4f-4a6b-9c8d-2f1e3a4b5c6d"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = open_database(str(tmp_path / "history.db"))
    yield conn
    conn.close()


def user(uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": SESSION,
        "message": {"role": "user", "content": content},
        **extra,
    }


def bash(uuid: str, command: str) -> dict[str, Any]:
    use = {"type": "tool_use", "id": f"toolu_{uuid}", "name": "Bash", "input": {"command": command}}
    return {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": SESSION,
        "message": {"role": "assistant", "content": [use]},
    }


def transcript(folder: Path, *entries: dict[str, Any]) -> Path:
    path = folder / f"{SESSION}.jsonl"
    cwd = {"cwd": str(folder)}
    path.write_text("".join(json.dumps({**cwd, **entry}) + "\n" for entry in entries))
    return path


def matches(proposal: Suggestion, command: str) -> bool:
    assert proposal.pattern is not None
    return re.search(proposal.pattern, command) is not None


# -- corrections in a transcript ------------------------------------------------------------


def test_no_use_uv_add_never_pip_install_proposes_a_bash_warning(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(tmp_path, user("u1", "no, use uv add, never pip install"))
    [proposal] = suggest(db, transcript=path)
    assert proposal.type == "regex" and proposal.tool == "Bash" and proposal.action == "warn"
    assert matches(proposal, "pip install requests")
    assert matches(proposal, "cd app &&  pip   install -r requirements.txt")
    assert not matches(proposal, "uv add requests")
    assert not matches(proposal, "pipx install black")
    assert proposal.description == "Do not run `pip install`; use `uv add` instead"
    assert proposal.solution == "Use `uv add` instead."
    assert proposal.problem == 'The user corrected the agent: "no, use uv add, never pip install"'
    assert (proposal.source, proposal.source_id) == ("transcript", "u1")


def test_a_bare_no_use_y_forbids_the_command_the_agent_just_ran(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(
        tmp_path,
        user("u1", "add requests to the project"),
        bash("a1", "cd app && pip install requests"),
        user("u2", [{"type": "tool_result", "tool_use_id": "toolu_a1", "content": "done"}]),
        user("u3", [{"type": "text", "text": "No - use uv add instead."}]),
    )
    [proposal] = suggest(db, transcript=path)
    assert proposal.pattern == r"\bpip\s+install\b" and proposal.source_id == "u3"
    assert proposal.solution == "Use `uv add` instead."


def test_a_bare_no_replaces_the_last_command_and_lends_its_way_out_to_nothing_else() -> None:
    found = findings(
        "No, this is a Python project: use uv add. And never run git push --force on main.",
        "npm install httpx",
    )
    assert [(f.command, f.alternative) for f in found] == [
        ("npm install", "uv add"),
        ("git push --force", None),
    ]
    # The same command named again in the message is one finding, not two.
    found = findings("No, use uv add, never pip install.", "pip install requests")
    assert [(f.command, f.alternative) for f in found] == [("pip install", "uv add")]


def test_a_bare_no_after_a_command_of_the_same_program_forbids_nothing() -> None:
    # "git push --force-with-lease" after "git push --force": forbidding git push would
    # forbid the alternative too.
    assert findings("no, use git push --force-with-lease", "git push --force") == []
    assert head_of("FOO=1 python -m pip install x") is None  # python only runs pip
    assert head_of("ls; npm install left-pad") == "npm install"


@pytest.mark.parametrize(
    ("text", "command", "solution"),
    [
        ("Use pnpm instead of npm.", "npm", "pnpm"),
        ("Instead of npm, use pnpm", "npm", "pnpm"),
        ("This repo uses pnpm not npm", "npm", "pnpm"),
        ("stop using sudo", "sudo", None),
        ("Please don't ever run rm -rf on the build folder.", "rm -rf", None),
        ("you should never run pip install requests globally", "pip install", None),
        ("prefer ruff over flake8", "flake8", "ruff"),
        ("No. Use uv add. Never pip install.", "pip install", "uv add"),
        ("never `git push --force`, use `git push --force-with-lease`", "git push --force", None),
    ],
)
def test_phrasings_of_a_correction_name_the_forbidden_command(
    text: str, command: str, solution: str | None
) -> None:
    [found] = findings(text)
    assert found.command == command
    if solution is not None:
        assert found.alternative == solution


def test_a_forced_push_rule_leaves_the_safe_push_alone() -> None:
    pattern = command_pattern("git push --force")
    assert pattern == r"\bgit\s+push\s+--force(?:[^\w-]|$)"
    assert re.search(pattern, "git push --force origin main")
    assert not re.search(pattern, "git push --force-with-lease origin main")


@pytest.mark.parametrize(
    "text",
    [
        "don't worry about the tests for now",
        "I never said that",
        "why did you run pip install?",
        "stop it",
        "don't use `requests`, use `httpx`",  # a library in backticks, not a command
    ],
)
def test_talk_is_not_a_rule(text: str) -> None:
    assert findings(text) == []


def test_what_is_not_a_command_becomes_a_semantic_rule(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(tmp_path, user("u1", "Thanks. And never commit directly to main!"))
    [proposal] = suggest(db, transcript=path)
    assert proposal.type == "semantic" and proposal.pattern is None and proposal.tool is None
    assert proposal.description == "Never commit directly to main"
    assert proposal.solution is None and proposal.action == ACTION == "warn"


def test_tool_results_and_what_claude_code_wrote_are_not_the_users_words(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(
        tmp_path,
        user("u1", [{"type": "tool_result", "tool_use_id": "t", "content": "never pip install"}]),
        user("u2", "Caveat: never run npm install here", isMeta=True),
        user("u3", "<command-name>/clear</command-name>\nnever use sudo"),
        user("u4", "never use yarn", isSidechain=True),
        {"type": "summary", "summary": "never use docker"},
    )
    with path.open("a") as f:
        f.write('"never use apt"\n["never use brew"]\n')  # not objects
        f.write('{"type": "user", "message": {"content": "never use brew"\n')  # a torn line
    assert suggest(db, transcript=path) == []


def test_the_same_correction_twice_is_proposed_once_from_its_first_message(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(
        tmp_path, user("u1", "never use sudo"), user("u2", "I said it: never use sudo!")
    )
    assert [p.source_id for p in suggest(db, transcript=path)] == ["u1"]


def test_an_unreadable_transcript_is_a_rule_error(tmp_path: Path, db: sqlite3.Connection) -> None:
    with pytest.raises(RuleError, match=r"missing\.jsonl: cannot read the transcript"):
        suggest(db, transcript=tmp_path / "missing.jsonl")


# -- the memory logs ----------------------------------------------------------------------


def test_a_never_learning_in_the_project_log_becomes_a_proposal(
    repo: Path, db: sqlite3.Connection
) -> None:
    (repo / ".voyager").mkdir()
    added = brain_tool("add", cwd=str(repo), type="learning", text="Never use npm here; use pnpm")
    brain_tool("add", cwd=str(repo), type="learning", text="The API uses snake_case")
    [proposal] = suggest(db, project_root=repo)
    entry_id = added["entries"][0]["id"]
    assert (proposal.source, proposal.source_id) == ("memory", entry_id)
    assert proposal.pattern == r"\bnpm\b" and proposal.solution == "Use `pnpm` instead."
    assert proposal.problem == (
        f'From the memory log (learning {entry_id}): "Never use npm here; use pnpm"'
    )
    # Without the project, only the personal log is read.
    assert suggest(db) == []


def test_dont_behaviors_and_preferences_in_the_personal_log_become_proposals(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    store = MemoryStore(tmp_path)
    assert store.seed_personal()  # the seeded behaviors are nobody's corrections
    assert suggest(db) == []
    brain_tool("add", cwd=str(tmp_path), type="behavior", category="dont", text="Run sudo")
    brain_tool(
        "add",
        cwd=str(tmp_path),
        type="preference",
        category="Tools",
        text="Always use fish, not bash",
    )
    proposals = suggest(db)
    assert [(p.description, p.pattern) for p in proposals] == [
        ("Do not run `sudo`", r"\bsudo\b"),
        ("Always use fish, not bash", None),
    ]


def test_a_removed_memory_entry_proposes_nothing(tmp_path: Path, db: sqlite3.Connection) -> None:
    added = brain_tool(
        "add", cwd=str(tmp_path), type="preference", category="Tools", text="Never use yarn"
    )
    assert len(suggest(db)) == 1
    brain_tool("remove", cwd=str(tmp_path), id=added["entries"][0]["id"], reason="not true")
    assert suggest(db) == []


# -- dedup, accept ----------------------------------------------------------------------


def test_a_proposal_like_an_existing_rule_is_left_out(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(tmp_path, user("u1", "never pip install. never commit directly to main"))
    assert len(suggest(db, transcript=path)) == 2
    add_rule(
        db, description="pip is not for this repo", pattern=r"\bpip\s+install\b", action="block"
    )
    rule = add_rule(db, description="never commit directly to MAIN!", type="semantic")
    assert suggest(db, transcript=path) == []
    # A rule someone disabled is not proposed again either.
    db.execute("UPDATE rules SET active = 0 WHERE id = ?", (rule.id,))
    assert suggest(db, transcript=path) == []


def test_nothing_is_enforced_until_accepted(tmp_path: Path, db: sqlite3.Connection) -> None:
    path = transcript(tmp_path, user("u1", "no, use uv add, never pip install"))
    [proposal] = suggest(db, transcript=path)
    call = {"command": "pip install requests"}
    assert list_rules(db) == []
    assert evaluate(list_rules(db), "Bash", call).action == "allow"
    rule = accept(db, proposal)
    assert evaluate(list_rules(db), "Bash", call).action == "warn"
    assert evaluate(list_rules(db), "Bash", {"command": "uv add requests"}).action == "allow"
    assert (rule.pattern, rule.tool, rule.problem, rule.solution) == (
        proposal.pattern,
        "Bash",
        proposal.problem,
        proposal.solution,
    )
    assert suggest(db, transcript=path) == []  # accepted: no longer a proposal
    with pytest.raises(RuleError, match="a rule like this exists already"):
        accept(db, proposal)


def test_an_accepted_rule_records_the_message_it_came_from(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(tmp_path, user("u1", "fix the build"), user("u2", "never use sudo"))
    import_transcript(db, str(path))
    [proposal] = suggest(db, transcript=path)
    rule = accept(db, proposal)
    row = db.execute(
        "SELECT role, content, external_id FROM messages WHERE id = ?", (rule.source_message_id,)
    ).fetchone()
    assert tuple(row) == ("user", "never use sudo", "u2")


def test_accepting_from_a_transcript_not_yet_imported_imports_it(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(tmp_path, user("u1", "never use sudo"))
    [proposal] = suggest(db, transcript=path)
    assert accept(db, proposal).source_message_id is None  # no transcript to import: NULL
    db.execute("DELETE FROM rules")
    rule = accept(db, proposal, transcript=path)
    external = db.execute(
        "SELECT external_id FROM messages WHERE id = ?", (rule.source_message_id,)
    ).fetchone()
    assert external[0] == "u1"


def test_a_proposal_from_memory_has_no_source_message(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    brain_tool("add", cwd=str(tmp_path), type="preference", category="Tools", text="Never use yarn")
    [proposal] = suggest(db)
    assert accept(db, proposal).source_message_id is None


# -- the model ----------------------------------------------------------------------------


def model(tmp_path: Path, answer: Any, exit_code: int = 0) -> Config:
    """A model command: a script that keeps the prompt it was given and prints `answer`."""
    script = tmp_path / "model.py"
    text = answer if isinstance(answer, str) else json.dumps(answer)
    script.write_text(
        "import pathlib, sys\n"
        f"pathlib.Path({str(tmp_path / 'prompt.txt')!r}).write_text(sys.stdin.read())\n"
        f"print({text!r})\n"
        f"sys.exit({exit_code})\n"
    )
    return Config(model_command=f"{sys.executable} {script}", model_timeout_seconds=30.0)


def test_the_model_proposes_and_every_proposal_is_checked(
    tmp_path: Path, db: sqlite3.Connection
) -> None:
    path = transcript(
        tmp_path, user("u1", "small talk"), user("u2", "no, don't touch the lockfile")
    )
    answer = [
        {
            "source": "T1",
            "description": "Never edit uv.lock by hand",
            "pattern": r"uv\.lock",
            "tool": "Edit",
            "problem": "The lockfile is generated",
            "solution": "Run uv lock",
        },
        {"source": "T1", "description": "Bad regex", "pattern": "uv(lock", "tool": "Edit"},
        {"source": "T9", "description": "From no text", "pattern": None},
        {"source": "T1", "description": "", "pattern": "x"},
        "not an object",
    ]
    warnings: list[str] = []
    proposals = suggest(db, transcript=path, config=model(tmp_path, answer), warn=warnings.append)
    assert proposals == [
        Suggestion(
            "Never edit uv.lock by hand",
            r"uv\.lock",
            "regex",
            "warn",
            "Edit",
            "The lockfile is generated",
            "Run uv lock",
            "transcript",
            "u2",
        )
    ]
    assert len(warnings) == 4 and "invalid regex 'uv(lock'" in warnings[0]
    prompt = (tmp_path / "prompt.txt").read_text()
    assert "[T1] no, don't touch the lockfile" in prompt  # only texts that may correct
    assert "small talk" not in prompt


def test_a_model_answer_in_a_code_fence_is_read(tmp_path: Path, db: sqlite3.Connection) -> None:
    path = transcript(tmp_path, user("u1", "never use sudo"))
    item = {"source": "T1", "description": "No sudo", "pattern": r"\bsudo\b", "tool": "Bash"}
    fenced = f"Here you are:\n```json\n{json.dumps([item])}\n```"
    [proposal] = suggest(db, transcript=path, config=model(tmp_path, fenced))
    assert proposal.description == "No sudo" and matches(proposal, "sudo rm x")


@pytest.mark.parametrize(("answer", "exit_code"), [("[]", 3), ("I cannot help with that", 0)])
def test_a_failing_model_leaves_the_work_to_the_heuristic(
    tmp_path: Path, db: sqlite3.Connection, answer: str, exit_code: int
) -> None:
    path = transcript(tmp_path, user("u1", "no, use uv add, never pip install"))
    warnings: list[str] = []
    config = model(tmp_path, answer, exit_code)
    [proposal] = suggest(db, transcript=path, config=config, warn=warnings.append)
    assert proposal.pattern == r"\bpip\s+install\b"
    assert len(warnings) == 1 and "using the offline heuristic" in warnings[0]


def test_a_model_answering_nothing_proposes_nothing(tmp_path: Path, db: sqlite3.Connection) -> None:
    path = transcript(tmp_path, user("u1", "never use sudo"))
    assert suggest(db, transcript=path, config=model(tmp_path, [])) == []


# -- any text ---------------------------------------------------------------------------

# Words of corrections, punctuation, regex metacharacters, backticks and the private-use
# characters the code spans are masked with.
VOCABULARY = """
no never don't do not use instead of stop using pip install npm sudo git push --force
, . ! ? ; — and but run prefer over the build ` \\ ( ) [ * +
"""
WORDS = st.sampled_from([*VOCABULARY.split(), "`rm -rf /`", "\ue000", "\ue0011\ue001"])


@settings(max_examples=200)
@given(
    messages=st.lists(
        st.one_of(st.text(max_size=200), st.lists(WORDS, max_size=25).map(" ".join)),
        max_size=5,
    ),
    raw=st.text(max_size=200),
)
def test_suggest_never_crashes_and_every_pattern_compiles(messages: list[str], raw: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        lines = [json.dumps(user(f"u{n}", text)) for n, text in enumerate(messages)]
        lines += [json.dumps(bash("a", raw)), raw.replace("\n", " ")]
        path = Path(folder) / "t.jsonl"
        path.write_text("\n".join(lines) + "\n")
        db = open_database(":memory:")
        try:
            for proposal in suggest(db, transcript=path):
                assert proposal.type in ("regex", "semantic")
                if proposal.pattern is not None:
                    engine_for(proposal.pattern)  # raises RuleError for a bad one
                    re.compile(proposal.pattern)
        finally:
            db.close()

"""Secrets echoed or kept (issue 26), each case as the attack: a secret given to a command
that stores it must come back redacted in the reply, and be redacted where it is kept
(brain.md, the memory logs, history.db's rules, the pipeline's files); `check` and
`doctor` look at every file an agent writes. Real CLI processes, real files, real SQLite.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run_cli

from voyager_brain.memory.tool import brain_tool
from voyager_brain.redact import redact

# Fake, real-shaped: built from pieces so that the source holds no whole secret.
AWS_ID = "AKIA" + "Q3ZP7RMX2LBN5TWK"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG" + "/bPxRfiCYEXAMPLEKEY"
OPENAI = "sk-proj-" + "EXAMPLE0123456789abcdefghijklmnopqrstuvwxyzABCD"
MYSQL_PASSWORD = "S3cr3t" + "Pass"
TOKEN_37 = "Zq8Xk2Lq9ZmP4nR7sT1v" + "W3yB5cD6eF0gH2jK4"


def ok(cwd: Path, *args: str, input: str | None = None) -> str:
    done = run_cli(*args, cwd=cwd, input=input)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(home / "history.db")) as db:
        return list(db.execute(sql))


# -- replies echo what was stored ---------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_brain_add_replies_with_the_stored_text_not_the_secret(repo: Path, as_json: bool) -> None:
    ok(repo, "init")
    args = ["brain", "action=add", "type=learning", f"text=Deploy with key {AWS_ID}"]
    out = ok(repo, *args, *(["--json"] if as_json else []))
    assert AWS_ID not in out
    assert "[REDACTED:aws-access-key]" in out
    log = (repo / ".voyager" / "memory.jsonl").read_text()
    assert AWS_ID not in log and "[REDACTED:aws-access-key]" in log


def test_brain_add_of_a_task_and_an_update_reply_redacted(repo: Path) -> None:
    out = ok(repo, "brain", "action=add", "type=task", f"description=Rotate {AWS_ID}", "--json")
    assert AWS_ID not in out
    task_id = json.loads(out)["entries"][0]["id"]
    updated = ok(repo, "brain", "action=update", f"id={task_id}", f"description=Again {AWS_ID}")
    assert AWS_ID not in updated and "[REDACTED:aws-access-key]" in updated
    removed = ok(repo, "brain", "action=remove", f"id={task_id}")
    assert AWS_ID not in removed


def test_a_superseding_learning_replies_redacted(repo: Path) -> None:
    ok(repo, "brain", "action=add", "type=learning", "text=The deploy key lives in the vault")
    out = ok(repo, "brain", "action=add", "type=learning", f"text=The deploy key is {AWS_ID}")
    assert AWS_ID not in out


def test_memory_extract_replies_with_the_stored_text(repo: Path) -> None:
    ok(repo, "init")
    conversation = f"Always deploy with the key {AWS_ID} from now on.\n"
    out = ok(repo, "memory", "extract", "-", input=conversation)
    assert "[REDACTED:aws-access-key]" in out  # it was stored, and said so
    assert AWS_ID not in out
    as_json = ok(repo, "memory", "extract", "-", "--json", input=conversation)
    assert AWS_ID not in as_json


def test_the_librarys_brain_tool_returns_what_it_stored(repo: Path) -> None:
    result = brain_tool("add", cwd=str(repo), type="learning", text=f"Use {AWS_ID} for CI")
    assert AWS_ID not in json.dumps(result)
    assert result["message"].endswith("Use [REDACTED:aws-access-key] for CI")


@pytest.mark.parametrize("command", ["add", "save"])
def test_add_and_save_reply_with_the_stored_text(repo: Path, command: str) -> None:
    ok(repo, "init")
    if command == "add":
        out = ok(repo, "add", "decision", f"Use {AWS_ID}") + ok(
            repo, "add", "decision", f"Use again {AWS_ID}", "--json"
        )
    else:
        update = repo / "update.json"
        update.write_text(json.dumps({"nextSteps": [f"rotate {AWS_ID}"]}))
        out = ok(repo, "save", str(update)) + ok(repo, "save", str(update), "--json")
    assert AWS_ID not in out


async def _mcp_replies(project: Path) -> str:
    from mcp import Client

    from voyager_brain.integrations.mcp_server import build_server

    texts = []
    async with Client(build_server(project)) as client:
        for tool, arguments in (
            ("brain", {"action": "add", "type": "learning", "text": f"Key {AWS_ID} for CI"}),
            ("brain", {"action": "list"}),
            ("add", {"type": "decision", "text": f"Use {AWS_ID}"}),
            ("save", {"update": {"nextSteps": [f"rotate {AWS_ID}"]}}),
            ("rules_add", {"description": f"Never print {AWS_ID}", "solution": f"not {AWS_ID}"}),
        ):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result
            texts.append(json.dumps(result.structured_content) + str(result.content))
    return "\n".join(texts)


@pytest.mark.anyio
async def test_the_mcp_tools_reply_with_the_stored_text(repo: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is the voyager-brain[mcp] extra")
    assert run_cli("init", cwd=repo).returncode == 0
    replies = await _mcp_replies(repo)
    assert "[REDACTED:aws-access-key]" in replies
    assert AWS_ID not in replies


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- rules: stored and listed redacted --------------------------------------------------------


def test_rules_add_stores_and_lists_its_texts_redacted(repo: Path, isolated_env: Path) -> None:
    out = ok(
        repo, "rules", "add", "--pattern", r"\bdeploy\b",
        "--description", f"Deploys use {AWS_ID}",
        "--problem", f"the old key {AWS_ID} leaked",
        "--solution", f"rotate {AWS_ID}", "--json",
    )  # fmt: skip
    assert AWS_ID not in out
    listed = ok(repo, "rules", "list", "--all") + ok(repo, "rules", "list", "--all", "--json")
    assert AWS_ID not in listed and "[REDACTED:aws-access-key]" in listed
    stored = rows(isolated_env, "SELECT description, problem, solution FROM rules")
    assert stored and AWS_ID not in json.dumps(stored)


def test_a_rule_set_description_is_stored_redacted(repo: Path, isolated_env: Path) -> None:
    ok(repo, "rules", "set", "create", "team", "--description", f"keys: {AWS_ID}")
    assert AWS_ID not in ok(repo, "rules", "set", "list")
    assert AWS_ID not in json.dumps(rows(isolated_env, "SELECT description FROM rule_sets"))


def test_a_cloned_rules_toml_is_synced_redacted(repo: Path, isolated_env: Path) -> None:
    voyager = repo / ".voyager"
    voyager.mkdir()
    (voyager / "rules.toml").write_text(
        "[[rules]]\n"
        f'description = "Never paste {AWS_ID}"\n'
        'pattern = "\\\\bcurl\\\\b"\n'
        f'problem = "token {TOKEN_37} leaked"\n'
        f'solution = "use aws_secret_access_key {AWS_SECRET} from the vault"\n'
        "[[rules]]\n"
        f'description = "Bad {AWS_ID}"\n'
        'action = "explode"\n'
    )
    done = run_cli("rules", "sync", cwd=repo)
    assert AWS_ID not in done.stdout + done.stderr  # the bad rule is named, redacted
    listed = ok(repo, "rules", "list", "--all", "--json")
    assert "Never paste [REDACTED:aws-access-key]" in listed
    for secret in (AWS_ID, TOKEN_37, AWS_SECRET):
        assert secret not in listed
        assert secret not in json.dumps(rows(isolated_env, "SELECT * FROM rules"))
    # Synced again unchanged: the same rule, not a second copy.
    run_cli("rules", "sync", cwd=repo)
    assert len(json.loads(ok(repo, "rules", "list", "--all", "--json"))) == 1


def test_rules_suggest_proposes_and_accepts_redacted(repo: Path, isolated_env: Path) -> None:
    (repo / ".voyager").mkdir()
    ok(repo, "brain", "action=add", "type=learning", "text=Never use npm here; use pnpm")
    # The personal log may keep secrets (redact_secrets = false); a proposal must not.
    home_config = isolated_env / "config.toml"
    home_config.write_text("redact_secrets = false\n")
    ok(repo, "brain", "action=add", "type=learning", "store=personal",
       f"text=Never run yarn with {AWS_ID}; use pnpm")  # fmt: skip
    out = ok(repo, "rules", "suggest", "--json")
    assert "yarn" in out and AWS_ID not in out
    ok(repo, "rules", "suggest", "--accept", "1", "--accept", "2")
    assert AWS_ID not in json.dumps(rows(isolated_env, "SELECT * FROM rules"))


# -- the pipeline's task and events --------------------------------------------------------


def test_the_pipelines_task_is_redacted_in_its_state_and_events(repo: Path, tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "pipeline"))
    from agents import FakeAgent

    agent = FakeAgent(tmp_path / "agent")
    agent.script()
    task = f"Deploy with {AWS_ID} and mysql -u root -p{MYSQL_PASSWORD}"
    done = run_cli("pipeline", "run", task, "--stages", "builder", "--runner", agent.command,
                   cwd=repo)  # fmt: skip
    assert done.returncode == 0, done.stderr
    brain = repo / ".brain"
    for name in ("events.jsonl", "pipeline-state.json", "PROJECT.md"):
        text = (brain / name).read_text()
        assert AWS_ID not in text and MYSQL_PASSWORD not in text, name
    assert "[REDACTED:aws-access-key]" in (brain / "pipeline-state.json").read_text()
    status = ok(repo, "pipeline", "status") + ok(repo, "pipeline", "status", "--json")
    assert AWS_ID not in status
    # What each agent was given is what was stored.
    assert all(AWS_ID not in json.dumps(call) for call in agent.calls())


# -- the shapes that leaked into brain.md ------------------------------------------------------

LEAKS = {
    "mysql -p": (f"Connect with mysql -u root -p{MYSQL_PASSWORD} app_db", MYSQL_PASSWORD),
    "bare AWS secret": (f"AWS creds: {AWS_ID} {AWS_SECRET}", AWS_SECRET),
    "aws_secret_access_key with a space": (
        f"ran aws configure set aws_secret_access_key {AWS_SECRET}",
        AWS_SECRET,
    ),
    "token and 37 characters": (f"the CI token {TOKEN_37} works", TOKEN_37),
}


@pytest.mark.parametrize("text,secret", LEAKS.values(), ids=LEAKS.keys())
def test_a_leaking_shape_does_not_reach_brain_md(repo: Path, text: str, secret: str) -> None:
    ok(repo, "init")
    out = ok(repo, "add", "observation", text)
    assert secret not in out
    assert secret not in (repo / ".voyager" / "brain.md").read_text()


def test_mysql_password_in_tool_output_is_not_kept_in_history(
    repo: Path, isolated_env: Path
) -> None:
    payload = {
        "session_id": "s-mysql",
        "cwd": str(repo),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "tool_input": {"command": f"mysql -u root -p{MYSQL_PASSWORD} -e 'select 1'"},
        "tool_response": {"stdout": f"mysql -uroot -p{MYSQL_PASSWORD}: ok", "stderr": ""},
    }
    for event in ("pre-tool-use", "post-tool-use"):
        done = run_cli("hook", "claude", event, cwd=repo, input=json.dumps(payload))
        assert done.returncode == 0, done.stderr
    stored = rows(isolated_env, "SELECT * FROM tool_calls")
    assert stored and MYSQL_PASSWORD not in json.dumps(stored, default=str)


# -- check and doctor: the text before the first entry, .brain/*.md --------------------------


def _brain_with_preamble(repo: Path) -> Path:
    ok(repo, "init")
    ok(repo, "add", "decision", "Use pnpm")
    path = repo / ".voyager" / "brain.md"
    text = path.read_text()
    first = text.index("\n## ")
    path.write_text(text[:first] + f"\nTeam notes: the OpenAI key is {OPENAI}\n" + text[first:])
    return path


def test_doctor_reports_a_secret_before_the_first_entry(repo: Path) -> None:
    path = _brain_with_preamble(repo)
    done = run_cli("doctor", cwd=repo)
    assert "brain.md holds no secrets" not in done.stdout
    assert "openai-key" in done.stdout and done.returncode != 0
    repaired = run_cli("doctor", "--repair", cwd=repo)
    assert OPENAI not in path.read_text(), repaired.stdout
    assert "Team notes: the OpenAI key is [REDACTED:openai-key]" in path.read_text()
    assert "Use pnpm" in path.read_text()


def test_check_reports_a_secret_before_the_first_entry(repo: Path) -> None:
    _brain_with_preamble(repo)
    done = run_cli("check", cwd=repo)
    assert done.returncode == 1 and ".voyager/brain.md:" in done.stdout
    assert "openai-key" in done.stdout


def test_writing_brain_md_redacts_the_text_before_the_first_entry(repo: Path) -> None:
    path = _brain_with_preamble(repo)
    ok(repo, "add", "observation", "CI runs on Linux")
    text = path.read_text()
    assert OPENAI not in text and "[REDACTED:openai-key]" in text
    assert "CI runs on Linux" in text and "Use pnpm" in text


@pytest.mark.parametrize("name", ["PLAN.md", "MISTAKES.md", "RESEARCH/api.md"])
def test_check_and_doctor_cover_the_agents_brain_files(repo: Path, name: str) -> None:
    ok(repo, "init")
    path = repo / ".brain" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Notes\n\nThe staging key is {AWS_ID}.\n")
    done = run_cli("check", cwd=repo)
    assert done.returncode == 1
    assert f".brain/{name}:3: unredacted secret (aws-access-key)" in done.stdout
    given = run_cli("check", str(path), cwd=repo)
    assert given.returncode == 1 and f".brain/{name}:3" in given.stdout
    doctor = run_cli("doctor", cwd=repo)
    assert f".brain/{name}:3" in doctor.stdout and doctor.returncode != 0
    run_cli("doctor", "--repair", cwd=repo)
    assert AWS_ID not in path.read_text()
    assert run_cli("check", cwd=repo).returncode == 0


def test_redacting_is_idempotent_on_the_leaking_shapes() -> None:
    for text, secret in LEAKS.values():
        once = redact(text)
        assert secret not in once and redact(once) == once


@pytest.mark.parametrize(
    "unit",
    ["token " + "aB3" * 300 + " ", "mysql -p", "mysql -u a -pS3cr3t; ", "AWS " + "aB3/" * 30],
    ids=["token-long-values", "mysql-p", "mysql-passwords", "aws-runs"],
)
def test_the_new_rows_stay_linear_on_hostile_text(unit: str) -> None:
    # Redaction runs on every hook: a text built to make a row backtrack (a value longer
    # than its bound, a command repeated) must cost in proportion to its length.
    import time

    def seconds(size: int) -> float:
        text = unit * (size // len(unit))
        start = time.perf_counter()
        redact(text)
        return time.perf_counter() - start

    redact(unit)  # the table compiled
    # The best of five each, the sizes in turn: a busy machine slows both alike.
    runs = [(seconds(40_000), seconds(320_000)) for _ in range(5)]
    small, large = min(r[0] for r in runs), min(r[1] for r in runs)
    assert large < 8 * 3 * max(small, 0.001), (small, large)  # linear: 8x; quadratic: 64x

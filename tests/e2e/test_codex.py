"""The real Codex CLI (npm @openai/codex, pinned in .ci/run) with voyager-brain's hooks,
against a scripted Responses API on 127.0.0.1 (`openai_mock`), in `codex exec` with a
trusted project and `--dangerously-bypass-hook-trust` (the one flag that stands for the
user's approval of each hook in `/hooks`; docs/agents/codex.md).

Runs when ``VOYAGER_CODEX`` names the CLI (or ``codex`` is on PATH); .ci/run installs it
and sets ``VOYAGER_E2E=required``, which turns the skip into a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from e2e import agent_cli, history, prepared
from openai_mock import MockResponses, call, search, text

#: The namespace Codex gives the tools of the server `install mcp codex` adds.
NAMESPACE = "mcp__voyager_brain"


@pytest.fixture
def codex() -> str:
    return agent_cli("VOYAGER_CODEX", "codex", "@openai/codex@0.171.0")


@pytest.fixture
def project(repo: Path) -> Path:
    return prepared(repo, "codex")


def run_codex(codex: str, repo: Path, mock: MockResponses, prompt: str) -> str:
    """`codex exec PROMPT` in `repo` against `mock`, the project trusted; its output."""
    home = repo.parent / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "mock"\n\n'
        f'[model_providers.mock]\nname = "mock"\nbase_url = "{mock.url}"\n'
        'wire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n\n'
        f'[projects."{repo}"]\ntrust_level = "trusted"\n'
    )
    env = {
        **os.environ,
        # Codex runs commands in a login shell: the user's profile stays out of the output.
        "HOME": str(home),
        "CODEX_HOME": str(home),
        "OPENAI_API_KEY": "sk-test",
        # The hooks run `voyager-brain`: this interpreter's.
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }
    done = subprocess.run(
        [codex, "exec", "--dangerously-bypass-hook-trust", prompt],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def outputs(request: dict[str, Any]) -> list[str]:
    return [
        str(item.get("output"))
        for item in request["input"]
        if item.get("type") == "function_call_output"
    ]


def test_the_context_reaches_the_model_and_a_block_reaches_it_as_the_calls_output(
    codex: str, project: Path, isolated_env: Path
) -> None:
    with MockResponses([call("exec_command", {"cmd": "rm -rf build"}), text("Done.")]) as mock:
        run_codex(codex, project, mock, "clean the build")
        first, last = mock.requests[0], mock.requests[-1]
    assert "CI must use Node 22" in json.dumps(first)
    [blocked] = outputs(last)
    assert blocked.startswith("Command blocked by PreToolUse hook: voyager-brain guard blocked")
    assert "- Rule 1 (block): no rm -rf\n  Solution: use git clean -fdx\n" in blocked
    fired = history(isolated_env).execute("SELECT action_taken FROM rule_triggers").fetchall()
    assert [row[0] for row in fired] == ["block"]


def test_a_command_that_fails_is_recorded_as_failed(
    codex: str, project: Path, isolated_env: Path
) -> None:
    script = [call("exec_command", {"cmd": "echo X; exit 3"}), text("It failed.")]
    with MockResponses(script) as mock:
        run_codex(codex, project, mock, "run it")
        [told] = outputs(mock.requests[-1])
    assert "Process exited with code 3" in told  # what the model sees
    row = (
        history(isolated_env)
        .execute("SELECT input, output, success FROM tool_calls WHERE input LIKE '%exit 3%'")
        .fetchone()
    )
    # PostToolUse sends the output alone ("X\\n"): the exit code comes from the rollout.
    assert (row["output"], row["success"]) == ("X\n", 0)


def test_a_session_leaves_its_record(codex: str, project: Path, isolated_env: Path) -> None:
    with MockResponses([text("Nothing to do.")]) as mock:
        run_codex(codex, project, mock, "say hello")
    assert "## Loop Status" in (project / ".voyager" / "brain.md").read_text()
    session = history(isolated_env).execute("SELECT status FROM sessions").fetchone()
    assert session is not None


def with_mcp(project: Path, *approved: str) -> None:
    """`install mcp codex` in the project, the server required, and the user's approval
    of the `approved` tools in the same config.toml: `codex exec` asks no one, and
    refuses an MCP tool that is not read-only without it."""
    assert run_cli("install", "mcp", "codex", cwd=project).returncode == 0
    config = project / ".codex" / "config.toml"
    assert '[mcp_servers.voyager-brain]\ncommand = "voyager-brain"\n' in config.read_text()
    # `codex exec` 0.171 sends its first request without waiting for a server that is
    # still starting (its tools then missing from tool_search, one run in three here);
    # `required = true` makes it wait, as docs/agents/codex.md tells users.
    ours = "[mcp_servers.voyager-brain]\n"
    config.write_text(config.read_text().replace(ours, ours + "required = true\n"))
    with config.open("a") as file:
        for tool in approved:
            file.write(f'\n[mcp_servers.voyager-brain.tools.{tool}]\napproval_mode = "approve"\n')


def add_rule(project: Path, *args: str) -> None:
    done = run_cli("rules", "add", *args, cwd=project)
    assert done.returncode == 0, done.stderr


def answer(request: dict[str, Any], name: str, given: str = "") -> Any:
    """What the model was told of its one call of `name` whose arguments hold `given`."""
    [asked] = [
        item
        for item in request["input"]
        if item.get("type") == "function_call"
        and item["name"] == name
        and given in item["arguments"]
    ]
    [told] = [
        item
        for item in request["input"]
        if item.get("type") == "function_call_output" and item["call_id"] == asked["call_id"]
    ]
    return told["output"]


def developer_texts(request: dict[str, Any]) -> list[str]:
    return [
        part["text"]
        for item in request["input"]
        if item.get("type") == "message" and item["role"] == "developer"
        for part in item["content"]
    ]


def test_the_mcp_tools_are_found_by_tool_search_and_an_answer_reaches_the_model(
    codex: str, project: Path, isolated_env: Path
) -> None:
    with_mcp(project)
    script = [
        search("recall memory"),
        call("recall", {"query": "Node"}, namespace=NAMESPACE),
        call("save", {"update": {"nextSteps": ["Ship it"]}}, namespace=NAMESPACE),
        text("CI uses Node 22."),
    ]
    with MockResponses(script) as mock:
        run_codex(codex, project, mock, "which Node does CI use?")
        first, searched, *_, last = mock.requests
    # Codex defers MCP tools: the first request offers tool_search and none of the tools;
    # a developer message names their namespace, in the first request or (the server
    # still starting) as "Added deferred tool namespaces" in a later one.
    offered = {tool.get("name") or tool["type"] for tool in first["tools"]}
    assert "tool_search" in offered and not offered & {"recall", "save", NAMESPACE}
    listed = [text for text in developer_texts(searched) if text.startswith("<tools>")]
    named = f"\n- {NAMESPACE}: Memory for this project, kept in its git repository"
    assert any(named in text for text in listed), listed
    [found] = [item for item in searched["input"] if item.get("type") == "tool_search_output"]
    [namespace] = found["tools"]
    assert (namespace["type"], namespace["name"]) == ("namespace", NAMESPACE)
    assert {tool["name"] for tool in namespace["tools"]} >= {"recall", "save", "status", "brain"}
    # The server's answer, as the model reads it.
    recalled = answer(last, "recall")
    assert '"excerpt":"CI must use Node 22"' in recalled
    # save is not read-only: codex exec, which approves nothing, refuses it.
    refused = json.dumps(answer(last, "save"))
    assert "MCP tool call requires approval, but approval policy is never" in refused
    assert json.loads((project / ".voyager" / "brain.json").read_text())["nextSteps"] == []
    recall, save = history(isolated_env).execute(
        "SELECT tool, output, success FROM tool_calls ORDER BY id"
    )
    assert (recall["tool"], recall["success"]) == (f"{NAMESPACE}__recall", 1)
    assert json.loads(recall["output"])["results"][0]["excerpt"] == "CI must use Node 22"
    # Codex sends no PostToolUse for the refused call: the turn's end reads its failure
    # from the rollout.
    assert (save["tool"], save["success"]) == (f"{NAMESPACE}__save", 0)
    assert save["output"] == "MCP tool call requires approval, but approval policy is never"


def test_a_rule_on_the_servers_save_blocks_codexs_call_and_another_save_goes_through(
    codex: str, project: Path, isolated_env: Path
) -> None:
    with_mcp(project, "save")
    add_rule(project, "--tool", "mcp__voyager-brain__save", "--pattern", "Ship it",
             "--description", "ship from CI only", "--solution", "ask the user")  # fmt: skip
    script = [
        search("save the project state"),
        call("save", {"update": {"nextSteps": ["Ship it"]}}, namespace=NAMESPACE),
        call("save", {"update": {"nextSteps": ["Write the docs"]}}, namespace=NAMESPACE),
        text("Saved."),
    ]
    with MockResponses(script) as mock:
        run_codex(codex, project, mock, "record the next step")
        last = mock.requests[-1]
    blocked = answer(last, "save", "Ship it")
    assert blocked.startswith(
        "Tool call blocked by PreToolUse hook: voyager-brain guard blocked this"
        f" {NAMESPACE}__save call.\n- Rule 2 (block): ship from CI only\n  Solution: ask the user\n"
    )
    # Codex puts ". Tool: NAME" after the reason, which therefore ends without a period.
    assert blocked.endswith(f"or ask the user. Tool: {NAMESPACE}__save")
    assert '"new":"Write the docs"' in answer(last, "save", "Write the docs")
    brain = json.loads((project / ".voyager" / "brain.json").read_text())
    assert brain["nextSteps"] == ["Write the docs"]
    fired = history(isolated_env).execute(
        "SELECT r.rule_id, r.action_taken, t.tool FROM rule_triggers r"
        " JOIN tool_calls t ON t.id = r.tool_call_id"
    )
    assert [tuple(row) for row in fired] == [(2, "block", f"{NAMESPACE}__save")]


def test_a_warning_reaches_the_model_with_the_output_and_a_logged_call_runs_unseen(
    codex: str, project: Path, isolated_env: Path
) -> None:
    add_rule(project, "--pattern", r"git\s+push\s+--force", "--tool", "Bash", "--action", "warn",
             "--description", "force-push rewrites shared history",
             "--solution", "use --force-with-lease")  # fmt: skip
    add_rule(project, "--pattern", r"git\s+status", "--tool", "Bash", "--action", "log",
             "--description", "status checks are counted")  # fmt: skip
    script = [
        call("exec_command", {"cmd": "git push --force origin main"}),
        call("exec_command", {"cmd": "git status --short"}),
        text("Done."),
    ]
    with MockResponses(script) as mock:
        run_codex(codex, project, mock, "push it")
        last = mock.requests[-1]
    pushed = answer(last, "exec_command", "git push")
    assert "does not appear to be a git repository" in pushed  # it ran
    # The warning is a developer message of its own, just before the call's output.
    told = [item for item in last["input"] if item.get("output") == pushed]
    before = last["input"][last["input"].index(told[0]) - 1]
    assert (before["type"], before.get("role")) == ("message", "developer")
    assert [part["text"] for part in before["content"]] == [
        "voyager-brain guard warns about this Bash call.\n- Rule 2 (warn): force-push rewrites"
        " shared history\n  Solution: use --force-with-lease"
    ]
    # The logged call ran, and the model was told nothing of the rule.
    assert "Process exited with code 0" in answer(last, "exec_command", "git status")
    seen = json.dumps(last)
    assert seen.count("voyager-brain guard") == 1 and "status checks are counted" not in seen
    fired = history(isolated_env).execute(
        "SELECT r.rule_id, r.action_taken, t.input FROM rule_triggers r"
        " JOIN tool_calls t ON t.id = r.tool_call_id ORDER BY r.id"
    )
    assert [(row[0], row[1], json.loads(row[2])["command"]) for row in fired] == [
        (2, "warn", "git push --force origin main"),
        (3, "log", "git status --short"),
    ]

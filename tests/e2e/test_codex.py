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
from e2e import agent_cli, history, prepared
from openai_mock import MockResponses, call, text


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

"""Running the real Claude Code CLI for the end-to-end tests: its environment (a home of
its own, this interpreter's `voyager-brain` first on PATH, the scripted model), a
`claude -p` run, and the tool results the model was sent back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def claude_env(repo: Path, model_url: str | None = None) -> dict[str, str]:
    """The environment Claude Code runs in for `repo`: a home of its own beside the
    repository (its settings, plugins and transcripts go there), this interpreter's
    `voyager-brain` first on PATH (the hooks and the MCP server run it), nothing sent to
    Anthropic but, given `model_url`, the requests to the model; MCP servers connected
    before the first request."""
    home = repo.parent / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # `claude -p` 2.1.197 connects MCP servers in the background: its first request to
        # the model can leave before `voyager-brain mcp` is up (seconds, on a busy CI
        # machine), without the server's tools. This makes it wait for them, up to 60 s.
        "MCP_CONNECTION_NONBLOCKING": "false",
        "MCP_CONNECT_TIMEOUT_MS": "60000",
    }
    env.pop("CLAUDE_CONFIG_DIR", None)  # the settings live in that home's ~/.claude
    if model_url is not None:
        env.update(ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY="sk-ant-test")
    return env


def run_claude(claude: str, repo: Path, model_url: str, prompt: str, *args: str) -> dict[str, Any]:
    """`claude -p PROMPT` in `repo` against the model at `model_url`; its JSON result."""
    done = subprocess.run(
        [claude, "-p", prompt, "--output-format", "json", *args],
        cwd=repo,
        env=claude_env(repo, model_url),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tool_result` blocks a request to the model carries."""
    return [
        block
        for message in request["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]

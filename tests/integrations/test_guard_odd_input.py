"""Input the matcher cannot take as it comes is normalised and checked, never an error
that lets the call through: every agent's pre-tool-use hook, as a real process, with a
block rule and a tool call holding a lone surrogate, bytes that are not UTF-8, a
dangerous command after 5 MB of padding or under 1,000 levels of nesting."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_agents import denial_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: Per agent: its pre-tool-use event, the fixture it comes from, and its shell tool.
HOOKS = {
    "claude": ("pre-tool-use", "pre-tool-use", "Bash"),
    "codex": ("pre-tool-use", "pre-tool-use", "Bash"),
    "gemini": ("before-tool", "before-tool", "run_shell_command"),
    "cursor": ("pre-tool-use", "pre-tool-use", "Shell"),
    "copilot": ("pre-tool-use", "pre-tool-use", "bash"),
}
DANGER = "rm -rf build"
DEPTH = 1000
PADDING = 5 * 1024 * 1024


def deep(levels: int, inner: str) -> str:
    """A JSON text `levels` objects deep around `inner` (built as text: the standard
    library's encoder cannot write it)."""
    return '{"a": ' * levels + inner + "}" * levels


#: The odd tool calls: the tool (None: the agent's shell tool) and its input as JSON text
#: (bytes: what is not UTF-8 goes on stdin as it is).
ODD: dict[str, tuple[str | None, bytes]] = {
    "lone-surrogate": (None, b'{"command": "rm -rf build # \\ud800"}'),
    "lone-low-surrogate": (None, b'{"command": "\\udc00rm -rf build"}'),
    "invalid-utf8": (None, b'{"command": "rm -rf build # \xff\xfe\xc3"}'),
    "padding": (None, json.dumps({"command": "echo x; " * (PADDING // 8) + DANGER}).encode()),
    "deep-sibling": (
        None,
        ('{"command": "rm -rf build", "options": ' + deep(DEPTH, "1") + "}").encode(),
    ),
    "deep-mcp": ("mcp__ops__run", ('{"plan": ' + deep(DEPTH, '"rm -rf build"') + "}").encode()),
    "many-strings": (
        "mcp__ops__run",
        json.dumps({"args": ["echo x"] * 400_000 + ["rm -rf build"]}).encode(),
    ),
    "command-as-list": (None, b'{"command": ["bash", "-lc", "rm -rf build"]}'),
    # Past Python's 4,300-digit limit for int(): json.loads raises a plain ValueError.
    "huge-int": (None, b'{"command": "rm -rf build", "timeout": ' + b"9" * 5000 + b"}"),
    "huge-int-mcp": ("mcp__ops__run", b'{"run": "rm -rf build", "n": -' + b"1" * 5000 + b"}"),
    "nan-and-infinity": (None, b'{"command": "rm -rf build", "a": NaN, "b": -Infinity}'),
    # The input itself not an object: the hook refused it as not what the agent sends,
    # failed open, and the call ran.
    "input-as-list": (None, b'["bash", "-lc", "rm -rf build"]'),
    "input-as-text": (None, b'"rm -rf build"'),
}


def stdin_for(agent: str, repo: Path, tool: str | None, tool_input: bytes) -> bytes:
    _, fixture, shell = HOOKS[agent]
    data = json.loads((FIXTURES / agent / f"{fixture}.json").read_text())
    data["cwd"] = str(repo)
    if "workspace_roots" in data:
        data["workspace_roots"] = [str(repo)]
    copilot = agent == "copilot"
    name_key, input_key = ("toolName", "toolArgs") if copilot else ("tool_name", "tool_input")
    data[name_key] = tool or shell
    data[input_key] = "@@INPUT@@"
    text = json.dumps(data).encode()
    if agent == "copilot":
        # Copilot sends the arguments as a string holding JSON.
        inner = tool_input.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
        return text.replace(b"@@INPUT@@", inner)
    return text.replace(b'"@@INPUT@@"', tool_input)


@pytest.mark.parametrize("odd", ODD, ids=str)
@pytest.mark.parametrize("agent", HOOKS, ids=str)
def test_odd_input_is_checked_and_a_block_rule_still_blocks(
    agent: str, odd: str, repo: Path, isolated_env: Path
) -> None:
    rule = ("--pattern", r"\brm\s+-rf\b", "--description", "No rm -rf")
    done = run_cli("rules", "add", *rule, cwd=repo)
    assert done.returncode == 0, done.stderr
    tool, tool_input = ODD[odd]
    hooked = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", agent, HOOKS[agent][0]],
        input=stdin_for(agent, repo, tool, tool_input),
        cwd=repo,
        capture_output=True,
        timeout=120,
    )
    assert hooked.returncode == 0
    assert hooked.stderr == b""
    reason = denial_of(json.loads(hooked.stdout))
    assert reason is not None and "No rm -rf" in reason
    # And recorded, as text SQLite can hold: the call and the rule that fired.
    db = sqlite3.connect(isolated_env / "history.db")
    rows = db.execute("SELECT input FROM tool_calls").fetchall()
    assert len(rows) == 1
    assert db.execute("SELECT action_taken FROM rule_triggers").fetchall() == [("block",)]
    if odd in ("lone-surrogate", "invalid-utf8"):
        assert "rm -rf build # \ufffd" in rows[0][0]


@pytest.mark.parametrize("agent", HOOKS, ids=str)
def test_odd_input_without_a_matching_rule_is_allowed_and_recorded(
    agent: str, repo: Path, isolated_env: Path
) -> None:
    run_cli("rules", "add", "--pattern", r"\bpip\s+install\b", "--description", "uv", cwd=repo)
    hooked = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", agent, HOOKS[agent][0]],
        input=stdin_for(agent, repo, None, b'{"command": "ls \\ud800 \xff"}'),
        cwd=repo,
        capture_output=True,
        timeout=60,
    )
    assert (hooked.returncode, hooked.stderr) == (0, b"")
    assert denial_of(json.loads(hooked.stdout or b"{}")) is None
    db = sqlite3.connect(isolated_env / "history.db")
    assert db.execute("SELECT input FROM tool_calls").fetchall() == [
        (json.dumps({"command": "ls \ufffd \ufffd"}, ensure_ascii=False, separators=(",", ":")),)
    ]


@pytest.mark.parametrize("odd", ["lone-surrogate", "invalid-utf8", "padding"], ids=str)
def test_cursors_shell_hook_checks_odd_commands_too(
    odd: str, repo: Path, isolated_env: Path
) -> None:
    # Cursor's beforeShellExecution sends the command at the top of its payload.
    rule = ("--pattern", r"\brm\s+-rf\b", "--description", "No rm -rf")
    assert run_cli("rules", "add", *rule, cwd=repo).returncode == 0
    data = json.loads((FIXTURES / "cursor" / "before-shell-execution.json").read_text())
    data.update(cwd=str(repo), workspace_roots=[str(repo)], command="@@COMMAND@@")
    command = ODD[odd][1].split(b'"command": ', 1)[1].rsplit(b"}", 1)[0]
    stdin = json.dumps(data).encode().replace(b'"@@COMMAND@@"', command)
    hooked = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "cursor", "before-shell-execution"],
        input=stdin,
        cwd=repo,
        capture_output=True,
        timeout=120,
    )
    assert (hooked.returncode, hooked.stderr) == (0, b"")
    reason = denial_of(json.loads(hooked.stdout))
    assert reason is not None and "No rm -rf" in reason


def test_odd_results_and_prompts_are_recorded(repo: Path, isolated_env: Path) -> None:
    claude = json.loads((FIXTURES / "claude" / "post-tool-use.json").read_text())
    claude["cwd"] = str(repo)
    post = json.dumps({**claude, "tool_response": {"stdout": "@@OUT@@", "stderr": ""}})
    prompt = json.dumps({**claude, "hook_event_name": "UserPromptSubmit", "prompt": "@@OUT@@"})
    for event, text in (("user-prompt-submit", prompt), ("post-tool-use", post)):
        hooked = subprocess.run(
            [sys.executable, "-m", "voyager_brain", "hook", "claude", event],
            input=text.encode().replace(b"@@OUT@@", b"done \\ud800 \xff"),
            cwd=repo,
            capture_output=True,
            timeout=60,
        )
        assert (hooked.returncode, hooked.stdout, hooked.stderr) == (0, b"", b"")
    db = sqlite3.connect(isolated_env / "history.db")
    assert db.execute("SELECT output FROM tool_calls").fetchall() == [("done \ufffd \ufffd",)]
    user = db.execute("SELECT content FROM messages WHERE role = 'user'").fetchall()
    assert user == [("done \ufffd \ufffd",)]

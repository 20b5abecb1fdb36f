"""Every agent's hooks, end to end: `install AGENT` writes the agent's documented
configuration, the commands it installed run with that agent's recorded payloads
(tests/fixtures/AGENT/, each file's source in its SOURCES.md), and uninstall gives the
project back as it was. Real processes, a real git repository, a real history.db."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from voyager_brain.integrations.codex import patch_call
from voyager_brain.memory.tool import brain_tool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLACEHOLDER = "/home/user/project"


def context_of(out: dict[str, Any]) -> str:
    if "hookSpecificOutput" in out:
        return str(out["hookSpecificOutput"]["additionalContext"])
    return str(out.get("additional_context") or out["additionalContext"])


def denial_of(out: dict[str, Any]) -> str | None:
    """The reason of a deny in any agent's format; None for anything else."""
    specific = out.get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny":  # Codex
        return str(specific["permissionDecisionReason"])
    if out.get("decision") == "deny":  # Gemini CLI
        return str(out["reason"])
    if out.get("permission") == "deny":  # Cursor
        assert out["user_message"] == out["agent_message"]
        return str(out["agent_message"])
    if out.get("permissionDecision") == "deny":  # Copilot
        return str(out["permissionDecisionReason"])
    return None


class Agent:
    def __init__(self, name: str, path: str, events: dict[str, str], roles: dict[str, str]):
        self.name, self.path, self.events, self.roles = name, path, events, roles

    def __repr__(self) -> str:
        return self.name


#: Per agent: its hooks file, the agent's event names install must write (-> our kebab
#: names), and the fixture playing each part of a session.
AGENTS = [
    Agent(
        "codex",
        ".codex/hooks.json",
        {
            "SessionStart": "session-start",
            "UserPromptSubmit": "user-prompt-submit",
            "PreToolUse": "pre-tool-use",
            "PostToolUse": "post-tool-use",
            "Stop": "stop",
            "PreCompact": "pre-compact",
            "SessionEnd": "session-end",
        },
        {
            "prompt": "user-prompt-submit",
            "shell": "pre-tool-use",
            "write": "pre-tool-use-write",
            "result": "post-tool-use",
            "turn": "stop",
            "compact": "pre-compact",
        },
    ),
    Agent(
        "gemini",
        ".gemini/settings.json",
        {
            "SessionStart": "session-start",
            "BeforeAgent": "before-agent",
            "BeforeTool": "before-tool",
            "AfterTool": "after-tool",
            "AfterAgent": "after-agent",
            "PreCompress": "pre-compress",
            "SessionEnd": "session-end",
        },
        {
            "prompt": "before-agent",
            "shell": "before-tool",
            "write": "before-tool-write",
            "result": "after-tool",
            "turn": "after-agent",
            "compact": "pre-compress",
        },
    ),
    Agent(
        "cursor",
        ".cursor/hooks.json",
        {
            "sessionStart": "session-start",
            "beforeSubmitPrompt": "before-submit-prompt",
            "preToolUse": "pre-tool-use",
            "postToolUse": "post-tool-use",
            "postToolUseFailure": "post-tool-use-failure",
            "stop": "stop",
            "preCompact": "pre-compact",
            "sessionEnd": "session-end",
        },
        {
            "prompt": "before-submit-prompt",
            "shell": "pre-tool-use",
            "write": "pre-tool-use-write",
            "result": "post-tool-use",
            "turn": "stop",
            "compact": "pre-compact",
        },
    ),
    Agent(
        "copilot",
        ".github/hooks/voyager-brain.json",
        {
            "sessionStart": "session-start",
            "userPromptSubmitted": "user-prompt-submitted",
            "preToolUse": "pre-tool-use",
            "postToolUse": "post-tool-use",
            "postToolUseFailure": "post-tool-use-failure",
            "agentStop": "agent-stop",
            "preCompact": "pre-compact",
            "sessionEnd": "session-end",
        },
        {
            "prompt": "user-prompt-submitted",
            "shell": "pre-tool-use",
            "write": "pre-tool-use-write",
            "result": "post-tool-use",
            "turn": "agent-stop",
            "compact": "pre-compact",
        },
    ),
]


def fixture(agent: str, name: str, cwd: Path) -> str:
    return (FIXTURES / agent / f"{name}.json").read_text().replace(PLACEHOLDER, str(cwd))


def installed_commands(agent: Agent, top: Path) -> dict[str, str]:
    """The agent's event name -> the one command install wrote for it, checking the
    documented shape on the way."""
    document = json.loads((top / agent.path).read_text())
    found = {}
    for event, entries in document["hooks"].items():
        if agent.name in ("cursor", "copilot"):
            assert document["version"] == 1
            (handler,) = entries
        else:  # matcher groups of handlers
            ((group,),) = [entries]
            (handler,) = group["hooks"]
            assert handler["type"] == "command"
        if agent.name == "copilot":
            assert handler["type"] == "command"
            assert handler["powershell"] == handler["bash"].replace(" || true", "; exit 0")
            found[event] = handler["bash"]
        else:
            found[event] = handler["command"]
    return found


#: The agents that deny a tool call when its hook cannot run: their commands end with a
#: success, so that a project without voyager-brain installed still works.
TOLERANT = {"gemini", "copilot"}


def expected_command(agent: str, event: str) -> str:
    command = f"voyager-brain hook {agent} {event}"
    return f"{command} || true" if agent in TOLERANT else command


def run(command: str, stdin: str, cwd: Path, path: str | None = None) -> Any:
    """An installed hook command, run by a shell as the agent runs it, with the
    voyager-brain of this environment first on the PATH (or `path` as the PATH)."""
    assert shlex.split(command)[0] == "voyager-brain"
    here = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": path if path is not None else f"{here}:{os.environ['PATH']}"}
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize("agent", AGENTS, ids=repr)
def test_a_session_through_the_installed_hooks(
    agent: Agent, repo: Path, isolated_env: Path
) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    done = run_cli("install", agent.name, cwd=repo)
    assert done.returncode == 0 and f"installed in {repo / agent.path}" in done.stdout
    commands = installed_commands(agent, repo)
    assert commands == {
        event: expected_command(agent.name, ours) for event, ours in agent.events.items()
    }
    by_ours = {ours: commands[event] for event, ours in agent.events.items()}

    def hook(name: str, event: str | None = None) -> subprocess.CompletedProcess[str]:
        done = run(by_ours[event or name], fixture(agent.name, name, repo), repo)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "", done.stderr
        return done

    # Session start injects the context, with what the memory holds.
    brain_tool("add", cwd=str(repo), type="learning", text="CI must use Node 22")
    context = context_of(json.loads(hook("session-start").stdout))
    assert "CI must use Node 22" in context and context.startswith("# Memory for project")

    # The prompt is recorded in the history.
    hook(agent.roles["prompt"])
    db = sqlite3.connect(isolated_env / "history.db")
    prompts = [r[0] for r in db.execute("SELECT content FROM messages WHERE role = 'user'")]
    assert len(prompts) == 1 and "build" in prompts[0]

    # A block rule denies the shell call, in the agent's format; nothing else is printed.
    assert (
        run_cli(
            "rules",
            "add",
            "--pattern",
            r"rm\s+-rf",
            "--description",
            "no rm -rf",
            "--tool",
            "Bash",
            "--solution",
            "use git clean -fdx",
            cwd=repo,
        ).returncode
        == 0
    )
    shell = hook(agent.roles["shell"])
    assert len(shell.stdout.splitlines()) == 1
    reason = denial_of(json.loads(shell.stdout))
    assert reason is not None and "no rm -rf" in reason and "use git clean -fdx" in reason
    # ... and a rule written for Claude Code's Write sees the agent's own file tool.
    run_cli(
        "rules",
        "add",
        "--pattern",
        "(hello|LIMIT)",
        "--description",
        "no such files",
        "--tool",
        "Write",
        cwd=repo,
    )
    write = hook(agent.roles["write"], agent.roles["shell"])
    if agent.name == "codex":  # a patch of two files: a MultiEdit, which the rule does not name
        assert write.stdout == ""
    else:
        assert "no such files" in (denial_of(json.loads(write.stdout)) or "")
    calls = db.execute("SELECT tool FROM tool_calls ORDER BY id").fetchall()
    assert [c[0] for c in calls] == ["Bash", "MultiEdit" if agent.name == "codex" else "Write"]

    # The tool's result lands in the history; the turn's end in brain.md.
    hook(agent.roles["result"])
    results = db.execute("SELECT COUNT(*) FROM tool_calls WHERE output IS NOT NULL").fetchone()
    assert results[0] >= 1
    hook(agent.roles["turn"])
    brain = (repo / ".voyager" / "brain.md").read_text()
    assert f"<!-- source: {agent.name} -->" in brain and "Turn: 1" in brain
    if agent.name in ("codex", "gemini"):  # their turn's end carries the reply
        assert "Last reply: Removed build/" in brain

    assert hook(agent.roles["compact"]).stdout == ""
    hook("session-end")
    state = json.loads((repo / ".voyager" / "brain.json").read_text())
    assert state["sessionCount"] == 1
    ended = db.execute("SELECT status FROM sessions").fetchall()
    assert [e[0] for e in ended] == ["completed"]

    # Uninstall gives the project back: the file and the folders install made are gone.
    done = run_cli("install", agent.name, "--uninstall", cwd=repo)
    assert done.returncode == 0 and "removed from" in done.stdout
    assert not (repo / agent.path).exists()
    assert not (repo / agent.path).parent.exists() or agent.name == "gemini"


@pytest.mark.parametrize("agent", AGENTS, ids=repr)
def test_install_keeps_the_users_own_hooks_and_is_idempotent(agent: Agent, repo: Path) -> None:
    path = repo / agent.path
    path.parent.mkdir(parents=True)
    first_event = next(iter(agent.events))
    if agent.name in ("cursor", "copilot"):
        mine = (
            {"type": "command", "bash": "./mine.sh"}
            if agent.name == "copilot"
            else {"command": "./mine.sh"}
        )
        document: dict[str, Any] = {"version": 1, "hooks": {first_event: [mine]}}
    else:
        mine = {"hooks": [{"type": "command", "command": "./mine.sh"}]}
        document = {"model": "mine", "hooks": {first_event: [mine]}}
    original = json.dumps(document, indent=2) + "\n"
    path.write_text(original)
    assert run_cli("install", agent.name, cwd=repo).returncode == 0
    installed = path.read_bytes()
    data = json.loads(installed)
    assert data["hooks"][first_event][0] == mine and len(data["hooks"][first_event]) == 2
    again = run_cli("install", agent.name, cwd=repo)
    assert "already has the" in again.stdout and path.read_bytes() == installed
    run_cli("install", agent.name, "--uninstall", cwd=repo)
    assert path.read_text() == original


@pytest.mark.parametrize("agent", AGENTS, ids=repr)
def test_a_file_install_cannot_read_is_left_alone(agent: Agent, repo: Path) -> None:
    path = repo / agent.path
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": [1, 2')
    done = run_cli("install", agent.name, cwd=repo)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert str(path) in done.stderr and "not valid JSON" in done.stderr
    assert path.read_text() == '{"hooks": [1, 2'
    event = next(iter(agent.events))
    path.write_text(json.dumps({"hooks": {event: {"not": "a list"}}}))
    done = run_cli("install", agent.name, cwd=repo)
    assert done.returncode == 2 and f"hooks.{event}: expected a list" in done.stderr
    assert json.loads(path.read_text()) == {"hooks": {event: {"not": "a list"}}}


@pytest.mark.parametrize("agent", AGENTS, ids=repr)
def test_every_hook_fails_open_on_input_it_cannot_read(agent: Agent, repo: Path) -> None:
    """Exit 0, one line on stderr, nothing on stdout the agent could misread."""
    run_cli("init", cwd=repo)
    for ours in agent.events.values():
        for stdin in ("not json", "[1, 2]", '{"cwd": 7, "tool_input": "{"}'):
            done = run_cli("hook", agent.name, ours, cwd=repo, input=stdin)
            assert done.returncode == 0, (ours, stdin)
            assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) <= 1
            if ours != "session-start":  # a start with no cwd still injects the context
                assert done.stdout in ("", '{"continue": true}\n'), (ours, stdin, done.stdout)
    unknown = run_cli("hook", agent.name, "no-such-event", cwd=repo, input="{}")
    assert unknown.returncode == 0 and "unknown event 'no-such-event'" in unknown.stderr


@pytest.mark.parametrize("agent", AGENTS, ids=repr)
def test_the_tool_call_hook_loads_neither_the_session_brain_nor_heavy_libraries(
    agent: Agent, repo: Path
) -> None:
    run_cli("init", cwd=repo)
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['voyager-brain', 'hook', {agent.name!r}, {agent.roles['shell']!r}]\n"
        "import atexit, os\n"
        "real = os._exit\n"
        "def leave(code):\n"
        "    heavy = {'click', 'jinja2', 'markdown_it', 'git', 'mcp', 'voyager_brain.session'}\n"
        "    sys.stderr.write(repr(sorted(heavy & set(sys.modules))) + '\\n')\n"
        "    real(code)\n"
        "os._exit = leave\n"
        "runpy.run_module('voyager_brain', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=fixture(agent.name, agent.roles["shell"], repo),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("agent", [a.name for a in AGENTS])
def test_every_fixture_names_its_source(agent: str) -> None:
    sources = (FIXTURES / agent / "SOURCES.md").read_text()
    for path in sorted((FIXTURES / agent).glob("*.json")):
        assert f"`{path.name}`" in sources, path.name
        json.loads(path.read_text())  # and is the JSON object an agent sends


def test_a_codex_patch_is_seen_as_the_file_tool_it_stands_for() -> None:
    add = "*** Begin Patch\n*** Add File: src/new.py\n+print('hi')\n*** End Patch\n"
    assert patch_call(add) == ("Write", {"file_path": "src/new.py", "content": "print('hi')"})
    update = (
        "*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n"
        " keep\n-old line\n+new line\n*** End Patch\n"
    )
    assert patch_call(update) == (
        "Edit",
        {"file_path": "src/main.py", "old_string": "old line", "new_string": "new line"},
    )
    both = (
        add.replace("*** End Patch\n", "")
        + "*** Update File: .env\n@@\n-A=1\n+A=2\n*** End Patch\n"
    )
    tool, given = patch_call(both)
    assert tool == "MultiEdit" and [e["file_path"] for e in given["edits"]] == [
        "src/new.py",
        ".env",
    ]
    assert patch_call("not a patch") == ("apply_patch", {"command": "not a patch"})


def test_a_rule_on_a_path_sees_every_file_of_a_codex_patch(repo: Path) -> None:
    run_cli("init", cwd=repo)
    run_cli(
        "rules",
        "add",
        "--pattern",
        r"(^|/)\.env$",
        "--description",
        "no .env",
        "--tool",
        "MultiEdit",
        cwd=repo,
    )
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n"
        "*** Update File: config/.env\n@@\n-A=1\n+A=2\n*** End Patch\n"
    )
    stdin = json.dumps(
        {
            "session_id": "s",
            "cwd": str(repo),
            "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch",
            "tool_input": {"command": patch},
            "tool_use_id": "c1",
        }
    )
    done = run_cli("hook", "codex", "pre-tool-use", cwd=repo, input=stdin)
    assert "no .env" in (denial_of(json.loads(done.stdout)) or "")


@pytest.mark.parametrize(
    ("agent", "path"),
    [
        ("claude", ".mcp.json"),
        ("gemini", ".gemini/settings.json"),
        ("cursor", ".cursor/mcp.json"),
        ("copilot", ".github/mcp.json"),
    ],
)
def test_install_mcp_adds_the_server_beside_the_users_own(
    agent: str, path: str, repo: Path
) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    mine = {"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}
    original = json.dumps(mine, indent=2) + "\n"
    target.write_text(original)
    done = run_cli("install", "mcp", agent, cwd=repo)
    assert done.returncode == 0 and "added to" in done.stdout
    servers = json.loads(target.read_text())["mcpServers"]
    assert servers["voyager-brain"] == {"command": "voyager-brain", "args": ["mcp"]}
    assert servers["other"] == {"command": "other-server"}
    assert "already has" in run_cli("install", "mcp", agent, cwd=repo).stdout
    run_cli("install", "mcp", agent, "--uninstall", cwd=repo)
    assert target.read_text() == original


def test_install_mcp_codex_appends_its_table_and_removes_only_it(repo: Path) -> None:
    import tomllib

    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    original = 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n'
    config.write_text(original)
    assert run_cli("install", "mcp", "codex", cwd=repo).returncode == 0
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["voyager-brain"] == {
        "command": "voyager-brain",
        "args": ["mcp"],
        "env_vars": ["VOYAGER_HOME", "VOYAGER_MEMORY_PATH"],
    }
    assert parsed["model"] == "gpt-5" and parsed["mcp_servers"]["other"]["command"] == "other"
    assert "already has" in run_cli("install", "mcp", "codex", cwd=repo).stdout
    run_cli("install", "mcp", "codex", "--uninstall", cwd=repo)
    assert config.read_text() == original
    # A table of our name changed by hand is the user's: left alone, with an error.
    config.write_text(original + '\n[mcp_servers.voyager-brain]\ncommand = "mine"\n')
    done = run_cli("install", "mcp", "codex", "--uninstall", cwd=repo)
    assert done.returncode == 2 and "changed by hand" in done.stderr
    assert "mine" in config.read_text()


def test_doctor_reports_each_agents_hooks_and_server_and_repairs_them(repo: Path) -> None:
    run_cli("init", cwd=repo)
    run_cli("install", "codex", cwd=repo)
    run_cli("install", "cursor", cwd=repo)
    run_cli("install", "mcp", "gemini", cwd=repo)
    done = run_cli("doctor", cwd=repo)
    assert "ok    Codex: hooks installed in .codex/hooks.json" in done.stdout
    assert "ok    Cursor: hooks installed in .cursor/hooks.json" in done.stdout
    assert "ok    Gemini CLI: MCP server in .gemini/settings.json" in done.stdout
    assert "Copilot" not in done.stdout  # not installed: nothing to say
    # An older install: one event gone from the file, one of ours no longer written.
    path = repo / ".codex" / "hooks.json"
    hooks = json.loads(path.read_text())
    del hooks["hooks"]["Stop"]
    hooks["hooks"]["PreCompact"][0]["hooks"][0]["command"] = "voyager-brain hook codex old"
    path.write_text(json.dumps(hooks))
    done = run_cli("doctor", cwd=repo)
    assert "warn  Codex: hooks in .codex/hooks.json: 2 missing, 1 no longer used" in done.stdout
    assert "`voyager-brain install codex` (or `doctor --repair`) updates them" in done.stdout
    repaired = run_cli("doctor", "--repair", cwd=repo)
    assert "done  Codex: hooks in .codex/hooks.json were out of date" in repaired.stdout
    assert installed_commands(AGENTS[0], repo) == {
        event: expected_command("codex", ours) for event, ours in AGENTS[0].events.items()
    }
    # A server entry changed by hand is reported, not overwritten.
    settings = repo / ".gemini" / "settings.json"
    settings.write_text(json.dumps({"mcpServers": {"voyager-brain": {"command": "other"}}}))
    done = run_cli("doctor", cwd=repo)
    assert "Gemini CLI: the MCP server in .gemini/settings.json is not `voyager-brain mcp`" in (
        done.stdout
    )
    settings.write_text("{not json")
    done = run_cli("doctor", cwd=repo)
    assert done.returncode == 1 and "settings.json" in done.stdout and "FAIL" in done.stdout


@pytest.mark.parametrize("agent", [a for a in AGENTS if a.name in TOLERANT], ids=repr)
def test_where_voyager_brain_is_missing_the_tool_call_goes_on(agent: Agent, repo: Path) -> None:
    """Gemini CLI and Copilot deny a call whose hook exits non-zero; a teammate without
    voyager-brain (or a cloud agent) must not be stopped by the committed hooks."""
    run_cli("install", agent.name, cwd=repo)
    command = installed_commands(agent, repo)[next(iter(agent.events))]
    shell_call = installed_commands(agent, repo)[
        next(e for e, ours in agent.events.items() if ours == agent.roles["shell"])
    ]
    for each in (command, shell_call):
        done = run(
            each, fixture(agent.name, agent.roles["shell"], repo), repo, path="/usr/bin:/bin"
        )
        assert done.returncode == 0 and done.stdout == ""
        assert "voyager-brain" in done.stderr  # the shell says it is not found


def test_a_shell_that_exits_non_zero_is_recorded_as_failed(repo: Path, isolated_env: Path) -> None:
    from voyager_brain.shellexit import exit_failed

    assert exit_failed("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nboom")  # Codex patch
    assert exit_failed("Process exited with code 2\nOutput:\nno such file")  # Codex shell
    assert exit_failed("Output: boom\n[Exit Code: 1]\nProcess Group PGID: 7")  # Gemini CLI
    assert not exit_failed("Exit code: 0\nOutput:\ndone")
    middle = "\n".join(["start", "ok", "a test printed: Exit code: 1", "more", "x", "y", "end"])
    assert not exit_failed(middle)  # the command's own output, not the agent's report
    assert exit_failed("Exit Code: " + "0" * 5000 + "1") and not exit_failed("Exit Code: 000")
    run_cli("init", cwd=repo)
    gemini = json.loads(fixture("gemini", "after-tool", repo))
    gemini["tool_response"]["llmContent"] = (
        "Output: 3 failed\n[Exit Code: 1]\nProcess Group PGID: 9"
    )
    codex = json.loads(fixture("codex", "post-tool-use", repo))
    codex["tool_response"] = "Process exited with code 1\nOutput:\n3 failed"
    for agent, event, stdin in (
        ("gemini", "after-tool", gemini),
        ("codex", "post-tool-use", codex),
    ):
        assert run_cli("hook", agent, event, cwd=repo, input=json.dumps(stdin)).returncode == 0
    db = sqlite3.connect(isolated_env / "history.db")
    assert [r[0] for r in db.execute("SELECT success FROM tool_calls ORDER BY id")] == [0, 0]


def test_codex_a_failed_call_is_read_from_the_rollout(tmp_path: Path) -> None:
    from voyager_brain.integrations.codex import rollout_failed

    rollout = Path(__file__).parents[1] / "fixtures" / "codex" / "rollout-failed-call.jsonl"
    assert rollout_failed(str(rollout), "call_1") is True
    assert rollout_failed(str(rollout), "call_2") is False  # not in the file
    assert rollout_failed(str(tmp_path / "missing.jsonl"), "call_1") is False
    assert rollout_failed(None, "call_1") is False
    succeeded = tmp_path / "ok.jsonl"
    succeeded.write_text(
        rollout.read_text()
        .replace('"status":"failed"', '"status":"completed"')
        .replace('"exit_code":3', '"exit_code":0')
    )
    assert rollout_failed(str(succeeded), "call_1") is False
    # Written with spaces after the colons (another writer, a hand edit): still found.
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text(rollout.read_text().replace('"id":"call_1"', '"id": "call_1"'))
    assert rollout_failed(str(spaced), "call_1") is True
    # A payload naming a FIFO: refused at once, never waited on.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert rollout_failed(str(fifo), "call_1") is False

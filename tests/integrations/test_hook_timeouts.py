"""`install AGENT` writes how long the agent lets each hook run, so that no hook stalls
an agent longer than that (issue 26: the installed settings set no timeout, and a slow
pattern stalled every tool call for minutes).

Each agent's key and unit, from its documentation:
- Claude Code: `timeout`, seconds (https://code.claude.com/docs/en/hooks)
- Codex: `timeout`, seconds (https://developers.openai.com/codex/hooks; openai/codex
  codex-rs/hooks/src/engine/discovery.rs)
- Gemini CLI: `timeout`, milliseconds (https://geminicli.com/docs/hooks/reference)
- Cursor: `timeout`, seconds (https://cursor.com/docs/hooks)
- Copilot: `timeoutSec`, seconds
  (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli

#: agent -> (settings file, timeout key, units per second, tool-check event, end event)
AGENTS = {
    "claude": (".claude/settings.json", "timeout", 1, "PreToolUse", "SessionEnd"),
    "codex": (".codex/hooks.json", "timeout", 1, "PreToolUse", "SessionEnd"),
    "gemini": (".gemini/settings.json", "timeout", 1000, "BeforeTool", "SessionEnd"),
    "cursor": (".cursor/hooks.json", "timeout", 1, "preToolUse", "sessionEnd"),
    "copilot": (".github/hooks/voyager-brain.json", "timeoutSec", 1, "preToolUse", "sessionEnd"),
}


def ours(document: dict[str, Any], agent: str) -> dict[str, list[dict[str, Any]]]:
    """Event -> our handlers in an agent's settings."""
    found: dict[str, list[dict[str, Any]]] = {}
    for event, entries in document["hooks"].items():
        handlers = [h for e in entries for h in e.get("hooks", [e])]
        found[event] = [
            h
            for h in handlers
            if str(h.get("command", h.get("bash", ""))).startswith(f"voyager-brain hook {agent} ")
        ]
    return found


@pytest.mark.parametrize("agent", AGENTS)
def test_install_writes_a_timeout_on_every_hook_that_fits_its_event(agent: str, repo: Path) -> None:
    path, key, per_second, tool_event, end_event = AGENTS[agent]
    assert run_cli("install", agent, cwd=repo).returncode == 0
    handlers = ours(json.loads((repo / path).read_text()), agent)
    assert handlers and all(len(found) == 1 for found in handlers.values())
    seconds = {event: found[0][key] / per_second for event, found in handlers.items()}
    # A tool call waits for the check: a few seconds, well above the guard's own worst
    # case (start-up, linear RE2, at most 1 s on Python's engine).
    assert seconds[tool_event] == 10
    assert seconds[end_event] == 60  # brain.md, exports and a commit: longer
    assert all(1 <= s <= 60 for s in seconds.values())


@pytest.mark.parametrize("agent", AGENTS)
def test_a_reinstall_over_an_install_without_timeouts_updates_it(agent: str, repo: Path) -> None:
    path, key, _, tool_event, _ = AGENTS[agent]
    assert run_cli("install", agent, cwd=repo).returncode == 0
    settings = repo / path
    document = json.loads(settings.read_text())
    for found in ours(document, agent).values():
        for handler in found:
            del handler[key]  # as install wrote them before timeouts
    settings.write_text(json.dumps(document, indent=2) + "\n")

    doctor = run_cli("doctor", cwd=repo)
    assert f"hooks in {path}:" in doctor.stdout and "missing" in doctor.stdout

    assert run_cli("install", agent, cwd=repo).returncode == 0
    handlers = ours(json.loads(settings.read_text()), agent)
    assert all(len(found) == 1 and key in found[0] for found in handlers.values())
    assert handlers[tool_event][0][key] > 0
    assert f"hooks installed in {path}" in run_cli("doctor", cwd=repo).stdout


def test_the_plugin_hooks_carry_the_same_timeouts() -> None:
    plugin = json.loads((ROOT / "plugins" / "voyager-brain" / "hooks" / "hooks.json").read_text())
    handlers = ours(plugin, "claude")
    assert handlers["PreToolUse"][0]["timeout"] == 10
    assert all("timeout" in found[0] for found in handlers.values())

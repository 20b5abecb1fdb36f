"""The Claude Code plugin shipped in plugins/voyager-brain/ and its marketplace entry:
the manifests have what Claude Code requires, the hooks are exactly those `install
claude` writes, and every command they name exists."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

import voyager_brain

PLUGIN = ROOT / "plugins" / "voyager-brain"


def load(path: Path) -> dict:  # type: ignore[type-arg]
    data = json.loads(path.read_text())
    assert isinstance(data, dict), path
    return data


def test_the_manifest_names_the_plugin_and_its_version() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", manifest["name"])
    assert manifest["version"] == voyager_brain.__version__
    assert manifest["description"] and manifest["author"]["name"]


def test_the_marketplace_lists_the_plugin_where_it_is() -> None:
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    assert market["name"] and market["owner"]["name"]
    (entry,) = market["plugins"]
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert entry["name"] == manifest["name"] and entry["version"] == manifest["version"]
    assert entry["source"].startswith("./")
    assert (ROOT / entry["source"]).resolve() == PLUGIN.resolve()


def test_the_marketplace_says_what_it_offers() -> None:
    """`claude plugin validate --strict .` fails on a marketplace without a description
    (Claude Code 2.1.197: "No marketplace description provided"); it lives in `metadata`."""
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    assert market["metadata"]["description"].strip()
    assert market["metadata"]["version"] == voyager_brain.__version__


@pytest.mark.skipif(
    shutil.which("claude") is None,
    reason="Claude Code is not installed (npm install -g @anthropic-ai/claude-code)",
)
@pytest.mark.parametrize("where", [ROOT, PLUGIN], ids=["marketplace", "plugin"])
def test_claude_code_validates_them_strictly(where: Path) -> None:
    done = subprocess.run(
        ["claude", "plugin", "validate", "--strict", str(where)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_plugin_hooks_are_those_install_claude_writes(repo: Path) -> None:
    assert run_cli("install", "claude", cwd=repo).returncode == 0
    installed = load(repo / ".claude" / "settings.json")["hooks"]
    assert load(PLUGIN / "hooks" / "hooks.json")["hooks"] == installed


def commands() -> list[str]:
    hooks = load(PLUGIN / "hooks" / "hooks.json")["hooks"]
    found = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]
    server = load(PLUGIN / ".mcp.json")["mcpServers"]["voyager-brain"]
    return [*found, shlex.join([server["command"], *server["args"]])]


@pytest.mark.parametrize("command", commands())
def test_every_command_the_plugin_names_exists(command: str, tmp_path: Path) -> None:
    args = shlex.split(command)
    assert args[0] == "voyager-brain"
    done = run_cli(*args[1:], "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: voyager-brain {' '.join(args[1:-1])}")

"""Agents' tools in Claude Code's terms, so that one guard rule (`--tool Write`) serves
every agent and the history names a call alike whether a hook or an import wrote it.

A table maps an agent's tool name to Claude Code's and its input's field names to
Claude Code's; the hooks (`integrations`) and the transcript readers (`transcripts`)
read the same tables."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

Table = dict[str, tuple[str, dict[str, str]]]

#: Gemini CLI's built-in tools.
GEMINI: Table = {
    "run_shell_command": ("Bash", {"dir_path": "cwd"}),
    "write_file": ("Write", {}),
    "replace": ("Edit", {}),
    "read_file": ("Read", {}),
}

_FILE = {"path": "file_path"}
#: GitHub Copilot CLI's.
COPILOT: Table = {
    "bash": ("Bash", {}),
    "powershell": ("Bash", {}),
    "create": ("Write", {**_FILE, "file_text": "content"}),
    "edit": ("Edit", {**_FILE, "old_str": "old_string", "new_str": "new_string"}),
    "view": ("Read", _FILE),
}


def as_claude_tool(
    tool: str, given: Any, table: Mapping[str, tuple[str, Mapping[str, str]]]
) -> tuple[str, Any]:
    """An agent's tool call in Claude Code's terms, by `table`. Fields the table does
    not name stay under their own names; a tool it does not know stays as it is; an
    input that is not an object keeps its shape under the tool's new name."""
    if tool not in table:
        return tool, given
    name, fields = table[tool]
    if not isinstance(given, dict):
        return name, given
    return name, {fields.get(key, key): value for key, value in given.items()}

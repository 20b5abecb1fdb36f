"""What a rule sees of a tool call: the raw values of the fields that matter.

A rule is matched against each value on its own, never against a JSON dump of the
input: in a dump, a secret written with double quotes appears escaped (``\\"``) and a
pattern written for the file's text no longer finds it.

==============  ==========================================================
tool            fields a rule sees
==============  ==========================================================
Bash            ``command``
Write           ``file_path``, ``content``
Edit            ``file_path``, ``old_string``, ``new_string``
MultiEdit       ``file_path``, and each edit's ``old_string``, ``new_string`` (and its
                ``file_path``: a Codex patch of several files is one MultiEdit)
NotebookEdit    ``notebook_path``, ``new_source``
Read            ``file_path``
Glob            ``pattern``, ``path``
Grep            ``pattern``, ``path``, ``glob``
any other tool  every string value in its input, nested ones included
(MCP tools too)
==============  ==========================================================
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The fields each known tool exposes to rules, in the order they are checked.
TOOL_FIELDS: dict[str, tuple[str, ...]] = {
    "Bash": ("command",),
    "Write": ("file_path", "content"),
    "Edit": ("file_path", "old_string", "new_string"),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path", "new_source"),
    "Read": ("file_path",),
    "Glob": ("pattern", "path"),
    "Grep": ("pattern", "path", "glob"),
}


def rule_fields(tool: str, tool_input: Any) -> list[str]:
    """The values of `tool_input` that rules are matched against, for `tool`."""
    if not isinstance(tool_input, dict):
        return _strings(tool_input)
    names = TOOL_FIELDS.get(tool)
    if names is None:
        return _strings(tool_input)
    values = [v for v in (tool_input.get(name) for name in names) if isinstance(v, str)]
    if tool == "MultiEdit":
        for edit in tool_input.get("edits") or ():
            if isinstance(edit, dict):
                values += [
                    v
                    for v in (edit.get("file_path"), edit.get("old_string"), edit.get("new_string"))
                    if isinstance(v, str)
                ]
    return values


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value (object keys excluded), depth first, in order."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found

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

A field that holds a list or an object (a command as a list of arguments) gives every
string inside it. Text that came in as invalid UTF-8 or a lone surrogate is U+FFFD by
now (`integrations.hookio`), and input at any depth is walked without recursion.
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
    """The values of `tool_input` that rules are matched against, for `tool`: each
    distinct text once, in order of first appearance.

    A field that holds something other than a string (a command given as a list of
    arguments, say) gives every string inside it, however deep: a rule must see the
    text whatever shape the agent sent. The walk has its own stack (no recursion), so
    its cost is linear in the input's size, and repeated values are matched once."""
    from ..untrusted import strings

    if not isinstance(tool_input, dict):
        return _distinct(strings(tool_input))
    names = TOOL_FIELDS.get(tool)
    if names is None:
        return _distinct(strings(tool_input))
    values = strings([tool_input.get(name) for name in names])
    if tool == "MultiEdit":
        for edit in _listed(tool_input.get("edits")):
            if isinstance(edit, dict):
                values += strings(
                    [edit.get("file_path"), edit.get("old_string"), edit.get("new_string")]
                )
            else:
                values += strings(edit)
    return _distinct(values)


def _listed(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values)) if len(values) > 1 else values

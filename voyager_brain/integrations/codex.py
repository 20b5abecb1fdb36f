"""OpenAI Codex CLI's hooks: ``voyager-brain hook codex EVENT``.

Codex reads ``.codex/hooks.json`` (and ``~/.codex/hooks.json``) in Claude Code's shape
(event -> matcher groups -> command handlers), sends Claude Code's payload fields
(``session_id``, ``transcript_path``, ``cwd``, ``tool_name``, ``tool_input``,
``tool_use_id`` ...) and reads Claude Code's answers; this adapter differs in what it
makes of Codex's tools.

=================  ==============  =============================================
hook event         action          what Codex reads back
=================  ==============  =============================================
SessionStart       session_start   ``hookSpecificOutput.additionalContext``
UserPromptSubmit   prompt          nothing
PreToolUse         tool_check      block: ``permissionDecision = "deny"`` and the
                                   reason; warn: ``additionalContext`` (the model)
                                   and ``systemMessage`` (the user)
PostToolUse        tool_result     nothing
Stop               turn_end        nothing (Stop takes JSON or nothing)
PreCompact         compact         nothing
SessionEnd         session_end     nothing
=================  ==============  =============================================

Tools: every shell call is ``Bash`` with ``command``, as in Claude Code. File changes
are ``apply_patch`` with the whole patch as ``command``; the guard sees a patch of one
file as ``Write`` (a new file: ``file_path``, ``content``) or ``Edit`` (``file_path``,
the removed lines as ``old_string``, the added ones as ``new_string``), and a patch of
several files as ``MultiEdit`` with one edit per file, each with its own ``file_path``.
"""

from __future__ import annotations

from . import claude
from .hookio import HookCall
from .hooks import Hook, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

AGENT = "Codex"

# `timeout` (alias `timeoutSec`): seconds per command handler, default 600
# (https://developers.openai.com/codex/hooks; codex-rs/hooks/src/engine/discovery.rs in
# https://github.com/openai/codex). The timeout is part of the hash Codex trusts a hook
# by: a re-install that changes it needs the hooks trusted again in /hooks.
SETTINGS = Settings(".codex/hooks.json", "~/.codex/hooks.json", timeout=("timeout", 1))

INSTALL_NOTE = (
    "Codex runs a project's hooks once you trust them: review them with /hooks in Codex. "
    "(Codex releases before hooks were on by default also need `[features]` "
    "`codex_hooks = true` in .codex/config.toml.)"
)

EVENTS = {
    "session-start": Hook("SessionStart", "session_start"),
    "user-prompt-submit": Hook("UserPromptSubmit", "prompt"),
    "pre-tool-use": Hook("PreToolUse", "tool_check"),
    "post-tool-use": Hook("PostToolUse", "tool_result"),
    "stop": Hook("Stop", "turn_end"),
    "pre-compact": Hook("PreCompact", "compact"),
    "session-end": Hook("SessionEnd", "session_end"),
}


def read(event: str, payload: dict[str, Any]) -> HookCall:
    call = claude.read(event, payload)
    if EVENTS[event].action == "tool_result" and call.success:
        # Codex sends a command's output alone; its exit code is in the session's
        # rollout file (and in the text when Codex put it there).
        from ..shellexit import exit_failed

        failed = exit_failed(call.output) or rollout_failed(call.transcript, call.tool_use_id)
        call = call._replace(success=not failed)
    if call.tool == "apply_patch" and isinstance(call.tool_input, dict):
        patch = call.tool_input.get("command")
        if isinstance(patch, str):
            tool, given = patch_call(patch)
            call = call._replace(tool=tool, tool_input=given)
    return call


def render(event: str, result: Any) -> str | None:
    if event == "pre-tool-use" and result.action == "block" and result.tool.startswith("mcp__"):
        # Codex 0.171 tells the model "Tool call blocked by PreToolUse hook: REASON.
        # Tool: NAME": the reason without a period of its own reads as one sentence.
        result = result._replace(reason=result.reason.rstrip("."))
    return claude.render(event, result)


def tell_user(event: str, output: str | None, message: str) -> str | None:
    return claude.tell_user(event, output, message)


def patch_call(patch: str) -> tuple[str, dict[str, Any]]:
    """A Codex patch as the guard sees it (see the module's docstring)."""
    files: list[dict[str, Any]] = []
    for line in patch.splitlines():
        for op in ("Add", "Update", "Delete"):
            prefix = f"*** {op} File: "
            if line.startswith(prefix):
                files.append({"op": op, "file_path": line[len(prefix) :].strip(), "-": [], "+": []})
                break
        else:
            if line.startswith("*** Move to: ") and files:
                files[-1]["file_path"] = line[len("*** Move to: ") :].strip()
            elif files and line[:1] in ("-", "+") and not line.startswith("***"):
                files[-1][line[0]].append(line[1:])
    edits = [
        {
            "file_path": f["file_path"],
            "old_string": "\n".join(f["-"]),
            "new_string": "\n".join(f["+"]),
        }
        for f in files
    ]
    if len(files) == 1 and files[0]["op"] == "Add":
        return "Write", {"file_path": files[0]["file_path"], "content": edits[0]["new_string"]}
    if len(files) == 1:
        return "Edit", edits[0]
    if not files:
        return "apply_patch", {"command": patch}
    return "MultiEdit", {"file_path": edits[0]["file_path"], "edits": edits}


#: How much of a rollout's end is read for a call's outcome: the call has just ended, so
#: its line is among the last ones.
ROLLOUT_TAIL = 256 * 1024


def rollout_failed(rollout: str | None, call_id: str | None) -> bool:
    """Whether the session's rollout file (Codex's transcript, JSONL) records the call
    `call_id` as failed: its ``item_completed`` event with a non-zero ``exit_code`` or
    the status ``failed`` (Codex 0.171 writes it before PostToolUse runs). False when
    the file or the line is not there."""
    if not call_id:
        return False
    from .. import cjson

    # The id as a JSON string, whatever spacing the writer puts around its key.
    marker = cjson.dumps(call_id).encode()
    for item in _completed(rollout, marker):
        if item.get("id") == call_id:
            code = item.get("exit_code")
            return item.get("status") == "failed" or (isinstance(code, int) and code != 0)
    return False


def settle_calls(call: HookCall) -> None:
    """At a turn's end: the MCP calls the rollout records as failed get that result in
    the history. Codex 0.171 sends no PostToolUse for them (a call refused for want of
    approval, or answered with an error), so their rows would stay without a result,
    counted as succeeded. A call that has a result (a block, a PostToolUse) keeps it."""
    from .toolcalls import record_result

    for item in _completed(call.transcript, b"McpToolCall"):
        error = item.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        if item.get("type") != "McpToolCall" or item.get("status") != "failed":
            continue
        if not isinstance(item.get("id"), str) or not isinstance(message, str):
            continue
        failed = call._replace(
            tool=f"mcp__{item.get('server')}__{item.get('tool')}",
            tool_input=item.get("arguments"),
            tool_use_id=item["id"],
            output=message.split("\n\nStack backtrace:")[0],  # Rust's, of no use to us
            success=False,
        )
        record_result(failed, settle=True)


def _completed(rollout: str | None, marker: bytes) -> list[dict[str, Any]]:
    """The items of the rollout's recent ``item_completed`` events whose line holds
    `marker`, newest first."""
    if not rollout:
        return []
    from .. import cjson, confine

    try:
        # A regular file only: a FIFO or a device named by a payload would never end.
        with confine.open_regular(rollout) as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - ROLLOUT_TAIL))
            tail = file.read()
    except (OSError, ValueError):
        return []
    items = []
    for line in reversed(tail.splitlines()):
        if marker not in line or b"item_completed" not in line:
            continue
        try:
            item = cjson.loads(line.decode("utf-8", "replace"))["payload"]["item"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(item, dict):
            items.append(item)
    return items

"""Claude Code's hooks: ``voyager-brain hook claude EVENT``.

=====================  ==============  ============================================
hook event             action          what Claude Code reads back
=====================  ==============  ============================================
SessionStart           session_start   the context as ``additionalContext``
UserPromptSubmit       prompt          nothing
PreToolUse             tool_check      block: ``permissionDecision = "deny"`` with
                                       the reason; warn: ``additionalContext`` for
                                       the agent and ``systemMessage`` for the user
                                       (never ``allow``, which would skip the user's
                                       own permission flow); otherwise nothing
PostToolUse            tool_result     nothing
PostToolUseFailure     tool_result     nothing (``success`` 0, the error as output)
Stop                   turn_end        nothing
PreCompact             compact         nothing
SessionEnd             session_end     nothing
=====================  ==============  ============================================

The payload: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, and per
event ``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``, ``error``,
``prompt``, ``last_assistant_message``. Claude Code's tool names are the guard's own.
"""

from __future__ import annotations

from .hookio import (
    HookCall,
    additional_context,
    base_call,
    json_line,
    string,
    text,
    tool_input,
    with_system_message,
)
from .hooks import Hook, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .toolcalls import Verdict

AGENT = "Claude Code"

# `timeout`: seconds per command hook (https://code.claude.com/docs/en/hooks, "Hook
# handler fields"; default 600, and SessionEnd hooks get about 1.5 s whatever is set).
SETTINGS = Settings(".claude/settings.json", "~/.claude/settings.json", timeout=("timeout", 1))

EVENTS = {
    "session-start": Hook("SessionStart", "session_start"),
    "user-prompt-submit": Hook("UserPromptSubmit", "prompt"),
    "pre-tool-use": Hook("PreToolUse", "tool_check"),
    "post-tool-use": Hook("PostToolUse", "tool_result"),
    "post-tool-use-failure": Hook("PostToolUseFailure", "tool_result"),
    "stop": Hook("Stop", "turn_end"),
    "pre-compact": Hook("PreCompact", "compact"),
    "session-end": Hook("SessionEnd", "session_end"),
}


def read(event: str, payload: dict[str, Any]) -> HookCall:
    call = base_call(payload)
    action = EVENTS[event].action
    if action == "tool_check":
        return call._replace(
            tool=text(payload, "tool_name", required=True),
            tool_input=tool_input(payload, "tool_input"),
            tool_use_id=text(payload, "tool_use_id"),
        )
    if action == "tool_result":
        from .toolcalls import response_text

        text(payload, "session_id", required=True)
        raw = payload.get("tool_input")
        call = call._replace(
            tool=text(payload, "tool_name", required=True),
            tool_input=raw if isinstance(raw, dict) else None,
            tool_use_id=text(payload, "tool_use_id"),
            duration_ms=_duration(payload.get("duration_ms")),
        )
        if event == "post-tool-use-failure":
            return call._replace(
                output=str(payload.get("error") or "the tool failed"), success=False
            )
        response = payload.get("tool_response")
        return call._replace(output=response_text(response), success=not _failed(response))
    if action == "prompt":
        text(payload, "session_id", required=True)
        return call._replace(prompt=string(payload, "prompt"))
    if action == "turn_end":
        return call._replace(reply=text(payload, "last_assistant_message"))
    return call


def render(event: str, result: Any) -> str | None:
    if event == "session-start":
        return additional_context("SessionStart", result)
    if event == "pre-tool-use":
        return pre_tool_output(result)
    return None


def tell_user(event: str, output: str | None, message: str) -> str | None:
    """`output` with `message` for the user (``systemMessage``); None at the session's
    end, whose answer nobody reads (Codex reads the same)."""
    if event == "session-end":
        return None
    return with_system_message(output, message)


def pre_tool_output(verdict: Verdict) -> str | None:
    """Claude Code's PreToolUse answer (Codex reads the same)."""
    if verdict.action == "block":
        deny = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": verdict.reason,
        }
        return json_line({"hookSpecificOutput": deny})
    if verdict.action == "warn":
        output = {
            "systemMessage": verdict.reason,
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": verdict.reason,
            },
        }
        return json_line(output)
    return None


def _duration(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _failed(response: Any) -> bool:
    if not isinstance(response, dict):
        return False
    return bool(
        response.get("is_error")
        or response.get("isError")  # an MCP tool's result, as Codex sends it
        or response.get("interrupted")
        or response.get("success") is False
    )

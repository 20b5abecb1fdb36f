"""Cursor's hooks: ``voyager-brain hook cursor EVENT``.

Cursor reads ``.cursor/hooks.json`` (and ``~/.cursor/hooks.json``): ``"version": 1`` and
``hooks``, event -> a list of ``{"command": ...}``. Every payload has
``conversation_id``, ``generation_id``, ``hook_event_name``, ``workspace_roots`` and
``transcript_path``; the conversation is the session.

======================  ==============  =========================================
hook event              action          what Cursor reads back
======================  ==============  =========================================
sessionStart            session_start   ``additional_context``
beforeSubmitPrompt      prompt          ``continue: true``
preToolUse              tool_check      block: ``permission = "deny"``, the reason
                                        as ``agent_message`` and ``user_message``;
                                        warn: nothing (Cursor shows no warning
                                        that lets the call go on; it is recorded)
postToolUse             tool_result     nothing
postToolUseFailure      tool_result     nothing
stop                    turn_end        nothing
preCompact              compact         nothing
sessionEnd              session_end     nothing
beforeShellExecution    tool_check      as preToolUse, for a shell command (not
                                        installed: preToolUse sees those calls)
afterShellExecution     tool_result     (not installed, as above)
======================  ==============  =========================================

Tools in the guard's terms: ``Shell`` is ``Bash``; ``Write`` stays ``Write``, or is
``Edit`` when it replaces a string; ``Read``, ``Grep`` keep their names.
"""

from __future__ import annotations

from .hookio import HookCall, agent_tool, cwd_of, json_line, string, text
from .hooks import Hook, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .toolcalls import Verdict

AGENT = "Cursor"

SETTINGS = Settings(
    ".cursor/hooks.json",
    "~/.cursor/hooks.json",
    grouped=False,
    header=(("version", 1),),
    handler_extra=(),
    # `timeout`: seconds per hook script (https://cursor.com/docs/hooks, "Configuration").
    timeout=("timeout", 1),
)

INSTALL_NOTE = (
    "Cursor runs a project's hooks in a trusted workspace; it reloads hooks.json. With its "
    "third-party hooks setting on, Cursor also runs the hooks in .claude/settings.json: "
    "in a project where both agents work, install the hooks of one of them, not both."
)

EVENTS = {
    "session-start": Hook("sessionStart", "session_start"),
    "before-submit-prompt": Hook("beforeSubmitPrompt", "prompt"),
    "pre-tool-use": Hook("preToolUse", "tool_check"),
    "post-tool-use": Hook("postToolUse", "tool_result"),
    "post-tool-use-failure": Hook("postToolUseFailure", "tool_result"),
    "stop": Hook("stop", "turn_end"),
    "pre-compact": Hook("preCompact", "compact"),
    "session-end": Hook("sessionEnd", "session_end"),
    "before-shell-execution": Hook("beforeShellExecution", "tool_check", installed=False),
    "after-shell-execution": Hook("afterShellExecution", "tool_result", installed=False),
}

TOOLS = {"Shell": ("Bash", {"working_directory": "cwd"})}


def read(event: str, payload: dict[str, Any]) -> HookCall:
    call = HookCall(
        cwd=cwd_of(payload, "cwd", "workspace_roots"),
        session=text(payload, "conversation_id") or text(payload, "session_id"),
        transcript=text(payload, "transcript_path"),
        tool_use_id=text(payload, "tool_use_id"),
    )
    action = EVENTS[event].action
    if event in ("before-shell-execution", "after-shell-execution"):
        call = call._replace(tool="Bash", tool_input={"command": string(payload, "command")})
    elif action in ("tool_check", "tool_result"):
        tool, given = agent_tool(payload, "tool_name", "tool_input", TOOLS)
        if tool == "Write" and "old_string" in given:
            tool = "Edit"
        call = call._replace(tool=tool, tool_input=given)
    if action == "tool_result":
        if call.session is None:
            text(payload, "conversation_id", required=True)
        duration = payload.get("duration")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            call = call._replace(duration_ms=round(duration))
        if event == "post-tool-use-failure":
            error = text(payload, "error_message") or "the tool failed"
            return call._replace(output=error, success=False)
        key = "output" if event == "after-shell-execution" else "tool_output"
        from .toolcalls import response_text

        return call._replace(output=response_text(payload.get(key)))
    if action == "prompt":
        if call.session is None:
            text(payload, "conversation_id", required=True)
        return call._replace(prompt=string(payload, "prompt"))
    return call


def render(event: str, result: Any) -> str | None:
    if event == "session-start":
        return json_line({"additional_context": result})
    if event == "before-submit-prompt":
        return json_line({"continue": True})
    if EVENTS[event].action == "tool_check":
        verdict: Verdict = result
        if verdict.action == "block":
            return json_line(
                {
                    "permission": "deny",
                    "user_message": verdict.reason,
                    "agent_message": verdict.reason,
                }
            )
    return None

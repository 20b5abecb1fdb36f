"""Gemini CLI's hooks: ``voyager-brain hook gemini EVENT``.

Gemini CLI reads the ``hooks`` object of ``.gemini/settings.json`` (and
``~/.gemini/settings.json``): event -> matcher groups -> command handlers, timeouts in
milliseconds. Every payload has ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` and ``timestamp``; stdout must hold JSON and nothing else.

=============  ==============  ==================================================
hook event     action          what Gemini CLI reads back
=============  ==============  ==================================================
SessionStart   session_start   ``hookSpecificOutput.additionalContext``
BeforeAgent    prompt          nothing
BeforeTool     tool_check      block: ``decision = "deny"`` and the ``reason``
                               (the model sees the call fail with it); warn:
                               ``systemMessage``, which only the user sees
AfterTool      tool_result     nothing
AfterAgent     turn_end        nothing (the reply is ``prompt_response``)
PreCompress    compact         nothing
SessionEnd     session_end     nothing
=============  ==============  ==================================================

``gemini -p`` puts the SessionStart context before the user's prompt, in
``<hook_context>`` tags: the BeforeAgent ``prompt`` is recorded without it (`user_prompt`).
Gemini CLI fires PreCompress before every model request, compressing or not (0.61).

Tools in the guard's terms: ``run_shell_command`` is ``Bash``, ``write_file`` is
``Write``, ``replace`` is ``Edit``, ``read_file`` is ``Read`` (the field names are
already Claude Code's, but for the shell's ``dir_path``); others keep their names.
"""

from __future__ import annotations

from .. import toolnames
from .hookio import (
    HookCall,
    additional_context,
    agent_tool,
    base_call,
    json_line,
    string,
    text,
    with_system_message,
)
from .hooks import Hook, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .toolcalls import Verdict

AGENT = "Gemini CLI"

#: Gemini CLI denies a tool call whose hook exits 2 or more (127: voyager-brain missing).
# `timeout`: milliseconds per hook configuration, default 60000
# (https://geminicli.com/docs/hooks/reference, "Hook configuration").
SETTINGS = Settings(
    ".gemini/settings.json",
    "~/.gemini/settings.json",
    commands=(("command", "{} || true"),),
    timeout=("timeout", 1000),
)

INSTALL_NOTE = "Gemini CLI runs a project's hooks only in a trusted folder."

EVENTS = {
    "session-start": Hook("SessionStart", "session_start"),
    "before-agent": Hook("BeforeAgent", "prompt"),
    "before-tool": Hook("BeforeTool", "tool_check"),
    "after-tool": Hook("AfterTool", "tool_result"),
    "after-agent": Hook("AfterAgent", "turn_end"),
    # Gemini CLI 0.61 fires PreCompress before every request to the model, compressing
    # or not: brain.md is compacted when due, not on every request.
    "pre-compress": Hook("PreCompress", "compact_due"),
    "session-end": Hook("SessionEnd", "session_end"),
}

TOOLS = toolnames.GEMINI


def read(event: str, payload: dict[str, Any]) -> HookCall:
    call = base_call(payload)
    action = EVENTS[event].action
    if action in ("tool_check", "tool_result"):
        tool, given = agent_tool(payload, "tool_name", "tool_input", TOOLS)
        call = call._replace(tool=tool, tool_input=given)
    if action == "tool_result":
        text(payload, "session_id", required=True)
        response = payload.get("tool_response")
        response = response if isinstance(response, dict) else {}
        error = response.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            return call._replace(output=str(message), success=False)
        from ..shellexit import exit_failed
        from .toolcalls import response_text

        output = response_text(response.get("llmContent"))
        return call._replace(output=output, success=not exit_failed(output))
    if action == "prompt":
        return call._replace(prompt=user_prompt(string(payload, "prompt")))
    if action == "turn_end":
        return call._replace(reply=text(payload, "prompt_response"))
    return call


def user_prompt(prompt: str) -> str:
    """What the user typed: `prompt` without the SessionStart hook's context, which
    ``gemini -p`` puts before it as ``<hook_context>...</hook_context>`` (Gemini CLI
    0.61), so that the message recorded, and the session's task, are the user's words,
    as a history import of the session's recording reads them (`transcripts.gemini`)."""
    if not prompt.lstrip().startswith("<hook_context>"):
        return prompt  # the transcripts package stays off the hook's path
    from ..transcripts.gemini import user_words

    return user_words(prompt)


def tell_user(event: str, output: str | None, message: str) -> str | None:
    """`output` with `message` for the user (``systemMessage``, at every event); None at
    the session's end, whose answer nobody reads."""
    if event == "session-end":
        return None
    return with_system_message(output, message)


def render(event: str, result: Any) -> str | None:
    if event == "session-start":
        return additional_context("SessionStart", result)
    if event == "before-tool":
        verdict: Verdict = result
        if verdict.action == "block":
            return json_line({"decision": "deny", "reason": verdict.reason})
        if verdict.action == "warn":
            return json_line({"systemMessage": verdict.reason})
    return None

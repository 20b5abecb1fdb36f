"""GitHub Copilot's hooks (Copilot CLI and the cloud agent):
``voyager-brain hook copilot EVENT``.

Copilot reads every ``.github/hooks/*.json`` of the repository (and
``~/.copilot/hooks/``): ``"version": 1`` and ``hooks``, event -> a list of
``{"type": "command", "bash": ..., "powershell": ...}``. voyager-brain's are in a file
of their own, ``.github/hooks/voyager-brain.json``. Payloads are camelCase:
``sessionId``, ``timestamp``, ``cwd``, and per event ``prompt``, ``toolName``,
``toolArgs`` (an object; a JSON string in older releases), ``toolResult``, ``error``,
``transcriptPath`` (the session's ``events.jsonl``, `voyager_brain.transcripts.copilot`).
No payload names the tool call (no id): the check and the result of one call are two
rows of the history. A shell command that exits non-zero is a ``postToolUse`` with
``resultType`` ``success``; its output's last line gives the code (`shell_failed`).

=====================  ==============  ==========================================
hook event             action          what Copilot reads back
=====================  ==============  ==========================================
sessionStart           session_start   ``additionalContext``
userPromptSubmitted    prompt          nothing
preToolUse             tool_check      block: ``permissionDecision = "deny"`` and
                                       ``permissionDecisionReason``; warn: nothing
                                       (recorded; no documented channel)
postToolUse            tool_result     nothing
postToolUseFailure     tool_result     nothing
agentStop              turn_end        nothing
preCompact             compact         nothing
sessionEnd             session_end     nothing
=====================  ==============  ==========================================

Tools in the guard's terms: ``bash`` and ``powershell`` are ``Bash``; ``create``
(``path``, ``file_text``) is ``Write``; ``edit`` (``path``, ``old_str``, ``new_str``) is
``Edit``; ``view`` is ``Read``; ``apply_patch`` (the patch text itself) is read as a
Codex patch.
"""

from __future__ import annotations

from .. import toolnames
from .hookio import HookCall, agent_tool, base_call, json_line, string, text
from .hooks import Hook, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .toolcalls import Verdict

AGENT = "GitHub Copilot"

SETTINGS = Settings(
    ".github/hooks/voyager-brain.json",
    "~/.copilot/hooks/voyager-brain.json",
    grouped=False,
    header=(("version", 1),),
    # Copilot denies a tool call whose preToolUse hook fails (voyager-brain missing).
    commands=(("bash", "{} || true"), ("powershell", "{}; exit 0")),
    # `timeoutSec`: seconds, default 30
    # (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference).
    timeout=("timeoutSec", 1),
)

INSTALL_NOTE = (
    "Copilot CLI runs a repository's hooks once the folder is trusted. Copilot CLI also "
    "runs the hooks in .claude/settings.json: in a project where both agents work, "
    "install the hooks of one of them, not both."
)

EVENTS = {
    "session-start": Hook("sessionStart", "session_start"),
    "user-prompt-submitted": Hook("userPromptSubmitted", "prompt"),
    "pre-tool-use": Hook("preToolUse", "tool_check"),
    "post-tool-use": Hook("postToolUse", "tool_result"),
    "post-tool-use-failure": Hook("postToolUseFailure", "tool_result"),
    "agent-stop": Hook("agentStop", "turn_end"),
    "pre-compact": Hook("preCompact", "compact"),
    "session-end": Hook("sessionEnd", "session_end"),
}

TOOLS = toolnames.COPILOT


def read(event: str, payload: dict[str, Any]) -> HookCall:
    call = base_call(payload, session="sessionId", transcript="transcriptPath")
    action = EVENTS[event].action
    if action in ("tool_check", "tool_result"):
        name = text(payload, "toolName", required=True) or ""
        raw = payload.get("toolArgs")
        if name == "apply_patch" and isinstance(raw, str) and not raw.lstrip().startswith("{"):
            from .codex import patch_call

            tool, given = patch_call(raw)
        else:
            tool, given = agent_tool(payload, "toolName", "toolArgs", TOOLS)
        call = call._replace(tool=tool, tool_input=given)
    if action == "tool_result":
        text(payload, "sessionId", required=True)
        if event == "post-tool-use-failure":
            error = payload.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            return call._replace(output=str(message or "the tool failed"), success=False)
        result = payload.get("toolResult")
        result = result if isinstance(result, dict) else {}
        output = result.get("textResultForLlm")
        output = output if isinstance(output, str) else None
        succeeded = result.get("resultType", "success") == "success"
        return call._replace(
            output=output,
            success=succeeded and not (call.tool == "Bash" and shell_failed(output)),
        )
    if action == "prompt":
        text(payload, "sessionId", required=True)
        return call._replace(prompt=string(payload, "prompt"))
    return call


def shell_failed(output: str | None) -> bool:
    """Whether a shell command's output says it exited non-zero. Copilot calls such a
    call a success (``resultType`` ``success``) and gives the code only in the output's
    last line, ``<shellId: 1 completed with exit code 2>``, which notes about its sandbox
    may follow (Copilot CLI 1.0.102 reads it with the same pattern)."""
    import re

    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    for line in reversed(lines[-4:]):
        found = re.fullmatch(
            r"<(?:detached command with )?shellId: .+ completed with exit code (-?\d+)>", line
        )
        if found:
            return int(found.group(1)) != 0
    return False


def render(event: str, result: Any) -> str | None:
    if event == "session-start":
        return json_line({"additionalContext": result})
    if event == "pre-tool-use":
        verdict: Verdict = result
        if verdict.action == "block":
            return json_line(
                {"permissionDecision": "deny", "permissionDecisionReason": verdict.reason}
            )
    return None

"""Codex's session logs (rollout files, ``$CODEX_HOME/sessions/.../rollout-*.jsonl``) read
as Claude Code transcript entries.

A rollout line is ``{"timestamp", "type", "payload"}``; what this reads of it (Codex CLI
0.171, as its own runs wrote it: tests/fixtures/codex/rollout-session.jsonl):

- ``session_meta``: the session's ``id`` and ``cwd``; ``turn_context`` updates ``cwd``;
- ``response_item`` ``message``: a ``user`` one is a prompt (the ones Codex writes itself,
  ``<environment_context>``, ``<user_instructions>`` and the like, are not), an
  ``assistant`` one a reply, a ``developer`` one neither;
- ``response_item`` ``function_call``: a tool call (``exec_command`` as ``Bash`` with its
  ``cmd`` as ``command``; another tool by its own name and arguments), and
  ``function_call_output`` its result;
- ``event_msg`` ``item_completed`` of a command: whether it failed (``status`` ``failed``
  or a non-zero ``exit_code``), written before the call's output.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The prompts Codex writes into a session itself, not the user.
_OWN = ("<environment_context>", "<user_instructions>", "<user_shell_command>", "# AGENTS.md")


def is_rollout(record: object) -> bool:
    """Whether a parsed line is a rollout line (not a Claude Code entry)."""
    return isinstance(record, dict) and "payload" in record and record.get("type") in (
        "session_meta", "response_item", "event_msg", "turn_context"
    )  # fmt: skip


class Rollout:
    """One rollout file, read line by line in order."""

    def __init__(self) -> None:
        self.session: str | None = None
        self.cwd: str | None = None
        self.failed: set[str] = set()

    @classmethod
    def of(cls, first: object) -> Rollout | None:
        """A reader for the file whose first line's JSON value is `first`, when it is a
        rollout."""
        return cls() if is_rollout(first) else None

    def entries(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The transcript entries of one rollout line (none for most)."""
        payload = record.get("payload")
        kind = record.get("type")
        if not isinstance(payload, dict):
            return []
        if kind in ("session_meta", "turn_context"):
            self.session = _str(payload.get("id")) or self.session
            self.cwd = _str(payload.get("cwd")) or self.cwd
            return []
        if kind == "event_msg":
            self._event(payload)
            return []
        if kind != "response_item":
            return []
        item = payload.get("type")
        base = {"sessionId": self.session, "cwd": self.cwd, "timestamp": record.get("timestamp")}
        if item == "message":
            return self._message(payload, base)
        if item == "function_call":
            name, arguments = _tool(payload)
            block = {"type": "tool_use", "id": payload.get("call_id"), "name": name,
                     "input": arguments}  # fmt: skip
            message = {"role": "assistant", "content": [block]}
            return [{**base, "type": "assistant", "uuid": payload.get("id"), "message": message}]
        if item == "function_call_output":
            call = _str(payload.get("call_id"))
            output = payload.get("output")
            result = {
                "type": "tool_result",
                "tool_use_id": call,
                "content": output if isinstance(output, str) else json.dumps(output),
                "is_error": call in self.failed,
            }
            message = {"role": "user", "content": [result]}
            return [{**base, "type": "user", "uuid": payload.get("id"), "message": message}]
        return []

    def _event(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        if payload.get("type") != "item_completed" or not isinstance(item, dict):
            return
        code = item.get("exit_code")
        failed = item.get("status") == "failed" or (isinstance(code, int) and code != 0)
        if failed and isinstance(item.get("id"), str):
            self.failed.add(item["id"])

    def _message(self, payload: dict[str, Any], base: dict[str, Any]) -> list[dict[str, Any]]:
        role = payload.get("role")
        content = payload.get("content")
        parts = content if isinstance(content, list) else []
        text = "\n".join(str(p.get("text") or "") for p in parts if isinstance(p, dict)).strip()
        if role == "user" and text and not text.lstrip().startswith(_OWN):
            message: dict[str, Any] = {"role": "user", "content": text}
            return [{**base, "type": "user", "uuid": payload.get("id"), "message": message}]
        if role == "assistant" and text:
            message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            return [{**base, "type": "assistant", "uuid": payload.get("id"), "message": message}]
        return []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _tool(payload: dict[str, Any]) -> tuple[str, Any]:
    name = str(payload.get("name") or "unknown")
    try:
        arguments = json.loads(payload.get("arguments") or "{}")
    except (TypeError, ValueError):
        arguments = {"arguments": payload.get("arguments")}
    if name in ("exec_command", "shell") and isinstance(arguments, dict):
        command = arguments.get("cmd", arguments.get("command"))
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        return "Bash", {"command": command}
    return name, arguments

"""GitHub Copilot CLI's session logs (``~/.copilot/session-state/<session id>/events.jsonl``,
under ``$COPILOT_HOME`` when that is set; the hooks' ``transcriptPath``) read as Claude
Code transcript entries.

A line is one session event, ``{"type", "data", "id", "timestamp", "parentId"}``: ``id``
a UUID, ``timestamp`` ISO 8601, ``parentId`` the event before (null for the first); a
sub-agent's events carry an ``agentId``. What this reads of them (Copilot CLI 1.0.102, as
its own run wrote them: tests/fixtures/copilot/session-events.jsonl):

- ``session.start``: the session's ``sessionId`` and ``context.cwd`` (``session.resume``
  and ``session.context_changed`` give the folder again);
- ``user.message``: ``content``, the prompt as the user typed it (``transformedContent``
  is what the model got). Those Copilot sends itself are not prompts: a ``source`` other
  than ``user`` (a skill's text, another agent's prompt, a scheduled run) or an autopilot
  continuation;
- ``assistant.message``: ``content`` a reply (empty when the message only calls tools),
  and each of ``toolRequests`` (``toolCallId``, ``name``, ``arguments``) a tool call,
  named as the Copilot hooks name it (``bash`` is ``Bash`` ..., `toolnames.COPILOT`);
- ``tool.execution_complete``: the result of the call ``toolCallId``: ``result.content``,
  or ``error.message`` when ``success`` is false; a shell command that exited non-zero
  (``shellExecution.exitCode``) failed too, though Copilot counts it a success;
- nothing else: hooks, turns, usage, the system prompt, a sub-agent's events, and the
  tools the user ran himself.
"""

from __future__ import annotations

import json

from ..toolnames import COPILOT, as_claude_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The events that set the session's folder.
_CONTEXT = ("session.start", "session.resume", "session.context_changed")


def is_event(record: object) -> bool:
    """Whether a parsed line is a Copilot session event (not a Claude Code entry)."""
    if not isinstance(record, dict) or "parentId" not in record:
        return False
    kind = record.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(record.get("data"), dict)


class EventLog:
    """One ``events.jsonl``, read line by line in order."""

    def __init__(self) -> None:
        self.session: str | None = None
        self.cwd: str | None = None

    @classmethod
    def of(cls, first: object) -> EventLog | None:
        """A reader for the file whose first line's JSON value is `first`, when it is a
        Copilot session's log."""
        return cls() if is_event(first) else None

    def entries(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The transcript entries of one event (none for most)."""
        data = record.get("data")
        kind = record.get("type")
        event = _str(record.get("id"))
        if not isinstance(data, dict) or event is None or _subagent(record, data):
            return []
        if kind in _CONTEXT:
            if kind == "session.start":
                self.session = _str(data.get("sessionId")) or self.session
            context = data if kind == "session.context_changed" else data.get("context")
            if isinstance(context, dict):
                self.cwd = _str(context.get("cwd")) or self.cwd
            return []
        base = {"sessionId": self.session, "cwd": self.cwd, "timestamp": record.get("timestamp")}
        if kind == "user.message":
            text = data.get("content")
            if not isinstance(text, str) or not text.strip() or not _typed(data):
                return []
            return [{**base, "type": "user", "uuid": event,
                     "message": {"role": "user", "content": text}}]  # fmt: skip
        if kind == "assistant.message":
            return self._assistant(event, data, base)
        if kind == "tool.execution_complete" and not data.get("isUserRequested"):
            call = _str(data.get("toolCallId"))
            if call is None:
                return []
            result = {"type": "tool_result", "tool_use_id": call, "content": _output(data),
                      "is_error": _failed(data)}  # fmt: skip
            message = {"role": "user", "content": [result]}
            return [{**base, "type": "user", "uuid": event, "message": message}]
        return []

    def _assistant(
        self, event: str, data: dict[str, Any], base: dict[str, Any]
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        text = data.get("content")
        if isinstance(text, str) and text.strip():
            message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            found.append({**base, "type": "assistant", "uuid": event, "message": message})
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            call = _str(request.get("toolCallId")) if isinstance(request, dict) else None
            if call is None:
                continue
            name, given = tool(str(request.get("name") or "unknown"), request.get("arguments"))
            block = {"type": "tool_use", "id": call, "name": name, "input": given}
            message = {"role": "assistant", "content": [block]}
            found.append({**base, "type": "assistant", "uuid": f"{event}/{call}",
                          "message": message})  # fmt: skip
        return found


def tool(name: str, arguments: object) -> tuple[str, Any]:
    """A tool call in Claude Code's terms, as the Copilot hooks record it: `toolnames.COPILOT`'s
    tools renamed with their fields (others as they are); arguments given as a JSON
    string are read."""
    if isinstance(arguments, str):
        arguments = _json(arguments)
    if arguments is None:
        arguments = {}
    return as_claude_tool(name, arguments, COPILOT)


def _json(text: str) -> Any:
    """`text`'s JSON value; `text` itself when it is not JSON (a patch)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _subagent(record: dict[str, Any], data: dict[str, Any]) -> bool:
    """Whether the event is a sub-agent's (Copilot's own test: an ``agentId``, or the
    ``parentToolCallId`` older releases wrote)."""
    return any(_str(v) for v in (record.get("agentId"), data.get("agentId"),
                                 data.get("parentToolCallId")))  # fmt: skip


def _typed(data: dict[str, Any]) -> bool:
    """Whether a ``user.message`` is what the user typed."""
    source = data.get("source")
    return source in (None, "", "user") and not data.get("isAutopilotContinuation")


def _output(data: dict[str, Any]) -> str:
    result = data.get("result")
    error = data.get("error")
    for value in (
        result.get("content") if isinstance(result, dict) else None,
        error.get("message") if isinstance(error, dict) else error,
    ):
        if isinstance(value, str):
            return value
    return ""


def _failed(data: dict[str, Any]) -> bool:
    shell = data.get("shellExecution")
    code = shell.get("exitCode") if isinstance(shell, dict) else None
    nonzero = isinstance(code, int) and not isinstance(code, bool) and code != 0
    return data.get("success") is False or nonzero


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None

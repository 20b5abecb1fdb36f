"""Gemini CLI's chat recordings (``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl``,
``.json`` before 0.39) read as Claude Code transcript entries.

Two formats, both read: a session recorded before 0.39 stays a ``.json`` file until Gemini
CLI resumes it, which copies it into a ``.jsonl`` one.

- **up to 0.38**, one JSON document, pretty-printed, written whole at every change (a
  document format, `entries_of`): ``{"sessionId", "projectHash", "startTime",
  "lastUpdated", "messages": [...], "summary"?, "directories"?, "kind"?}``;
- **from 0.39**, JSON lines, appended as the session goes (a line format, `Recording`):
  first the session's metadata (``sessionId``, ``projectHash``, ``startTime`` ...), then
  a message a line, written again whole each time it changes (its tokens, its tool
  calls: the same ``id`` on another line); ``{"$set": {...}}``, an update of the metadata
  (``messages``: the whole history again, after a compression or a rollback);
  ``{"$rewindTo": id}``.

A message is ``{"id", "timestamp", "type": "user" | "gemini" | "info" | "error" |
"warning", "content"}``, the content a string or a list of parts (``text``, ``thought``,
``functionCall``, ``functionResponse`` ...); a ``gemini`` one holds its tool calls, written
when they are done: ``toolCalls``: ``{"id", "name", "args", "result": [parts], "status":
"success" | "error" | "cancelled", "timestamp", ...}``. What becomes entries (Gemini CLI
0.38.2 and 0.61.0, as their own runs wrote them: tests/fixtures/gemini/):

- a ``user`` message's text is a prompt, without the ``<hook_context>`` blocks Gemini CLI
  puts before it (a SessionStart hook's context, in ``gemini -p``); text Gemini CLI
  writes itself (``<session_context>``, a compression's ``<state_snapshot>``, hook context
  alone) and a tool's answer (``functionResponse`` parts) are not prompts;
- a ``gemini`` message's text, thoughts left out, is a reply (uuid: its ``id``);
- each tool call of one is a ``tool_use`` (uuid ``<id>/<call id>``) and, once its status
  ends it, a ``tool_result`` (uuid ``<id>/<call id>/result``): the text of its
  ``result``, an error when the status is ``error`` or ``cancelled`` or a shell's output
  says it exited non-zero. Its name and input are those the hooks record (`toolnames.GEMINI`:
  ``run_shell_command`` is ``Bash`` ...);
- in the line format, a message written again adds only what it did not have yet (its
  tool calls, their results); ``$set`` and ``$rewindTo`` add nothing (what was said in
  the session stays said).

A recording names no working folder: the entries' ``cwd`` is None.
"""

from __future__ import annotations

import json

from ..shellexit import exit_failed
from ..toolnames import GEMINI, as_claude_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOOK_CONTEXT = "<hook_context>"
_HOOK_CONTEXT_END = "</hook_context>"
#: What Gemini CLI writes as the user's message itself.
_SESSION_CONTEXT = "<session_context>"
_SNAPSHOT = "<state_snapshot>"
#: The model's answer Gemini CLI writes after a compression's summary.
_SNAPSHOT_REPLY = "Got it. Thanks for the additional context!"
#: The statuses a tool call ends with, and those of them that are a failure.
_ENDED = ("success", "error", "cancelled")
_FAILED = ("error", "cancelled")


def user_words(text: str) -> str:
    """`text` without the ``<hook_context>...</hook_context>`` blocks before it (the
    context a hook gave, which Gemini CLI puts in front of the user's prompt)."""
    if not text.lstrip().startswith(HOOK_CONTEXT):
        return text
    rest = text
    while rest.lstrip().startswith(HOOK_CONTEXT):
        end = rest.find(_HOOK_CONTEXT_END)
        if end < 0:
            return ""
        rest = rest[end + len(_HOOK_CONTEXT_END) :]
    return rest.strip()


def is_metadata(value: object) -> bool:
    """Whether a JSON value is a recording's metadata: its first line, or the whole
    document before 0.39."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
        and "id" not in value
    )


def entries_of(value: object) -> list[dict[str, Any]] | None:
    """The entries of a recording written as one document (Gemini CLI up to 0.38); None
    when `value` is not one."""
    if not isinstance(value, dict) or not is_metadata(value):
        return None
    if not isinstance(value.get("messages"), list):
        return None
    return Recording(value["sessionId"]).entries(value)


class Recording:
    """One recording, read line by line in order (Gemini CLI 0.39 and later)."""

    def __init__(self, session: str | None) -> None:
        self.session = session
        #: The uuids of the entries given already: a message comes again as it changes.
        self.given: set[str] = set()

    @classmethod
    def of(cls, first: object) -> Recording | None:
        """A reader for the file whose first line's JSON value is `first`, when it is a
        recording's metadata."""
        if not isinstance(first, dict) or not is_metadata(first):
            return None
        return cls(first["sessionId"])

    def entries(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The transcript entries of one line (a whole document's messages for the
        metadata that holds them)."""
        update = record.get("$set")
        if isinstance(update, dict):
            self.session = _str(update.get("sessionId")) or self.session
            return []
        if isinstance(record.get("id"), str):
            return self.message(record)
        if is_metadata(record):
            self.session = record["sessionId"]
            messages = record.get("messages")
            if isinstance(messages, list):
                return [e for m in messages if isinstance(m, dict) for e in self.message(m)]
        return []

    def message(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The entries of one message not given yet."""
        key = _str(message.get("id"))
        kind = message.get("type")
        if key is None or kind not in ("user", "gemini"):
            return []
        base = {"sessionId": self.session, "cwd": None, "timestamp": message.get("timestamp")}
        out: list[dict[str, Any]] = []
        if kind == "user":
            text = _prompt(message.get("content"))
            if text:
                out.append({**base, "type": "user", "uuid": key,
                            "message": {"role": "user", "content": text}})  # fmt: skip
            return self._new(out)
        text = _texts(message.get("content")).strip()
        if text and text != _SNAPSHOT_REPLY:
            reply = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            out.append({**base, "type": "assistant", "uuid": key, "message": reply})
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and _str(call.get("id")):
                out += _call(base, f"{key}/{call['id']}", call)
        return self._new(out)

    def _new(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fresh = [e for e in entries if e["uuid"] not in self.given]
        self.given.update(e["uuid"] for e in fresh)
        return fresh


def _call(base: dict[str, Any], uuid: str, call: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool call's ``tool_use`` entry, and its ``tool_result`` once it ended."""
    # Named as the hooks name it.
    name, given = as_claude_tool(str(call.get("name") or "unknown"), call.get("args"), GEMINI)
    use = {"type": "tool_use", "id": call["id"], "name": name, "input": given}
    out = [{**base, "type": "assistant", "uuid": uuid,
            "message": {"role": "assistant", "content": [use]}}]  # fmt: skip
    status = call.get("status")
    if status in _ENDED:
        output = _result_text(call.get("result"))
        failed = status in _FAILED or exit_failed(output)
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": output,
                  "is_error": failed}  # fmt: skip
        stamp = call.get("timestamp") if isinstance(call.get("timestamp"), str) else None
        message = {"role": "user", "content": [result]}
        out.append({**base, "timestamp": stamp or base["timestamp"], "type": "user",
                    "uuid": f"{uuid}/result", "message": message})  # fmt: skip
    return out


def _parts(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [p if isinstance(p, dict) else {"text": p} for p in content
                if isinstance(p, dict | str)]  # fmt: skip
    return []


def _texts(content: object) -> str:
    """The text of a message's parts, thoughts left out, joined as Gemini CLI joins them
    (the hooks' ``prompt``)."""
    parts = _parts(content)
    return "".join(str(p["text"]) for p in parts
                   if isinstance(p.get("text"), str) and not p.get("thought"))  # fmt: skip


def _prompt(content: object) -> str | None:
    """What the user said in a ``user`` message; None for one Gemini CLI wrote."""
    if any("functionResponse" in p for p in _parts(content)):
        return None  # the tools' answers, sent back to the model
    text = user_words(_texts(content))
    said = text.lstrip()
    if not said.strip() or said.startswith((_SESSION_CONTEXT, HOOK_CONTEXT)) or _SNAPSHOT in said:
        return None
    return text


def _result_text(result: object) -> str:
    """A tool's result as text: the ``output`` (or ``error``) of its function response,
    text parts as they are, any other part by its kind."""
    texts = []
    for part in _parts(result):
        answer = part.get("functionResponse")
        if isinstance(answer, dict):
            response = answer.get("response")
            if isinstance(response, dict):
                said = response.get("output", response.get("error"))
                texts.append(said if isinstance(said, str) else _dumps(response))
            elif response is not None:
                texts.append(_dumps(response))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part:
            texts.append(f"[{next(iter(part))}]")
    return "\n".join(texts)


def _dumps(value: object) -> str:
    try:
        return json.dumps(value)
    except RecursionError:  # nested as deep as the reader goes
        return "[a value nested too deep]"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None

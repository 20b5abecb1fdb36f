"""What every agent's hook shares: reading its JSON on stdin, and the call it describes
in agent-neutral terms (`HookCall`), which each adapter fills from its own payload."""

from __future__ import annotations

from .. import cjson
from ..errors import BrainError
from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO


class HookInputError(BrainError):
    """The hook's stdin is not the JSON object the agent sends."""


class Limit(Record):
    """How much of a text an agent keeps whole: `size` characters, or bytes of UTF-8."""

    size: int
    unit: str  # "characters" or "bytes"

    def measure(self, text: str) -> int:
        # A lone surrogate (a memory log may hold one, escaped) counts as the three bytes
        # of its replacement character.
        return len(text.encode("utf-8", "surrogatepass")) if self.unit == "bytes" else len(text)

    def holds(self, text: str) -> bool:
        return self.measure(text) <= self.size


class HookCall(Record):
    """One hook call, as the lifecycle and the guard see it, whatever the agent.

    ``tool`` and ``tool_input`` are in Claude Code's terms (``Bash`` with ``command``,
    ``Write`` with ``file_path`` and ``content`` ...) when the adapter knows the agent's
    tool, so one guard rule serves every agent; an unknown tool keeps its own name and
    input."""

    cwd: str
    session: str | None = None
    transcript: str | None = None
    tool: str | None = None
    #: A JSON object, as agents send it; any other JSON value as it came (see `tool_input`).
    tool_input: Any = None
    tool_use_id: str | None = None
    #: A tool's result (its output or error) and whether it succeeded.
    output: str | None = None
    success: bool = True
    duration_ms: int | None = None
    #: The user's message (a prompt hook), the agent's last reply (a turn's end).
    prompt: str | None = None
    reply: str | None = None


def read_payload(stream: TextIO) -> dict[str, Any]:
    """The JSON object on `stream`; {} for empty input; `HookInputError` otherwise.

    Whatever the object holds is read, never refused: bytes that are not UTF-8 become
    U+FFFD (the ``replace`` error handler), so do lone surrogates (``\\ud800``), and an
    object nested deeper than the standard reader goes is read by `untrusted.loads`. A
    guard rule then sees the rest of the text as it is."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        data = buffer.read()
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    else:
        text = stream.read()
    value = loads_json(text, "stdin") if text.strip() else {}
    if not isinstance(value, dict):
        raise HookInputError("stdin: expected a JSON object")
    return value


def loads_json(text: str, where: str) -> Any:
    """The JSON value of `text`, whatever it holds (see `read_payload`); `where` names
    it in the `HookInputError` for a text that is not JSON."""
    try:
        value = cjson.loads(text)
    except (RecursionError, ValueError) as exc:
        import json  # imported by the failure already

        if isinstance(exc, json.JSONDecodeError):
            raise HookInputError(
                f"{where}: not valid JSON ({exc.msg}); expected the hook's JSON"
            ) from None
        # Only a hostile or odd payload nests this deep, or holds an integer of more
        # digits than int() takes (a plain ValueError): read it without recursion,
        # keeping such a number as its text.
        from ..untrusted import loads

        try:
            return loads(text)
        except ValueError as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise HookInputError(
                f"{where}: not valid JSON ({msg}); expected the hook's JSON"
            ) from None
    if "\\u" in text or not text.isascii():
        from ..untrusted import may_hold_surrogates, scrub_json

        if may_hold_surrogates(text):
            return scrub_json(value)
    return value


def text(payload: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    """The non-empty string at `key`, else None (or `HookInputError` when `required`)."""
    value = payload.get(key)
    if isinstance(value, str) and value:
        return value
    if required:
        raise HookInputError(f"stdin: {key}: expected a non-empty string")
    return None


def string(payload: Mapping[str, Any], key: str) -> str:
    """The string at `key`, empty or not; `HookInputError` when it is missing."""
    value = payload.get(key)
    if not isinstance(value, str):
        raise HookInputError(f"stdin: {key}: expected a string")
    return value


def tool_input(payload: Mapping[str, Any], key: str) -> Any:
    """The tool's input at `key`: a JSON object, or a string holding one (as some agents
    send it). Any other value (a list, a number, a string that is not JSON) is kept as
    it is, not refused: a refusal failed the hook, which let the call run, and a rule
    matches every string of an input that is not an object (`guard.fields`).
    `HookInputError` only when there is none."""
    value = payload.get(key)
    if value is None:
        raise HookInputError(f"stdin: {key}: expected a JSON object")
    if isinstance(value, str):
        try:
            return loads_json(value, f"stdin: {key}")
        except HookInputError:
            return value  # text that is not JSON: matched as it is
    return value


def cwd_of(payload: Mapping[str, Any], *keys: str) -> str:
    """The folder the agent works in: the first of `keys` that holds a path (a list's
    first item counts), else the hook's own working folder."""
    import os

    for key in keys:
        value = payload.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str) and value:
            return value
    return os.getcwd()


def base_call(
    payload: Mapping[str, Any],
    session: str = "session_id",
    transcript: str = "transcript_path",
    cwd: tuple[str, ...] = ("cwd",),
) -> HookCall:
    """The fields every event carries: the folder, the session, the transcript, under
    the agent's names for them."""
    return HookCall(
        cwd=cwd_of(payload, *cwd),
        session=text(payload, session),
        transcript=text(payload, transcript),
    )


def agent_tool(
    payload: Mapping[str, Any],
    name: str,
    given: str,
    table: Mapping[str, tuple[str, Mapping[str, str]]],
) -> tuple[str, Any]:
    """The tool call at `name` and `given` in the payload, in Claude Code's terms."""
    from ..toolnames import as_claude_tool  # not on Claude Code's paths, which need none

    tool = text(payload, name, required=True)
    assert tool is not None
    return as_claude_tool(tool, tool_input(payload, given), table)


def json_line(value: Any) -> str:
    """What a hook prints: one line of JSON (non-ASCII as it is)."""
    return cjson.dumps(value, ensure_ascii=False) + "\n"


def with_system_message(output: str | None, message: str) -> str:
    """`output` (one line of JSON, or nothing) with `message` as ``systemMessage``, which
    Claude Code, Codex and Gemini CLI show the user (not the model) at any event; one
    already there (a guard warning) comes first."""
    data = cjson.loads(output) if output else {}
    earlier = data.get("systemMessage")
    data["systemMessage"] = f"{earlier}\n\n{message}" if earlier else message
    return json_line(data)


def additional_context(event: str, context: str) -> str:
    """Claude Code's answer with context for the agent (Codex and Gemini CLI read the
    same): ``hookSpecificOutput.additionalContext``."""
    return json_line({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})

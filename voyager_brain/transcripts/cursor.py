"""Cursor's agent transcripts (the file its hooks name in ``transcript_path``) read as
Claude Code transcript entries.

Cursor keeps a conversation's transcript under
``~/.cursor/projects/<folder>/agent-transcripts/``, ``<folder>`` the workspace's path
with every character but letters and digits as ``-`` (``home-user-project``): the IDE
writes ``<id>/<id>.jsonl`` (a subagent's in ``<id>/subagents/<sub id>.jsonl``), the CLI
``<id>.jsonl``, versions before early 2026 ``<id>.txt``; ``<id>`` is the hooks'
``conversation_id``. Neither format has an entry id, a session id or a working folder
(sources: tests/fixtures/cursor/SOURCES.md):

- **JSON lines** (`Transcript`): ``{"role": "user" | "assistant", "message": {"content":
  [...]}}``, ``text`` blocks for either role and ``tool_use`` blocks (``name`` and
  ``input``, without an ``id``) for the assistant; from Cursor 3.13 on a turn ends with
  ``{"type": "turn_ended", "status", "error"}``, which is not conversation; no tool's
  output is kept;
- **plain text** (`text_entries`): each turn opens with a line ``user:`` or
  ``assistant:`` (``A:`` in some versions); in an assistant's turn, ``[Thinking] ...``
  (left out), ``[Tool call] NAME`` with the call's input indented below, one
  ``key: value`` a line, and ``[Tool result] NAME`` with the output indented below (a
  result goes on the turn's oldest call of that name still waiting for one, else on its
  oldest waiting call); other lines are the reply.

A prompt is wrapped: ``<timestamp>Tuesday, Jun 2, 2026, 11:20 AM (UTC+8)</timestamp>``,
the transcript's only clock (the prompt's ``timestamp``), then
``<user_query>...</user_query>``, the user's words (and maybe ``<image_files>``,
``<external_links>`` beside it). The prompts Cursor writes itself (a subagent or a
background task finished, a forked subagent starts, a turn was interrupted) are left
out. Tools are named in the guard's terms, as the hooks name ``Shell`` ``Bash``: Claude
Code's name and field names where Cursor's tool is one of Claude Code's (`TOOLS`).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone

from ..toolnames import as_claude_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Cursor's tools in Claude Code's terms: Cursor's name -> (Claude Code's, Cursor's input
#: fields -> Claude Code's); fields not named keep theirs, other tools their names.
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "Shell": ("Bash", {"working_directory": "cwd"}),
    "Write": ("Write", {"path": "file_path", "contents": "content"}),
    "StrReplace": ("Edit", {"path": "file_path"}),
    "Read": ("Read", {"path": "file_path"}),
    "ReadFile": ("Read", {"path": "file_path"}),
    "Glob": ("Glob", {"glob_pattern": "pattern", "target_directory": "path"}),
}
#: The openings of the prompts Cursor writes itself, not the user.
OWN_PROMPTS = (
    "Perform any necessary follow-up actions in response to the subagent completion above.",
    "Briefly inform the user about the task result and perform any follow-up action",
    "You are the forked subagent; continue executing your task.",
    "Your previous response was interrupted. Continue from where you left off.",
)
#: The lines that open a turn in the plain-text format.
TURNS = {"user:": "user", "assistant:": "assistant", "A:": "assistant"}

_STAMP = re.compile(r"\s*<timestamp>(.*?)</timestamp>", re.DOTALL)
_CLOCK = re.compile(
    r"(?:[A-Za-z]+,\s*)?([A-Za-z]{3})[A-Za-z]*\.?\s+(\d{1,2}),?\s+(\d{4}),?\s+"
    r"(\d{1,2}):(\d\d)(?::(\d\d))?\s*([AaPp][Mm])?\s*\(UTC(?:([+-])(\d{1,2})(?::?(\d\d))?)?\)"
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_KEY = re.compile(r"([A-Za-z_][\w-]*):(?: (.*))?$")


def is_transcript_line(record: object) -> bool:
    """Whether a parsed line is one of Cursor's (not a Claude Code entry)."""
    if not isinstance(record, dict) or {"uuid", "sessionId", "parentUuid"} & record.keys():
        return False
    if record.get("type") == "turn_ended":
        return "role" not in record
    return (
        "type" not in record
        and record.get("role") in ("user", "assistant")
        and isinstance(record.get("message"), dict)
    )


class Transcript:
    """One JSON-lines transcript, read line by line in order."""

    @classmethod
    def of(cls, first: object) -> Transcript | None:
        """A reader for the file whose first line's JSON value is `first`, when it is
        one of Cursor's transcripts."""
        return cls() if is_transcript_line(first) else None

    def entries(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The transcript entries of one line (none for a ``turn_ended``)."""
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if record.get("role") == "user":
            texts = [b.get("text") for b in blocks if b.get("type") == "text"]
            prompt = _prompt("\n".join(t for t in texts if isinstance(t, str)))
            return [] if prompt is None else [prompt]
        if record.get("role") != "assistant":
            return []
        said: list[dict[str, Any]] = []
        for block in blocks:
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                if block["text"].strip():
                    said.append({"type": "text", "text": block["text"]})
            elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                call = block.get("id") if isinstance(block.get("id"), str) else None
                said.append(_call(call, block["name"], block.get("input")))
        return [_entry("assistant", said)] if said else []


def is_transcript_text(first_line: str) -> bool:
    """Whether a file whose first line is `first_line` is a plain-text transcript."""
    return first_line.lstrip("\ufeff").rstrip() in TURNS


def text_entries(text: str, name: str | None) -> list[dict[str, Any]] | None:
    """The entries of a plain-text transcript; None when `text` is not one. `name`, the
    session's id (the file's name), makes the ids: ``<name>:text-<n>`` for the ``n``-th
    entry, ``<name>:text-call-<n>`` for the ``n``-th tool call."""
    lines = [line.removesuffix("\r") for line in text.lstrip("\ufeff").split("\n")]
    if not is_transcript_text(lines[0]):
        return None
    turns: list[tuple[str, list[str]]] = []
    for line in lines:
        role = TURNS.get(line.rstrip())
        if role is not None:
            turns.append((role, []))
        else:
            turns[-1][1].append(line)
    entries: list[dict[str, Any]] = []
    calls = 0
    for role, body in turns:
        if role == "user":
            prompt = _prompt("\n".join(body))
            entries += [prompt] if prompt is not None else []
            continue
        waiting: list[tuple[str, str]] = []  # the turn's calls without a result: (name, id)
        prose: list[str] = []
        at = 0
        while at < len(body):
            line = body[at]
            marker = next((m for m in ("[Thinking]", "[Tool call]", "[Tool result]")
                           if line.startswith(m)), None)  # fmt: skip
            if marker is None:
                prose.append(line)
                at += 1
                continue
            entries += _reply(prose)
            prose = []
            end = at + 1
            while end < len(body) and (not body[end].strip() or body[end][0] in " \t"):
                end += 1  # the marker's own lines: blank or indented
            tool = line[len(marker) :].strip()
            given = _dedent(body[at + 1 : end])
            if marker == "[Tool call]":
                calls += 1
                call = f"{name or 'cursor'}:text-call-{calls}"
                waiting.append((tool, call))
                entries.append(_entry("assistant", [_call(call, tool or "unknown", _input(given))]))
            elif marker == "[Tool result]":
                found = next((w for w in waiting if w[0] == tool), waiting[0] if waiting else None)
                if found is not None:  # a result without its call says nothing
                    waiting.remove(found)
                if found is not None and given.strip():  # nor one without output
                    result = {"type": "tool_result", "tool_use_id": found[1],
                              "content": given, "is_error": False}  # fmt: skip
                    entries.append(_entry("user", [result]))
            at = end
        entries += _reply(prose)
    for place, entry in enumerate(entries):
        # Ids apart from those `transcripts` gives the JSON-lines file of the same session
        # (Cursor may keep both): importing both adds the session twice, never mixes them.
        entry["uuid"] = f"{name}:text-{place}" if name else None
    return entries


def _entry(kind: str, content: Any, timestamp: str | None = None) -> dict[str, Any]:
    """An entry without the ids Cursor does not write (`transcripts` names it)."""
    return {"type": kind, "uuid": None, "sessionId": None, "cwd": None,
            "timestamp": timestamp, "message": {"role": kind, "content": content}}  # fmt: skip


def _reply(lines: list[str]) -> list[dict[str, Any]]:
    text = "\n".join(lines).strip()
    return [_entry("assistant", [{"type": "text", "text": text}])] if text else []


def _prompt(text: str) -> dict[str, Any] | None:
    """The prompt entry of a user's text: its ``<user_query>`` (first opening to last
    closing: Cursor does not escape the words inside), else the text after Cursor's
    ``<timestamp>``; None for an empty one or one Cursor wrote itself."""
    stamp = _STAMP.match(text)
    start, end = text.find("<user_query>"), text.rfind("</user_query>")
    if 0 <= start < end:
        words = text[start + len("<user_query>") : end].strip()
    else:
        words = text[stamp.end() if stamp else 0 :].strip()
    if not words or words.startswith(OWN_PROMPTS):
        return None
    return _entry("user", words, clock_time(stamp.group(1)) if stamp else None)


def clock_time(clock: str) -> str | None:
    """Cursor's clock (``Tuesday, Jun 2, 2026, 11:20 AM (UTC+8)``) as an ISO 8601 UTC
    time (``2026-06-02T03:20:00.000Z``); None when it is not one."""
    found = _CLOCK.fullmatch(clock.strip())
    if found is None or found[1].lower() not in _MONTHS:
        return None
    month, day, year, hour, minute, second, half, sign, hours, minutes = found.groups()
    hour_of_day = int(hour)
    if half:  # 12 AM is midnight, 12 PM noon
        hour_of_day = hour_of_day % 12 + (12 if half.lower() == "pm" else 0)
    offset = timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
    try:
        zone = timezone(-offset if sign == "-" else offset)
        moment = datetime(int(year), _MONTHS.index(month.lower()) + 1, int(day), hour_of_day,
                          int(minute), int(second or 0), tzinfo=zone)  # fmt: skip
    except ValueError:  # a day, an hour or an offset out of range
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _call(call: str | None, name: str, given: Any) -> dict[str, Any]:
    """A ``tool_use`` block of Cursor's tool `name`, in Claude Code's terms (`TOOLS`)."""
    name, given = as_claude_tool(name, given, TOOLS)
    return {"type": "tool_use", "id": call, "name": name, "input": given}


def _dedent(lines: list[str]) -> str:
    """Indented lines without their common indentation, blank ones at the ends dropped."""
    margin = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[margin:] for x in lines).strip("\n")


def _input(text: str) -> Any:
    """A call's input as the plain-text format writes it: ``key: value`` lines (a line
    that is not one continues the value above), JSON, or the text itself (a patch)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    given: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        found = None if line[:1].isspace() else _KEY.match(line)
        if found is not None:
            key = found[1]
            given[key] = found[2] or ""
        elif key is None:
            return text
        else:
            given[key] = f"{given[key]}\n{line}" if given[key] else line
    return given or text

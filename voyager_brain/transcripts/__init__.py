"""Every agent's session log read as Claude Code transcript entries, so that `history
import`, auto-memory and a turn's "Last reply", which read Claude Code's format, read the
sessions of every agent.

Claude Code writes one JSON entry a line (``~/.claude/projects/<folder>/<id>.jsonl``):
``{"type": "user" | "assistant" | ..., "uuid", "sessionId", "cwd", "timestamp",
"message": {"role", "content"}}``, a ``content`` being text or a list of ``text``,
``tool_use`` (``id``, ``name``, ``input``) and ``tool_result`` (``tool_use_id``,
``content``, ``is_error``) blocks. The other agents' logs come in three kinds:

- **line formats**, one JSON value a line (Codex's rollouts, `codex`; Copilot CLI's
  session events, `copilot`; Cursor's transcripts, `cursor`; Gemini CLI's chat
  recordings, `gemini`): a reader is chosen by the file's first line and given every
  line in order; each line becomes its entries, and a line that is not conversation one
  entry of a type the readers skip, so that counts of lines stay those of the file;
- **document formats**, one JSON document read whole (Gemini CLI's chat recordings
  before 0.39, `gemini`): their entries are made at once;
- **text formats**, not JSON (Cursor's older transcripts, `cursor`): recognised by the
  file's first line, read whole, their entries made at once.

A format without ids (Cursor's) leaves an entry's ``uuid`` and ``sessionId`` None (a text
format's reader may name its entries itself): given the file's name (the session's id),
`identify` names them ``<session>:<n>``, ``n`` the entry's place among the file's, so that
an import of the file, or of the same file grown, finds the entries it imported before.
A file in none of the formats is read as Claude Code's. Standard library only.
"""

from __future__ import annotations

import errno
import json
import os

from .. import cjson, confine
from .codex import Rollout
from .copilot import EventLog
from .cursor import Transcript, is_transcript_text, text_entries
from .gemini import Recording
from .gemini import entries_of as gemini_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO, Protocol

    class LineReader(Protocol):
        def entries(self, record: dict[str, Any]) -> list[dict[str, Any]]: ...


#: The line formats: classes whose ``of(value)`` is a reader for a file whose first line's
#: JSON value is `value`, or None when the file is not theirs.
LINE_FORMATS: tuple[Any, ...] = (Rollout, EventLog, Transcript, Recording)
#: The document formats: functions of a file's JSON value giving its entries, or None
#: when the document is not theirs.
DOCUMENT_FORMATS: tuple[Callable[[Any], list[dict[str, Any]] | None], ...] = (gemini_entries,)
#: The text formats: (whether a file whose first line is this is theirs, the entries of
#: its whole text given the file's name, or None when it is not theirs).
TEXT_FORMATS: tuple[
    tuple[Callable[[str], bool], Callable[[str, str | None], list[dict[str, Any]] | None]], ...
] = ((is_transcript_text, text_entries),)

#: A document larger than this is not read (a session's log is a few megabytes).
DOCUMENT_LIMIT = 256 << 20
#: How much of a file's end holds its last reply.
TAIL_BYTES = 256_000


def line_reader(first: object) -> LineReader | None:
    """The reader of the line format whose first line's value is `first`; None for
    Claude Code's own lines (and anything else)."""
    for kind in LINE_FORMATS:
        reader: LineReader | None = kind.of(first)
        if reader is not None:
            return reader
    return None


def translator(name: str | None = None) -> Callable[[list[bytes]], list[bytes]]:
    """A function of a file's batches of lines, in order: the lines of a line format as
    transcript lines (`identify` given the file's `name`), any other file's lines as
    given."""
    found: list[LineReader | None] = []
    made = [0]  # the entries made so far: the next one's place

    def translate(batch: list[bytes]) -> list[bytes]:
        if not found:
            found.append(line_reader(parse(batch[0])) if batch else None)
        reader = found[0]
        return batch if reader is None else _translated(reader, batch, name, made)

    return translate


def _translated(
    reader: LineReader, batch: list[bytes], name: str | None, made: list[int]
) -> list[bytes]:
    out: list[bytes] = []
    for raw in batch:
        record = parse(raw)
        if record is None:
            out.append(raw)  # a bad line to the readers too
            continue
        entries = reader.entries(record) if isinstance(record, dict) else []
        if not entries:
            kind = record.get("type") if isinstance(record, dict) else "value"
            entries = [{"type": f"other-{kind}"}]
        identify(entries, name, made[0])
        made[0] += len(entries)
        out += [json.dumps(entry).encode() + b"\n" for entry in entries]
    return out


def identify(entries: list[dict[str, Any]], name: str | None, start: int = 0) -> None:
    """Name the conversation entries a format left without ids, `entries` being the
    file's from its `start`-th on: ``sessionId`` `name` (the file's), ``uuid``
    ``<session>:<place>``. Without a `name`, nothing."""
    if not name:
        return
    for place, entry in enumerate(entries, start):
        if entry.get("type") in ("user", "assistant"):
            entry["sessionId"] = entry.get("sessionId") or name
            entry["uuid"] = entry.get("uuid") or f"{entry['sessionId']}:{place}"


#: A line longer than this is not read (a transcript's lines are a few megabytes at
#: most): it is counted as a bad line, and never held in memory whole.
LINE_LIMIT = 32 << 20
#: What stands for such a line in a batch: not JSON, so `parse` counts it as bad.
_TOO_LONG = b"\x00 a line longer than LINE_LIMIT\n"


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The file's lines, each at most `LINE_LIMIT` bytes (a longer one is skipped to its
    end and stands as `_TOO_LONG`)."""
    while raw := handle.readline(LINE_LIMIT + 1):
        if len(raw) <= LINE_LIMIT or raw.endswith(b"\n"):
            yield raw
            continue
        while (rest := handle.readline(LINE_LIMIT)) and not rest.endswith(b"\n"):
            pass
        yield _TOO_LONG


def _batches(lines: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    """`lines` in lists of about `size` bytes (at least one line each)."""
    batch: list[bytes] = []
    held = 0
    for raw in lines:
        batch.append(raw)
        held += len(raw)
        if held >= size:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def batches(
    handle: BinaryIO, size: int, name: str | None = None
) -> Iterator[tuple[int, list[bytes]]]:
    """The lines of the log open in `handle` as transcript lines, in batches of about
    `size` bytes, each with how many bytes of the file it took (a document's whole size
    with its first batch); `name`, the file's name without its extension, names the
    entries of a format without ids (`identify`). A line longer than `LINE_LIMIT` stands
    as one that is not JSON; a document (or text) over `DOCUMENT_LIMIT` is an OSError."""
    first = handle.readline(LINE_LIMIT)
    handle.seek(0)
    read_text = text_format(decoded(first))
    if read_text is not None or is_document(first):
        data = handle.read(DOCUMENT_LIMIT + 1)
        if len(data) > DOCUMENT_LIMIT:
            raise OSError(errno.EFBIG, f"a document over {DOCUMENT_LIMIT >> 20} MiB is not read")
        entries = read_text(decoded(data), name) if read_text else document_entries(data)
        if entries is not None:
            identify(entries, name)
            read = len(data)  # all of it, counted with the first batch
            for batch in _batches((json.dumps(e).encode() + b"\n" for e in entries), size):
                yield read, batch
                read = 0
            return
        handle.seek(0)  # not a document we know: its lines, read as Claude Code's
    translate = translator(name)
    done = 0
    for batch in _batches(_lines(handle), size):
        read, done = handle.tell() - done, handle.tell()
        yield read, translate(batch)


def text_format(first_line: str) -> Callable[[str, str | None], Any] | None:
    """The entries function of the text format of a file whose first line is
    `first_line`; None when it is in none."""
    return next((read for theirs, read in TEXT_FORMATS if theirs(first_line)), None)


def decoded(data: bytes) -> str:
    """Bytes of a text format as text (what is not UTF-8 as U+FFFD)."""
    return data.decode("utf-8", "replace")


def is_document(first_line: bytes) -> bool:
    """Whether a file whose first line is `first_line` may hold one JSON document over
    many lines (an object pretty-printed: ``{`` alone on its line)."""
    return first_line.strip() == b"{"


def document_entries(data: bytes | str) -> list[dict[str, Any]] | None:
    """The entries of a document format's file; None when `data` is none of them."""
    value = parse(data)
    for entries_of in DOCUMENT_FORMATS:
        entries = entries_of(value)
        if entries is not None:
            return entries
    return None


def entries(text: str) -> list[Any] | None:
    """The parsed entries of a whole log in any format (a line that is not JSON left
    out); None when no line of `text` is JSON (nor a text format's)."""
    read_text = text_format(text[: text.find("\n") + 1 or len(text)])
    if read_text is not None:
        found: list[Any] | None = read_text(text, None)
        return found
    document = document_entries(text) if text.lstrip().startswith("{") else None
    if document is not None:
        return document
    records = [r for r in (parse(line) for line in text.splitlines()) if r is not None]
    reader = line_reader(records[0]) if records else None
    if not records:
        return None
    if reader is None:
        return records
    return [e for r in records if isinstance(r, dict) for e in reader.entries(r)]


def last_reply(path: str | None) -> str | None:
    """The text of the last assistant entry of the log at `path`; None without one (or
    without a readable regular file there)."""
    if not path:
        return None
    try:
        with confine.open_regular(path) as f:
            first = f.readline(TAIL_BYTES)
            read_text = text_format(decoded(first))
            if read_text is not None or is_document(first):
                f.seek(0)
                data = f.read(DOCUMENT_LIMIT)
                found = read_text(decoded(data), None) if read_text else document_entries(data)
                records: list[Any] = found or []
            else:
                f.seek(max(0, os.fstat(f.fileno()).st_size - TAIL_BYTES))
                tail = f.read()
                reader = line_reader(parse(first))
                lines = [parse(raw) for raw in tail.split(b"\n")]
                records = [r for r in lines if isinstance(r, dict)]
                if reader is not None:
                    records = [e for r in records for e in reader.entries(r)]
    except OSError:
        return None
    for record in reversed(records):
        if isinstance(record, dict) and record.get("type") == "assistant":
            text = message_text(record.get("message"))
            if text:
                return text
    return None


def message_text(message: object) -> str | None:
    """The text of an entry's ``message``: its text, or its text blocks joined by
    newlines; None without any."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(c.get("text") or "") for c in content if isinstance(c, dict)
                 and c.get("type") == "text"]  # fmt: skip
        return "\n".join(texts) if any(texts) else None
    return None


def parse(raw: bytes | str) -> Any:
    """A line's (or a document's) JSON value; None when it is not JSON (or not UTF-8, or
    too deep)."""
    try:
        return cjson.loads(raw if isinstance(raw, str) else raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None

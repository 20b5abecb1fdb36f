"""Any agent's session log as Claude Code transcript entries (`voyager_brain.transcripts`):
the choice of reader, the last reply, the conversation auto-memory reads."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from voyager_brain import transcripts
from voyager_brain.memory.extract import read_conversation

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _claude_line(kind: str, text: str) -> str:
    return json.dumps({"type": kind, "uuid": text, "message": {"role": kind, "content": text}})


def test_the_last_reply_of_a_claude_code_transcript(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    lines = [_claude_line("user", "go"), _claude_line("assistant", "first"), "torn {"]
    lines.insert(2, _claude_line("assistant", "second"))
    log.write_text("\n".join(lines))
    assert transcripts.last_reply(str(log)) == "second"


def test_the_last_reply_of_a_codex_rollout() -> None:
    assert transcripts.last_reply(str(FIXTURES / "codex" / "rollout-session.jsonl")) == "Done."


def test_no_last_reply_without_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert transcripts.last_reply(str(fifo)) is None  # refused at once, not hung
    assert transcripts.last_reply(str(tmp_path / "missing")) is None
    assert transcripts.last_reply(None) is None


def test_a_rollout_without_conversation_teaches_nothing() -> None:
    meta = json.dumps({"type": "session_meta", "payload": {"id": "s", "cwd": "/p"}})
    assert read_conversation(meta + "\n") == []  # not the JSON as the user's words
    assert read_conversation("we use tox\n") == [("user", "we use tox\n")]


def test_batches_count_every_byte_and_keep_claude_codes_lines() -> None:
    data = "".join(_claude_line("user", f"m{i}") + "\n" for i in range(50)).encode()
    got = list(transcripts.batches(io.BytesIO(data), 200))
    assert len(got) > 1
    assert sum(read for read, _ in got) == len(data)
    assert b"".join(line for _, batch in got for line in batch) == data


def test_a_line_over_the_limit_stands_as_a_bad_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcripts, "LINE_LIMIT", 100)
    data = b"x" * 300 + b"\n" + _claude_line("user", "after").encode() + b"\n"
    [(read, batch)] = list(transcripts.batches(io.BytesIO(data), 1 << 20))
    assert read == len(data) and transcripts.parse(batch[0]) is None
    assert json.loads(batch[1])["uuid"] == "after"


def test_a_brace_alone_that_is_no_known_document_is_read_as_lines() -> None:
    data = b"{\n" + _claude_line("user", "u").encode() + b"\n"
    lines = [line for _, batch in transcripts.batches(io.BytesIO(data), 1 << 20) for line in batch]
    assert lines == [b"{\n", _claude_line("user", "u").encode() + b"\n"]


@pytest.mark.parametrize(
    "text",
    ["user:\n\ud800 we use tox\n", '{"messages": ["\ud800"]}', "\ud800\n", '{"a": 1}\n\udcff'],
)
def test_a_lone_surrogate_in_any_format_reads_without_error(text: str) -> None:
    """`memory extract` reads a file's bytes as text with surrogate escapes."""
    # Found by the any-input property test: encoding the text raised.
    assert isinstance(read_conversation(text), list)

"""Codex rollout lines read as Claude Code transcript entries (`transcripts.codex`)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.transcripts import translator
from voyager_brain.transcripts.codex import Rollout

FIXTURE = Path(__file__).parent.parent / "fixtures" / "codex" / "rollout-session.jsonl"


def test_the_recorded_session_reads_as_prompt_call_result_and_reply() -> None:
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    entries = [json.loads(raw) for raw in translator()(lines)]
    said = [e for e in entries if e["type"] in ("user", "assistant")]
    assert len(entries) == len(lines)  # one entry a line here: counts stay the file's
    prompt, call, result, reply = said
    assert prompt["message"]["content"] == "run it"
    assert prompt["sessionId"] == "01a21cf4-5ddf-74a3-89dd-21f8e360709d"
    assert prompt["cwd"] == "/home/user/project"
    [use] = call["message"]["content"]
    assert (use["name"], use["input"]) == ("Bash", {"command": "echo X; exit 3"})
    [output] = result["message"]["content"]
    assert output["tool_use_id"] == use["id"] and output["is_error"] is True
    assert reply["type"] == "assistant"


def test_a_claude_code_transcript_passes_through_unchanged() -> None:
    line = json.dumps({"type": "user", "uuid": "u", "message": {"content": "hi"}}).encode()
    assert translator()([line + b"\n"]) == [line + b"\n"]
    assert Rollout.of("not json") is None and Rollout.of(None) is None


@given(
    st.lists(
        st.binary(max_size=200) | st.from_regex(rb'\{"type":"response_item".*', fullmatch=True)
    )
)
def test_property_any_lines_after_a_rollout_start_read_without_error(tail: list[bytes]) -> None:
    first = json.dumps({"type": "session_meta", "payload": {"id": "s", "cwd": "/p"}}).encode()
    out = translator()([first, *tail])
    assert len(out) >= 1 + len(tail)  # every line stands for at least one entry

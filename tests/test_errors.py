"""errors.one_line: whatever a message quotes, it is one line."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from voyager_brain.errors import one_line


@given(st.text())
@example("history import \x0b: cannot read")  # found by tests/cli/test_any_input.py
@example("a\u2028b\x1cc\x85d\r\ne")
def test_any_message_is_one_line(message: str) -> None:
    assert len(one_line(message).splitlines()) <= 1
    if not any(c in message for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"):
        assert one_line(message) == message

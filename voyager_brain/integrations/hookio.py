"""Reading a hook's stdin: one JSON object, as agents send it."""

from __future__ import annotations

import json

from ..errors import BrainError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


class HookInputError(BrainError):
    """The hook's stdin is not the JSON object the agent sends."""


def read_payload(stream: TextIO) -> dict[str, Any]:
    """The JSON object on `stream`; {} for empty input; `HookInputError` otherwise."""
    text = stream.read()
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise HookInputError(
            f"stdin: not valid JSON ({exc.msg}); expected the hook's JSON"
        ) from None
    if not isinstance(data, dict):
        raise HookInputError("stdin: expected a JSON object")
    return data

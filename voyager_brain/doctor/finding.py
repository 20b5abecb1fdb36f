"""What a doctor check reports: one `Finding` each."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class Finding:
    level: str  # "ok", "warning" or "error"
    message: str
    hint: str = ""
    repaired: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

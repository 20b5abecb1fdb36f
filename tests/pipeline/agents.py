"""The scripted fake agent (`fake_agent.py`) as a pipeline runner, for the tests here."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

FAKE_AGENT = Path(__file__).resolve().parent / "fake_agent.py"


class FakeAgent:
    """Where the fake agent reads its script and records its runs."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.command = (
            f"FAKE_DIR={shlex.quote(str(folder))} "
            f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_AGENT))}"
        )

    def script(self, **steps: list[dict[str, Any]]) -> None:
        (self.folder / "plan.json").write_text(json.dumps(steps))

    def calls(self) -> list[dict[str, Any]]:
        path = self.folder / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line]

    def roles(self) -> list[str]:
        return [call["role"] for call in self.calls()]

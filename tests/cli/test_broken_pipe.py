"""`voyager-brain ... | head`: when the reader of the output goes away, the command ends
quietly (exit 1, nothing on stderr), as Unix tools do, on the CLI's paths and on the
fast paths that skip click (`context`, `status`, `show`, `rules`, `recall`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli


@pytest.fixture
def big(repo: Path) -> Path:
    """A project whose memory log lists 4,000 learnings: output past a pipe's buffer."""
    assert run_cli("init", cwd=repo).returncode == 0
    with (repo / ".voyager" / "memory.jsonl").open("a") as log:
        for i in range(4000):
            entry = {"id": f"l{i:07d}", "type": "learning", "created": "2026-11-01T00:00:00Z"}
            log.write(json.dumps({**entry, "text": f"learning {i} about the build"}) + "\n")
    return repo


@pytest.mark.parametrize(
    "args",
    [
        ["context", "--explain", "--budget", "200000"],
        ["memory", "search", "learning"],
        ["brain", "action=list", "type=learning"],
        ["show", "--json"],
    ],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(big: Path, args: list[str]) -> None:
    command = subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", *args],
        cwd=big,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert command.stdout is not None and command.stderr is not None
    command.stdout.readline()
    command.stdout.close()  # `| head -1`
    with command.stderr:
        error = command.stderr.read().decode()
    status = command.wait(timeout=60)
    assert error == ""
    assert status in (0, 1)  # 0 when it had written everything before the reader left

"""`voyager-brain history import` as the tests of every agent's transcripts run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli


def import_file(path: Path, home: Path, cwd: Path) -> dict[str, Any]:
    """Import `path` into the history of `home` (its VOYAGER_HOME), from `cwd`: the
    report of what it did."""
    done = run_cli(
        "history", "import", str(path), "--json", cwd=cwd, env={"VOYAGER_HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)
    return dict(report)

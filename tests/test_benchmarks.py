"""The benchmark script runs end to end (a smoke check: no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _table_rows(text: str, title: str) -> list[str]:
    """The data rows of the table under the ``## <title>...`` heading."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"## {title}"))
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("| ") and not line.startswith("| what "):
            rows.append(line)
    return rows


def _has_dashboard() -> bool:
    try:
        import starlette.testclient  # noqa: F401

        import voyager_brain.ui.app  # noqa: F401
    except ImportError:
        return False
    return True


def test_smoke_run_writes_every_table(tmp_path: Path) -> None:
    output = tmp_path / "results.md"
    committed = ROOT / "benchmarks" / "results.md"
    before = committed.read_bytes() if committed.exists() else None
    done = subprocess.run(
        [sys.executable, "benchmarks/run.py", "--smoke", "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = output.read_text(encoding="utf-8")
    assert text.startswith("# voyager-brain benchmarks\n")
    assert "Python: " in text and "Platform: " in text

    load = _table_rows(text, "Load")
    assert len(load) == 1 and "load()" in load[0] and "20 entries" in load[0]
    persist = _table_rows(text, "Persist")
    assert len(persist) == 3
    assert any("fast path" in row for row in persist)
    assert any("fresh process" in row for row in persist)
    assert any("changed on disk" in row for row in persist)
    compaction = _table_rows(text, "Compaction")
    assert len(compaction) == 1 and "50 →" in compaction[0]
    startup = _table_rows(text, "Process startup")
    assert len(startup) == 3

    memory = _table_rows(text, "Memory log")
    assert len(memory) == 14

    def count(rows: list[str], words: str) -> int:
        return sum(words in row for row in rows)

    assert count(memory, "log.read() + log.fold()") == 2
    assert count(memory, "scaling of log.fold() alone") == 1
    assert count(memory, "scaling of a bare `{}.update") == 1
    assert any("log.fold()" in row and "200 log lines" in row for row in memory)
    assert count(memory, "`voyager-brain context` process, no caches") == 2
    assert count(memory, "`voyager-brain context` process, fold cache warm") == 2
    assert count(memory, "`voyager-brain context` process, cached document") == 2
    assert count(memory, "scaling of read + fold") == 1
    assert count(memory, "scaling of the floor") == 1
    assert count(memory, "after appending 10 entries") == 2
    hook = _table_rows(text, "Agent hooks")
    assert len(hook) == 4
    assert count(hook, "session-start, first run") == 1
    assert count(hook, "later runs") == 1
    assert count(hook, "hook claude stop") == 1
    assert count(hook, "hook codex session-end") == 1

    merge = _table_rows(text, "Merge driver")
    assert len(merge) == 6
    for kind, size in (("brain.md", "200 entries"), ("brain.json", "200 items")):
        assert count(merge, f"merge-driver` process, {kind} | {size}") == 1
        assert count(merge, f"in process, {kind} | {size}") == 1
    assert count(merge, "memory.jsonl | 200 log lines") == 2
    history = _table_rows(text, "History")
    assert len(history) == 1 and "`voyager-brain log`" in history[0] and "30 commits" in history[0]
    guard = _table_rows(text, "Guard rules")
    assert len(guard) == 9  # one tool-call hook row per agent
    assert count(guard, "minimal hook") == 1 and count(guard, "with the C modules") == 1
    for name in ("claude pre-tool-use", "codex pre-tool-use", "gemini before-tool"):
        assert count(guard, f"hook {name} (no rule matches)") == 1
    assert count(guard, "cursor pre-tool-use") == 1 and count(guard, "copilot pre-tool-use") == 1
    assert count(guard, "rules test") == 1 and count(guard, "30 rules") == 1
    assert count(guard, "history import of a transcript") == 1
    long_use = _table_rows(text, "Long use")
    assert count(long_use, "pre-tool-use at the") == 2 and count(long_use, "-wal") == 1
    for name in ("codex pre-tool-use", "gemini before-tool", "cursor pre-tool-use"):
        assert count(long_use, f"hook {name} after the 60 calls") == 1
    commands = _table_rows(text, "Everyday commands")
    for command in ("status", "show", "recall flaky test", "rules list"):
        assert count(commands, f"voyager-brain {command} |") == 1

    pipeline = _table_rows(text, "The multi-agent pipeline")
    assert len(pipeline) == 2
    assert count(pipeline, "pipeline run, 4 stages") == 1
    assert count(pipeline, "an architect's Write") == 1

    continuity = _table_rows(text, "Continuity")
    assert len(continuity) == 30  # 5 scenarios x 3 budgets x (must-know, tokens)
    for n in range(1, 6):
        assert count(continuity, f"| ({n}) ") == 6
    for budget in ("1,000", "2,000", "4,000"):
        assert count(continuity, f"| {budget}-token budget |") == 10
    assert count(continuity, "must-know recall, %") == 15
    tokens = [row for row in continuity if "tokens used (floor: every brain file whole)" in row]
    assert len(tokens) == 15
    recall = _table_rows(text, "Recall")
    assert len(recall) == 4
    assert count(recall, "300 learnings, 5 questions") == 4
    assert count(recall, "recall@5, % of questions") == 1
    assert count(recall, "first query (index built)") == 1
    assert count(recall, "warm query") == 1
    assert count(recall, "first query after appending a learning") == 1

    redaction = _table_rows(text, "Redaction of secrets")
    assert len(redaction) == 6
    assert count(redaction, "redact() of a transcript") == 1
    assert count(redaction, "| redact() of an observation, no secret") == 1
    assert count(redaction, "| redact() of an observation with a secret") == 1
    assert count(redaction, "python -c pass") == 1
    assert count(redaction, "import voyager_brain.redact") == 1
    assert count(redaction, "a first redact()") == 1

    # The dashboard's rows need its extra (Starlette, and httpx2 for the test client).
    dashboard = _table_rows(text, "Dashboard")
    if _has_dashboard():
        assert len(dashboard) == 25  # 12 pages x (HTML, JSON twin) + the first page
        assert count(dashboard, "format=json") == 12
        for page in ("GET / ", "GET /brain ", "GET /state ", "GET /memory ", "GET /rules "):
            assert count(dashboard, f"| {page}(") == 1, page
        assert count(dashboard, "GET /memory?q=") == 2
        assert count(dashboard, "GET /history/") == 4
        assert count(dashboard, "GET /history?project=") == 2
        assert count(dashboard, "GET /pipeline") == 2
        assert count(dashboard, "200 entries, 2,000 calls") == 25
        assert count(dashboard, "first GET / of a new app in a new process") == 1
    else:
        assert dashboard == []

    every = load + persist + compaction + startup + memory + hook + merge + history + guard
    every += pipeline + continuity + recall + redaction + dashboard + long_use + commands
    for row in every:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 8, row
        float(cells[3])  # ours (ms) is a number
    beside_floor = [row for row in redaction if "python -c pass" not in row]
    for row in (
        memory + hook + merge + history + guard + pipeline + tokens + beside_floor + dashboard
    ) + commands:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        float(cells[4])
        assert cells[5].endswith("x"), row

    assert "## Missed targets" in text
    # --output is honoured: the committed results are left alone.
    assert (committed.read_bytes() if committed.exists() else None) == before


def test_populate_small_makes_a_project_the_cli_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/uidata.py's small project: the sizes asked for, in every store, and the
    commands a person would run on it answer without an error."""
    if str(ROOT) not in sys.path:  # benchmarks/ is a folder of the repository, not installed
        monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.uidata import counts, populate_small

    home = tmp_path / "home"
    monkeypatch.setenv("VOYAGER_HOME", str(home))
    monkeypatch.delenv("VOYAGER_MEMORY_PATH", raising=False)
    top = populate_small(tmp_path, home=home)
    assert top == (tmp_path / "project").resolve()
    rows = counts(home)
    assert rows["projects"] == 3 and rows["sessions"] == 200 and rows["rules"] == 16
    assert rows["tool_calls"] == 2_000
    assert 0.01 * 2_000 < rows["rule_triggers"] < 0.1 * 2_000
    memory = (top / ".voyager" / "memory.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(memory) > 200
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (
        ["-C", str(top), "status"],
        ["-C", str(top), "show"],
        ["-C", str(top), "pipeline", "status"],
        ["-C", str(top), "history", "sessions"],
        ["-C", str(top), "rules", "list", "--all"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "voyager_brain", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert done.stdout.strip() and not done.stderr.strip(), (args, done.stderr)
    status = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "-C", str(top), "pipeline", "status"],
        capture_output=True, text=True, env=env, timeout=120,
    ).stdout  # fmt: skip
    assert "status:   running" in status and "retries:  1" in status


def test_a_missed_target_fails_the_run_and_only_write_replaces_the_results() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.exit_status(0, smoke=False) == 0
    assert module.exit_status(2, smoke=False) == 1
    assert module.exit_status(2, smoke=True) == 0  # tiny sizes: not judged
    refused = subprocess.run(
        [sys.executable, "benchmarks/run.py", "--write", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "--write writes a full run's results" in refused.stderr

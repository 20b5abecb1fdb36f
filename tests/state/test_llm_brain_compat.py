"""Every brain.json voyager-brain writes is one llm-brain reads, and llm-brain's files load
here: llm-brain 1.0.2 (npm; github.com/jainendra001/llm-brain at 517db71), whose
`validateBrainState` (a zod schema in src/types/brain.ts) refuses a file with any field
missing or of another type, and then fails `show`, `load` and `save` with "Invalid brain
state format".

`llm_brain_problems` is that schema written out in Python from its source; with
`VOYAGER_LLM_BRAIN` naming a node_modules folder that holds the llm-brain package
(`npm install llm-brain@1.0.2`; `.ci/run` does), llm-brain's own validator judges too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

STRINGS = "list of strings"
SCHEMA: dict[str, Any] = {
    "version": str,
    "project": str,
    "lastUpdated": str,
    "sessionCount": "number",
    "facts": {"stack": STRINGS, "architecture": str, "environment": dict, "custom": STRINGS},
    "decisions": [{"what": str, "why": str, "when": str, "reversible": bool}],
    "activeState": {
        "currentGoal": str,
        "inProgress": STRINGS,
        "blockers": STRINGS,
        "recentlyCompleted": STRINGS,
    },
    "keyFiles": [{"path": str, "role": str}],
    "knownIssues": [
        {"issue": str, "workaround": str, "severity": ("low", "medium", "high", "critical")}
    ],
    "preferences": {"style": str, "constraints": STRINGS, "communication": str},
    "nextSteps": STRINGS,
}


def llm_brain_problems(value: Any, schema: Any = SCHEMA, path: str = "") -> list[str]:
    """Where `value` breaks llm-brain's BrainStateSchema (every field required, no nulls,
    extra keys allowed)."""
    if schema == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number"]
    if schema == STRINGS:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return [] if ok else [f"{path}: expected a list of strings"]
    if isinstance(schema, tuple):
        return [] if value in schema else [f"{path}: expected one of {schema}"]
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        return [
            p for n, v in enumerate(value) for p in llm_brain_problems(v, schema[0], f"{path}[{n}]")
        ]
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        return [
            p
            for key, sub in schema.items()
            for p in (
                llm_brain_problems(value[key], sub, f"{path}.{key}".lstrip("."))
                if key in value
                else [f"{path}.{key}: required".lstrip(".")]
            )
        ]
    ok = isinstance(value, schema) and not (schema is int and isinstance(value, bool))
    return [] if ok else [f"{path}: expected {schema.__name__}"]


LLM_BRAIN = os.environ.get("VOYAGER_LLM_BRAIN")


def assert_llm_brain_reads(path: Path) -> None:
    document = json.loads(path.read_text())
    assert llm_brain_problems(document) == []
    if LLM_BRAIN and shutil.which("node"):
        script = (
            "import { validateBrainState } from 'llm-brain';"
            "import { readFileSync } from 'node:fs';"
            "const r = validateBrainState(JSON.parse(readFileSync(process.argv[1], 'utf8')));"
            "console.log(JSON.stringify(r)); process.exit(r.success ? 0 : 1);"
        )
        done = subprocess.run(
            ["node", "--input-type=module", "-e", script, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(LLM_BRAIN).parent,  # where node resolves the package from
        )
        assert done.returncode == 0, done.stdout + done.stderr
        # Its own CLI on the file, as a project of its own would hold it.
        shown = path.parent.parent / "llm-brain-view"
        (shown / ".llm-brain").mkdir(parents=True, exist_ok=True)
        (shown / ".llm-brain" / "brain.json").write_bytes(path.read_bytes())
        cli = Path(LLM_BRAIN) / ".bin" / "llm-brain"
        for command in (["show"], ["load", "--to", "stdout"]):
            done = subprocess.run(
                [str(cli), *command], cwd=shown, capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 0, (command, done.stdout + done.stderr)
            assert "Invalid brain state format" not in done.stdout + done.stderr


def save(repo: Path, update: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return run_cli("save", "-", cwd=repo, input=json.dumps(update))


@pytest.mark.parametrize(
    "update",
    [
        {"decisions": [{"what": "Use SQLite"}]},
        {"keyFiles": [{"path": "src/app.py"}]},
        {"knownIssues": [{"issue": "CI is slow"}]},
        {"decisions": [{"what": "Use SQLite", "why": None, "reversible": None}]},
        {"preferences": {"style": "terse"}},
    ],
    ids=["decision-what-only", "keyfile-path-only", "issue-only", "nulls", "preferences-part"],
)
def test_what_save_writes_is_a_file_llm_brain_reads(repo: Path, update: dict[str, Any]) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    done = save(repo, update)
    assert done.returncode == 0, done.stderr
    path = repo / ".voyager" / "brain.json"
    assert_llm_brain_reads(path)
    decisions = json.loads(path.read_text())["decisions"]
    if decisions:  # the documented defaults (docs/brain-json.md)
        assert decisions[0]["why"] == "" and decisions[0]["reversible"] is True
        assert len(decisions[0]["when"]) == 10  # the day of the save, YYYY-MM-DD


def test_the_demos_brain_json_is_one_llm_brain_reads(tmp_path: Path) -> None:
    assert run_cli("demo", "--dir", str(tmp_path / "demo"), cwd=tmp_path).returncode == 0
    assert_llm_brain_reads(tmp_path / "demo" / ".voyager" / "brain.json")


@pytest.mark.parametrize(
    ("update", "field"),
    [
        ({"preferences": {"constraints": "no ORMs"}}, "preferences.constraints"),
        ({"preferences": {"communication": ["terse"]}}, "preferences.communication"),
        ({"knownIssues": [{"issue": "x", "severity": "urgent"}]}, "knownIssues[0].severity"),
    ],
)
def test_what_llm_brain_would_refuse_is_one_line(
    repo: Path, update: dict[str, Any], field: str
) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    before = (repo / ".voyager" / "brain.json").read_bytes()
    done = save(repo, update)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(f"voyager-brain: stdin: {field}: expected ")
    assert (repo / ".voyager" / "brain.json").read_bytes() == before


@pytest.mark.parametrize("when", ["March 2026", "", "2026-03-01T12:34:56.789Z"])
def test_a_decision_when_llm_brain_takes_is_read_here(repo: Path, when: str) -> None:
    """llm-brain takes any string for `when`: its files load and merge here."""
    state = {
        "version": "1.0.2",
        "project": "shop",
        "lastUpdated": "2026-03-01T12:34:56.789Z",
        "sessionCount": 3,
        "facts": {"stack": ["Python"], "architecture": "", "environment": {}, "custom": []},
        "decisions": [{"what": "Use SQLite", "why": "one file", "when": when, "reversible": True}],
        "activeState": {
            "currentGoal": "",
            "inProgress": [],
            "blockers": [],
            "recentlyCompleted": [],
        },
        "keyFiles": [],
        "knownIssues": [],
        "preferences": {"style": "", "constraints": [], "communication": ""},
        "nextSteps": [],
    }
    assert llm_brain_problems(state) == []
    source = repo / ".llm-brain" / "brain.json"
    source.parent.mkdir()
    source.write_text(json.dumps(state, indent=2))
    assert run_cli("init", cwd=repo).returncode == 0
    done = run_cli("import", "llm-brain", cwd=repo)
    assert done.returncode == 0, done.stderr
    shown = run_cli("show", "--json", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["decisions"][0]["when"] == when


@pytest.mark.skipif(
    not (LLM_BRAIN and shutil.which("node")),
    reason="set VOYAGER_LLM_BRAIN to a node_modules folder holding llm-brain@1.0.2"
    " (`npm install llm-brain@1.0.2`; .ci/run does) to run its own `save`",
)
def test_llm_brains_save_merges_into_our_file_and_we_read_the_result(repo: Path) -> None:
    """Two people, one on each tool: llm-brain's `save` (its CLI, merging by its rules)
    over the brain.json we wrote, then ours over what it wrote."""
    assert LLM_BRAIN is not None
    assert run_cli("init", cwd=repo).returncode == 0
    assert (
        save(repo, {"decisions": [{"what": "Use SQLite"}], "nextSteps": ["ship"]}).returncode == 0
    )
    ours = repo / ".voyager" / "brain.json"
    theirs = repo / ".llm-brain" / "brain.json"
    theirs.parent.mkdir()
    theirs.write_bytes(ours.read_bytes())
    incoming = json.loads(ours.read_text())
    incoming["decisions"] = [
        {"what": "Use Postgres later", "why": "scale", "when": "March 2026", "reversible": True}
    ]
    incoming["keyFiles"] = [{"path": "src/db.py", "role": "storage"}]
    (repo / "incoming.json").write_text(json.dumps(incoming))
    cli = Path(LLM_BRAIN) / ".bin" / "llm-brain"
    done = subprocess.run(
        [str(cli), "save", "--from", "file", "--file", "incoming.json"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    merged = json.loads(theirs.read_text())
    assert [d["what"] for d in merged["decisions"]] == ["Use SQLite", "Use Postgres later"]

    # Ours reads what llm-brain wrote, and saves over it keeping all of it.
    ours.write_bytes(theirs.read_bytes())
    done = save(repo, {"knownIssues": [{"issue": "CI is slow"}]})
    assert done.returncode == 0, done.stderr
    after = json.loads(ours.read_text())
    assert [d["what"] for d in after["decisions"]] == ["Use SQLite", "Use Postgres later"]
    assert after["decisions"][1]["when"] == "March 2026"
    assert after["keyFiles"] == [{"path": "src/db.py", "role": "storage"}]
    assert after["sessionCount"] == merged["sessionCount"] + 1
    assert_llm_brain_reads(ours)

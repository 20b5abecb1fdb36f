"""A stand-in agent for trying the pipeline without a model: `voyager-brain pipeline
example-runner`, given as ``--runner``. It does each role's file work the simplest way
and prints a result as ``claude -p --output-format json`` does; the reviewer asks for
one revision, then approves. It ships with the package so that the guide's example runs
from any install, in any project."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FILES = {
    "scout": {".brain/RESEARCH/hello.md": "# Findings\n\nNo script exists yet; the README says"
              " nothing about one.\n"},
    "architect": {".brain/PLAN.md": "# Plan\n\n- [ ] Add hello.sh printing a greeting\n"
                  "- [ ] Make it executable\n"},
    "builder": {"hello.sh": '#!/bin/sh\necho "Hello from the pipeline"\n'},
}  # fmt: skip


def run_stage(project: Path, role: str, stage: str) -> dict[str, object]:
    """Do `role`'s part in `project` and return the result the engine reads."""
    for name, text in FILES.get(role, {}).items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name == "hello.sh":
            path.chmod(0o755)
    result: dict[str, object] = {
        "type": "result",
        "subtype": "success",
        "session_id": f"demo-{stage}",
        "result": "done",
    }
    if role == "reviewer":
        # A revision first: approve once the run has been sent back (`retries`).
        state = json.loads((project / ".brain" / "pipeline-state.json").read_text())
        approve = state.get("retries", 0) > 0
        summary = "Done as planned." if approve else "Works; say what it is for in a comment."
        result["result"] = summary
        result["structured_output"] = {
            "verdict": "APPROVE" if approve else "REVISE",
            "score": 8,
            "summary": summary,
            "issues": [],
            "patternsCompliance": True,
        }
    return result


def main() -> None:
    sys.stdin.read()  # the stage's task; this agent knows its part already
    role = os.environ.get("VOYAGER_PIPELINE_ROLE", "")
    stage = os.environ.get("VOYAGER_PIPELINE_STAGE", "0")
    print(json.dumps(run_stage(Path.cwd(), role, stage), separators=(",", ":")))

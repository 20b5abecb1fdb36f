"""A scripted stand-in for a coding agent, run by the pipeline engine as its runner.

It behaves like ``claude -p --output-format json``: reads its task on stdin, does the
file work its role asks for, and prints one JSON result line. What it does on its Nth run
as a role comes from ``$FAKE_DIR/plan.json`` (``{"reviewer": [{...}, {...}], ...}``; a
role's last step repeats); every run is recorded in ``$FAKE_DIR/calls.jsonl``.

Step keys (all optional):
- ``skip``: do none of the role's file work;
- ``write``: ``{relative path: text}`` written in the project;
- ``plan``: PLAN.md's text (architect), ``review_md``: REVIEW.md's text (reviewer);
- ``structured``: the structured output to print (reviewer), or ``verdict`` for a valid
  one with that verdict;
- ``stdout``: print this instead of the JSON line; ``stderr``: also print this there;
- ``exit``: the exit status; ``sleep``: seconds to wait first (``touch_every``: touching
  a file in the project at that interval meanwhile);
- ``delete``: relative paths removed from the project (after ``write``);
- ``git``: a list of git argument lists, each run in the project (after ``delete``);
- ``commit``: true to ``git add -A`` and ``git commit`` what the project holds, last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    fake = Path(os.environ["FAKE_DIR"])
    role = os.environ["VOYAGER_PIPELINE_ROLE"]
    project = Path.cwd()
    calls_path = fake / "calls.jsonl"
    previous = (
        [json.loads(line) for line in calls_path.read_text().splitlines() if line]
        if calls_path.exists()
        else []
    )
    n = sum(1 for call in previous if call["role"] == role)
    plan = json.loads((fake / "plan.json").read_text()) if (fake / "plan.json").exists() else {}
    steps = plan.get(role) or [{}]
    step = steps[min(n, len(steps) - 1)]
    stdin = sys.stdin.read()
    record = {
        "role": role,
        "n": n,
        "stdin": stdin,
        "env": {k: v for k, v in os.environ.items() if k.startswith("VOYAGER_")},
        "pid": os.getpid(),
    }
    with calls_path.open("a") as calls:
        calls.write(json.dumps(record) + "\n")

    if "sleep" in step:
        deadline = time.monotonic() + step["sleep"]
        every = step.get("touch_every")
        while time.monotonic() < deadline:
            time.sleep(min(every or 0.05, max(0.0, deadline - time.monotonic())))
            if every:
                (project / "busy.txt").write_text(str(time.time()))
    if not step.get("skip"):
        work(role, project, n, step)
    for path, text in step.get("write", {}).items():
        target = project / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    for path in step.get("delete", []):
        (project / path).unlink(missing_ok=True)
    for args in step.get("git", []):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    if step.get("commit"):
        for args in (["add", "-A"], ["commit", "-q", "-m", f"{role} run {n}"]):
            subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    if "stderr" in step:
        print(step["stderr"], file=sys.stderr)
    if "stdout" in step:
        print(step["stdout"])
    else:
        result = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": f"fake-{role}-{n}",
            "result": f"{role} run {n} done",
        }
        structured = step.get("structured")
        if structured is None and "verdict" in step:
            structured = {
                "verdict": step["verdict"],
                "score": 7,
                "summary": f"review {n}",
                "issues": [{"severity": "minor", "description": "a nit", "file": "src/x.txt"}],
                "patternsCompliance": step.get("patterns", True),
            }
        if structured is not None:
            result["structured_output"] = structured
        print(json.dumps(result))
    return int(step.get("exit", 0))


def work(role: str, project: Path, n: int, step: dict) -> None:
    brain = project / ".brain"
    if role == "scout":
        (brain / "RESEARCH").mkdir(parents=True, exist_ok=True)
        (brain / "RESEARCH" / "findings.md").write_text(f"# Findings\n\nrun {n}\n")
    elif role == "architect":
        text = step.get("plan", f"# Plan\n\n- [ ] build step one (run {n})\n- [ ] test it\n")
        (brain / "PLAN.md").write_text(text)
    elif role == "builder":
        (project / "src").mkdir(exist_ok=True)
        (project / "src" / "x.txt").write_text(f"built by run {n}\n")
    elif role == "reviewer" and "review_md" in step:
        (brain / "REVIEW.md").write_text(step["review_md"])


if __name__ == "__main__":
    sys.exit(main())

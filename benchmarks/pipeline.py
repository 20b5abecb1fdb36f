"""The multi-agent pipeline (seed 004): what the engine adds to the agents it runs, and
what the role guard adds to a planner's tool call."""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
from pathlib import Path

from benchmarks.guard import _voyager_command
from benchmarks.memory import run_child
from benchmarks.plan import Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import timed

#: The least an agent can do per role: the file its check wants, and a result line.
AGENT = r"""
cat > /dev/null
case "$VOYAGER_PIPELINE_ROLE" in
  scout) echo "# Notes" > .brain/RESEARCH/notes.md ;;
  architect) printf -- '- [ ] step\n' > .brain/PLAN.md ;;
  builder) date +%s%N > work.txt ;;
esac
if [ "$VOYAGER_PIPELINE_ROLE" = reviewer ]; then
  echo 'REVIEW'
else
  echo '{"type":"result","session_id":"b","result":"done"}'
fi
""".replace(
    "REVIEW",
    json.dumps(
        {
            "type": "result",
            "session_id": "b",
            "structured_output": {
                "verdict": "APPROVE",
                "score": 9,
                "summary": "ok",
                "issues": [],
                "patternsCompliance": True,
            },
        }
    ),
)
ROLES = ("scout", "architect", "builder", "reviewer")


def bench_pipeline(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    from voyager_brain.config import Config
    from voyager_brain.pipeline.engine import Pipeline

    top = parent / "pipeline"
    top.mkdir()
    run_child(["git", "init", "-q"], os.environ.copy(), top)
    agent = parent / "pipeline-agent.sh"
    agent.write_text(AGENT)
    command = f"sh {shlex.quote(str(agent))}"
    config = Config.from_mapping({"pipeline": {"runner": command}})
    engine = Pipeline(top, config=config)
    engine.run("warm up", ROLES)  # .brain/ created, templates and modules loaded

    def agents_alone() -> None:
        # The floor: the same four agent processes, started one after the other by hand.
        for index, role in enumerate(ROLES):
            env = {
                **os.environ,
                "VOYAGER_PIPELINE_ROLE": role,
                "VOYAGER_PIPELINE_STAGE": str(index),
            }
            subprocess.run(command, shell=True, cwd=top, env=env, input=b"task", check=True,
                           capture_output=True)  # fmt: skip

    def through_the_engine() -> None:
        final = Pipeline(top, config=config).run("benchmark task", ROLES)
        if final.status != "completed":
            raise RuntimeError(f"pipeline {final.status}: {final.error}")

    floors, ours = [], []
    for _ in range(plan.pipeline_runs):
        floors.append(timed(agents_alone))
        ours.append(timed(through_the_engine))
    results.add(
        "pipeline",
        Row(
            "pipeline run, 4 stages (engine in process)",
            "4 agent runs",
            plan.pipeline_runs,
            statistics.median(ours),
            statistics.median(floors),
        ),
    )

    # The role guard: the same Write into .brain/, by an architect and by no role.
    env = child_env(pycache)
    hook = [*_voyager_command(), "hook", "claude", "pre-tool-use"]
    calls = iter(range(10**9))

    def payload() -> str:
        return json.dumps(
            {
                "session_id": "bench-pipeline",
                "cwd": str(top),
                "hook_event_name": "PreToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": ".brain/PLAN.md", "content": "- [ ] step\n"},
                "tool_use_id": f"toolu_pipeline_{next(calls)}",
            }
        )

    planner = {**env, "VOYAGER_PIPELINE_ROLE": "architect", "VOYAGER_PIPELINE_PROJECT": str(top)}
    run_child(hook, env, top, stdin=payload())  # warm-up
    run_child(hook, planner, top, stdin=payload())
    plain, guarded = [], []
    for _ in range(plan.guard_runs):
        plain.append(timed(lambda: run_child(hook, env, top, stdin=payload())))
        guarded.append(timed(lambda: run_child(hook, planner, top, stdin=payload())))
    results.add(
        "pipeline",
        Row(
            "hook claude pre-tool-use, an architect's Write",
            ".brain/PLAN.md",
            plan.guard_runs,
            statistics.median(guarded),
            statistics.median(plain),
        ),
    )

"""The pipeline guide's "real run" is what the engine prints with its example agent."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import ROOT, run_cli

GUIDE = ROOT / "docs" / "pipeline.md"
AGENT = ROOT / "docs" / "examples" / "pipeline-agent.sh"


def shown_output(command_start: str) -> str:
    """The lines the guide shows after the command starting with `command_start`, up to
    the next prompt or the end of the block."""
    text = GUIDE.read_text()
    start = text.index(f"$ {command_start}")
    block = text[start : text.index("```", start)]
    lines = block.splitlines()[1:]
    while lines and lines[0].startswith("    "):  # the command's continuation lines
        lines.pop(0)
    out = []
    for line in lines:
        if line.startswith("$ "):
            break
        out.append(line)
    return "\n".join(out) + "\n"


def test_the_guides_real_run_is_what_the_engine_prints(repo: Path) -> None:
    examples = repo / "docs" / "examples"
    examples.mkdir(parents=True)
    shutil.copy(AGENT, examples / AGENT.name)
    done = run_cli(
        "pipeline", "run", "Add a hello script",
        "--stages", "scout,architect,builder,reviewer",
        "--runner", "sh docs/examples/pipeline-agent.sh",
        cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr + done.stdout == shown_output('voyager-brain pipeline run "Add a hello')
    assert (repo / "hello.sh").exists()

    status = run_cli("pipeline", "status", "--events", "5", cwd=repo).stdout
    times = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(Z| UTC)")
    expected = shown_output("voyager-brain pipeline status --events 5")
    # the guide shows the four last events of five; times differ from run to run
    assert times.sub("T", status).splitlines()[-4:] == times.sub("T", expected).splitlines()[-4:]
    assert times.sub("T", status).splitlines()[:12] == times.sub("T", expected).splitlines()[:12]


def test_the_guides_failed_run_and_resume(repo: Path) -> None:
    examples = repo / "docs" / "examples"
    examples.mkdir(parents=True)
    shutil.copy(AGENT, examples / AGENT.name)
    failed = run_cli(
        "pipeline", "run", "Add a bye script", "--stages", "builder,reviewer",
        "--runner", "sh -c 'echo the model API is down >&2; exit 7'",
        cwd=repo,
    )  # fmt: skip
    assert failed.returncode == 1
    assert failed.stderr + failed.stdout == shown_output('voyager-brain pipeline run "Add a bye')
    resumed = run_cli(
        "pipeline", "resume", "--runner", "sh docs/examples/pipeline-agent.sh", cwd=repo
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr + resumed.stdout == shown_output("voyager-brain pipeline resume")

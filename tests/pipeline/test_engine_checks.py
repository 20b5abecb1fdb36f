"""The engine's checks of what each stage left, driven end to end with the scripted fake
agent as a real subprocess runner: invalid verdicts, the REVIEW.md fallback and its
staleness rule, scout/architect/builder validation, PROJECT.md bootstrap, the MISTAKES.md
cap in the system prompt, the runner's output formats and the retry stage tasks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agents import FakeAgent

from voyager_brain.config import Config
from voyager_brain.pipeline.engine import Pipeline
from voyager_brain.pipeline.events import read_events
from voyager_brain.pipeline.state import PipelineState

ARB = ["architect", "builder", "reviewer"]
CONFIG = Config.from_mapping({"pipeline": {"idle_seconds": 30}})
DAY_AGO = 24 * 3600
MISSING = object()


@pytest.fixture
def agent(tmp_path: Path) -> FakeAgent:
    return FakeAgent(tmp_path / "fake-agent")


def run(root: Path, agent: FakeAgent, stages: list[str], task: str = "task") -> PipelineState:
    return Pipeline(root, runner=agent.command, config=CONFIG).run(task, stages)


def events(root: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in read_events(root) if e["event"] == name]


def assert_failed(final: PipelineState, index: int, validation: str) -> str:
    """The pipeline failed at stage `index` on validation holding `validation`, with no
    retry; the full validation text."""
    role = final.pipeline[index]
    stage = final.stages[index]
    assert (final.status, final.current_stage, final.retries) == ("failed", index, 0)
    assert stage.status == "failed" and stage.validation is not None
    assert validation in stage.validation, stage.validation
    assert final.error == f"{role} stage failed validation: {stage.validation}"
    assert final.final_verdict is None
    assert [s.status for s in final.stages[index + 1 :]] == ["pending"] * (
        len(final.stages) - index - 1
    )
    return stage.validation


def age(path: Path, text: str) -> None:
    """Write `text` to `path` with a modification time a day ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    old = path.stat().st_mtime - DAY_AGO
    os.utime(path, (old, old))


def review(**changes: object) -> dict[str, object]:
    """A valid ReviewOutput with `changes` (MISSING drops a key)."""
    base: dict[str, object] = {
        "verdict": "APPROVE",
        "score": 7,
        "summary": "fine",
        "issues": [],
        "patternsCompliance": True,
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not MISSING}


# -- 1. invalid structured verdicts ------------------------------------------------------

FRESH_APPROVE = "# Review\n\nVerdict: APPROVE\n"
INVALID = [
    (review(verdict="MAYBE"), None, "structured output.verdict", '(got "MAYBE")'),
    (review(verdict="approve"), None, "structured output.verdict", '(got "approve")'),
    (review(score=0), None, "structured output.score", "from 1 to 10 (got 0)"),
    (review(score=11), None, "structured output.score", "from 1 to 10 (got 11)"),
    (review(issues=MISSING), None, "structured output: missing 'issues'", "an array"),
    (review(confidence=0.9), None, "structured output: unknown key 'confidence'", "expected"),
    (review(score=5.0), None, "structured output.score", "expected an integer (got 5.0)"),
    (review(score=True), None, "structured output.score", "expected an integer (got true)"),
    ("APPROVE", None, "structured output", 'expected an object (got "APPROVE")'),
    # structured output wins: a fresh REVIEW.md with a verdict does not save it
    (review(score=11), FRESH_APPROVE, "structured output.score", "(got 11)"),
    (review(verdict="approve"), FRESH_APPROVE, "structured output.verdict", '"approve"'),
]


@pytest.mark.parametrize(("structured", "review_md", "field", "detail"), INVALID)
def test_invalid_structured_output_fails_the_reviewer_without_retry(
    repo: Path,
    agent: FakeAgent,
    structured: object,
    review_md: str | None,
    field: str,
    detail: str,
) -> None:
    step: dict[str, object] = {"structured": structured}
    if review_md is not None:
        step["review_md"] = review_md
    agent.script(reviewer=[step, review()])
    final = run(repo, agent, ["builder", "reviewer"])

    validation = assert_failed(final, 1, field)
    assert validation.startswith(field) and detail in validation
    assert agent.roles() == ["builder", "reviewer"]
    assert events(repo, "review.verdict") == [] and events(repo, "pipeline.retry") == []
    assert [e["event"] for e in read_events(repo)][-2:] == ["stage.failed", "pipeline.failed"]
    if review_md is not None:  # left as the reviewer wrote it
        assert (repo / ".brain" / "REVIEW.md").read_text() == review_md


# -- 2. the REVIEW.md fallback -----------------------------------------------------------

AFTER_VERDICT = {
    "APPROVE": ARB,
    "REVISE": [*ARB, "builder", "reviewer"],
    "REDESIGN": ARB * 2,
}


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        ("Verdict: APPROVE", "APPROVE"),
        ("**Verdict:** revise", "REVISE"),
        ("**Verdict**: Redesign", "REDESIGN"),
        ("verdict REVISE", "REVISE"),
        ("## Verdict: APPROVE", "APPROVE"),
        ("- **Verdict**: APPROVE", "APPROVE"),
    ],
)
def test_review_md_fallback_routes_its_verdict(
    repo: Path, agent: FakeAgent, line: str, verdict: str
) -> None:
    text = f"# Review\n\nThe code reads well.\n\n{line}\n\nSome notes after.\n"
    agent.script(reviewer=[{"review_md": text}, {"verdict": "APPROVE"}])
    final = run(repo, agent, ARB)

    assert agent.roles() == AFTER_VERDICT[verdict]
    retried = int(verdict != "APPROVE")
    assert (final.status, final.final_verdict, final.retries) == ("completed", "APPROVE", retried)
    first = events(repo, "review.verdict")[0]
    assert {k: first[k] for k in ("verdict", "source", "stage")} == {
        "verdict": verdict,
        "source": "review_md",
        "stage": 2,
    }
    assert "score" not in first
    retries = events(repo, "pipeline.retry")
    assert [(e["verdict"], e["role"]) for e in retries] == (
        [(verdict, "builder" if verdict == "REVISE" else "architect")] if retried else []
    )


@pytest.mark.parametrize(
    "text",
    [
        "# Review\n\nLooks fine to me, ship it.\n",
        "# Review\n\nVerdict: APPROVED\n",
        "# Review\n\nVerdict: APPROVE|REVISE|REDESIGN\n",
    ],
)
def test_review_md_without_a_verdict_line_fails(repo: Path, agent: FakeAgent, text: str) -> None:
    agent.script(reviewer=[{"review_md": text}])
    final = run(repo, agent, ["reviewer"])
    validation = assert_failed(final, 0, "no structured output")
    assert "REVIEW.md has no `Verdict: APPROVE|REVISE|REDESIGN` line" in validation
    assert agent.roles() == ["reviewer"]


# -- 3. a stale REVIEW.md is never trusted -----------------------------------------------


@pytest.mark.parametrize("stages", [["reviewer"], ["builder", "reviewer"]])
def test_review_md_written_before_the_run_is_not_trusted(
    repo: Path, agent: FakeAgent, stages: list[str]
) -> None:
    path = repo / ".brain" / "REVIEW.md"
    path.parent.mkdir()
    path.write_text("# Review\n\nVerdict: APPROVE\n")
    # Written before the run: a second earlier. Written within the same tick of the
    # kernel's coarse clock as the stage's start, it could not be told apart (seen once
    # on a loaded machine: the run completed on it).
    stamp = path.stat().st_mtime - 1
    os.utime(path, (stamp, stamp))
    before = path.read_bytes()
    agent.script(reviewer=[{}])
    final = run(repo, agent, stages)

    index = len(stages) - 1
    validation = assert_failed(final, index, "wrote no REVIEW.md during this stage")
    assert "earlier round is never trusted" in validation
    assert agent.roles() == stages
    assert events(repo, "pipeline.completed") == [] and events(repo, "review.verdict") == []
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "first", [{"review_md": "# Review\n\nVerdict: REVISE\n"}, {"verdict": "REVISE"}]
)
def test_review_md_of_an_earlier_round_is_not_trusted(
    repo: Path, agent: FakeAgent, first: dict[str, object]
) -> None:
    agent.script(reviewer=[first, {}])
    final = run(repo, agent, ["builder", "reviewer"])

    assert agent.roles() == ["builder", "reviewer"] * 2
    assert (final.status, final.current_stage, final.retries) == ("failed", 1, 1)
    assert "wrote no REVIEW.md during this stage" in (final.stages[1].validation or "")
    assert final.error == f"reviewer stage failed validation: {final.stages[1].validation}"
    assert [e["verdict"] for e in events(repo, "review.verdict")] == ["REVISE"]
    assert events(repo, "pipeline.completed") == []


# -- 4. scout ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old_note", "step", "message"),
    [
        (False, {"skip": True}, "scout wrote no .brain/RESEARCH/*.md during this stage"),
        (True, {"skip": True}, "during this stage (1 older note is there)"),
        (False, {"skip": True, "write": {".brain/RESEARCH/empty.md": " \n"}}, "scout wrote no"),
    ],
)
def test_missing_scout_output_fails(
    repo: Path, agent: FakeAgent, old_note: bool, step: dict[str, object], message: str
) -> None:
    if old_note:
        age(repo / ".brain" / "RESEARCH" / "x.md", "# Old findings\n\nfrom an earlier run\n")
    agent.script(scout=[step])
    final = run(repo, agent, ["scout", "architect"])
    assert "RESEARCH" in assert_failed(final, 0, message)
    assert agent.roles() == ["scout"]


# -- 5. architect ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old_plan", "step", "message"),
    [
        (None, {"skip": True, "delete": [".brain/PLAN.md"]}, "architect left no .brain/PLAN.md"),
        (None, {"skip": True}, "architect left .brain/PLAN.md empty"),
        (None, {"plan": "\n  \n"}, "architect left .brain/PLAN.md empty"),
        (None, {"plan": "# Plan\n\nRefactor it.\n"}, "has no unchecked `- [ ]` item"),
        (None, {"plan": "# Plan\n\n- [ ] one\n- [x] two\n"}, "has 1 checked `- [x]` item"),
        (None, {"plan": "- [X] one\n* [x] two\n- [ ] three\n"}, "has 2 checked `- [x]` items"),
        ("# Plan\n\n- [ ] old item\n", {"skip": True}, "did not write .brain/PLAN.md during"),
    ],
)
def test_missing_architect_output_fails(
    repo: Path, agent: FakeAgent, old_plan: str | None, step: dict[str, object], message: str
) -> None:
    if old_plan is not None:
        age(repo / ".brain" / "PLAN.md", old_plan)
    agent.script(architect=[step])
    final = run(repo, agent, ["architect", "builder"])
    assert_failed(final, 0, message)
    assert agent.roles() == ["architect"]


# -- 6. builder --------------------------------------------------------------------------

NOTHING = "builder changed nothing outside .brain/"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize(
    ("step", "passes"),
    [
        ({"skip": True}, False),
        ({"skip": True, "write": {".brain/NOTES.md": "notes\n"}}, False),
        ({"skip": True, "write": {".brain/NOTES.md": "notes\n"}, "commit": True}, False),
        ({"commit": True}, True),
        ({"skip": True, "write": {"README.md": "# again!\n"}}, True),  # same size
    ],
    ids=["nothing", "brain-only", "brain-only-committed", "committed", "modified-again"],
)
def test_builder_must_change_the_project(
    repo: Path, agent: FakeAgent, step: dict[str, Any], passes: bool
) -> None:
    if "README.md" in step.get("write", {}):
        (repo / "README.md").write_text("# edited\n")  # modified before the run
    agent.script(builder=[step])
    final = run(repo, agent, ["builder"])
    assert agent.roles() == ["builder"]
    if passes:
        assert (final.status, final.final_verdict, final.error) == ("completed", "APPROVE", None)
        assert final.stages[0].validation == "passed"
    else:
        assert assert_failed(final, 0, NOTHING) == NOTHING
    if step.get("commit"):
        assert len(git(repo, "log", "--oneline").splitlines()) == 2


def test_builder_that_only_renames_inside_brain_fails(repo: Path, agent: FakeAgent) -> None:
    (repo / ".brain").mkdir()
    (repo / ".brain" / "NOTES.md").write_text("notes\n")
    git(repo, "add", ".brain/NOTES.md")
    git(repo, "commit", "-q", "-m", "notes")
    agent.script(builder=[{"skip": True, "git": [["mv", ".brain/NOTES.md", ".brain/OLD.md"]]}])
    final = run(repo, agent, ["builder"])
    assert "R  .brain/NOTES.md -> .brain/OLD.md" in git(repo, "status", "--porcelain")
    assert assert_failed(final, 0, NOTHING) == NOTHING


@pytest.mark.parametrize(
    ("step", "passes"),
    [
        ({}, True),
        ({"skip": True}, False),
        ({"skip": True, "write": {".brain/NOTES.md": "notes\n"}}, False),
        ({"skip": True, "write": {"README.md": "# again!\n"}}, True),
    ],
    ids=["writes", "nothing", "brain-only", "modified-again"],
)
@pytest.mark.parametrize("where", ["plain", "subfolder"])
def test_builder_outside_a_git_root(
    tmp_path: Path,
    repo: Path,
    agent: FakeAgent,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    step: dict[str, object],
    passes: bool,
) -> None:
    """A folder that is no git work tree, and a project in a subfolder of a repository
    (git reports paths from the repository's top)."""
    if where == "plain":
        project = tmp_path / "plain"
        monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    else:
        project = repo / "packages" / "app"
    project.mkdir(parents=True)
    (project / "README.md").write_text("# edited\n")
    agent.script(builder=[step])
    final = run(project, agent, ["builder"])
    assert agent.roles() == ["builder"]
    if passes:
        assert (final.status, final.error) == ("completed", None)
    else:
        assert assert_failed(final, 0, NOTHING) == NOTHING


# -- 7. PROJECT.md bootstrap -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "replaced"),
    [("x" * 50, True), ("x" * 51, False), ("é" * 50, True), ("é" * 51, False)],
)
def test_project_md_bootstrap_boundary(
    repo: Path, agent: FakeAgent, body: str, replaced: bool
) -> None:
    path = repo / ".brain" / "PROJECT.md"
    path.parent.mkdir()
    original = f"\n  {body}  \n\n".encode()
    path.write_bytes(original)
    final = run(repo, agent, ["builder"], task="Build the greeting service")
    assert final.status == "completed"
    if replaced:
        text = path.read_text()
        assert "## Goal\n\nBuild the greeting service\n" in text and body not in text
    else:
        assert path.read_bytes() == original


# -- 8. MISTAKES.md in the system prompt -------------------------------------------------


def system_prompt(agent: FakeAgent, index: int = 0) -> str:
    return Path(agent.calls()[index]["env"]["VOYAGER_PIPELINE_SYSTEM_PROMPT"]).read_text()


def mistakes_section(prompt: str) -> str:
    start = prompt.index("# .brain/MISTAKES.md (the newest lessons, within 3000 characters)")
    body = prompt[start:].split("\n\n", 1)[1]
    return body[: body.index("\n\n# The pipeline")]


def test_mistakes_md_keeps_the_newest_entries_within_the_cap(repo: Path, agent: FakeAgent) -> None:
    entries = [f"## Mistake {i:02d}\n\nLesson {i:02d}: " + "careful " * 20 for i in range(40)]
    text = "# Mistakes\n\n" + "\n\n".join(e.strip() for e in entries) + "\n"
    (repo / ".brain").mkdir()
    (repo / ".brain" / "MISTAKES.md").write_text(text)
    run(repo, agent, ["builder"])

    section = mistakes_section(system_prompt(agent))
    marker, kept = section.split("\n\n", 1)
    assert "older entries cut to keep this under 3000 characters" in marker
    assert len(kept) <= 3000 and text.rstrip().endswith(kept)
    first = int(kept.split("\n", 1)[0].removeprefix("## Mistake "))
    assert kept.startswith(f"## Mistake {first:02d}\n")
    assert marker.startswith(f"[{first + 1} older entries cut")  # the title, entries 0..first-1
    # whole entries, as many as fit: one more would not
    one_more = text.rstrip()[text.index(f"## Mistake {first - 1:02d}") :]
    assert len(one_more) > 3000
    assert "Mistake 39" in kept and "Mistake 00" not in section


def test_mistakes_md_keeps_the_end_of_a_long_newest_entry(repo: Path, agent: FakeAgent) -> None:
    long = "".join(f"<{i:04d}>" for i in range(900))  # 5400 characters
    text = f"# Mistakes\n\n## Old\n\nshort lesson\n\n## Newest\n\n{long}\n"
    (repo / ".brain").mkdir()
    (repo / ".brain" / "MISTAKES.md").write_text(text)
    run(repo, agent, ["builder"])

    section = mistakes_section(system_prompt(agent))
    marker, kept = section.split("\n\n", 1)
    assert "newest entry is longer than 3000 characters, only its end is shown" in marker
    assert kept == long[-3000:]
    assert "<0899>" in kept and "<0000>" not in section and "## Newest" not in section


# -- 9. what the runner prints -----------------------------------------------------------


def test_garbage_output_from_a_builder_passes_without_a_session(
    repo: Path, agent: FakeAgent
) -> None:
    agent.script(builder=[{"stdout": "Done! I built the thing. {not json"}])
    final = run(repo, agent, ["builder"])
    assert (final.status, final.stages[0].session_id) == ("completed", None)
    assert events(repo, "stage.completed")[0]["sessionId"] is None


@pytest.mark.parametrize("review_md", [None, "# Review\n\n**Verdict:** REVISE\n"])
def test_garbage_output_from_a_reviewer_leaves_it_to_review_md(
    repo: Path, agent: FakeAgent, review_md: str | None
) -> None:
    step: dict[str, object] = {"stdout": "APPROVE, looks great"}
    if review_md is not None:
        step["review_md"] = review_md
    agent.script(reviewer=[step, {"verdict": "APPROVE"}])
    final = run(repo, agent, ["builder", "reviewer"])
    if review_md is None:
        assert_failed(final, 1, "reviewer gave no structured output and wrote no REVIEW.md")
        assert agent.roles() == ["builder", "reviewer"]
    else:
        assert agent.roles() == ["builder", "reviewer"] * 2
        assert (final.status, final.retries) == ("completed", 1)
        first = events(repo, "review.verdict")[0]
        assert (first["verdict"], first["source"]) == ("REVISE", "review_md")


def result_line(session: str, structured: object) -> dict[str, object]:
    return {"type": "result", "subtype": "success", "session_id": session,
            "structured_output": structured}  # fmt: skip


@pytest.mark.parametrize("shape", ["stream", "pretty"])
def test_stream_and_pretty_printed_output_count(repo: Path, agent: FakeAgent, shape: str) -> None:
    last = result_line("sess-last", review(verdict="REVISE", score=4))
    if shape == "stream":
        lines = [
            {"type": "system", "subtype": "init", "session_id": "sess-first"},
            result_line("sess-early", review(verdict="MAYBE")),  # not the last: ignored
            {"type": "assistant", "message": {"content": "reviewing"}},
            last,
        ]
        stdout = "\n".join(json.dumps(line) for line in lines)
    else:
        stdout = json.dumps(last, indent=2)
    agent.script(reviewer=[{"stdout": stdout}, {"verdict": "APPROVE"}])
    final = run(repo, agent, ["builder", "reviewer"])

    assert agent.roles() == ["builder", "reviewer"] * 2
    assert (final.status, final.retries) == ("completed", 1)
    first = events(repo, "review.verdict")[0]
    assert (first["verdict"], first["source"], first["score"]) == ("REVISE", "structured", 4)
    completed = [e for e in events(repo, "stage.completed") if e["role"] == "reviewer"]
    assert completed[0]["sessionId"] == "sess-last"


# -- 10. patternsCompliance and the REVIEW.md the engine writes ---------------------------


@pytest.mark.parametrize("patterns", [False, True])
def test_structured_verdict_writes_review_md_and_patterns_event(
    repo: Path, agent: FakeAgent, patterns: bool
) -> None:
    agent.script(reviewer=[{"verdict": "APPROVE", "patterns": patterns}])
    final = run(repo, agent, ["builder", "reviewer"])
    assert final.status == "completed"

    noncompliant = events(repo, "patterns.noncompliant")
    assert [e["stage"] for e in noncompliant] == ([] if patterns else [1])
    verdict = events(repo, "review.verdict")
    assert [(e["verdict"], e["source"], e["score"], e["issues"]) for e in verdict] == [
        ("APPROVE", "structured", 7, 1)
    ]
    text = (repo / ".brain" / "REVIEW.md").read_text()
    for part in ("**Verdict:** APPROVE", "**Score:** 7/10", "review 0", "a nit", "src/x.txt"):
        assert part in text
    assert f"**Patterns compliance:** {'yes' if patterns else 'no'}" in text


# -- 11. what a stage is told after REVISE and REDESIGN ----------------------------------


def stdins(agent: FakeAgent, role: str) -> list[str]:
    return [call["stdin"] for call in agent.calls() if call["role"] == role]


def test_builder_after_revise_is_told_to_read_review_md(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REVISE"}, {"verdict": "APPROVE"}])
    final = run(repo, agent, ARB)
    assert agent.roles() == [*ARB, "builder", "reviewer"] and final.status == "completed"
    first, second = stdins(agent, "builder")
    assert ".brain/REVIEW.md" not in first
    assert ".brain/REVIEW.md" in second and "fix every issue" in second


def test_architect_after_redesign_is_told_to_redesign(repo: Path, agent: FakeAgent) -> None:
    agent.script(reviewer=[{"verdict": "REDESIGN"}, {"verdict": "APPROVE"}])
    final = run(repo, agent, ARB)
    assert agent.roles() == ARB * 2 and final.status == "completed"
    first, second = stdins(agent, "architect")
    assert "redesign" not in first.lower()
    assert "redesign" in second and ".brain/REVIEW.md" in second
    assert "redesign" in system_prompt(agent, 3).lower()
    for builder in stdins(agent, "builder"):
        assert ".brain/REVIEW.md" not in builder and "fix every issue" not in builder


# -- every role: no unresolved merge left in .brain/ ------------------------------------

CONFLICTED_PLAN = (
    "# Plan\n<<<<<<< ours\n- [ ] one way\n=======\n- [ ] the other way\n>>>>>>> theirs\n"
)


def test_conflict_markers_in_brain_markdown_fail_the_stage(repo: Path, agent: FakeAgent) -> None:
    """An architect whose PLAN.md holds an unresolved merge (as a git pull can leave it):
    the stage fails validation, naming the file and lines, and doctor names it too."""
    from conftest import run_cli

    agent.script(architect=[{"write": {".brain/PLAN.md": CONFLICTED_PLAN}}])
    final = run(repo, agent, ["architect", "builder"])
    assert_failed(final, 0, ".brain/PLAN.md has an unresolved git conflict (lines 2-6)")
    assert agent.roles() == ["architect"]
    doctor = run_cli("doctor", cwd=repo)
    assert doctor.returncode == 1
    assert ".brain/PLAN.md has an unresolved git conflict (lines 2-6)" in doctor.stdout

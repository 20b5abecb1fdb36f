"""The pipeline's role guard: the pure decision over real files and symbolic links, then
the real PreToolUse hook as a process, with the role in its environment."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from voyager_brain.guard.roleguard import role_denial

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
HEAD = "voyager-brain pipeline role guard: "
ARCHITECT_OUTSIDE = (
    HEAD + "the architect may only write inside .brain/ (PLAN.md, DECISIONS.md, ...); "
    "`src/x.py` is outside. Put the change in the plan for the builder."
)
WRITERS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


@pytest.fixture(autouse=True)
def no_pipeline_role(monkeypatch: pytest.MonkeyPatch) -> None:
    # These tests may run inside a pipeline agent: each sets the role it means.
    monkeypatch.delenv("VOYAGER_PIPELINE_ROLE", raising=False)
    monkeypatch.delenv("VOYAGER_PIPELINE_PROJECT", raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with .brain/ (and RESEARCH/ in it), src/, and links that lead out of
    .brain/ or into it. Real paths: tmp_path itself may be behind a link."""
    top = tmp_path / "project"
    (top / ".brain" / "RESEARCH").mkdir(parents=True)
    (top / ".brain" / "PLAN.md").write_text("# Plan\n")
    (top / "src").mkdir()
    (top / "src" / "x.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("not the brain\n")
    (top / ".brain" / "out").symlink_to(outside, target_is_directory=True)
    (top / ".brain" / "leak.md").symlink_to(outside / "secret.md")
    (top / ".brain" / "code.py").symlink_to(top / "src" / "x.py")
    (top / "notes").symlink_to(top / ".brain", target_is_directory=True)
    return top


def write_input(tool: str, path: Any) -> dict[str, Any]:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {key: path, "content": "text"}


def deny(role: str, tool: str, tool_input: Any, project: Path, **kw: Any) -> str | None:
    kw.setdefault("cwd", str(project))
    kw.setdefault("planner_bash", False)
    return role_denial(role, tool, tool_input, str(project), kw["cwd"], kw["planner_bash"])


# -- the decision -----------------------------------------------------------------------

ALLOWED = [
    ".brain/PLAN.md",
    ".brain/RESEARCH/x.md",
    "./.brain/../.brain/PLAN.md",
    ".brain/DECISIONS.md",  # not written yet
    ".brain/RESEARCH/new/deeper/notes.md",  # neither the file nor its folders exist
    "src/../.brain/PLAN.md",
    "notes/PLAN.md",  # a link outside .brain/ that leads into it
    "{project}/.brain/PLAN.md",
    "{project}/src/../.brain/MISTAKES.md",
]

DENIED = [
    "src/x.py",
    "README.md",
    "{project}/src/x.py",
    ".brain/../src/x.py",
    "../outside/secret.md",
    ".brain-evil/x",
    ".brainx",
    ".brain",
    "./.brain/",
    "{project}/.brain",
    ".brain/out/secret.md",  # a folder link inside .brain/ that leads out
    ".brain/out/new.md",  # ... to a file not written yet
    ".brain/leak.md",  # a file link that leads out
    ".brain/code.py",  # ... into the code
    "/etc/passwd",
]


@pytest.mark.parametrize("tool", WRITERS)
@pytest.mark.parametrize("path", ALLOWED)
@pytest.mark.parametrize("role", ["scout", "architect"])
def test_planners_write_inside_brain(project: Path, role: str, tool: str, path: str) -> None:
    given = path.format(project=project)
    assert deny(role, tool, write_input(tool, given), project) is None


@pytest.mark.parametrize("tool", WRITERS)
@pytest.mark.parametrize("path", DENIED)
@pytest.mark.parametrize("role", ["scout", "architect"])
def test_planners_write_nowhere_else(project: Path, role: str, tool: str, path: str) -> None:
    given = path.format(project=project)
    reason = deny(role, tool, write_input(tool, given), project)
    assert reason is not None
    assert reason.startswith(f"{HEAD}the {role} may only write inside .brain/ (")
    assert f"`{given}`" in reason


@pytest.mark.parametrize(
    "tool_input",
    [{}, {"file_path": ""}, {"file_path": 7}, {"file_path": ["a"]}, {"file_path": None}, "x"],
)
@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit"])
def test_a_missing_or_unusable_path_is_denied(project: Path, tool: str, tool_input: Any) -> None:
    reason = deny("architect", tool, tool_input, project)
    assert reason is not None and f"this {tool} call names no file (file_path)" in reason


def test_a_path_that_cannot_be_resolved_is_denied(project: Path) -> None:
    reason = deny("architect", "Write", {"file_path": ".brain/PLAN\0.md"}, project)
    assert reason is not None and "cannot be resolved" in reason


@pytest.mark.parametrize(
    ("tool_input", "allowed"),
    [
        ({"notebook_path": ".brain/RESEARCH/a.ipynb"}, True),
        ({"file_path": ".brain/RESEARCH/a.ipynb"}, True),  # the fallback
        ({"notebook_path": "src/a.ipynb", "file_path": ".brain/a.ipynb"}, False),
        ({"notebook_path": "", "file_path": ".brain/a.ipynb"}, False),
        ({"new_source": "x"}, False),
    ],
)
def test_notebook_edit_targets_its_notebook_path(
    project: Path, tool_input: dict[str, Any], allowed: bool
) -> None:
    assert (deny("architect", "NotebookEdit", tool_input, project) is None) is allowed


def test_the_reason_says_what_to_do(project: Path) -> None:
    assert deny("architect", "Edit", {"file_path": "src/x.py"}, project) == ARCHITECT_OUTSIDE
    scout = deny("scout", "Write", {"file_path": "src/x.py"}, project)
    assert scout == (
        HEAD + "the scout may only write inside .brain/ (RESEARCH/, ...); `src/x.py` is "
        "outside. Write what you found in .brain/RESEARCH/ for the architect."
    )


def test_the_reason_names_where_a_link_leads(project: Path, tmp_path: Path) -> None:
    reason = deny("architect", "Write", {"file_path": ".brain/out/secret.md"}, project)
    target = os.path.realpath(tmp_path / "outside" / "secret.md")
    assert reason is not None and f"(a symbolic link leads it to `{target}`)" in reason
    plain = deny("architect", "Write", {"file_path": ".brain-evil/x"}, project)
    assert plain is not None and "symbolic link" not in plain


def test_the_folder_itself_is_not_a_file_in_it(tmp_path: Path) -> None:
    bare = tmp_path / "bare"  # no .brain/ yet: a file named .brain would be made
    bare.mkdir()
    reason = deny("architect", "Write", {"file_path": ".brain"}, bare)
    assert reason is not None and "is the folder itself" in reason
    assert deny("architect", "Write", {"file_path": ".brain/PLAN.md"}, bare) is None


def test_relative_paths_are_read_from_the_calls_folder(project: Path) -> None:
    nested = str(project / "src")
    up = {"file_path": "../.brain/PLAN.md"}
    assert deny("architect", "Write", up, project, cwd=nested) is None
    here = {"file_path": ".brain/PLAN.md"}  # src/.brain/PLAN.md
    assert deny("architect", "Write", here, project, cwd=nested)


def test_without_a_folder_the_process_one_is_used(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    assert deny("architect", "Write", {"file_path": ".brain/PLAN.md"}, project, cwd=None) is None
    assert deny("architect", "Write", {"file_path": "src/x.py"}, project, cwd=None)


def test_home_is_expanded(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(project))
    assert deny("architect", "Write", {"file_path": "~/.brain/PLAN.md"}, project) is None
    assert deny("architect", "Write", {"file_path": "~/src/x.py"}, project)


def test_a_project_behind_a_link_is_resolved_too(project: Path, tmp_path: Path) -> None:
    # On macOS /tmp is a link to /private/tmp: the engine's path and the agent's differ.
    link = tmp_path / "link-to-project"
    link.symlink_to(project, target_is_directory=True)
    write = {"file_path": ".brain/PLAN.md"}
    assert role_denial("architect", "Write", write, str(link), str(project), False) is None
    assert role_denial("architect", "Write", write, str(project), str(link), False) is None
    absolute = {"file_path": str(link / ".brain" / "PLAN.md")}
    assert role_denial("architect", "Write", absolute, str(project), str(project), False) is None
    outside = {"file_path": str(link / "src" / "x.py")}
    assert role_denial("architect", "Write", outside, str(project), str(project), False)


def test_a_brain_folder_that_is_a_link_counts_where_it_leads(tmp_path: Path) -> None:
    shared = tmp_path / "shared-brain"
    shared.mkdir()
    top = tmp_path / "linked"
    top.mkdir()
    (top / ".brain").symlink_to(shared, target_is_directory=True)
    assert deny("architect", "Write", {"file_path": ".brain/PLAN.md"}, top) is None
    assert deny("architect", "Write", {"file_path": str(shared / "PLAN.md")}, top) is None


@pytest.mark.parametrize("role", ["scout", "architect"])
def test_planners_run_bash_only_when_config_allows(project: Path, role: str) -> None:
    reason = deny(role, "Bash", {"command": "ls"}, project)
    assert reason is not None and reason.startswith(f"{HEAD}the {role} may not run Bash")
    assert "planner_bash" in reason
    assert deny(role, "Bash", {"command": "ls"}, project, planner_bash=True) is None


@pytest.mark.parametrize("role", ["builder", "reviewer", "", "Architect", "planner", "scout "])
@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Write", {"file_path": "src/x.py"}),
        ("Edit", {"file_path": "/etc/passwd"}),
        ("NotebookEdit", {}),
        ("Bash", {"command": "rm -rf build"}),
    ],
)
def test_other_roles_are_not_restricted(
    project: Path, role: str, tool: str, tool_input: dict[str, Any]
) -> None:
    assert deny(role, tool, tool_input, project) is None


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": "/etc/passwd"}),
        ("Grep", {"pattern": "x", "path": "src"}),
        ("Glob", {"pattern": "**/*.py"}),
        ("WebFetch", {"url": "https://example.com", "prompt": "read"}),
        ("TodoWrite", {"todos": []}),
        ("mcp__fs__write_file", {"path": "src/x.py"}),
    ],
)
def test_other_tools_are_never_restricted(
    project: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    assert deny("architect", tool, tool_input, project) is None


# -- the hook ---------------------------------------------------------------------------


def payload(cwd: Path, tool: str, tool_input: dict[str, Any], **changes: Any) -> str:
    data = json.loads((FIXTURES / "pre-tool-use.json").read_text())
    data.update(
        cwd=str(cwd),
        transcript_path=str(FIXTURES / "transcript.jsonl"),
        tool_name=tool,
        tool_input=tool_input,
    )
    data.update(changes)
    return json.dumps(data)


def hook(cwd: Path, stdin: str, role: str | None, **env: str) -> subprocess.CompletedProcess[str]:
    if role is not None:
        env["VOYAGER_PIPELINE_ROLE"] = role
    return subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", "pre-tool-use"],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


def call(
    repo: Path, role: str | None, tool: str, tool_input: dict[str, Any], **changes: Any
) -> subprocess.CompletedProcess[str]:
    return hook(repo, payload(repo, tool, tool_input, **changes), role)


def denied(done: subprocess.CompletedProcess[str]) -> str:
    """The reason of a deny, checking that the output is exactly one."""
    assert done.returncode == 0
    output = json.loads(done.stdout)
    assert list(output) == ["hookSpecificOutput"]
    decision = output["hookSpecificOutput"]
    assert list(decision) == ["hookEventName", "permissionDecision", "permissionDecisionReason"]
    assert (decision["hookEventName"], decision["permissionDecision"]) == ("PreToolUse", "deny")
    return str(decision["permissionDecisionReason"])


def history(home: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "history.db")
    db.row_factory = sqlite3.Row
    return db


@pytest.fixture
def brain_repo(repo: Path) -> Path:
    (repo / ".brain").mkdir()
    (repo / ".brain" / "PLAN.md").write_text("# Plan\n")
    (repo / "src").mkdir()
    return repo


def test_the_architect_is_denied_code_and_the_call_recorded(
    brain_repo: Path, isolated_env: Path
) -> None:
    done = call(brain_repo, "architect", "Write", {"file_path": "src/x.py", "content": "x"})
    expected = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": ARCHITECT_OUTSIDE,
        }
    }
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == json.dumps(expected) + "\n"
    db = history(isolated_env)
    row = db.execute("SELECT tool, input, output, success, external_id FROM tool_calls").fetchone()
    assert row["tool"] == "Write"
    assert json.loads(row["input"]) == {"file_path": "src/x.py", "content": "x"}
    assert (row["output"], row["success"]) == (ARCHITECT_OUTSIDE, 0)
    assert row["external_id"] == "toolu_01ABC123"
    assert db.execute("SELECT COUNT(*) FROM rule_triggers").fetchone()[0] == 0
    session = db.execute("SELECT external_id FROM sessions").fetchone()[0]
    assert session == "9b1c2f7e-4d3a-4e55-9a61-0c8f2d7b1a10"


def test_the_architect_writes_the_plan(brain_repo: Path, isolated_env: Path) -> None:
    plan = {"file_path": str(brain_repo / ".brain" / "PLAN.md"), "content": "# Plan\n"}
    done = call(brain_repo, "architect", "Write", plan)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    edit = {"file_path": "./.brain/../.brain/DECISIONS.md", "old_string": "", "new_string": "x"}
    assert call(brain_repo, "architect", "Edit", edit, tool_use_id="t2").stdout == ""
    rows = history(isolated_env).execute("SELECT output, success FROM tool_calls").fetchall()
    assert [tuple(r) for r in rows] == [(None, 1), (None, 1)]


@pytest.mark.parametrize("role", ["builder", "reviewer", ""])
def test_the_builder_and_the_reviewer_are_not_restricted(brain_repo: Path, role: str) -> None:
    write = {"file_path": "src/x.py", "content": "x = 1\n"}
    assert call(brain_repo, role, "Write", write).stdout == ""
    assert call(brain_repo, role, "Bash", {"command": "make"}, tool_use_id="t2").stdout == ""


def test_the_scout_reads_freely_but_writes_research_only(brain_repo: Path) -> None:
    assert call(brain_repo, "scout", "Read", {"file_path": "/etc/hosts"}).stdout == ""
    note = {"file_path": ".brain/RESEARCH/http.md", "content": "x"}
    assert call(brain_repo, "scout", "Write", note, tool_use_id="t2").stdout == ""
    reason = denied(call(brain_repo, "scout", "Write", {"file_path": "x.md"}, tool_use_id="t3"))
    assert "the scout may only write inside .brain/" in reason


def test_bash_is_denied_to_planners_until_config_allows_it(
    brain_repo: Path, isolated_env: Path
) -> None:
    reason = denied(call(brain_repo, "architect", "Bash", {"command": "ls src"}))
    assert reason.startswith(f"{HEAD}the architect may not run Bash")
    (brain_repo / ".voyager").mkdir()
    (brain_repo / ".voyager" / "config.toml").write_text("[pipeline]\nplanner_bash = true\n")
    done = call(brain_repo, "architect", "Bash", {"command": "ls src"}, tool_use_id="t2")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    rows = history(isolated_env).execute("SELECT success FROM tool_calls ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [0, 1]


def test_the_role_guard_wins_over_rules_which_still_apply_inside(
    brain_repo: Path, isolated_env: Path
) -> None:
    for pattern, text in (("x\\.py", "No x.py"), ("PLAN", "Plans need a review")):
        args = ("--pattern", pattern, "--description", text, "--tool", "Write")
        assert run_cli("rules", "add", *args, cwd=brain_repo).returncode == 0
    reason = denied(call(brain_repo, "architect", "Write", {"file_path": "src/x.py"}))
    assert reason == ARCHITECT_OUTSIDE
    db = history(isolated_env)
    assert db.execute("SELECT COUNT(*) FROM rule_triggers").fetchone()[0] == 0
    plan = {"file_path": ".brain/PLAN.md", "content": "x"}
    reason = denied(call(brain_repo, "architect", "Write", plan, tool_use_id="t2"))
    assert reason.startswith("voyager-brain guard blocked this Write call.")
    assert "Plans need a review" in reason
    assert db.execute("SELECT COUNT(*) FROM rule_triggers").fetchone()[0] == 1


def test_the_engine_names_the_project(brain_repo: Path, tmp_path: Path) -> None:
    # A nested folder of the run's project: relative paths from there, .brain/ of the run.
    nested = brain_repo / "src"
    up = {"file_path": "../.brain/PLAN.md"}
    project = {"VOYAGER_PIPELINE_PROJECT": str(brain_repo)}
    done = hook(nested, payload(nested, "Write", up), "architect", **project)
    assert done.stdout == ""
    # Another repository inside the run's: its own .brain/ is not the run's.
    inner = nested / "vendor"
    inner.mkdir()
    git(inner, "init", "-q")
    local = {"file_path": ".brain/PLAN.md"}
    done = hook(inner, payload(inner, "Write", local), "architect", **project)
    assert "is outside" in denied(done)
    done = hook(inner, payload(inner, "Write", local), "architect")
    assert done.stdout == ""  # without the variable, the project is the folder's repository


def test_a_denial_without_a_session_is_printed_not_recorded(
    brain_repo: Path, isolated_env: Path
) -> None:
    data = json.loads(payload(brain_repo, "Write", {"file_path": "src/x.py"}))
    del data["session_id"]
    done = hook(brain_repo, json.dumps(data), "architect")
    assert denied(done) == ARCHITECT_OUTSIDE
    assert done.stderr == "voyager-brain guard: stdin: no session id; the call is not recorded\n"
    assert not (isolated_env / "history.db").exists()


def test_a_broken_history_does_not_undo_a_denial(brain_repo: Path, isolated_env: Path) -> None:
    (isolated_env / "history.db").write_bytes(b"this is not a database" * 200)
    done = call(brain_repo, "architect", "Write", {"file_path": "src/x.py"})
    assert denied(done) == ARCHITECT_OUTSIDE
    assert "not a SQLite database" in done.stderr and done.stderr.count("\n") == 1
    # The rules' own check still fails open.
    assert call(brain_repo, "architect", "Write", {"file_path": ".brain/PLAN.md"}).stdout == ""


def test_outside_the_pipeline_the_role_guard_is_not_even_imported(brain_repo: Path) -> None:
    script = (
        "import io, sys\n"
        "from voyager_brain.integrations.hooks import run\n"
        "out = io.StringIO()\n"
        "run('claude', 'pre-tool-use', io.StringIO(sys.argv[1]), out, sys.stderr)\n"
        "print(repr(out.getvalue()), 'voyager_brain.guard.roleguard' in sys.modules)\n"
    )
    stdin = payload(brain_repo, "Write", {"file_path": "src/x.py"})
    done = subprocess.run(
        [sys.executable, "-c", script, stdin],
        cwd=brain_repo,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "'' False\n", "")

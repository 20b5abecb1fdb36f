"""A cloned repository's .voyager/config.toml cannot make voyager-brain run a program.

Each test is the attack: a real clone of a repository whose config.toml names a command
(a script that appends to a marker file, then answers), run through each way voyager-brain
could start it, as real processes. Untrusted, the marker never appears and the output
says which key was ignored; once `voyager-brain trust` is run the marker appears (so the
test can fail); a change to the file, or `trust --revoke`, ignores the keys again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.config import command_keys
from voyager_brain.integrations.hooks import _may_name_a_command
from voyager_brain.memory.tool import brain_tool
from voyager_brain.tomlfile import read_simple_toml

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEMANTIC_RULE = '[[rules]]\ndescription = "never use pip install, use uv add"\ntype = "semantic"\n'


class Clone:
    """The clone (`top`), the marker the hostile command writes, and its config.toml."""

    def __init__(self, top: Path, marker: Path, model: Path) -> None:
        self.top, self.marker, self.model = top, marker, model
        self.config = top / ".voyager" / "config.toml"

    def ran(self) -> list[str]:
        """Who ran the hostile command (one line per run)."""
        return self.marker.read_text().splitlines() if self.marker.exists() else []

    def cli(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=self.top, **kw)


def model_script(path: Path, marker: Path, name: str) -> Path:
    """A 'model' that records its run in `marker`, then answers: YES for a semantic
    review, a learning for auto-memory, the same text as a summary."""
    path.write_text(
        "import sys\n"
        "sys.stdin.read()\n"
        f"with open({str(marker)!r}, 'a') as f:\n"
        f"    f.write({name!r} + '\\n')\n"
        "print('YES, it does.')\n"
        "print('learning: Written by the hostile model')\n"
    )
    return path


@pytest.fixture
def clone(tmp_path: Path) -> Clone:
    """A repository as an attacker publishes it, cloned with git."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    marker = tmp_path / "MARKER"
    model = model_script(tmp_path / "model.py", marker, "project")
    assert run_cli("init", cwd=origin).returncode == 0
    command = f"{sys.executable} {model}"
    (origin / ".voyager" / "config.toml").write_text(
        f"model_command = {json.dumps(command)}\nsemantic_review = true\n"
        'summarizer = "model"\ncompact_budget_tokens = 60\n'
        f"[pipeline]\nrunner = {json.dumps(command)}\n"
    )
    (origin / ".voyager" / "rules.toml").write_text(SEMANTIC_RULE)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "a helpful project")
    top = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(top))
    return Clone(top, marker, model)


def fixture(agent: str, name: str, cwd: Path, **changes: Any) -> str:
    data = json.loads((FIXTURES / agent / f"{name}.json").read_text())
    for key, value in list(data.items()):
        if value in ("CWD", "/home/user/project"):
            data[key] = str(cwd)
        elif value == ["/home/user/project"]:
            data[key] = [str(cwd)]
        elif key in ("transcript_path", "transcriptPath"):
            data.pop(key)
    data.update(changes)
    return json.dumps(data)


#: Each agent's tool-call hook and its payload for `pip install requests`.
PRE_TOOL = {
    "claude": ("pre-tool-use", "pre-tool-use", {"tool_input": {"command": "pip install requests"}}),
    "codex": ("pre-tool-use", "pre-tool-use", {"tool_input": {"command": "pip install requests"}}),
    "gemini": (
        "before-tool",
        "before-tool",
        {"tool_input": {"command": "pip install requests"}},
    ),
    "cursor": (
        "pre-tool-use",
        "pre-tool-use",
        {"tool_input": {"command": "pip install requests"}},
    ),
    "copilot": (
        "pre-tool-use",
        "pre-tool-use",
        {"toolArgs": json.dumps({"command": "pip install requests"})},
    ),
}


def hook(agent: str, event: str, cwd: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", agent, event],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def tool_call(clone: Clone, agent: str, session: str) -> subprocess.CompletedProcess[str]:
    event, name, changes = PRE_TOOL[agent]
    key = {"copilot": "sessionId", "cursor": "conversation_id"}.get(agent, "session_id")
    done = hook(
        agent, event, clone.top, fixture(agent, name, clone.top, **changes, **{key: session})
    )
    assert done.returncode == 0
    return done


def said_to_user(done: subprocess.CompletedProcess[str], agent: str) -> str:
    """What the user reads of the hook's answer: ``systemMessage``, or (Cursor and
    Copilot have no such channel) the hook's stderr, which the agent logs."""
    if agent in ("cursor", "copilot"):
        return done.stderr
    return str(json.loads(done.stdout).get("systemMessage", "")) if done.stdout else ""


@pytest.mark.parametrize("agent", list(PRE_TOOL))
def test_the_tool_call_hook_runs_no_untrusted_model_command(clone: Clone, agent: str) -> None:
    done = tool_call(clone, agent, "s-untrusted")
    assert clone.ran() == []
    told = said_to_user(done, agent)
    assert "model_command" in told and "semantic_review" in told
    assert "`voyager-brain trust`" in told and str(clone.config) in told
    assert clone.cli("trust").returncode == 0
    tool_call(clone, agent, "s-trusted")
    assert clone.ran() == ["project"]


def test_any_change_needs_trusting_again_and_revoke_undoes_it(clone: Clone) -> None:
    assert clone.cli("trust").returncode == 0
    tool_call(clone, "claude", "s1")
    assert clone.ran() == ["project"]
    # The file changes (a pull brings a new version): ignored until trusted again.
    clone.config.write_text(clone.config.read_text() + "# one more line\n")
    clone.marker.unlink()
    done = tool_call(clone, "claude", "s2")
    assert clone.ran() == [] and "model_command" in said_to_user(done, "claude")
    assert clone.cli("trust").returncode == 0
    tool_call(clone, "claude", "s3")
    assert clone.ran() == ["project"]
    revoked = clone.cli("trust", "--revoke")
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    clone.marker.unlink()
    tool_call(clone, "claude", "s4")
    assert clone.ran() == []


def test_the_user_is_told_once_per_session(clone: Clone) -> None:
    start = hook(
        "claude", "session-start", clone.top, fixture("claude", "session-start", clone.top)
    )
    assert "voyager-brain trust" in json.loads(start.stdout)["systemMessage"]
    assert json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    # The same session (the fixture's id): its tool calls say nothing more ...
    again = tool_call(
        clone, "claude", json.loads(fixture("claude", "session-start", clone.top))["session_id"]
    )
    assert said_to_user(again, "claude") == ""
    # ... and a session that never fired session-start is told at its first tool call.
    assert "model_command" in said_to_user(tool_call(clone, "claude", "other"), "claude")
    assert said_to_user(tool_call(clone, "claude", "other"), "claude") == ""
    assert clone.ran() == []


def learnings(top: Path) -> list[str]:
    entries = brain_tool("list", cwd=str(top))["entries"]
    return sorted(e["text"] for e in entries if e["type"] in ("learning", "preference"))


def wait_for_learning(top: Path, text: str) -> list[str]:
    """The learnings once `text` is among them (the detached pass has run), or as they
    are after 60 s."""
    deadline = time.monotonic() + 60
    while text not in learnings(top) and time.monotonic() < deadline:
        time.sleep(0.1)
    return learnings(top)


@pytest.mark.parametrize("event", ["stop", "session-end", "pre-compact"])
def test_auto_memory_never_runs_an_untrusted_model(
    clone: Clone, tmp_path: Path, event: str
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "We use tabs here."}})
        + "\n"
    )
    payload = fixture("claude", event, clone.top, transcript_path=str(transcript), session_id="a")
    done = hook("claude", event, clone.top, payload)
    assert done.returncode == 0, done.stderr
    # Without the model the offline pass takes the statement itself: once it is stored,
    # the detached `memory extract` has finished without running the command.
    assert "We use tabs here." in wait_for_learning(clone.top, "We use tabs here.")
    assert clone.ran() == []
    assert clone.cli("trust").returncode == 0
    payload = fixture("claude", event, clone.top, transcript_path=str(transcript), session_id="b")
    assert hook("claude", event, clone.top, payload).returncode == 0
    stored = wait_for_learning(clone.top, "Written by the hostile model")
    assert "Written by the hostile model" in stored and "project" in clone.ran()


def test_add_summarizes_without_the_untrusted_model(clone: Clone) -> None:
    """summarizer = "model" with a tiny budget: a plain `add` compacts brain.md."""
    for n in range(6):
        done = clone.cli("add", "observation", f"Observation number {n} " + "words " * 20)
        assert done.returncode == 0, done.stderr
    assert "ignoring model_command, semantic_review, summarizer" in done.stderr
    assert "`voyager-brain trust`" in done.stderr
    brain = (clone.top / ".voyager" / "brain.md").read_text()
    assert clone.ran() == [] and "hostile model" not in brain
    assert clone.cli("trust").returncode == 0
    for n in range(6):
        assert clone.cli("add", "observation", f"Later note {n} " + "words " * 20).returncode == 0
    assert "project" in clone.ran()
    assert "hostile model" in (clone.top / ".voyager" / "brain.md").read_text()


def test_memory_extract_on_the_command_line_ignores_the_untrusted_model(clone: Clone) -> None:
    done = clone.cli("memory", "extract", "-", input="We deploy with Fly in this repo.")
    assert done.returncode == 0, done.stderr
    assert clone.ran() == [] and "ignoring model_command" in done.stderr
    assert learnings(clone.top) == ["We deploy with Fly in this repo."]


def test_pipeline_run_refuses_an_untrusted_runner(clone: Clone, tmp_path: Path) -> None:
    done = clone.cli("pipeline", "run", "Add a health check")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "`voyager-brain trust`" in done.stderr
    assert "pipeline.runner" in done.stderr
    assert clone.ran() == [] and not (clone.top / ".brain" / "pipeline-state.json").exists()
    # A command given on the command line is the user's own.
    mine = model_script(tmp_path / "mine.py", clone.marker, "mine")
    done = clone.cli(
        "pipeline", "run", "--stages", "builder", "--runner", f"{sys.executable} {mine}", "x"
    )
    assert clone.ran()[:1] == ["mine"] and "project" not in clone.ran()
    # A resume without --runner uses the run's own (stored) runner: still the user's.
    assert clone.cli("trust").returncode == 0
    clone.marker.unlink()
    clone.cli("pipeline", "reset")
    clone.cli("pipeline", "run", "--stages", "builder", "y")
    assert "project" in clone.ran()
    # That run failed (the "agent" left nothing); the file changes: resume refuses too.
    clone.marker.unlink()
    clone.config.write_text(clone.config.read_text() + "# changed upstream\n")
    resumed = clone.cli("pipeline", "resume")
    assert resumed.returncode == 2 and "`voyager-brain trust`" in resumed.stderr
    assert clone.ran() == []


def test_a_personal_model_command_still_runs(
    clone: Clone, tmp_path: Path, isolated_env: Path
) -> None:
    mine = model_script(tmp_path / "personal.py", clone.marker, "personal")
    (isolated_env / "config.toml").write_text(
        f"model_command = {json.dumps(f'{sys.executable} {mine}')}\nsemantic_review = true\n"
    )
    tool_call(clone, "claude", "s-personal")
    assert clone.ran() == ["personal"]


def test_status_and_doctor_list_the_ignored_keys(clone: Clone) -> None:
    status = clone.cli("status", "--json")
    assert status.returncode == 0, status.stderr
    ignored = json.loads(status.stdout)["ignored_keys"]
    path = os.path.realpath(clone.config)
    assert [entry.replace(str(clone.config), path) for entry in ignored] == [
        f"{path}: {key}"
        for key in ("model_command", "semantic_review", "summarizer", "pipeline.runner")
    ]
    text = clone.cli("status").stdout
    assert "model_command, semantic_review, summarizer, pipeline.runner" in text
    doctor = clone.cli("doctor").stdout
    assert "model_command: runs a program; ignored until you trust the file" in doctor
    assert "pipeline.runner: runs a program" in doctor
    assert clone.cli("trust").returncode == 0
    assert json.loads(clone.cli("status", "--json").stdout)["ignored_keys"] == []
    assert "runs a program" not in clone.cli("doctor").stdout


def test_trust_shows_what_it_allows(clone: Clone, isolated_env: Path) -> None:
    shown = clone.cli("trust", "--show")
    assert shown.returncode == 0 and "not trusted" in shown.stdout
    assert f"model_command = {json.dumps(f'{sys.executable} {clone.model}')}" in shown.stdout
    assert not (isolated_env / "trust.json").exists()
    first = clone.cli("trust", "--json")
    report = json.loads(first.stdout)
    assert report["trusted"] and report["changed"]
    assert [c["key"] for c in report["commands"]] == [
        "model_command",
        "semantic_review",
        "summarizer",
        "pipeline.runner",
    ]
    store = json.loads((isolated_env / "trust.json").read_text())
    assert store == {"version": 1, "trusted": {report["path"]: report["sha256"]}}
    again = clone.cli("trust")
    assert "already trusted" in again.stdout


def test_trust_without_a_command_key_or_a_config(repo: Path, isolated_env: Path) -> None:
    assert "nothing to trust" in run_cli("trust", cwd=repo).stdout
    run_cli("init", cwd=repo)
    done = run_cli("trust", cwd=repo)
    assert "holds no setting that runs a program" in done.stdout
    (repo / ".voyager" / "config.toml").write_text("model_command = 7\n")
    bad = run_cli("trust", cwd=repo)
    assert bad.returncode == 2 and "model_command: expected str" in bad.stderr
    assert not (isolated_env / "trust.json").exists()
    outside = run_cli("trust", cwd=repo.parent)
    assert outside.returncode == 2 and "Traceback" not in outside.stderr


# -- the hooks' quick look at config.toml --------------------------------------------------

KEYS = ["model_command", "summarizer", "semantic_review", "runner", "runners", "pipeline", "x"]
VALUES = ['"cmd"', "'cmd'", "true", '"model"', '""', "1"]


@st.composite
def config_texts(draw: st.DrawFn) -> str:
    """config.toml texts mixing what a hostile file might use: comments, dotted keys,
    quoted and escaped keys, tables, inline tables, CR line ends."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        key = draw(st.sampled_from(KEYS))
        spelled = draw(
            st.sampled_from([key, f'"{key}"', f"'{key}'", "".join(f"\\u{ord(c):04x}" for c in key)])
        )
        if spelled.startswith("\\u"):
            spelled = f'"{spelled}"'
        kind = draw(st.integers(0, 4))
        value = draw(st.sampled_from(VALUES))
        if kind == 0:
            lines.append(f"{spelled} = {value}")
        elif kind == 1:
            lines.append(f"[{draw(st.sampled_from(['pipeline', 'pipeline.runners']))}]")
        elif kind == 2:
            lines.append(f"pipeline.{spelled} = {value}")
        elif kind == 3:
            lines.append(f"pipeline = {{ {spelled} = {value} }}")
        else:
            lines.append(f"# {spelled} = {value}")
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return end.join(lines) + "\n"


@given(config_texts())
def test_the_quick_look_never_misses_a_command_key(text: str) -> None:
    import tomllib

    normal = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        data = read_simple_toml(normal)
        data = data if data is not None else tomllib.loads(normal)
    except tomllib.TOMLDecodeError:
        return
    if command_keys(data):
        assert _may_name_a_command(text.encode())


def test_the_quick_look_passes_over_comments() -> None:
    init = run_cli_free_default()
    assert not _may_name_a_command(init.encode())
    assert _may_name_a_command(b'"model\\u005fcommand" = "x"\n')
    assert _may_name_a_command(b"# note\rmodel_command = 'x'\n")


def run_cli_free_default() -> str:
    from voyager_brain.config import default_config_toml

    return default_config_toml()

"""Hostile brain files: nesting thousands of levels deep, single lines of megabytes, NUL
bytes and bytes that are not UTF-8, written into each file of a real repository and read
by the commands and the hooks as real processes.

A file that cannot be read gives one line naming it (and its line where known) with exit
code 2, or 1 from the commands whose job is to report problems (check, doctor); a hook
still exits 0 with that one line on stderr. Nothing ever prints a traceback, and a file
that could not be read is left as it was. A memory log's bad line is counted, not fatal,
as the log treats every bad line; a long line that is valid is data, and is read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from voyager_brain.git.merge import merge_brain
from voyager_brain.render import Templates
from voyager_brain.session import brainfile

DEEP = "[" * 5000 + "]" * 5000
HUGE = "x" * 3_000_000
BRAIN_JSON = Path(".voyager/brain.json")
BRAIN_MD = Path(".voyager/brain.md")
CONFIG = Path(".voyager/config.toml")
RULES = Path(".voyager/rules.toml")
LOG = Path(".voyager/memory.jsonl")

# Every command a person runs often, and the hooks on every agent's path.
COMMANDS: dict[str, tuple[str, ...]] = {
    "status": ("status",),
    "show": ("show",),
    "context": ("context",),
    "add": ("add", "observation", "X"),
    "save": ("save", "update.json"),
    "compact": ("compact",),
    "recall": ("recall", "hello"),
    "check": ("check",),
    "doctor": ("doctor",),
    "brain": ("brain", "action=list"),
    "rules": ("rules", "list"),
    "export": ("export", "agents-md"),
    "log": ("log",),
    "diff": ("diff",),
}
HOOKS: dict[str, tuple[str, str]] = {
    "session-start": ("session-start", "{}"),
    "pre-tool-use": (
        "pre-tool-use",
        '{"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"}}',
    ),
    "stop": ("stop", '{"session_id": "s1", "last_assistant_message": "done"}'),
    "session-end": ("session-end", '{"session_id": "s1"}'),
}
#: The commands whose job is to report a broken file: exit 1, the file on stdout.
REPORTERS = ("check", "doctor")


def _env(home: Path) -> dict[str, str]:
    return {
        "VOYAGER_HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Test Agent",
        "GIT_AUTHOR_EMAIL": "agent@example.invalid",
        "GIT_COMMITTER_NAME": "Test Agent",
        "GIT_COMMITTER_EMAIL": "agent@example.invalid",
    }


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository after `init`, an observation, a memory entry and a commit, made
    once and copied by each test (the environment is given: the per-test isolation is
    not in place yet when a module fixture runs)."""
    top = tmp_path_factory.mktemp("template") / "project"
    top.mkdir()
    env = _env(tmp_path_factory.mktemp("template-home"))

    def git(*args: str) -> None:
        subprocess.run(
            ["git", *args], cwd=top, check=True, capture_output=True, env={**os.environ, **env}
        )

    git("init", "-q", "-b", "main")
    for args in (
        ("init",),
        ("add", "observation", "hello from the template"),
        ("brain", "action=add", "type=learning", "text=hello world"),
    ):
        assert run_cli(*args, cwd=top, env=env).returncode == 0
    (top / "update.json").write_text('{"facts": {"custom": ["from the update"]}}\n')
    git("add", "-A")
    git("commit", "-q", "-m", "brain")
    return top


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    top = tmp_path / "project"
    shutil.copytree(template, top, symlinks=True)
    return top


def _line_of(data: bytes, needle: bytes) -> int:
    return data[: data.index(needle)].count(b"\n") + 1


# -- the corruptions: (file, new bytes from the old, the line the error names) ----------

Corruption = Callable[[bytes], tuple[bytes, int | None]]


def _json_deep(old: bytes) -> tuple[bytes, int | None]:
    return old.replace(b'"custom": []', b'"custom": ' + DEEP.encode()), _line_of(old, b'"custom"')


def _json_nul(old: bytes) -> tuple[bytes, int | None]:
    return old.replace(b'"project": "', b'"project": "\0'), _line_of(old, b'"project"')


def _json_not_utf8(old: bytes) -> tuple[bytes, int | None]:
    return old.replace(b'"project": "', b'"project": "\xff'), _line_of(old, b'"project"')


def _json_huge(old: bytes) -> tuple[bytes, int | None]:
    # A megabytes-long value of the wrong type: the error must not echo it.
    new = old.replace(b'"architecture": ""', b'"architecture": ["' + HUGE.encode() + b'"]')
    return new, _line_of(old, b'"architecture"')


def _json_big_int(old: bytes) -> tuple[bytes, int | None]:
    # Past the 4,300 digits Python converts: json.loads raises a bare ValueError.
    new = old.replace(b'"sessionCount": 0', b'"sessionCount": ' + b"9" * 5000)
    return new, _line_of(old, b'"sessionCount"')


def _md_nul(old: bytes) -> tuple[bytes, int | None]:
    return old + b"a line with a \0 byte\n", old.count(b"\n") + 1


def _md_not_utf8(old: bytes) -> tuple[bytes, int | None]:
    return old + b"caf\xe9 au lait\n", old.count(b"\n") + 1


def _toml_deep(old: bytes) -> tuple[bytes, int | None]:
    return old + b"deep = " + DEEP.encode() + b"\n", old.count(b"\n") + 1


def _toml_nul(old: bytes) -> tuple[bytes, int | None]:
    return b"# a comment with a \0 byte\n" + old, 1


def _toml_not_utf8(old: bytes) -> tuple[bytes, int | None]:
    return b"# caf\xe9\n" + old, 1


def _toml_huge(old: bytes) -> tuple[bytes, int | None]:
    return old + b'summarizer = "' + HUGE.encode() + b'"\n', None


RULE = b"[[rules]]\ndescription = 'no rm'\npattern = 'rm -rf'\n"

CORRUPTIONS: dict[str, tuple[Path, Corruption]] = {
    "brain.json-deep": (BRAIN_JSON, _json_deep),
    "brain.json-nul": (BRAIN_JSON, _json_nul),
    "brain.json-not-utf8": (BRAIN_JSON, _json_not_utf8),
    "brain.json-huge": (BRAIN_JSON, _json_huge),
    "brain.json-big-int": (BRAIN_JSON, _json_big_int),
    "brain.md-nul": (BRAIN_MD, _md_nul),
    "brain.md-not-utf8": (BRAIN_MD, _md_not_utf8),
    "config.toml-deep": (CONFIG, _toml_deep),
    "config.toml-nul": (CONFIG, _toml_nul),
    "config.toml-not-utf8": (CONFIG, _toml_not_utf8),
    "config.toml-huge": (CONFIG, _toml_huge),
}
#: Every command and hook against these; a few representative ones against the rest.
SWEPT = ("brain.json-deep", "brain.json-big-int", "brain.md-nul", "config.toml-deep")
FEW = ("status", "context", "add", "save")
FEW_HOOKS = ("session-start", "stop")
#: Commands that never read the file: the memory tool, the guard's rules and git's log
#: need no brain file; check and diff look at the brain files, not the settings.
UNREAD = {
    BRAIN_JSON: ("brain", "rules", "log"),
    BRAIN_MD: ("brain", "rules", "log"),
    CONFIG: ("check", "rules", "log", "diff"),
}
#: Commands that search the stores they can read and skip a broken one (doctor says why).
SKIPPING = ("recall",)


def _cases() -> list[tuple[str, str]]:
    cases = []
    for name in CORRUPTIONS:
        commands = COMMANDS if name in SWEPT else FEW
        hooks = HOOKS if name in SWEPT else FEW_HOOKS
        if name.endswith("-huge"):  # seconds a process: the two ways in are enough
            commands, hooks = ("status", "save"), ("stop",)
        cases += [(name, command) for command in commands]
        cases += [(name, f"hook {hook}") for hook in hooks]
    return cases


def _corrupt(project: Path, name: str) -> tuple[Path, bytes, int | None]:
    relative, corruption = CORRUPTIONS[name]
    path = project / relative
    data, line = corruption(path.read_bytes())
    assert data != path.read_bytes()
    path.write_bytes(data)
    return relative, data, line


def _run(project: Path, command: str) -> subprocess.CompletedProcess[str]:
    if command.startswith("hook "):
        event, payload = HOOKS[command.removeprefix("hook ")]
        return run_cli("hook", "claude", event, cwd=project, input=payload)
    return run_cli(*COMMANDS[command], cwd=project)


def assert_one_line(done: subprocess.CompletedProcess[str], where: str, code: int = 2) -> str:
    """Exit `code`, no traceback, stderr one short line that contains `where`."""
    assert "Traceback" not in done.stderr + done.stdout
    assert done.returncode == code, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert where in lines[0], lines[0]
    assert len(lines[0]) < 400, lines[0][:400]
    return lines[0]


@pytest.mark.parametrize(("name", "command"), _cases())
def test_a_broken_file_is_one_line_and_left_alone(project: Path, name: str, command: str) -> None:
    relative, data, line = _corrupt(project, name)
    where = f"{relative}:{line}:" if line is not None else f"{relative}:"
    if name.startswith("config.toml-nul"):
        where = f"{relative}: not valid TOML"  # tomllib's own message says the line ...
    done = _run(project, command)
    if name.startswith("config.toml-nul"):
        assert f"line {line}" in done.stderr + done.stdout  # ... here
    if command.startswith("hook "):
        if command.endswith("pre-tool-use") and relative != CONFIG:
            # The guard reads neither brain file: the call goes on, silently.
            assert (done.returncode, done.stderr) == (0, "")
        else:
            assert_one_line(done, where, code=0)
            assert done.stderr.startswith("voyager-brain hook claude ")
    elif command in UNREAD.get(relative, ()):
        assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
    elif command in REPORTERS:
        assert "Traceback" not in done.stderr + done.stdout
        assert done.returncode == 1
        assert str(relative) in done.stdout
    elif command in SKIPPING and relative != CONFIG:
        assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
        assert "hello" in done.stdout  # what the other stores hold is still found
    else:
        assert_one_line(done, where)
    assert (project / relative).read_bytes() == data


# -- the memory logs: a bad line is counted, never fatal -------------------------------

LOG_LINES = {
    "deep": b'{"id": "deadbeef", "type": "learning", "x": ' + DEEP.encode() + b"}\n",
    "nul": b'{"id": "deadbeef", "type": "learning", "text": "a \0 b"}\n',
    "not-utf8": b'{"id": "deadbeef", "type": "learning", "text": "caf\xe9"}\n',
    "huge": b'{"id": "deadbeef", "type": "learning", "text": "' + HUGE.encode() + b"\n",
    "big-int": b'{"id": "deadbeef", "type": "learning", "text": "n", "n": ' + b"9" * 5000 + b"}\n",
}


@pytest.mark.parametrize("kind", LOG_LINES)
@pytest.mark.parametrize("personal", [False, True], ids=["project", "personal"])
def test_a_bad_memory_log_line_is_counted(
    project: Path, isolated_env: Path, kind: str, personal: bool
) -> None:
    path = isolated_env / "memory.jsonl" if personal else project / LOG
    if personal:
        path.write_bytes(b'{"id": "cafe0001", "type": "learning", "text": "hello personal"}\n')
    data = path.read_bytes() + LOG_LINES[kind]
    path.write_bytes(data)
    bad_line = data.count(b"\n")

    listed = run_cli("brain", "action=list", cwd=project)
    assert "Traceback" not in listed.stderr
    assert listed.returncode == 0 and listed.stderr == ""
    assert "hello" in listed.stdout  # the good entries are still there
    checked = run_cli("check", cwd=project)
    assert "Traceback" not in checked.stderr + checked.stdout
    if personal:
        assert checked.returncode == 0  # check looks at the files a commit holds
    else:
        assert checked.returncode == 1
        assert f"{LOG}:{bad_line}:" in checked.stdout
    context = run_cli("context", cwd=project)
    assert (context.returncode, context.stderr) == (0, "")
    assert path.read_bytes() == data


# -- long lines that are valid are data ------------------------------------------------


def test_a_valid_line_of_megabytes_is_read(project: Path) -> None:
    (project / "update.json").write_text('{"facts": {"architecture": "' + HUGE + '"}}')
    saved = run_cli("save", "update.json", cwd=project)
    assert (saved.returncode, saved.stderr) == (0, "")
    with (project / BRAIN_MD).open("a") as f:
        f.write("\n## Observation — 2026-03-21T14:30:00Z\n" + HUGE + "\n")
    for args in (("status",), ("show",), ("context",)):
        done = run_cli(*args, cwd=project)
        assert (done.returncode, done.stderr) == (0, ""), args


# -- input that is not a file of ours --------------------------------------------------


def test_a_deep_update_file_is_one_line(project: Path) -> None:
    (project / "deep.json").write_text('{"facts": {"custom": ' + DEEP + "}}\n")
    before = (project / BRAIN_JSON).read_bytes()
    assert_one_line(run_cli("save", "deep.json", cwd=project), "deep.json:1: nested")
    assert (project / BRAIN_JSON).read_bytes() == before


@pytest.mark.parametrize("where", ["update", "state"])
def test_nesting_json_reads_but_a_merge_cannot_is_one_line(project: Path, where: str) -> None:
    # A few hundred levels: the JSON decoder reads them, the merge's own recursion
    # (checking, redacting, copying) runs out of stack.
    nested = "[" * 700 + "]" * 700
    if where == "update":
        (project / "update.json").write_text('{"extra": ' + nested + "}\n")
    else:
        path = project / BRAIN_JSON
        extra = b'"extra": ' + nested.encode() + b', "nextSteps": []'
        path.write_bytes(path.read_bytes().replace(b'"nextSteps": []', extra))
    before = (project / BRAIN_JSON).read_bytes()
    line = assert_one_line(run_cli("save", "update.json", cwd=project), str(BRAIN_JSON))
    assert "nested too deeply" in line
    assert (project / BRAIN_JSON).read_bytes() == before


def test_deep_json_on_the_command_line(project: Path) -> None:
    tested = run_cli("rules", "test", "--tool", "Bash", "--input", DEEP, cwd=project)
    assert_one_line(tested, "--input: nested too deeply")
    # The brain tool reads a value that is not JSON as text; too deep to read is the same.
    added = run_cli("brain", "action=add", "type=learning", f"text={DEEP}", cwd=project)
    assert (added.returncode, added.stderr) == (0, "")


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "cursor", "copilot"])
def test_deep_hook_stdin_is_one_line(project: Path, agent: str) -> None:
    # Read at any depth (a guard rule must see a tool call however deep it nests): the
    # list is then refused for what it is.
    done = run_cli("hook", agent, "session-start", cwd=project, input=DEEP)
    line = assert_one_line(done, "stdin: expected a JSON object", code=0)
    assert done.stdout == ""
    assert line.startswith(f"voyager-brain hook {agent} session-start: ")


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (RULE + b"x = " + DEEP.encode() + b"\n", f"{RULES}:4: nested"),
        (RULE.replace(b"no rm", b"no \xff rm"), f"{RULES}:2: not valid UTF-8"),
        (RULE.replace(b"no rm", b"no \0 rm"), f"{RULES}: not valid TOML"),
    ],
    ids=["deep", "not-utf8", "nul"],
)
def test_a_broken_rules_file_is_one_line(project: Path, data: bytes, detail: str) -> None:
    (project / RULES).write_bytes(data)
    synced = run_cli("rules", "sync", cwd=project)
    assert "Traceback" not in synced.stderr + synced.stdout
    assert detail in synced.stdout + synced.stderr
    doctor = run_cli("doctor", cwd=project)
    assert "Traceback" not in doctor.stderr + doctor.stdout
    assert doctor.returncode == 1 and detail in doctor.stdout
    hook = _run(project, "hook pre-tool-use")
    assert "Traceback" not in hook.stderr
    assert hook.returncode == 0
    assert (project / RULES).read_bytes() == data


@pytest.mark.parametrize("command", ["status", "compact", "hook stop"])
def test_front_matter_too_deep_to_write_back_is_one_line(project: Path, command: str) -> None:
    # YAML reads 900 levels; writing them back (a compaction) ran out of stack.
    path = project / BRAIN_MD
    data = b"---\nkey: " + b"[" * 900 + b"]" * 900 + b"\n---\n" + path.read_bytes()
    path.write_bytes(data)
    done = _run(project, command)
    assert_one_line(done, f"{BRAIN_MD}:2: front matter nested", code=0 if "hook" in command else 2)
    assert path.read_bytes() == data


def test_front_matter_that_holds_itself_is_still_written(project: Path) -> None:
    path = project / BRAIN_MD
    path.write_bytes(b"---\nloop: &x [*x]\n---\n" + path.read_bytes())
    done = run_cli("compact", cwd=project)
    assert (done.returncode, done.stderr) == (0, "")
    assert "\nloop: &id001\n- *id001\n" in path.read_text()  # written back as YAML does


# -- a hand-written title ---------------------------------------------------------------


def test_a_hand_written_first_heading_stays_the_title(project: Path) -> None:
    path = project / BRAIN_MD
    path.write_text(
        "# Team notes on the parser\n\nRead this first.\n\n"
        "## Observation — 2026-03-21T14:30:00Z\nthe lexer is slow\n"
    )
    for args in (("add", "observation", "second"), ("compact",), ("add", "decision", "third")):
        assert run_cli(*args, cwd=project).returncode == 0, args
    text = path.read_text()
    assert text.startswith("# Team notes on the parser\n\nRead this first.\n")
    assert "Brain — Session Context" not in text
    assert text.count("\n# ") == 0
    assert "second" in text and "third" in text and "the lexer is slow" in text


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        ("# Notes\n\nhi\n\n## Observation — 2026-03-21T14:30:00Z\nx\n", "# Notes"),
        ("\n\n# Notes\n## Observation — 2026-03-21T14:30:00Z\nx\n", "# Notes"),
        ("   # Indented, still a heading\n", "   # Indented, still a heading"),
        ("text first\n# Notes\n", None),  # not a title: text comes before it
        ("#hashtag\n", None),  # not a heading in CommonMark
        ("## Notes\n", None),  # a level-2 heading is no title
    ],
)
def test_which_first_line_is_a_title_of_its_own(text: str, heading: str | None) -> None:
    doc = brainfile.parse(text, Path("brain.md"))
    assert doc.heading == heading
    rendered = brainfile.render(doc.replace(project="Fuzz"), Templates())
    assert rendered.startswith(heading + "\n") if heading else "Fuzz Brain" in rendered
    # A title of its own names no project; ours names the one it was rendered with.
    again = brainfile.parse(rendered, Path("brain.md"))
    assert again == doc.replace(project=None if heading else "Fuzz")


def test_the_merge_driver_keeps_a_hand_written_title() -> None:
    base = "# Team notes\n\n## Observation — 2026-03-21T14:30:00Z\nbase\n"
    ours = base + "\n## Observation — 2026-03-21T14:31:00Z\nours\n"
    theirs = base + "\n## Observation — 2026-03-21T14:32:00Z\ntheirs\n"
    merged = merge_brain(base.encode(), ours.encode(), theirs.encode()).decode()
    assert merged.startswith("# Team notes\n\n## Observation")
    assert "ours" in merged and "theirs" in merged and "Brain — Session Context" not in merged


# -- a broken config.toml does not switch the guard off --------------------------------

BROKEN_CONFIGS = {
    "wrong-type": b"guard_fail = 5\n",
    "not-toml": b"model_command = [\n",
    "duplicate-key": b"auto_memory = true\nauto_memory = false\n",
    "not-utf8": b"auto_export = '\xff'\n",
}


@pytest.mark.parametrize("closed", [False, True], ids=["default", "personal-closed"])
@pytest.mark.parametrize("config", BROKEN_CONFIGS)
def test_a_broken_project_config_does_not_let_a_blocked_call_through(
    repo: Path, isolated_env: Path, config: str, closed: bool
) -> None:
    # The user's own rule, then a repository whose config.toml cannot be read: the check
    # failed on it before reading any rule, and guard_fail (open, even with the user's
    # own "closed", which was never read) let `rm -rf` run.
    import json

    rule = ("--pattern", r"\brm\s+-rf\b", "--description", "No rm -rf")
    assert run_cli("rules", "add", *rule, cwd=repo).returncode == 0
    if closed:
        (isolated_env / "config.toml").write_text('guard_fail = "closed"\n')
    (repo / ".voyager").mkdir(exist_ok=True)
    (repo / CONFIG).write_bytes(BROKEN_CONFIGS[config])
    call = {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    done = run_cli("hook", "claude", "pre-tool-use", cwd=repo, input=json.dumps(call))
    line = assert_one_line(done, str(CONFIG), code=0)
    assert line.startswith("voyager-brain hook claude pre-tool-use: ")
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "No rm -rf" in out["permissionDecisionReason"]


@pytest.mark.parametrize("priority", ["9223372036854775808", "-9223372036854775809"])
def test_a_rules_toml_priority_sqlite_cannot_hold_does_not_let_a_blocked_call_through(
    repo: Path, priority: str
) -> None:
    # TOML integers are unbounded in Python; SQLite's are 64-bit. Storing the rule raised
    # OverflowError inside the check, and guard_fail = "open" let `rm -rf` run.
    import json

    rule = ("--pattern", r"\brm\s+-rf\b", "--description", "No rm -rf")
    assert run_cli("rules", "add", *rule, cwd=repo).returncode == 0
    (repo / ".voyager").mkdir(exist_ok=True)
    (repo / RULES).write_text(
        f"[[rules]]\ndescription = 'x'\npattern = 'xyz'\npriority = {priority}\n"
    )
    call = {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    done = run_cli("hook", "claude", "pre-tool-use", cwd=repo, input=json.dumps(call))
    line = assert_one_line(done, f"{RULES}: rule 1 ('x'): priority: expected an integer", code=0)
    assert "skipped, the other rules apply" in line
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "No rm -rf" in out["permissionDecisionReason"]


def test_a_rules_toml_too_big_to_check_in_time_is_refused_not_waited_for(repo: Path) -> None:
    # 100,000 rules (8 MB): the first tool call's hook synced them for 46 s and the next
    # ones took 9 s each, past the agent's 10 s hook timeout, after which the agent runs
    # the call unchecked; the user's own block rule never had its say.
    import json
    import time

    rule = ("--pattern", r"\brm\s+-rf\b", "--description", "No rm -rf")
    assert run_cli("rules", "add", *rule, cwd=repo).returncode == 0
    (repo / ".voyager").mkdir(exist_ok=True)
    (repo / RULES).write_text(
        "".join(
            f"[[rules]]\ndescription = 'r{i}'\naction = 'log'\n"
            f"pattern = '[a-y]{{{i % 97 + 1}}}[0-8]{{{i // 97 + 1}}}'\n\n"
            for i in range(100_000)
        )
    )
    call = {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    for _ in range(2):
        started = time.monotonic()
        done = run_cli("hook", "claude", "pre-tool-use", cwd=repo, input=json.dumps(call))
        assert time.monotonic() - started < 5
        line = assert_one_line(done, f"{RULES}: ", code=0)
        assert "the rules loaded before still apply" in line
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny"


def test_a_rules_toml_of_more_rules_than_a_check_affords_is_refused(repo: Path) -> None:
    (repo / ".voyager").mkdir(exist_ok=True)
    (repo / RULES).write_text(
        "".join(f"[[rules]]\ndescription = 'r{i}'\npattern = 'x{i}y'\n" for i in range(1001))
    )
    done = run_cli("rules", "sync", cwd=repo)
    assert "1001 rules, more than the 1000" in done.stdout + done.stderr
    assert run_cli("rules", "list", "--json", cwd=repo).stdout.count('"r1000"') == 0


# -- text that is not a character: a lone surrogate, as a JSON escape -------------------

LONE = '"ship \\ud800 it"'  # JSON's escape of a lone surrogate: valid JSON, not Unicode


@pytest.mark.parametrize(
    "args",
    [
        ("show",),
        ("status",),
        ("context",),
        ("brain", "action=list"),
        ("recall", "ship"),
        ("memory", "gc"),
        ("save", "update.json"),
        ("show", "--json"),
    ],
)
def test_a_lone_surrogate_in_a_brain_file_is_shown_escaped_and_kept(
    project: Path, args: tuple[str, ...]
) -> None:
    """A hand edit or another tool can leave "\\ud800" in brain.json or a memory log: it is
    read, shown as its escape, and written back as it was, never a traceback."""
    state = project / BRAIN_JSON
    state.write_bytes(
        state.read_bytes().replace(b'"currentGoal": ""', b'"currentGoal": ' + LONE.encode())
    )
    log = project / LOG
    log.write_bytes(
        log.read_bytes()
        + b'{"id": "5a7e0001", "type": "learning", "text": '
        + LONE.encode()
        + b', "created": "2026-01-01T00:00:00.000Z"}\n'
    )
    done = run_cli(*args, cwd=project)
    assert "Traceback" not in done.stderr
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
    if args[0] != "memory" and args[0] != "save":
        assert "\\ud800" in done.stdout
    assert b'"ship \\ud800 it"' in state.read_bytes()
    assert b'"ship \\ud800 it"' in log.read_bytes()


def test_a_lone_surrogate_reaches_the_agent_escaped(project: Path) -> None:
    log = project / LOG
    log.write_bytes(
        log.read_bytes()
        + b'{"id": "5a7e0001", "type": "learning", "text": '
        + LONE.encode()
        + b"}\n"
    )
    done = run_cli("hook", "claude", "session-start", cwd=project, input="{}")
    assert (done.returncode, done.stderr) == (0, "")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "ship \ud800 it" in context


def test_an_argument_that_is_not_utf8_is_one_line(project: Path) -> None:
    before = (project / BRAIN_MD).read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "add", "observation", b"caf\xc3\xa9 \xff"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line(done, "voyager-brain: argument 3: not valid UTF-8 (byte 0xff)")
    assert (project / BRAIN_MD).read_bytes() == before


@pytest.mark.parametrize("kind", ["device", "FIFO", "folder"])
@pytest.mark.parametrize(
    "command",
    [
        ("save",),
        ("import", "llm-brain"),
        ("history", "import"),
        ("memory", "extract"),
        ("rules", "suggest"),
    ],
    ids=" ".join,
)
def test_a_named_file_that_is_no_regular_file_is_one_line_not_a_hang(
    project: Path, tmp_path: Path, command: tuple[str, ...], kind: str
) -> None:
    """/dev/zero would be read forever and a FIFO's open waits for a writer."""
    named = {"device": Path("/dev/zero"), "FIFO": tmp_path / "fifo", "folder": tmp_path}[kind]
    if kind == "FIFO":
        os.mkfifo(named)
    inside = {("history", "import"): "session.jsonl", ("import", "llm-brain"): "brain.json"}
    if kind == "folder" and command in inside:
        named = tmp_path / "sub"  # a folder is read for the files in it: give it a FIFO
        named.mkdir()
        os.mkfifo(named / inside[command])
        kind = "FIFO"
    done = run_cli(*command, str(named), cwd=project)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("voyager-brain: ") and f"is not a regular file (a {kind})" in line


# -- the pipeline's state and events -------------------------------------------------------

STATE = Path(".brain/pipeline-state.json")


@pytest.mark.parametrize(
    ("kind", "data", "detail"),
    [
        ("big-int", b'{"status": ' + b"9" * 5000 + b"}", "an integer of 5,000 digits"),
        ("deep", b'{"status":\n' + DEEP.encode() + b"}", "levels deep"),
    ],
)
@pytest.mark.parametrize("command", ["status", "resume", "cancel", "doctor"])
def test_a_pipeline_state_that_cannot_be_read_is_one_line(
    project: Path, kind: str, data: bytes, detail: str, command: str
) -> None:
    (project / STATE).parent.mkdir()
    (project / STATE).write_bytes(data)
    args = ("doctor",) if command == "doctor" else ("pipeline", command)
    done = run_cli(*args, cwd=project)
    line = 2 if kind == "deep" else 1
    if command == "doctor":
        assert "Traceback" not in done.stderr + done.stdout and done.returncode == 1
        assert f"{STATE}:{line}: " in done.stdout and detail in done.stdout
    else:
        assert detail in assert_one_line(done, f"{STATE}:{line}: ")
    assert (project / STATE).read_bytes() == data


def test_a_deep_event_line_is_skipped_by_status(project: Path) -> None:
    assert run_cli("pipeline", "init", cwd=project).returncode == 0
    events = project / ".brain" / "events.jsonl"
    old = events.read_bytes() if events.exists() else b""
    events.write_bytes(old + b'{"event": "x", "at": ' + DEEP.encode() + b"}\n")
    done = run_cli("pipeline", "status", "--events", "5", cwd=project)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]


def test_doctor_reports_a_memory_logs_bad_lines_and_repair_moves_them_aside(
    project: Path,
) -> None:
    """A hand edit with a trailing comma and a torn last line: doctor names both, the
    readers skip them, and --repair moves the bad one to memory.jsonl.rejected and ends
    the torn one (nothing dropped); memory gc does the same and says how many."""
    log = project / LOG
    edit = b'{"id": "x9", "type": "learning", "text": "hand edit",}\n'
    tail = b'{"id": "x8", "type": "learning", "text": "cut short"}'
    log.write_bytes(log.read_bytes() + edit + tail)
    said = run_cli("doctor", cwd=project)
    line = next(x for x in said.stdout.splitlines() if str(LOG) in x)
    assert line.startswith("warn") and "1 line that is not an entry" in line
    assert "a last line without its newline" in line
    repaired = run_cli("doctor", "--repair", cwd=project)
    assert "moved to memory.jsonl.rejected" in repaired.stdout, repaired.stdout
    assert (project / ".voyager" / "memory.jsonl.rejected").read_bytes() == edit
    assert log.read_bytes().endswith(tail + b"\n")
    again = run_cli("doctor", cwd=project)
    assert any(x.startswith("ok") and str(LOG) in x for x in again.stdout.splitlines())
    log.write_bytes(log.read_bytes() + b"oops\n")
    gc = run_cli("memory", "gc", "--store", "project", cwd=project)
    assert gc.returncode == 0 and "1 bad line moved to memory.jsonl.rejected" in gc.stdout
    assert (project / ".voyager" / "memory.jsonl.rejected").read_bytes() == edit + b"oops\n"


def test_doctor_adds_what_an_older_gitignore_lacks(project: Path) -> None:
    """A .voyager/.gitignore written before `*.rejected` existed: doctor names the line,
    --repair appends it and keeps the rest, and git then ignores the set-aside lines."""
    ignore = project / ".voyager" / ".gitignore"
    older = b"# mine\n*.lock\ncache/\n*.corrupt\n.*.tmp\nlocal-notes.md"
    ignore.write_bytes(older)
    said = run_cli("doctor", cwd=project)
    assert ".voyager/.gitignore lacks *.rejected" in said.stdout
    run_cli("doctor", "--repair", cwd=project)
    assert ignore.read_bytes() == older + b"\n*.rejected\n"
    (project / ".voyager" / "memory.jsonl.rejected").write_text("oops\n")
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".voyager/memory.jsonl.rejected"], cwd=project, check=False
    )
    assert ignored.returncode == 0

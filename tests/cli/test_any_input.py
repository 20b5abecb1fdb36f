"""Every command of the command line and every hook of every agent, fed what a hostile clone
or a careless hand can give it: random bytes, lone surrogates, integers past 4,300 digits
and JSON thousands of levels deep, as arguments, as stdin and as the contents of each file
voyager-brain keeps.

Whatever it is given, a command ends with one line (or click's usage message) and exit
code 0 or 2 (1 for the commands whose job is to find problems), never a traceback; a hook
exits 0. Every file is either unchanged or still readable with nothing it held before
lost; a file that could not be read before the command is left byte for byte as it was
(or, by a repair, set aside whole).

The runs are real processes, forked from one clean interpreter (`forkcli`), so that a
thousand of them take seconds. `VOYAGER_FUZZ_EXAMPLES` sets the examples per command
(default 5).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from conftest import commit_all, git
from forkcli import ForkedCLI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voyager_brain import tomlfile
from voyager_brain.cli import cli
from voyager_brain.errors import BrainError
from voyager_brain.integrations.hooks import ADAPTERS, adapter
from voyager_brain.memory import log
from voyager_brain.pipeline import state as pipeline_state
from voyager_brain.session import brainfile
from voyager_brain.state import brainjson

EXAMPLES = int(os.environ.get("VOYAGER_FUZZ_EXAMPLES", "5"))

#: Commands that serve until they are stopped, tested where their inputs are.
SERVERS = {
    ("ui",): "serves the dashboard until stopped (tests/ui feed it odd requests)",
    ("pipeline", "watch"): "watches until stopped (tests/pipeline/test_watch.py)",
}
#: Commands whose exit code 1 says what they found (a problem, a difference, a failed
#: stage), not that they could not run; for the merge driver, git's "not merged".
REPORTERS = {
    ("check",),
    ("doctor",),
    ("diff",),
    ("export",),
    ("pipeline", "run"),
    ("pipeline", "resume"),
    ("merge-driver",),
}


def leaf_commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from leaf_commands(command, (*path, name))
        elif (*path, name) not in SERVERS:
            yield (*path, name)


COMMANDS = sorted(command for command in leaf_commands(cli) if command[0] != "hook")
HOOKS = sorted(("hook", agent, event) for agent in ADAPTERS for event in adapter(agent).EVENTS)


def options_of(command: tuple[str, ...]) -> list[str]:
    """The option names of `command` (what a fuzzed argument list draws from)."""
    found: click.Command = cli
    for name in command:
        assert isinstance(found, click.Group)
        found = found.get_command(click.Context(found), name)  # type: ignore[assignment]
    return sorted(opt for param in found.params for opt in param.opts if opt.startswith("-"))


# -- what the inputs are made of ---------------------------------------------------------

DEEP = b"[" * 5000 + b"]" * 5000
HOSTILE = [
    b"9" * 5000,
    DEEP,
    b'{"a":' * 3000,
    b'"\\ud800"',
    b'{"facts": ["\\udfff"], "decisions": [{"what": "\\ud800"}]}',
    b'{"x": ' + b"1" * 5000 + b"}",
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8 bytes: not UTF-8
    b"\xff\xfe\x00",
    b"\x00" * 16,
    b"<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n",
    b"a" * 200_000,
    b"-1",
    b"0",
    b"-",
    b"..",
    b"/dev/null",
    b"/dev/zero",
    b"/proc/1",
    b"/proc/self/fd/0",
    b"action=add",
    b"type=learning",
    b"text=\xed\xa0\x80",
    b"id=" + b"9" * 5000,
    b"HEAD~99999999999999999999",
]
hostile = st.sampled_from(HOSTILE) | st.binary(max_size=40)
json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
json_texts = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
).map(lambda value: __import__("json").dumps(value).encode())
contents = hostile | json_texts

#: The files voyager-brain keeps, by where they live: the project, or VOYAGER_HOME.
FILES = [
    ("project", ".voyager/brain.json"),
    ("project", ".voyager/brain.md"),
    ("project", ".voyager/memory.jsonl"),
    ("project", ".voyager/config.toml"),
    ("project", ".voyager/rules.toml"),
    ("project", ".brain/pipeline-state.json"),
    ("project", ".brain/events.jsonl"),
    ("home", "memory.jsonl"),
    ("home", "history.db"),
]


#: A hook's payload with odd values where the agents put theirs ("@PROJECT@": the
#: case's project folder, so that the hook reaches past reading its input).
leaf_values = (
    st.sampled_from(["@PROJECT@", "/dev/zero", "\ud800", "9" * 5000, "", "x\ny"]) | json_scalars
)
hook_values = st.recursive(
    leaf_values,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
payloads = st.fixed_dictionaries(
    {"cwd": st.just("@PROJECT@")},
    optional={
        key: hook_values
        for key in (
            "session_id",
            "transcript_path",
            "hook_event_name",
            "tool_name",
            "tool_input",
            "tool_response",
            "prompt",
            "source",
            "reason",
            "trigger",
            "toolName",
            "toolArgs",
            "conversation_id",
            "command",
            "last_assistant_message",
        )
    },
).map(lambda payload: __import__("json").dumps(payload).encode())


#: A partial brain.json as `save -` takes it: the seed's fields, with odd text in them
#: (or an odd value in their place).
odd_texts = st.sampled_from(["\ud800", "9" * 5000, "", "x\ny", "<<<<<<< HEAD"]) | st.text(
    max_size=12
)
text_lists = st.lists(odd_texts, max_size=3) | hook_values
updates = st.fixed_dictionaries(
    {},
    optional={
        "facts": st.fixed_dictionaries({}, optional={"stack": text_lists, "custom": text_lists})
        | hook_values,
        **{
            field: st.lists(st.fixed_dictionaries({key: odd_texts}), max_size=2) | hook_values
            for field, key in (
                ("decisions", "what"),
                ("keyFiles", "path"),
                ("knownIssues", "issue"),
            )
        },
        "nextSteps": text_lists,
        "activeState": hook_values,
    },
).map(lambda update: __import__("json").dumps(update).encode())


@st.composite
def cases(draw: st.DrawFn, command: tuple[str, ...]) -> dict[str, Any]:
    options = [] if command[0] == "hook" else [o.encode() for o in options_of(command)]
    token = hostile | json_texts
    # An argument alone, an option alone, or an option and an odd value for it.
    group = token.map(lambda arg: [arg]) | st.sampled_from(options or [b"--json"]).flatmap(
        lambda option: st.just([option]) | token.map(lambda value: [option, value])
    )
    count = 0 if command[0] == "hook" else draw(st.sampled_from([0, 0, 1, 2, 3]))
    arguments = [arg for _ in range(count) for arg in draw(group)]
    damage = draw(st.none() | st.tuples(st.sampled_from(FILES), st.booleans(), contents))
    return {
        # The kernel passes no NUL byte in an argument (argv holds C strings).
        "argv": [part.encode() for part in command] + [a.replace(b"\x00", b"") for a in arguments],
        "stdin": draw(st.none() | contents | (payloads if command[0] == "hook" else updates)),
        "damage": damage,
    }


# -- the project every case starts from --------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with something in every store, and a VOYAGER_HOME beside it."""
    base = tmp_path_factory.mktemp("any-input")
    project, home = base / "project", base / "home"
    project.mkdir()
    home.mkdir()
    env = {**os.environ, "VOYAGER_HOME": str(home), "HOME": str(base)}

    def run(*args: str, stdin: str | None = None, code: int = 0) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "voyager_brain", *args],
            cwd=project,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == code, (args, done.stderr)

    git(project, "init", "-q", "-b", "main")
    run("init")
    run("brain", "action=add", "type=learning", "text=Releases are cut from main")
    run("brain", "action=add", "type=learning", "text=Personal habit", "scope=personal")
    run("add", "decision", "Keep the API versioned")
    run(
        "save",
        "-",
        stdin='{"facts": {"stack": ["Python 3.11"]}, "decisions": [{"what":'
        ' "Use SQLite", "why": "one file", "when": "2026-11-01", "reversible": true}],'
        ' "knownIssues": [{"issue": "slow CI"}], "keyFiles": [{"path": "README.md"}]}',
    )
    run(
        "rules",
        "add",
        "--pattern",
        "rm -rf /",
        "--action",
        "block",
        "--tool",
        "Bash",
        "--description",
        "no wiping",
    )
    payload = (
        '{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",'
        ' "tool_input": {"command": "ls"}, "cwd": "' + str(project) + '"}'
    )
    run("hook", "claude", "pre-tool-use", stdin=payload)
    # A runner that writes nothing: the first stage fails, which leaves a state and events.
    run("pipeline", "run", "fuzz the inputs", "--runner", "true", "--max-retries", "0", code=1)
    commit_all(project, "the template")
    return base


def readable(place: Path, name: str, data: bytes) -> Any:
    """What `data` holds as the file `name`, as voyager-brain reads it; BrainError (or
    ValueError, sqlite3.Error) when it cannot be read."""
    path = place / name
    if name.endswith("brain.json"):
        # What a merge only ever adds to (seed 002's union and upsert fields).
        state = brainjson.loads(data, path)
        facts = state.get("facts", {})
        return {
            "stack": set(map(str, facts.get("stack", []))),
            "custom": set(map(str, facts.get("custom", []))),
            **{
                field: {str(item.get(key)) for item in state.get(field, [])}
                for field, key in (
                    ("decisions", "what"),
                    ("keyFiles", "path"),
                    ("knownIssues", "issue"),
                )
            },
        }
    if name.endswith("brain.md"):
        return sorted(entry.timestamp.isoformat() for entry in brainfile.parse(data, path).entries)
    if name.endswith("memory.jsonl"):
        entries, health = log.parse(data)
        return {"ids": {entry.get("id") for entry in entries}, "bad": health.bad_lines}
    if name.endswith(".toml"):
        return tomlfile.read_toml(path)
    if name.endswith("pipeline-state.json"):
        return pipeline_state.PipelineState.from_json(__import__("json").loads(data), path)
    if name.endswith("history.db"):
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return data


def place_of(where: str, root: Path) -> Path:
    return root / "project" if where == "project" else root / "home"


def snapshot(root: Path) -> dict[tuple[str, str], tuple[bytes, Any]]:
    """Each kept file's bytes and what it holds (None when it cannot be read)."""
    found = {}
    for where, name in FILES:
        path = place_of(where, root) / name
        if not path.exists():
            continue
        data = path.read_bytes()
        try:
            held = readable(place_of(where, root), name, data)
        except (BrainError, ValueError, sqlite3.Error, RecursionError):
            held = None
        found[(where, name)] = (data, held)
    return found


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCLI]:
    running = ForkedCLI(tmp_path_factory.mktemp("driver"))
    yield running
    running.close()


def brief(value: Any) -> Any:
    """`value` with each long bytes or str cut to its first 60 characters."""
    if isinstance(value, (bytes, str)) and len(value) > 60:
        return value[:60] + (b"..." if isinstance(value, bytes) else "...")  # type: ignore[operator]
    if isinstance(value, (list, tuple)):
        return type(value)(brief(item) for item in value)
    if isinstance(value, dict):
        return {key: brief(item) for key, item in value.items()}
    return value


def check_case(
    template: Path, driver: ForkedCLI, command: tuple[str, ...], case: dict[str, Any]
) -> None:
    root = Path(tempfile.mkdtemp(prefix="case-"))
    try:
        shutil.copytree(template, root, dirs_exist_ok=True, symlinks=True)
        if case["damage"] is not None:
            (where, name), append, data = case["damage"]
            path = place_of(where, root) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("ab" if append else "wb") as file:
                file.write(data)
        before = snapshot(root)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("VOYAGER_")},
            "VOYAGER_HOME": str(root / "home"),
            "HOME": str(root),
        }
        stdin = (case["stdin"] or b"").replace(b"@PROJECT@", str(root / "project").encode())
        run = driver.run(case["argv"], cwd=root / "project", env=env, stdin=stdin)
        shown = f"{brief(case)}\nexit {run.code}\nstderr:\n{run.stderr[-3000:]}"
        assert "Traceback" not in run.stderr, shown
        assert run.code != -9, f"did not end within the time limit\n{shown}"
        if command[0] == "hook":
            assert run.code == 0, shown  # a hook never breaks the agent
            assert all(line.startswith("voyager-brain") for line in run.stderr.splitlines()), shown
        else:
            reports = any(command[: len(prefix)] == prefix for prefix in REPORTERS)
            allowed = {0, 2} | ({1} if reports else set())
            assert run.code in allowed, shown
        if run.code == 2 and not run.stderr.startswith("Usage:"):
            # One line, or one per argument that failed on its own (`history import`
            # names each file it could not read, and imports the others).
            errors = [line for line in run.stderr.splitlines() if "ignoring" not in line]
            assert 1 <= len(errors) <= max(1, len(case["argv"]) - len(command)), shown
            # Ours, or click's for an option without its value.
            assert all(line.startswith(("voyager-brain", "Error: ")) for line in errors), shown
        after = snapshot(root)
        for key, (data, held) in before.items():
            removes = command == ("pipeline", "reset") and key[1].startswith(".brain/")
            assert key in after or held is None or removes, f"{key} removed\n{shown}"
            if key not in after:
                continue
            new_data, new_held = after[key]
            if held is None:
                # Unreadable: left as it was, or set aside whole by a repair.
                assert new_data == data or any(
                    p.read_bytes() == data for p in place_of(key[0], root).rglob("*") if p.is_file()
                ), f"{key}: an unreadable file was changed\n{shown}"
                continue
            assert new_held is not None, f"{key}: readable before, not after\n{shown}"
            assert_nothing_lost(key[1], held, new_held, command, shown)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def assert_nothing_lost(
    name: str, held: Any, new: Any, command: tuple[str, ...], shown: str
) -> None:
    if name.endswith("brain.json"):
        for field, items in held.items():
            assert items <= new[field], f"{field}\n{shown}"
    elif name.endswith("brain.md") and command[:1] != ("compact",):
        assert set(held) <= set(new), shown
    elif name.endswith("memory.jsonl") and command[:2] not in (("brain",), ("memory", "gc")):
        assert held["ids"] <= new["ids"], shown


@pytest.mark.parametrize("command", COMMANDS + HOOKS, ids=" ".join)
def test_any_input_is_one_line_and_loses_nothing(
    template: Path, driver: ForkedCLI, command: tuple[str, ...]
) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(cases(command))
    def check(case: dict[str, Any]) -> None:
        check_case(template, driver, command, case)

    check()

"""The `voyager-brain` command, run as a real process in real git repositories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import ROOT, cli_ok, docs_generator, git, run_cli

from voyager_brain.cli import cli as cli_group


def subcommand(group: click.Group, name: str) -> click.Command:
    """What `voyager-brain ... NAME` runs: the group imports its module when asked."""
    command = group.get_command(click.Context(group), name)
    assert command is not None, name
    return command


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name in group.list_commands(click.Context(group)):
        found.append((*prefix, name))
        command = subcommand(group, name)
        if isinstance(command, click.Group):
            found += commands(command, (*prefix, name))
    return found


@pytest.mark.parametrize("path", commands(cli_group), ids=" ".join)
def test_every_command_has_help(path: tuple[str, ...], tmp_path: Path) -> None:
    command: click.Command = cli_group
    for name in path:
        assert isinstance(command, click.Group)
        command = subcommand(command, name)
    assert command.help and len(command.help.strip()) > 20
    result = run_cli(*path, "--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "Usage: voyager-brain" in result.stdout


def test_version_and_group_help(tmp_path: Path) -> None:
    assert run_cli("--version", cwd=tmp_path).stdout.startswith("voyager-brain, version ")
    out = run_cli("--help", cwd=tmp_path).stdout
    for name in ("init", "status", "add", "compact", "doctor", "demo"):
        assert name in out


def test_init_creates_voyager_at_the_top_from_a_subfolder(repo: Path) -> None:
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    result = run_cli("init", cwd=sub)
    assert result.returncode == 0, result.stderr
    voyager = repo / ".voyager"
    assert (voyager / "brain.md").read_text() == "# project Brain — Session Context\n"
    assert "compact_budget_tokens" in (voyager / "config.toml").read_text()
    assert "*.lock" in (voyager / ".gitignore").read_text()
    assert not (sub / ".voyager").exists()
    assert "created" in result.stdout and "project: project" in result.stdout


def test_init_twice_keeps_files(repo: Path) -> None:
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text("compact_budget_tokens = 999\n")
    result = run_cli("init", cwd=repo)
    assert result.returncode == 0
    assert "already set up" in result.stdout
    assert (repo / ".voyager" / "config.toml").read_text() == "compact_budget_tokens = 999\n"


def test_init_detects_the_project_name_from_pyproject(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "rocket-fuel"\n')
    run_cli("init", cwd=repo)
    assert (repo / ".voyager" / "brain.md").read_text().startswith("# rocket-fuel Brain")


def test_outside_a_repository_says_so_and_exits_2(tmp_path: Path) -> None:
    for args in (["init"], ["status"], ["add", "observation", "x"], ["compact"], ["doctor"]):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 2, args
        assert "not inside a git repository" in result.stderr
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_add_then_status_json(repo: Path) -> None:
    run_cli("init", cwd=repo)
    assert run_cli("add", "decision", "Use PostgreSQL over MongoDB", cwd=repo).returncode == 0
    result = run_cli("add", "observation", "-", cwd=repo, input="Task: auth\nOutcome: ok\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("added observation ")
    data = json.loads(run_cli("status", "--json", cwd=repo).stdout)
    assert data["entries"] == {
        "total": 2,
        "observation": 1,
        "decision": 1,
        "loop_status": 0,
        "reflection": 0,
    }
    assert data["project"] == "project" and data["branch"] == "main"
    assert data["budget_tokens"] == 4000
    assert data["tokens"] == -(-len((repo / ".voyager" / "brain.md").read_text()) // 4)
    assert ".voyager/brain.md" in data["uncommitted"]
    assert data["last_compaction"] is None and data["last_updated"].endswith("Z")


def test_status_text_shows_every_row(repo: Path) -> None:
    run_cli("init", cwd=repo)
    run_cli("add", "loop_status", "Iteration: 1/10", cwd=repo)
    git(repo, "add", ".voyager")
    git(repo, "commit", "-q", "-m", "brain")
    out = run_cli("status", cwd=repo).stdout
    for label in ("brain", "project", "branch", "size", "entries", "updated", "compacted", "git"):
        assert any(line.startswith(label) for line in out.splitlines()), label
    assert "brain files committed" in out
    assert "1 (1 loop_status)" in out


def test_add_redacts_and_says_so(repo: Path) -> None:
    key = "AKIA" + "Q3ZP7RMX2LBN5TWK"
    result = run_cli("add", "observation", f"aws key {key} in .env", cwd=repo)
    assert "1 secret redacted" in result.stdout
    assert key not in (repo / ".voyager" / "brain.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "note", "x"], "Invalid value for 'TYPE'"),
        (["add", "observation", "   "], "TEXT is empty"),
        (["add"], "Missing argument"),
        (["status", "--bogus"], "No such option"),
    ],
)
def test_bad_arguments_exit_2_without_traceback(repo: Path, args: list[str], message: str) -> None:
    result = run_cli(*args, cwd=repo)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_corrupt_brain_is_one_line_exit_2_and_untouched(repo: Path) -> None:
    path = repo / ".voyager" / "brain.md"
    path.parent.mkdir()
    path.write_bytes(b"# p Brain \xe2\x80\x94 Session Context\n\n## Decision \xe2\x80\x94 x\n\xc3(")
    for args in (["status"], ["add", "observation", "x"], ["compact"]):
        result = run_cli(*args, cwd=repo)
        assert result.returncode == 2
        assert result.stderr.strip().endswith(
            "brain.md:4: not valid UTF-8 (byte 0xc3); expected a UTF-8 text file"
        )
        assert len(result.stderr.strip().splitlines()) == 1
    assert path.read_bytes().endswith(b"\xc3(")


def test_bad_config_is_one_line_exit_2(repo: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "config.toml").write_text("compact_budget_tokens = 'lots'\n")
    result = run_cli("status", cwd=repo)
    assert result.returncode == 2
    assert "compact_budget_tokens: expected int, got str 'lots'" in result.stderr


def test_compact_reports_what_it_did(repo: Path) -> None:
    run_cli("init", cwd=repo)
    for n in range(4):
        run_cli("add", "loop_status", f"Iteration: {n}/10", cwd=repo)
    result = run_cli("compact", cwd=repo)
    assert result.returncode == 0
    assert "4 -> 1 entries" in result.stdout and "superseded  3" in result.stdout
    again = json.loads(run_cli("compact", "--json", cwd=repo).stdout)
    assert again["changed"] is False and again["entries_after"] == 1


def test_doctor_explains_then_repairs_a_corrupt_brain(repo: Path) -> None:
    run_cli("init", cwd=repo)
    path = repo / ".voyager" / "brain.md"
    path.write_text("---\nproject: [oops\n---\n# x\n")
    result = run_cli("doctor", cwd=repo)
    assert result.returncode == 1
    assert "front matter is not valid YAML" in result.stdout
    assert "doctor --repair" in result.stdout
    assert path.read_text() == "---\nproject: [oops\n---\n# x\n"

    result = run_cli("doctor", "--repair", cwd=repo)
    assert result.returncode == 0, result.stdout
    moved = list((repo / ".voyager").glob("brain.md.*.corrupt"))
    assert len(moved) == 1 and moved[0].read_text() == "---\nproject: [oops\n---\n# x\n"
    assert path.read_text() == "# project Brain — Session Context\n"
    assert run_cli("doctor", cwd=repo).returncode == 0
    # The moved-aside copy is ignored by git.
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert ".corrupt" not in status


def test_doctor_json_and_secret_repair(repo: Path) -> None:
    run_cli("init", cwd=repo)
    path = repo / ".voyager" / "brain.md"
    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    path.write_text(path.read_text() + f"\n## Observation — 2026-03-21T14:30:00Z\ntoken {token}\n")
    data = json.loads(run_cli("doctor", "--json", cwd=repo).stdout)
    assert data["ok"] is False
    assert any("secret" in f["message"] for f in data["findings"])
    assert run_cli("doctor", "--repair", cwd=repo).returncode == 0
    assert token not in path.read_text()


def test_doctor_reports_a_heading_with_a_bad_time(repo: Path) -> None:
    run_cli("init", cwd=repo)
    path = repo / ".voyager" / "brain.md"
    path.write_text(path.read_text() + "\n## Decision — last tuesday\nx\n")
    result = run_cli("doctor", cwd=repo)
    assert result.returncode == 0
    assert "line 3: looks like a section heading but 'last tuesday'" in result.stdout


def test_demo_runs_the_whole_lifecycle(tmp_path: Path) -> None:
    result = run_cli("demo", "--dir", str(tmp_path / "scratch"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for step in ("load()", "update()", "compact()", "persist()", "get_status()", "git diff"):
        assert step in out
    assert "+## Decision — " in out  # the diff of session 2
    assert '+      "what": "Rotate refresh tokens on every use",' in out
    state = json.loads((tmp_path / "scratch" / ".voyager" / "brain.json").read_text())
    assert state["sessionCount"] == 2 and len(state["decisions"]) == 2
    brain = (tmp_path / "scratch" / ".voyager" / "brain.md").read_text()
    assert "<!-- source: compact -->" in brain
    assert "OPENAI_API_KEY=[REDACTED:openai-key]" in out and "sk-proj-" not in brain
    log = subprocess.run(
        ["git", "log", "--oneline"], cwd=tmp_path / "scratch", capture_output=True, text=True
    ).stdout
    assert "brain: session 1" in log


def test_demo_in_a_folder_git_cannot_use_is_one_line(tmp_path: Path) -> None:
    """/proc/1 exists and is a folder, but nothing can be created in it (not even by
    root): `git init` fails there, and the demo says so in one line."""
    result = run_cli("demo", "--dir", "/proc/1", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("voyager-brain: /proc/1: git init failed: ")


def test_python_dash_m_and_console_script_agree(tmp_path: Path) -> None:
    import shutil
    import sys

    script = shutil.which("voyager-brain", path=str(Path(sys.executable).parent))
    assert script is not None, "the console script is installed next to the interpreter"
    out = subprocess.run([script, "--version"], capture_output=True, text=True).stdout
    assert out == run_cli("--version", cwd=tmp_path).stdout


def test_cli_reference_is_up_to_date() -> None:
    module = docs_generator("make_cli_reference")
    assert (ROOT / "docs" / "cli.md").read_text() == module.reference(), (
        "run: python docs/make_cli_reference.py"
    )
    for path in commands(cli_group):
        assert f"## voyager-brain {' '.join(path)}\n" in module.reference()


# -- the project state: save, show, import, status ----------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_init_writes_brain_json_with_every_field(repo: Path) -> None:
    run_cli("init", cwd=repo)
    data = json.loads((repo / ".voyager" / "brain.json").read_text())
    assert list(data) == [
        "version",
        "project",
        "lastUpdated",
        "sessionCount",
        "facts",
        "decisions",
        "activeState",
        "keyFiles",
        "knownIssues",
        "preferences",
        "nextSteps",
    ]
    assert (data["version"], data["project"], data["sessionCount"]) == ("1.0.2", "project", 0)
    assert data["facts"] == {"stack": [], "architecture": "", "environment": {}, "custom": []}


def test_save_round_trip_through_the_cli(repo: Path) -> None:
    run_cli("init", cwd=repo)
    first = run_cli(
        "save",
        "-",
        cwd=repo,
        input=json.dumps(
            {
                "facts": {"stack": ["TypeScript"], "architecture": "Monolith"},
                "decisions": [
                    {
                        "what": "Use PostgreSQL over MongoDB",
                        "why": "Data is relational",
                        "when": "2026-02-15",
                        "reversible": True,
                    }
                ],
                "nextSteps": ["Fix WebSocket idle timeout"],
            }
        ),
    )
    assert first.returncode == 0, first.stderr
    assert "+ decisions: Use PostgreSQL over MongoDB" in first.stdout
    assert "~ facts.architecture: (empty) -> Monolith" in first.stdout
    update = repo / "update.json"
    update.write_text(
        json.dumps(
            {
                "facts": {"stack": ["Express"]},
                "decisions": [{"what": "Use PostgreSQL over MongoDB", "why": "Joins"}],
                "nextSteps": [],
            }
        )
    )
    second = run_cli("save", str(update), "--json", cwd=repo)
    report = json.loads(second.stdout)
    assert report["session_count"] == 2
    assert {
        "op": "change",
        "path": "decisions[Use PostgreSQL over MongoDB].why",
        "old": "Data is relational",
        "new": "Joins",
    } in report["changes"]
    data = json.loads((repo / ".voyager" / "brain.json").read_text())
    assert data["facts"]["stack"] == ["TypeScript", "Express"]
    assert data["decisions"] == [
        {
            "what": "Use PostgreSQL over MongoDB",
            "why": "Joins",
            "when": "2026-02-15",
            "reversible": True,
        }
    ]
    assert data["nextSteps"] == []
    shown = run_cli("show", cwd=repo).stdout
    assert "- Use PostgreSQL over MongoDB (2026-02-15, reversible)\n  why: Joins" in shown
    assert json.loads(run_cli("show", "decisions", "--json", cwd=repo).stdout) == data["decisions"]


def test_save_rejects_a_bad_update_and_leaves_the_file(repo: Path) -> None:
    run_cli("init", cwd=repo)
    before = (repo / ".voyager" / "brain.json").read_bytes()
    bad = run_cli("save", cwd=repo, input='{"knownIssues": [{"issue": "x", "severity": "urgent"}]}')
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "voyager-brain: stdin: knownIssues[0].severity: expected one of low, medium, high, "
        'critical, got "urgent"'
    )
    not_json = run_cli("save", cwd=repo, input="{nope")
    assert not_json.returncode == 2 and "stdin:1: not valid JSON" in not_json.stderr
    assert "Traceback" not in bad.stderr + not_json.stderr
    assert (repo / ".voyager" / "brain.json").read_bytes() == before


def test_save_keeps_and_reports_unknown_fields(repo: Path) -> None:
    result = run_cli("save", cwd=repo, input='{"ticket": "WS-12", "facts": {"db": "pg"}}')
    assert result.returncode == 0
    assert "note: ticket is not a field of brain.json" in result.stderr
    assert "note: facts.db is not a field of brain.json" in result.stderr
    data = json.loads((repo / ".voyager" / "brain.json").read_text())
    assert data["ticket"] == "WS-12" and data["facts"]["db"] == "pg"


def test_import_llm_brain_merges_an_existing_file(repo: Path) -> None:
    import shutil

    (repo / ".llm-brain").mkdir()
    shutil.copy(FIXTURES / "llm-brain" / "brain.json", repo / ".llm-brain" / "brain.json")
    run_cli("save", cwd=repo, input='{"facts": {"stack": ["Python"]}}')
    result = run_cli("import", "llm-brain", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "+ decisions: Use PostgreSQL over MongoDB" in result.stdout
    data = json.loads((repo / ".voyager" / "brain.json").read_text())
    assert data["facts"]["stack"] == ["Python", "TypeScript", "Express"]
    assert data["project"] == "project" and data["sessionCount"] == 2
    assert run_cli("import", "llm-brain", "nowhere.json", cwd=repo).returncode == 2


def test_status_reports_the_project_state(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("")
    run_cli(
        "save",
        cwd=repo,
        input=json.dumps(
            {
                "activeState": {"currentGoal": "Ship", "blockers": ["CI is red"]},
                "keyFiles": [{"path": "src/app.py"}, {"path": "src/gone.py", "role": "old"}],
            }
        ),
    )
    data = json.loads(run_cli("status", "--json", cwd=repo).stdout)["state"]
    assert data["blockers"] == ["CI is red"] and data["current_goal"] == "Ship"
    assert data["missing_key_files"] == ["src/gone.py"]
    assert data["counts"]["key_files"] == 2 and data["session_count"] == 1
    text = run_cli("status", cwd=repo).stdout
    assert "blockers   CI is red" in text and "src/gone.py" in text


def test_doctor_moves_a_corrupt_brain_json_aside(repo: Path) -> None:
    run_cli("init", cwd=repo)
    path = repo / ".voyager" / "brain.json"
    path.write_text('{"decisions": [{"why": "no what"}]}')
    result = run_cli("doctor", cwd=repo)
    assert result.returncode == 1
    assert "decisions[0].what: expected a string, got null" in result.stdout
    assert run_cli("save", cwd=repo, input="{}").returncode == 2
    assert run_cli("doctor", "--repair", cwd=repo).returncode == 0
    assert len(list(path.parent.glob("brain.json.*.corrupt"))) == 1
    assert json.loads(path.read_text())["sessionCount"] == 0


def test_every_command_is_found_in_the_modules_named_for_it() -> None:
    """`common.COMMANDS` is the table the group loads commands by: every module of the
    command line is in it, and each command comes from one of the modules named for it."""
    import importlib

    from voyager_brain.cli.common import COMMANDS

    modules = {p.stem for p in (ROOT / "voyager_brain" / "cli").glob("*.py")}
    assert modules - {"__init__", "common", "plain"} == {m for ms in COMMANDS.values() for m in ms}
    for module in modules - {"__init__"}:
        importlib.import_module(f"voyager_brain.cli.{module}")
    assert set(cli_group.commands) == set(COMMANDS)
    for name, command in cli_group.commands.items():
        assert command.callback is not None
        assert command.callback.__module__.rsplit(".", 1)[1] in COMMANDS[name], name


def test_a_command_imports_only_its_own_module(repo: Path) -> None:
    """`voyager-brain add` loads neither the pipeline engine nor the history importer: a
    command's module is imported when that command runs."""
    assert run_cli("init", cwd=repo).returncode == 0
    probe = (
        "import sys\n"
        "from voyager_brain.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('voyager_brain.cli.',"
        " 'voyager_brain.pipeline', 'voyager_brain.guard')))\n"
        "print(' '.join(loaded), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "add", "observation", "lazy"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "added" in done.stdout.lower(), done.stdout + done.stderr
    assert done.stderr.split() == [
        "voyager_brain.cli.common",
        "voyager_brain.cli.plain",  # the texts the commands share with their plain forms
        "voyager_brain.cli.session",
    ]


#: The command line through click, whatever `__main__` would route elsewhere.
THROUGH_CLICK = "import sys\nfrom voyager_brain.cli import main\nmain(sys.argv[1:])\n"


@pytest.fixture
def busy_repo(repo: Path) -> Path:
    """A project with something in every store `plain` reads, and a config.toml key it
    ignores (the notice on stderr)."""
    cli_ok(repo, "init")
    cli_ok(repo, "add", "observation", "The build takes 40 s")
    cli_ok(repo, "save", "-", input='{"activeState": {"currentGoal": "ship it"}}')
    cli_ok(repo, "brain", "action=add", "type=learning", "text=CI runs on Node 22")
    cli_ok(repo, "rules", "add", "--pattern", r"\bpip install\b", "--description", "use uv")
    config = repo / ".voyager" / "config.toml"
    config.write_text(config.read_text() + 'model_command = "echo hi"\n')
    return repo


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("status", "--json"),
        ("show",),
        ("show", "--json"),
        ("rules", "list"),
        ("rules", "list", "--json"),
        ("recall", "Node", "22"),
        ("recall", "nothing-like-this"),
        ("show", "decisions"),  # not a plain form: click answers both
    ],
)
def test_the_plain_forms_answer_as_the_click_commands_do(
    busy_repo: Path, args: tuple[str, ...]
) -> None:
    plain = run_cli(*args, cwd=busy_repo)
    click = subprocess.run(
        [sys.executable, "-c", THROUGH_CLICK, *args],
        cwd=busy_repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain.returncode == 0, plain.stderr
    assert (plain.stdout, plain.stderr) == (click.stdout, click.stderr)
    assert plain.stdout.strip()


def test_outside_a_repository_a_plain_form_says_what_click_says(tmp_path: Path) -> None:
    for args in (("status",), ("show",)):  # recall searches the personal log anywhere
        plain = run_cli(*args, cwd=tmp_path)
        assert plain.returncode == 2 and "Traceback" not in plain.stderr
        assert plain.stderr.startswith("voyager-brain: "), plain.stderr


def test_the_plain_forms_import_no_click(busy_repo: Path) -> None:
    for args in (("rules", "list"), ("show",), ("status", "--json"), ("recall", "Node")):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "voyager_brain", *args],
            cwd=busy_repo,
            capture_output=True,
            text=True,
            timeout=60,
        )
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
        assert "voyager_brain.cli.plain" in imported, args
        assert not {"click", "voyager_brain.cli.common"} & imported, args

"""Nothing outside the repository: a cloned repository whose brain files are symbolic
links (or FIFOs) pointing out of it, attacked through the real CLI and the real hooks.

Each test plants the link a hostile repository could carry, next to a file outside the
repository that holds fake secrets, then runs what an agent or a person runs. The outside
file must come out unchanged, no secret may reach a regular file of the repository or its
history, the command must say in one line which file it refused (exit 2 for the CLI, 0
for a hook, which fails open), and a link to a missing path must not make that path.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, run_cli

from voyager_brain.secretkinds import ALL_KINDS

# The first row of each name: a kind may have several (the AWS secret as an assignment,
# then bare beside an AWS key id).
EXAMPLES: dict[str, str] = {}
for _kind in ALL_KINDS:
    EXAMPLES.setdefault(_kind.name, _kind.example)
#: The fake AWS key id, the fake AWS secret and a fake GitHub token, as a credentials file
#: holds them.
SECRETS = (
    EXAMPLES["aws-access-key"],
    EXAMPLES["aws-secret-key"].split("= ")[1],
    EXAMPLES["github-token"],
)
CREDENTIALS = (
    "[default]\n"
    f"aws_access_key_id = {SECRETS[0]}\n"
    f"aws_secret_access_key = {SECRETS[1]}\n"
    f"github_token = {SECRETS[2]}\n"
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository holding a credentials file."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "credentials").write_text(CREDENTIALS)
    return folder


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder`: a file's bytes, a link's target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            found[str(path)] = path.read_bytes()
        else:
            found[str(path)] = "dir"
    return found


def assert_no_secret_in(repo: Path) -> None:
    """No regular file of the work tree, and nothing in git's history or index, holds
    one of the secrets (a link is not read through: that is the outside file)."""
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            for secret in SECRETS:
                assert secret.encode() not in data, f"{path} holds {secret[:8]}..."
    history = git(repo, "log", "-p", "--all") + git(repo, "diff", "--cached")
    for secret in SECRETS:
        assert secret not in history


def hook(event: str, repo: Path, **payload: object) -> subprocess.CompletedProcess[str]:
    """`voyager-brain hook claude EVENT` (``stop``, ``session-end``), as Claude Code runs it."""
    name = "".join(part.title() for part in event.split("-"))
    body = {"session_id": "s1", "cwd": str(repo), "hook_event_name": name, **payload}
    return subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", event],
        input=json.dumps(body),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )


def refused(done: subprocess.CompletedProcess[str], name: str, code: int) -> str:
    """The run refused with one line naming `name`, and exit `code`."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(lines) == 1, done.stderr
    assert name in lines[0], lines[0]
    return lines[0]


def init(repo: Path) -> None:
    done = run_cli("init", cwd=repo)
    assert done.returncode == 0, done.stderr
    git(repo, "add", ".voyager")
    git(repo, "commit", "-q", "-m", "brain")


def test_a_linked_voyager_folder_is_never_written(repo: Path, outside: Path) -> None:
    (repo / ".voyager").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    line = refused(run_cli("init", cwd=repo), ".voyager", 2)
    assert "symbolic link" in line
    refused(run_cli("add", "observation", "hello", cwd=repo), ".voyager", 2)
    assert hook("stop", repo, last_assistant_message="done").returncode == 0
    assert snapshot(outside) == before


def test_a_brain_md_linked_to_credentials_is_never_read_into_the_repository(
    repo: Path, outside: Path
) -> None:
    init(repo)
    brain = repo / ".voyager" / "brain.md"
    brain.unlink()
    brain.symlink_to(outside / "credentials")
    before = snapshot(outside)
    done = hook("stop", repo, last_assistant_message="done")
    refused(done, "brain.md", 0)
    assert brain.is_symlink()
    refused(run_cli("add", "observation", "hello", cwd=repo), "brain.md", 2)
    refused(run_cli("status", cwd=repo), "brain.md", 2)
    assert hook("session-end", repo).returncode == 0
    assert snapshot(outside) == before
    assert_no_secret_in(repo)


def test_a_linked_brain_json_is_never_merged_into_the_tracked_file(
    repo: Path, outside: Path
) -> None:
    init(repo)
    (outside / "state.json").write_text(json.dumps({"name": SECRETS[2], "notes": [SECRETS[0]]}))
    state = repo / ".voyager" / "brain.json"
    state.unlink()
    state.symlink_to(outside / "state.json")
    before = snapshot(outside)
    (repo / "update.json").write_text('{"currentFocus": "links"}')
    refused(run_cli("save", "update.json", cwd=repo), "brain.json", 2)
    assert hook("session-end", repo).returncode == 0
    (repo / "update.json").unlink()
    assert state.is_symlink()
    assert snapshot(outside) == before
    assert_no_secret_in(repo)


def test_appends_to_a_linked_memory_log_never_land_outside(repo: Path, outside: Path) -> None:
    init(repo)
    log = repo / ".voyager" / "memory.jsonl"
    log.unlink(missing_ok=True)
    log.symlink_to(outside / "credentials")
    before = snapshot(outside)
    done = run_cli("brain", "action=add", "type=learning", "text=links", "store=project", cwd=repo)
    refused(done, "memory.jsonl", 2)
    assert snapshot(outside) == before
    assert_no_secret_in(repo)


def test_appends_to_a_linked_event_log_never_land_outside(repo: Path, outside: Path) -> None:
    assert run_cli("pipeline", "init", cwd=repo).returncode == 0
    events = repo / ".brain" / "events.jsonl"
    events.unlink(missing_ok=True)
    events.symlink_to(outside / "credentials")
    before = snapshot(outside)
    done = run_cli("pipeline", "run", "a task", "--runner", "true", cwd=repo)
    refused(done, "events.jsonl", 2)
    refused(run_cli("pipeline", "status", cwd=repo), "events.jsonl", 2)
    assert snapshot(outside) == before
    assert_no_secret_in(repo)


def test_a_lock_linked_to_a_missing_path_is_not_created(repo: Path, outside: Path) -> None:
    init(repo)
    lock = repo / ".voyager" / "brain.md.lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(outside / "made-by-us")
    refused(run_cli("add", "observation", "hello", cwd=repo), "brain.md.lock", 2)
    refused(hook("stop", repo, last_assistant_message="done"), "brain.md.lock", 0)
    assert not (outside / "made-by-us").exists()
    assert lock.is_symlink()


def test_a_history_db_linked_to_a_missing_path_is_refused(
    repo: Path, outside: Path, isolated_env: Path
) -> None:
    init(repo)
    history = isolated_env / "history.db"
    history.unlink(missing_ok=True)
    history.symlink_to(outside / "history.db")
    refused(run_cli("rules", "list", cwd=repo), "history.db", 2)
    call = hook("pre-tool-use", repo, tool_name="Bash", tool_input={"command": "ls"})
    assert call.returncode == 0 and "Traceback" not in call.stderr
    assert "history.db" in call.stderr
    assert not (outside / "history.db").exists()
    assert history.is_symlink()


def test_a_linked_mistakes_md_never_reaches_a_prompt(repo: Path, outside: Path) -> None:
    assert run_cli("pipeline", "init", cwd=repo).returncode == 0
    mistakes = repo / ".brain" / "MISTAKES.md"
    mistakes.unlink()
    mistakes.symlink_to(outside / "credentials")
    seen = outside.parent / "prompts-seen"
    runner = f"sh -c 'cat \"$VOYAGER_PIPELINE_SYSTEM_PROMPT\" >> {seen}; exit 3'"
    before = snapshot(outside)
    done = run_cli("pipeline", "run", "a task", "--stages", "builder", "--runner", runner, cwd=repo)
    refused(done, "MISTAKES.md", 2)
    assert not seen.exists() or not any(s in seen.read_text() for s in SECRETS)
    assert snapshot(outside) == before
    assert_no_secret_in(repo)


def test_a_linked_config_toml_is_never_read(repo: Path, outside: Path) -> None:
    init(repo)
    (outside / "config.toml").write_text("compact_budget_tokens = 900\n")
    config = repo / ".voyager" / "config.toml"
    config.unlink(missing_ok=True)
    config.symlink_to(outside / "config.toml")
    assert "symbolic link" in refused(run_cli("status", cwd=repo), "config.toml", 2)
    assert "symbolic link" in refused(
        hook("stop", repo, last_assistant_message="x"), "config.toml", 0
    )


def test_a_fifo_brain_md_does_not_hang_a_hook(repo: Path) -> None:
    init(repo)
    brain = repo / ".voyager" / "brain.md"
    brain.unlink()
    os.mkfifo(brain)
    line = refused(hook("stop", repo, last_assistant_message="done"), "brain.md", 0)
    assert "not a regular file" in line
    refused(run_cli("status", cwd=repo), "brain.md", 2)


def test_doctor_names_a_linked_brain_file(repo: Path, outside: Path) -> None:
    init(repo)
    brain = repo / ".voyager" / "brain.md"
    brain.unlink()
    brain.symlink_to(outside / "credentials")
    done = run_cli("doctor", cwd=repo)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert any("brain.md" in line and "symbolic link" in line for line in done.stdout.splitlines())
    assert not any(secret in done.stdout + done.stderr for secret in SECRETS)


def test_a_repository_reached_through_a_linked_parent_still_works(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "via").symlink_to(repo.parent, target_is_directory=True)
    linked = tmp_path / "via" / repo.name
    assert run_cli("init", cwd=linked).returncode == 0
    done = run_cli("add", "observation", "reached through a link", cwd=linked)
    assert done.returncode == 0, done.stderr
    assert run_cli("--root", str(linked), "status", cwd=tmp_path).returncode == 0
    stop = hook("stop", linked, last_assistant_message="done")
    assert stop.returncode == 0 and stop.stderr == ""
    assert "reached through a link" in (repo / ".voyager" / "brain.md").read_text()
    assert not (repo / ".voyager").is_symlink()


def test_a_personal_log_linked_to_an_existing_file_of_ones_own_is_followed(
    repo: Path, tmp_path: Path, isolated_env: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "memory.jsonl").write_bytes(b"")
    (isolated_env / "memory.jsonl").symlink_to(dotfiles / "memory.jsonl")
    done = run_cli(
        "brain", "action=add", "type=learning", "text=dotfiles", "store=personal", cwd=repo
    )
    assert done.returncode == 0, done.stderr
    assert b"dotfiles" in (dotfiles / "memory.jsonl").read_bytes()
    assert (isolated_env / "memory.jsonl").is_symlink()


def test_a_linked_template_override_is_never_rendered_into_brain_md(
    repo: Path, outside: Path
) -> None:
    init(repo)
    folder = repo / ".voyager" / "templates" / "brain"
    folder.mkdir(parents=True)
    (folder / "section.md.j2").symlink_to(outside / "credentials")
    line = refused(run_cli("add", "observation", "hello", cwd=repo), "section.md.j2", 2)
    assert "symbolic link" in line
    assert_no_secret_in(repo)


def test_an_export_linked_out_of_the_repository_is_never_written(repo: Path, outside: Path) -> None:
    init(repo)
    (repo / "AGENTS.md").symlink_to(outside / "credentials")
    (repo / ".cursor").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    refused(run_cli("export", "agents-md", cwd=repo), "AGENTS.md", 2)
    refused(run_cli("export", "cursor-rules", cwd=repo), ".cursor", 2)
    assert snapshot(outside) == before
    assert_no_secret_in(repo)


def test_check_names_a_linked_brain_file_without_reading_it(repo: Path, outside: Path) -> None:
    init(repo)
    brain = repo / ".voyager" / "brain.md"
    brain.unlink()
    brain.symlink_to(outside / "credentials")
    done = run_cli("check", ".voyager/brain.md", cwd=repo)
    assert done.returncode == 1
    assert "brain.md" in done.stdout and "symbolic link" in done.stdout
    assert not any(secret in done.stdout + done.stderr for secret in SECRETS)


def test_a_voyager_folder_linked_to_another_repository_is_never_written(
    repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "credentials").write_text(CREDENTIALS)
    (repo / ".voyager").symlink_to(other, target_is_directory=True)
    before = snapshot(other)
    refused(run_cli("init", cwd=repo), ".voyager", 2)
    refused(run_cli("add", "observation", "hello", cwd=repo), ".voyager", 2)
    assert snapshot(other) == before


def test_a_linked_cache_folder_is_never_written(
    repo: Path, outside: Path, isolated_env: Path
) -> None:
    # .voyager/cache linked out of the repository: the session start's context cache
    # (atomic_write, no lock) made context.json in the folder it points to.
    init(repo)
    (repo / ".voyager" / "cache").symlink_to(outside, target_is_directory=True)
    assert hook("session-start", repo, source="startup").returncode == 0  # the personal log
    # Inputs older than the cache's two-second racy window, so a build is kept.
    old = os.stat(repo / ".voyager" / "brain.md").st_mtime - 60
    for path in [*(repo / ".voyager").iterdir(), *isolated_env.rglob("*")]:
        # A fold cache the hook saves after its output, in a process of its own, may
        # have its temporary file renamed meanwhile.
        with contextlib.suppress(FileNotFoundError):
            if not path.is_symlink():
                os.utime(path, (old, old))
    before = snapshot(outside)
    for _ in range(2):
        done = hook("session-start", repo, source="startup")
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    assert snapshot(outside) == before


@pytest.mark.parametrize("event", ["pre-tool-use", "stop"])
def test_a_fifo_config_toml_does_not_hang_a_hook(repo: Path, event: str) -> None:
    # The hooks' once-per-session trust notice opened config.toml with a plain open(),
    # which waits for a writer that never comes: every hook hung past the agent's
    # timeout, and a call the rules block ran (the decision was made, never printed).
    rule = ("--pattern", r"\brm\s+-rf\b", "--description", "No rm -rf")
    assert run_cli("rules", "add", *rule, cwd=repo).returncode == 0
    (repo / ".voyager").mkdir(exist_ok=True)
    os.mkfifo(repo / ".voyager" / "config.toml")
    name = "PreToolUse" if event == "pre-tool-use" else "Stop"
    body = {"session_id": "s1", "cwd": str(repo), "hook_event_name": name}
    body.update(tool_name="Bash", tool_input={"command": "rm -rf /"}, tool_use_id="t1")
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", event],
        input=json.dumps(body),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=15,
    )
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    assert "config.toml" in done.stderr and "not a regular file" in done.stderr
    if event == "pre-tool-use":
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny"


def test_a_hard_link_to_a_file_outside_is_not_written_through(repo: Path, outside: Path) -> None:
    # A hard link looks like any regular file of the repository, but an append to it
    # lands in the outside file: an agent sandboxed to the work tree that plants one
    # (ln ~/.bashrc .voyager/memory.jsonl) had the unsandboxed hooks write its text,
    # "$(...)" included, into the user's shell start-up file.
    init(repo)
    target = outside / "bashrc"
    target.write_text("# the user's bashrc\n")
    os.link(target, repo / ".voyager" / "memory.jsonl")
    before = snapshot(outside)
    done = run_cli("brain", "action=add", "type=learning", "text=we use uv $(id)", cwd=repo)
    line = refused(done, "memory.jsonl", 2)
    assert "hard link" in line
    assert snapshot(outside) == before

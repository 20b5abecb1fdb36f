"""A checkout the agent may read but not write (a read-only mount, a shared or archived
clone): session-start still gives the context, and nothing is changed.

Made read-only the way the machine allows: without write permission for an ordinary user,
or, for root (whom permissions do not stop), on a read-only bind mount in a user and
mount namespace of its own (`unshare`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import commit_all, run_cli

ROOT = os.geteuid() == 0
SCRIPT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def namespaces_work(folder: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", SCRIPT, "-", str(folder), "true"], capture_output=True
    )
    return done.returncode == 0


def run_read_only(
    folder: Path, argv: list[str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`argv` run in `folder` while `folder` cannot be written."""
    if ROOT:
        argv = ["unshare", "-rm", "sh", "-c", SCRIPT, "-", str(folder), *argv]
        return subprocess.run(
            argv, cwd=folder, input=stdin, capture_output=True, text=True, timeout=60
        )
    modes = {path: path.stat().st_mode for path in [folder, *folder.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~0o222)
    try:
        return subprocess.run(
            argv, cwd=folder, input=stdin, capture_output=True, text=True, timeout=60
        )
    finally:
        for path, mode in sorted(modes.items(), reverse=True):
            path.chmod(mode)


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".git" not in path.parts
    }


@pytest.fixture
def checkout(repo: Path) -> Path:
    if ROOT and not namespaces_work(repo):
        pytest.skip("running as root, and no user namespace to mount the checkout read-only")
    assert run_cli("init", cwd=repo).returncode == 0
    learned = ["brain", "action=add", "type=learning", "text=Deploys go through make release"]
    assert run_cli(*learned, cwd=repo).returncode == 0
    assert run_cli("add", "decision", "Keep the API versioned", cwd=repo).returncode == 0
    commit_all(repo)
    for lock in (repo / ".voyager").glob("*.lock"):
        lock.unlink()  # a fresh clone has none: the start would have to create them
    return repo


def test_session_start_on_a_read_only_checkout_gives_the_context(checkout: Path) -> None:
    before = snapshot(checkout)
    payload = {
        "session_id": "s1",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(checkout),
    }
    argv = [sys.executable, "-m", "voyager_brain", "hook", "claude", "session-start"]
    done = run_read_only(checkout, argv, json.dumps(payload))
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- Deploys go through make release" in context
    assert "Keep the API versioned" in context
    # The day's decay was due and could not be written: said in one line, not fatal.
    [line] = done.stderr.splitlines()
    assert line.startswith("voyager-brain: decay skipped: ")
    assert "Read-only file system" in line or "Permission denied" in line
    assert snapshot(checkout) == before


def test_the_read_commands_work_on_a_read_only_checkout(checkout: Path) -> None:
    before = snapshot(checkout)
    for command in (["context"], ["status"], ["show"], ["recall", "release"], ["doctor"]):
        done = run_read_only(checkout, [sys.executable, "-m", "voyager_brain", *command])
        assert "Traceback" not in done.stderr, (command, done.stderr)
        assert done.returncode in (0, 1), (command, done.stderr)
        assert done.stdout, command
    assert snapshot(checkout) == before

"""Shared fixtures: a real temporary git repository, an isolated VOYAGER_HOME, the CLI
run as a real subprocess, and a clock that tests control."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Wall-clock deadlines make property tests flaky on a busy 2-core CI machine; the number
# of examples is what we control.
settings.register_profile("voyager", deadline=None)
settings.load_profile("voyager")

ROOT = Path(__file__).resolve().parent.parent


def docs_generator(name: str) -> Any:
    """The script ``docs/NAME.py`` that writes a generated page, as a module (its
    `reference()` is the page's text)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own VOYAGER_HOME and a git that ignores the machine's config."""
    home = tmp_path_factory.mktemp("voyager-home")
    monkeypatch.setenv("VOYAGER_HOME", str(home))
    # A test run inside a pipeline's agent must not inherit its role (the role guard
    # would deny the hooks' test calls) or its sub-agent flag.
    for name in list(os.environ):
        if name.startswith("VOYAGER_PIPELINE_") or name == "VOYAGER_SUBAGENT":
            monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test Agent")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "agent@example.invalid")
    return home


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository (branch main) with one commit."""
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "README.md").write_text("# project\n")
    git(top, "add", "README.md")
    git(top, "commit", "-q", "-m", "initial")
    return top


#: The prefix of a command its test stops with SIGINT (Ctrl-C). A process started in the
#: background by a non-interactive shell (`cmd &`, a CI runner) inherits SIGINT ignored,
#: and a Python that starts so never raises KeyboardInterrupt; this puts the default
#: back before it execs the command.
INTERRUPTIBLE = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL);"
    " os.execvp(sys.argv[1], sys.argv[1:])",
)


def run_cli(
    *args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`voyager-brain ARGS` as a real process."""
    return subprocess.run(
        [sys.executable, "-m", "voyager_brain", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def cli_ok(cwd: Path, *args: str, input: str | None = None) -> str:
    """`voyager-brain ARGS` as a real process that must succeed: its standard output."""
    done = run_cli(*args, cwd=cwd, input=input)
    assert done.returncode == 0, done.stderr
    return done.stdout


def commit_all(top: Path, message: str = "change") -> str:
    """Commit everything in the work tree (an empty commit if nothing changed): its sha."""
    git(top, "add", "-A")
    git(top, "commit", "-q", "--allow-empty", "-m", message)
    return git(top, "rev-parse", "HEAD").strip()


def trusted(top: Path) -> None:
    """Trust the project's config.toml as it is now (`voyager-brain trust`), for a test
    whose own file names a command (model_command, a pipeline runner)."""
    from voyager_brain.trust import trust

    assert trust(top).trusted


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


class TickingClock:
    """Starts at `start` and moves `step` forward each time it is read."""

    def __init__(self, start: datetime | None = None, step: timedelta = timedelta(minutes=1)):
        self.now = start or datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
        self.step = step

    def __call__(self) -> datetime:
        current = self.now
        self.now += self.step
        return current


@pytest.fixture
def clock() -> TickingClock:
    return TickingClock()

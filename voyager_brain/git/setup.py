"""Registering the brain files' merge driver with git, and checking that it is registered.

Two halves, both needed for git to use the driver:

* ``.gitattributes`` (committed, so every clone has it): one line per brain file,
  ``.voyager/brain.md merge=voyager-brain``;
* the clone's own git config (``.git/config``, never shared by git): the driver's
  ``merge.voyager-brain.name`` and ``merge.voyager-brain.driver``. A fresh clone has the
  attributes but not the config, and git then falls back silently to a line merge with
  conflict markers: `doctor` warns about exactly that, and ``doctor --repair`` fixes it.

The driver command names the executable plainly, ``voyager-brain merge-driver ...``: git
runs it through the shell with the PATH of whoever runs git, so it follows the
voyager-brain the user runs anyway (an activated virtual environment, pipx, a system
install), like the agent hooks do. An absolute path to one environment's script would break
as soon as that environment is rebuilt or moved, and would differ from machine to machine.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from .. import repo, storage
from ..errors import BrainError

DRIVER = "voyager-brain"
EXECUTABLE = "voyager-brain"
PATHS = (".voyager/brain.md", ".voyager/brain.json", ".voyager/memory.jsonl")
LINES = tuple(f"{path} merge={DRIVER}" for path in PATHS)
COMMENT = "# voyager-brain: merge the brain files by their content (voyager-brain install git)"
CONFIG = {
    f"merge.{DRIVER}.name": "voyager-brain: the brain files, merged by their content",
    f"merge.{DRIVER}.driver": f"{EXECUTABLE} merge-driver %O %A %B %P",
}


@dataclasses.dataclass(frozen=True, slots=True)
class DriverStatus:
    """What git will do with the brain files in this clone."""

    named: tuple[str, ...]  # the brain files whose merge attribute is our driver
    driver: str | None  # merge.voyager-brain.driver as git reads it (any config file)
    on_path: bool  # `voyager-brain` is found on this process's PATH

    @property
    def registered(self) -> bool:
        return len(self.named) == len(PATHS) and self.driver is not None


def status(top: Path) -> DriverStatus:
    """Ask git (``check-attr``, ``config``) how it would merge the brain files at `top`."""
    out = repo._git_text(top, "check-attr", "merge", "--", *PATHS) or ""
    named = tuple(
        path
        for line in out.splitlines()
        for path, _, value in [line.partition(": merge: ")]
        if value == DRIVER
    )
    driver = repo._git_text(top, "config", "--get", f"merge.{DRIVER}.driver") or None
    return DriverStatus(named, driver, executable_found())


def executable_found() -> bool:
    """Whether `voyager-brain` is on this process's PATH (git, run from here, needs it)."""
    return shutil.which(EXECUTABLE) is not None


def configure(top: Path, *, uninstall: bool = False) -> list[str]:
    """Set (or remove) the driver in the clone's own git config; returns the keys changed."""
    current = {key: repo._git_text(top, "config", "--local", "--get", key) for key in CONFIG}
    if uninstall:
        changed = [key for key, value in current.items() if value is not None]
        if changed:
            _git(top, "config", "--local", "--remove-section", f"merge.{DRIVER}")
        return changed
    changed = [key for key, value in CONFIG.items() if current[key] != value]
    for key in changed:
        _git(top, "config", "--local", key, CONFIG[key])
    return changed


def write_attributes(top: Path, *, uninstall: bool = False) -> list[str]:
    """Add our lines to ``.gitattributes`` (or remove them, and only them); other lines
    stay as they are. Returns the lines added or removed."""
    path = top / ".gitattributes"
    text = (storage.read_bytes(path) or b"").decode("utf-8")
    lines = text.splitlines()
    present = {line.strip() for line in lines}
    if uninstall:
        changed = [line for line in LINES if line in present]
        kept = [line for line in lines if line.strip() not in (*LINES, COMMENT)]
        new = "".join(line + "\n" for line in kept)
    else:
        changed = [line for line in LINES if line not in present]
        extra = ([] if COMMENT in present else [COMMENT]) + changed
        new = (
            text
            + ("\n" if text and not text.endswith("\n") else "")
            + "".join(line + "\n" for line in extra)
        )
    if not changed:
        return []
    # No lock: its side file would be left in the work tree beside .gitattributes, and
    # this runs once, from a person's command.
    if new.strip():
        storage.atomic_write(path, new.encode())
    else:
        path.unlink(missing_ok=True)
    return changed


def install(top: Path, *, uninstall: bool = False) -> tuple[list[str], list[str]]:
    """Register the driver (or remove it): (.gitattributes lines, git config keys) changed."""
    return write_attributes(top, uninstall=uninstall), configure(top, uninstall=uninstall)


def _git(top: Path, *args: str) -> None:
    if repo._git_bytes(top, *args) is None:
        raise BrainError(f"{top}: `git {' '.join(args[:3])} ...` failed")

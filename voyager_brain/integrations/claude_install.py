"""Adding voyager-brain's hooks to Claude Code's settings.json, and removing them.

The file is merged, never replaced: other settings and other hooks stay as they are,
ours are recognised by their command, and installing twice changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import storage
from ..errors import CorruptFileError
from ..paths import voyager_home
from . import claude, claude_guard

#: Every hook we install: our event name -> Claude Code's.
EVENTS = {**claude.EVENTS, **claude_guard.EVENTS}
#: Tool events take a matcher; ours sees every tool.
MATCHED = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}

COMMAND = "voyager-brain hook claude"


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and str(hook.get("command", "")).startswith(COMMAND)


def _lock_for(path: Path) -> Path:
    """What install locks for the settings file at `path`: a name in the personal
    folder. Beside settings.json, the lock file would be one more untracked file in the
    user's repository (and Claude Code, which does not take it, gains nothing from it)."""
    import hashlib

    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return voyager_home() / "cache" / f"claude-settings-{digest}"


def install_claude_hooks(path: Path, *, uninstall: bool = False) -> bool:
    """Install (or remove) our hooks in the settings file at `path`. Returns whether
    the file changed. A file that is not a JSON object is left alone, with an error."""
    with storage.locked(_lock_for(path)):
        data = storage.read_bytes(path)
        try:
            settings = json.loads(data) if data and data.strip() else {}
        except json.JSONDecodeError as exc:
            raise CorruptFileError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
        if not isinstance(settings, dict):
            raise CorruptFileError(path, "expected a JSON object")
        before = json.dumps(settings, sort_keys=True)
        hooks = settings.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise CorruptFileError(path, "hooks: expected an object")
        for event, name in EVENTS.items():
            groups = [g for g in hooks.get(name, []) if isinstance(g, dict)]
            # Drop our entries (from any group), then drop groups we emptied.
            kept = []
            for group in groups:
                inner = [h for h in group.get("hooks", []) if not _ours(h)]
                if inner or not any(_ours(h) for h in group.get("hooks", [])):
                    kept.append({**group, "hooks": inner})
            if not uninstall:
                group = {"hooks": [{"type": "command", "command": f"{COMMAND} {event}"}]}
                kept.append({"matcher": "*", **group} if name in MATCHED else group)
            if kept:
                hooks[name] = kept
            else:
                hooks.pop(name, None)
        if not hooks:
            settings.pop("hooks")
        if json.dumps(settings, sort_keys=True) == before:
            return False
        storage.atomic_write(path, (json.dumps(settings, indent=2) + "\n").encode())
    return True

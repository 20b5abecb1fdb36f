"""Adding voyager-brain to an agent's settings, and removing it: the hooks
(`install_hooks`) and the MCP server (`install_mcp`).

Files are merged, never replaced: other settings and other hooks stay as they are,
ours are recognised by their command, installing twice changes nothing, and a file
that is not what the agent reads (not JSON, not an object) is left alone with an error.
Removing the last of ours from a file that held nothing else removes the file, so an
install followed by an uninstall leaves the project as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import storage
from ..errors import CorruptFileError
from ..paths import voyager_home
from .hooks import Settings, adapter

#: The name of our MCP server in every agent's configuration.
SERVER = "voyager-brain"

#: How long (seconds) an agent lets each of our hooks run, by action, written into the
#: hook's settings where the agent has such a key (`Settings.timeout`): past it the
#: agent stops the hook and goes on, so a hook never stalls it longer. A tool-call
#: check decides in well under its 10 s: the start (about 0.1 s), RE2 in time linear in
#: the input, at most `guard.patterns.CHECK_LIMIT` (1 s) for patterns on Python's
#: engine. The end of a turn, compaction and the end of a session write brain.md and
#: may commit: longer.
HOOK_TIMEOUTS = {
    "session_start": 10,
    "prompt": 10,
    "tool_check": 10,
    "tool_result": 10,
    "turn_end": 30,
    "compact": 60,
    "compact_due": 60,
    "session_end": 60,
}


def command(agent: str, event: str) -> str:
    return f"voyager-brain hook {agent} {event}"


def handler_commands(agent: str, event: str) -> dict[str, str]:
    """The command of `agent`'s hook for `event` under each key its handlers hold it."""
    settings: Settings = adapter(agent).SETTINGS
    return {key: form.format(command(agent, event)) for key, form in settings.commands}


def handler_timeout(agent: str, event: str) -> dict[str, int]:
    """The timeout of `agent`'s hook for `event`, as the agent spells it ({} when the
    agent has no such setting)."""
    module = adapter(agent)
    settings: Settings = module.SETTINGS
    if settings.timeout is None:
        return {}
    key, per_second = settings.timeout
    return {key: HOOK_TIMEOUTS[module.EVENTS[event].action] * per_second}


def settings_path(agent: str, top: Path | None) -> Path:
    """The agent's hooks file: the project's under `top`, else the user's."""
    settings: Settings = adapter(agent).SETTINGS
    return top / settings.project if top is not None else Path(settings.user).expanduser()


def _lock_for(path: Path) -> Path:
    """What install locks for the file at `path`: a name in the personal folder. Beside
    the file, the lock would be one more untracked file in the user's repository (and
    the agent, which does not take it, gains nothing from it)."""
    import hashlib

    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return voyager_home() / "cache" / f"settings-{digest}"


def _load(path: Path) -> dict[str, Any]:
    data = storage.read_bytes(path)
    try:
        document = json.loads(data) if data and data.strip() else {}
    except json.JSONDecodeError as exc:
        raise CorruptFileError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
    except ValueError:  # bytes that are no Unicode text
        raise CorruptFileError(path, "not valid JSON: not UTF-8 text") from None
    if not isinstance(document, dict):
        raise CorruptFileError(path, "expected a JSON object")
    return document


def _save(path: Path, document: dict[str, Any], before: str, empty: dict[str, Any]) -> bool:
    """Write `document` unless it is unchanged; remove the file when it holds no more
    than `empty`. Returns whether anything changed."""
    if json.dumps(document, sort_keys=True) == before:
        return False
    if document == empty or not document:
        path.unlink(missing_ok=True)
        # The folders install made for it (.cursor/, .github/hooks/), when now empty.
        for folder in (path.parent, path.parent.parent):
            try:
                folder.rmdir()
            except OSError:
                break
    else:
        storage.atomic_write(path, (json.dumps(document, indent=2) + "\n").encode())
    return True


def install_hooks(agent: str, path: Path, *, uninstall: bool = False) -> bool:
    """Install (or remove) `agent`'s hooks in its settings file at `path`. Returns
    whether the file changed."""
    from .hooks import TOOL_ACTIONS

    module = adapter(agent)
    settings: Settings = module.SETTINGS
    prefix = f"voyager-brain hook {agent} "

    def ours(handler: Any) -> bool:
        return isinstance(handler, dict) and any(
            str(handler.get(key, "")).startswith(prefix) for key, _ in settings.commands
        )

    with storage.locked(_lock_for(path)):
        document = _load(path)
        before = json.dumps(document, sort_keys=True)
        header = dict(settings.header)
        hooks = document.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise CorruptFileError(path, "hooks: expected an object")
        for event, hook in module.EVENTS.items():
            given = hooks.get(hook.event, [])
            if not isinstance(given, list):
                raise CorruptFileError(path, f"hooks.{hook.event}: expected a list")
            entries = [e for e in given if isinstance(e, dict)]
            if settings.grouped:
                # Drop our handlers (from any group), then the groups we emptied.
                kept = []
                for group in entries:
                    inner = [h for h in group.get("hooks", []) if not ours(h)]
                    if inner or not any(ours(h) for h in group.get("hooks", [])):
                        kept.append({**group, "hooks": inner})
            else:
                kept = [e for e in entries if not ours(e)]
            if not uninstall and hook.installed:
                handler = {
                    **dict(settings.handler_extra),
                    **handler_commands(agent, event),
                    **handler_timeout(agent, event),
                }
                if not settings.grouped:
                    kept.append(handler)
                elif hook.action in TOOL_ACTIONS and hook.action != "prompt":
                    kept.append({"matcher": "*", "hooks": [handler]})
                else:
                    kept.append({"hooks": [handler]})
            if kept:
                hooks[hook.event] = kept
            else:
                hooks.pop(hook.event, None)
        if not hooks:
            document.pop("hooks")
        if document and not uninstall:
            document = {**header, **document}
        return _save(path, document, before, header)


def hooks_drift(agent: str, path: Path) -> tuple[set[str], set[str]] | None:
    """How `agent`'s hooks in its settings file at `path` differ from what `install`
    writes: (the commands missing, ours that are there but no longer written); None
    when none of ours is there (not installed)."""
    module = adapter(agent)
    settings: Settings = module.SETTINGS
    document = _load(path)
    hooks = document.get("hooks")
    prefix = f"voyager-brain hook {agent} "
    found = set()
    for event, entries in hooks.items() if isinstance(hooks, dict) else ():
        for entry in entries if isinstance(entries, list) else ():
            handlers = entry.get("hooks", []) if settings.grouped else [entry]
            for handler in handlers if isinstance(handlers, list) else ():
                if not isinstance(handler, dict):
                    continue
                limit = (
                    {settings.timeout[0]: handler.get(settings.timeout[0])}
                    if settings.timeout
                    else {}
                )
                for key, _ in settings.commands:
                    value = handler.get(key)
                    if isinstance(value, str) and value.startswith(prefix):
                        found.add(f"{event} {key}: {value}{_shown(limit)}")
    if not found:
        return None
    expected = {
        f"{hook.event} {key}: {value}{_shown(handler_timeout(agent, ours))}"
        for ours, hook in module.EVENTS.items()
        if hook.installed
        for key, value in handler_commands(agent, ours).items()
    }
    return expected - found, found - expected


def _shown(timeout: dict[str, Any]) -> str:
    """A handler's timeout in `hooks_drift`'s lines: an install without one (before
    timeouts were written) differs from one with it."""
    return "".join(f" ({key} {value})" for key, value in timeout.items())


def mcp_entry(agent: str, top: Path) -> dict[str, Any] | None:
    """Our server's settings in `agent`'s MCP configuration under `top`; None when it
    is not there."""
    path = mcp_path(agent, top)
    if agent == "codex":
        import tomllib

        try:
            config = tomllib.loads((storage.read_bytes(path) or b"").decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise CorruptFileError(path, f"not valid TOML: {exc}") from None
    else:
        config = _load(path)
    servers = config.get(MCP_FILES[agent][1])
    entry = servers.get(SERVER) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


#: Where each agent reads MCP servers in a project: the file, and the key of the object
#: that maps server names to their settings. (Codex's are TOML: `_install_codex_mcp`.)
MCP_FILES = {
    "claude": (".mcp.json", "mcpServers"),
    "gemini": (".gemini/settings.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "copilot": (".github/mcp.json", "mcpServers"),
    "codex": (".codex/config.toml", "mcp_servers"),
}
SERVER_SETTINGS = {"command": "voyager-brain", "args": ["mcp"]}


def mcp_path(agent: str, top: Path) -> Path:
    return top / MCP_FILES[agent][0]


def install_mcp(agent: str, top: Path, *, uninstall: bool = False) -> bool:
    """Add (or remove) the voyager-brain MCP server in `agent`'s project configuration
    under `top`. Returns whether the file changed."""
    path = mcp_path(agent, top)
    if agent == "codex":
        return _install_codex_mcp(path, uninstall)
    key = MCP_FILES[agent][1]
    with storage.locked(_lock_for(path)):
        document = _load(path)
        before = json.dumps(document, sort_keys=True)
        servers = document.setdefault(key, {})
        if not isinstance(servers, dict):
            raise CorruptFileError(path, f"{key}: expected an object")
        if uninstall:
            servers.pop(SERVER, None)
        else:
            servers[SERVER] = {**servers.get(SERVER, {}), **SERVER_SETTINGS}
        if not servers:
            document.pop(key)
        return _save(path, document, before, {})


#: Codex's table for our server, as install writes it (and uninstall removes it). Codex
#: starts a server with a short list of the user's environment variables: `env_vars`
#: adds ours, so that the server finds the same personal folder as the command line.
CODEX_TABLE = (
    f'[mcp_servers.{SERVER}]\ncommand = "voyager-brain"\nargs = ["mcp"]\n'
    'env_vars = ["VOYAGER_HOME", "VOYAGER_MEMORY_PATH"]\n'
)
#: The table earlier versions wrote, replaced by install and removed by uninstall.
_OLD_CODEX_TABLE = f'[mcp_servers.{SERVER}]\ncommand = "voyager-brain"\nargs = ["mcp"]\n'


def _tables(name: str, table: dict[str, Any]) -> list[str]:
    """The names of `table` and the tables in it that hold values of their own."""
    inner = [(f"{name}.{key}", value) for key, value in table.items() if isinstance(value, dict)]
    own = [name] if len(inner) < len(table) else []
    return own + [found for key, value in inner for found in _tables(key, value)]


def _install_codex_mcp(path: Path, uninstall: bool) -> bool:
    """config.toml is the user's: our table is appended as a block of text and removed
    the same way; a table of that name written by hand is left alone, with an error."""
    import tomllib

    with storage.locked(_lock_for(path)):
        try:
            text = (storage.read_bytes(path) or b"").decode("utf-8")
            config = tomllib.loads(text)
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise CorruptFileError(path, f"not valid TOML: {exc}") from None
        present = SERVER in (config.get("mcp_servers") or {})
        ours = next((t for t in (CODEX_TABLE, _OLD_CODEX_TABLE) if t in text), None)
        if uninstall:
            if not present:
                return False
            if ours is None:
                raise CorruptFileError(
                    path, f"[mcp_servers.{SERVER}] was changed by hand; remove it by hand"
                )
            text = text.replace("\n" + ours, "").replace(ours, "")
            try:
                left = (tomllib.loads(text).get("mcp_servers") or {}).get(SERVER)
            except tomllib.TOMLDecodeError:  # keys of the user's own after ours, in our table
                raise CorruptFileError(
                    path, f"[mcp_servers.{SERVER}] was changed by hand; remove it by hand"
                ) from None
            if isinstance(left, dict):
                # A tool's approval ([mcp_servers.voyager-brain.tools.save]) without our
                # table: Codex refuses the whole file ("invalid transport").
                tables = ", ".join(f"[{name}]" for name in _tables(f"mcp_servers.{SERVER}", left))
                raise CorruptFileError(
                    path, f"{tables} would be left without the server's table; remove it first"
                )
            if text.strip():
                storage.atomic_write(path, text.encode())
                return True
            return _save(path, {}, "changed", {})
        if present:
            if ours != _OLD_CODEX_TABLE:
                return False
            storage.atomic_write(path, text.replace(ours, CODEX_TABLE).encode())
            return True
        text = text + ("\n" if text and not text.endswith("\n") else "")
        storage.atomic_write(path, (text + ("\n" if text else "") + CODEX_TABLE).encode())
    return True

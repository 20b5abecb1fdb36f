"""`voyager-brain hook AGENT EVENT`: one table of agents, one way through.

Each agent is an adapter module with five names:

- ``AGENT``: the agent's name for people ("Codex");
- ``EVENTS``: our event name (the agent's own, in kebab case) -> `Hook`: the agent's
  spelling and the lifecycle or guard action it runs;
- ``read(event, payload) -> HookCall``: the agent's stdin JSON in agent-neutral terms
  (tool names mapped to Claude Code's, so one guard rule serves every agent);
- ``render(event, result) -> str``: what the agent reads on stdout: the context
  (session start), the `Verdict` (a tool call), or None (nothing to say);
- ``SETTINGS``: where `install` writes the hooks (`Settings`);
- ``tell_user(event, output, message)`` (optional): `output` with a message the user
  (not the model) reads, or None when the event's answer cannot carry one.

Adding an agent is one module and its name in `ADAPTERS`. Every hook fails open: whatever
goes wrong is one line on stderr, exit code 0, and nothing on stdout the agent could
misread. An adapter module imports the standard library only; the actions import what
they need, so a tool-call hook never loads the session brain.
"""

from __future__ import annotations

import sys

from ..value import Record
from .hookio import Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, TextIO

    from .hookio import HookCall


class Hook(Record):
    """One event of an agent: its own name for it, and what runs. `install` writes it
    into the agent's settings unless it is an alternative to another (``installed``
    false: an older event the agent replaced, kept for those who wire it by hand)."""

    event: str
    action: str
    installed: bool = True


class Settings(Record):
    """Where an agent reads its hooks, and their shape there.

    ``grouped``: event -> matcher groups -> handlers (Claude Code, Codex, Gemini CLI);
    otherwise event -> handlers (Cursor, Copilot). ``header``: keys the file must have
    (Cursor's and Copilot's ``"version": 1``). A handler holds the command under each key
    of ``commands``, written by its template (Copilot's ``bash`` and ``powershell``), plus
    ``handler_extra``. The templates of an agent that denies a tool call when its hook
    exits non-zero end the command with a success (``|| true``): where voyager-brain is
    not installed (a teammate, a cloud agent), the agent goes on without it.
    ``timeout``: the handler's key for how long the agent lets the hook run, and how
    many of its units make a second (Gemini CLI counts milliseconds); install writes
    each event's `install.HOOK_TIMEOUTS` there."""

    project: str
    user: str
    grouped: bool = True
    header: tuple[tuple[str, object], ...] = ()
    commands: tuple[tuple[str, str], ...] = (("command", "{}"),)
    handler_extra: tuple[tuple[str, object], ...] = (("type", "command"),)
    timeout: tuple[str, int] | None = None


#: Every agent, by the name of its adapter module in this package.
ADAPTERS = ("claude", "codex", "gemini", "cursor", "copilot")

#: The actions on the path of every tool call: the guard and the history, nothing else.
TOOL_ACTIONS = frozenset({"tool_check", "tool_result", "prompt"})

#: What each action does, for `hook --help` and the docs.
ACTIONS = {
    "session_start": "inject the budgeted context",
    "prompt": "record the user's message",
    "tool_check": "guard rules: deny, warn or nothing; recorded",
    "tool_result": "record the tool's result",
    "turn_end": "a loop_status entry for the turn",
    "compact": "compact brain.md",
    "compact_due": "compact brain.md if over its budget; auto-memory at most once a minute",
    "session_end": "persist, count the session, exports, auto-commit",
}


def adapter(agent: str) -> ModuleType:
    """The adapter module of `agent`; `HookInputError` for an agent we do not serve."""
    if agent not in ADAPTERS:
        from .hookio import HookInputError

        raise HookInputError(f"unknown agent {agent!r}; expected one of {', '.join(ADAPTERS)}")
    # Not importlib.import_module: importing the importlib package (and warnings with
    # it) costs a tool-call hook half a millisecond.
    name = f"{__package__}.{agent}"
    __import__(name)
    return sys.modules[name]


def _perform(action: str, call: HookCall, agent: str, label: str, err: TextIO) -> Any:
    if action in TOOL_ACTIONS:
        from . import toolcalls

        if action == "tool_check":
            return toolcalls.check(call, err, label)
        if action == "tool_result":
            return toolcalls.record_result(call)
        return toolcalls.record_prompt(call)
    if action == "session_start":
        from .cached import cached_context

        # Most starts follow one where nothing changed: served from the cache, with
        # nothing of the lifecycle imported.
        text = cached_context(call.cwd)
        limit = CONTEXT_LIMITS.get(agent)
        if text is not None and (limit is None or limit.holds(text)):
            return text
    from . import lifecycle

    if action == "session_start":
        return lifecycle.session_start(call, CONTEXT_LIMITS.get(agent))
    if action == "turn_end":
        settle = getattr(adapter(agent), "settle_calls", None)
        if settle is not None:  # results the agent sends no hook for (Codex's failed MCP calls)
            try:
                settle(call)
            except Exception as exc:
                _report(agent, "turn end", exc, err)
        return lifecycle.turn_end(call, SOURCES.get(agent, agent))
    if action == "compact":
        return lifecycle.compact(call)
    if action == "compact_due":
        return lifecycle.compact_due(call)
    assert action == "session_end", action
    return lifecycle.session_end(call)


#: The longest session-start context each agent keeps whole: the budget (tokens of about
#: four characters) cannot promise it, for the must-know lines may go past it. Measured
#: with the real CLIs (tests/e2e): Claude Code 2.1.197 keeps 10,000 characters and
#: replaces a longer ``additionalContext`` with a 2 KB preview and the path of a file
#: holding the rest; Codex 0.171 keeps 10,000 bytes of UTF-8 and cuts out the middle of
#: a longer one ("…N tokens truncated…").
CONTEXT_LIMITS = {"claude": Limit(10_000, "characters"), "codex": Limit(10_000, "bytes")}

#: The name a brain.md entry gives as its source, per agent.
SOURCES = {"claude": "claude-code"}


def run(
    agent: str,
    event: str,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one hook of one agent (the standard streams unless given). Always returns 0:
    a hook must never break the agent."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    from .hookio import HookInputError, read_payload

    try:
        module = adapter(agent)
        hook = module.EVENTS.get(event)
        if hook is None:
            known = ", ".join(module.EVENTS)
            raise HookInputError(f"unknown event {event!r}; expected one of {known}")
        call = module.read(event, read_payload(stdin))
    except Exception as exc:  # any failure: one line on stderr, never a broken agent
        _report(agent, event, exc, stderr)
        return 0
    failed: Exception | None = None
    try:
        result = _perform(hook.action, call, agent, f"{agent} {event}", stderr)
        output = module.render(event, result)
    except Exception as exc:
        _report(agent, event, exc, stderr)
        failed, output = exc, None
    if hook.action in ("turn_end", "session_end"):
        # The session in the history (seed 003) ends, whatever happened to brain.md.
        try:
            from .toolcalls import close_session

            close_session(call)
        except Exception as exc:
            # A broken file both steps read (config.toml) is reported once.
            if failed is None or str(exc) != str(failed):
                _report(agent, event, exc, stderr)
    output = _with_trust_notice(module, event, call, output, stderr)
    if output:
        stdout.write(output)
    return 0


def _with_trust_notice(
    module: ModuleType, event: str, call: HookCall, output: str | None, err: TextIO
) -> Any:
    """`output`, plus once per session the word that the project's config.toml has
    command keys we ignore until the user trusts the file (`config.command_keys`): in
    the agent's channel to the user (`tell_user`), at the first event that has one; on
    stderr, which the agent logs, for an agent without one. Never fails the hook."""
    try:
        found = _ignored_command_keys(call.cwd)
        if found is None:
            return output
        path, keys, top = found
        message = (
            f"voyager-brain ignores {', '.join(keys)} in {path}: this project's config.toml"
            " would make it run programs, and you have not trusted the file. Review it, then"
            f" run `voyager-brain trust` in {top} to allow them."
        )
        tell = getattr(module, "tell_user", None)
        shown = tell(event, output, message) if tell is not None else None
        if tell is not None and shown is None:
            return output  # this event's answer cannot carry it: a later event tells
        if not _first_notice(call.session, path, keys):
            return output
        if shown is None:
            err.write(f"{message}\n")
            return output
        return shown
    except Exception:
        return output


def _ignored_command_keys(cwd: str) -> tuple[str, list[str], str] | None:
    """The project's config.toml, the command keys ignored in it and the project top;
    None when nothing is ignored. Every hook asks, so a file that cannot name a command
    key (`_may_name_a_command`) is only read, not parsed."""
    import os

    from ..worktree import find_top

    folder = os.path.realpath(cwd)
    top = find_top(folder) or folder
    voyager = os.path.join(top, ".voyager")
    path = os.path.join(voyager, "config.toml")
    from .. import confine
    from ..errors import UnsafePathError

    try:
        # Checked, not a plain open(): a FIFO there would hang every hook past the
        # agent's timeout (and a tool call's decision with it); a link is not followed.
        raw = confine.read_bytes(path)
    except (OSError, UnsafePathError):
        return None
    if raw is None:
        return None
    if not _may_name_a_command(raw):
        return None
    from ..config import load_config

    ignored = load_config(voyager).ignored_keys
    if not ignored:
        return None
    return path, [entry.rsplit(": ", 1)[1] for entry in ignored], top


#: What a TOML line naming a command key must hold: the key's name (or a part of it,
#: as a dotted key or a table header spells it), or an escape that could spell it.
_COMMAND_WORDS = (b"model_command", b"summarizer", b"semantic_review", b"runner", b"\\u", b"\\U")


def _may_name_a_command(raw: bytes) -> bool:
    """Whether a config.toml's bytes may hold a command key: some line that is not a
    comment holds one of `_COMMAND_WORDS`. A key stands on one line (TOML has no line
    continuation in keys); the reader takes a lone CR as a line end, so this does too."""
    if not any(word in raw for word in _COMMAND_WORDS):
        return False
    lines = raw.replace(b"\r", b"\n").split(b"\n")
    kept = b"\n".join([line for line in lines if not line.lstrip(b" \t").startswith(b"#")])
    return any(word in kept for word in _COMMAND_WORDS)


def _first_notice(session: str | None, path: str, keys: list[str]) -> bool:
    """True once per session, file and set of keys: a marker in the personal cache,
    created exclusively, so parallel hooks tell the user once between them."""
    import hashlib
    import os

    from ..paths import cache_folder

    folder = os.path.join(cache_folder(), "trust-notices")
    os.makedirs(folder, exist_ok=True)
    seen = "\0".join([session or "", path, *keys]).encode("utf-8", "surrogatepass")
    name = hashlib.sha256(seen).hexdigest()[:32]
    try:
        fd = os.open(
            os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
        )
    except FileExistsError:
        return False
    os.close(fd)
    _prune_notices(folder)
    return True


#: Markers older than this are removed when a new one is made (sessions end).
NOTICE_DAYS = 30


def _prune_notices(folder: str) -> None:
    import os
    import time

    cutoff = time.time() - NOTICE_DAYS * 86400
    for entry in os.scandir(folder):
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            pass


def _report(agent: str, event: str, exc: BaseException, stderr: TextIO) -> None:
    from ..errors import one_line

    message = one_line(str(exc)) if str(exc) else type(exc).__name__
    stderr.write(f"voyager-brain hook {agent} {event}: {message}\n")

"""Every check of `voyager-brain doctor`, in the order `run_checks` runs them.

Each check yields `Finding`s. Nothing is changed unless `repair=True`, and even then a
file we cannot read is moved aside (never deleted or overwritten).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import confine, conflicts, storage
from ..config import load_config
from ..conflicts import ConflictError
from ..errors import BrainError, ConfigError, CorruptFileError, UnsafePathError
from ..git import setup as gitsetup
from ..memory.store import MemoryStore
from ..render import Templates
from ..session import brainfile
from ..session.manager import BrainManager, Clock, ensure_layout, utc_now
from ..session.model import BrainEntry
from .finding import Finding
from .secrets import check_brain_md, check_stored

#: Temporary files younger than this may belong to a writer that is still running.
STALE_TMP_SECONDS = 60


def run_checks(top: Path, *, repair: bool = False, clock: Clock | None = None) -> list[Finding]:
    """Run every check on the repository at `top`."""
    clock = clock or utc_now
    findings: list[Finding] = []
    for check in (
        _check_links,
        _check_layout,
        _check_config,
        _check_brain,
        _check_state,
        _check_logs,
        check_stored,
        _check_templates,
        _check_tmp,
        _check_git,
        _check_history,
        _check_pipeline,
        _check_exports,
        _check_agents,
    ):
        try:
            findings.extend(check(top, repair, clock))
        except UnsafePathError as exc:
            # Named by _check_links already: the check that met it stops there.
            if not any(f.message == str(exc) for f in findings):
                findings.append(Finding("error", str(exc), _LINK_HINT))
    return findings


_LINK_HINT = "replace it with a regular file of the repository; voyager-brain leaves it alone"
# The folders whose files voyager-brain reads into tracked files or writes, and the
# files it uses there even before they exist (a folder that is a link shows on them).
_FOLDERS = (".voyager", ".voyager/cache", ".brain", ".brain/RESEARCH", ".brain/logs")
_KNOWN = (".voyager/brain.md", ".brain/events.jsonl")


def _check_links(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """Every file of `_FOLDERS` and the exports that is a link (or sits under a folder
    that is one), a FIFO or a device: voyager-brain refuses it; named here, never read."""
    from ..context.exports import TARGETS

    paths = [top / name for name in _KNOWN]
    paths += [top / name for name, _ in TARGETS.values()]
    for folder in _FOLDERS:
        try:
            with os.scandir(top / folder) as entries:
                paths += [Path(e.path) for e in entries if not e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    seen: set[str] = set()
    for path in sorted(set(paths)):
        try:
            confine.check(path)
        except UnsafePathError as exc:
            if str(exc) not in seen:
                seen.add(str(exc))
                yield Finding("error", str(exc), _LINK_HINT)
    if not seen:
        yield Finding("ok", "no brain file is a link out of the repository, a FIFO or a device")


def _check_layout(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    voyager = top / ".voyager"
    missing = [name for name in (".gitignore", "config.toml") if not (voyager / name).exists()]
    if not missing:
        yield from _gitignore_lines(voyager / ".gitignore", repair)
        yield Finding("ok", ".voyager/ has its .gitignore and config.toml")
        return
    message = f".voyager/ lacks {', '.join(missing)}"
    if repair:
        ensure_layout(voyager)
        yield Finding("warning", message, repaired=True)
    else:
        yield Finding("warning", message, "run `voyager-brain init` or `doctor --repair`")


def _gitignore_lines(path: Path, repair: bool) -> Iterator[Finding]:
    """The patterns of the .gitignore `init` writes today that an older one lacks (the
    lines `memory gc` sets aside, `*.rejected`, came later): without them git would
    offer local files for a commit. --repair appends them; the file is otherwise kept."""
    from ..session.manager import GITIGNORE

    data = storage.read_bytes(path) or b""
    have = {line.strip() for line in data.decode("utf-8", "replace").splitlines()}
    wanted = [line for line in GITIGNORE.splitlines() if line and not line.startswith("#")]
    lacking = [line for line in wanted if line not in have]
    if not lacking:
        return
    message = f"{path.parent.name}/.gitignore lacks {', '.join(lacking)}"
    if repair:
        with storage.locked(path):
            current = storage.read_bytes(path) or b""
            sep = b"" if not current or current.endswith(b"\n") else b"\n"
            storage.atomic_write(path, current + sep + "".join(f"{x}\n" for x in lacking).encode())
        yield Finding("warning", message, repaired=True)
    else:
        yield Finding("warning", message, "`voyager-brain doctor --repair` adds the lines")


def _check_config(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    try:
        config = load_config(top / ".voyager")
    except ConfigError as exc:
        yield Finding("error", str(exc), "fix the file by hand; doctor does not rewrite it")
        return
    for key in config.unknown_keys:
        yield Finding("warning", f"{key}: unknown key, ignored", "see docs/configuration.md")
    for key in config.ignored_keys:
        yield Finding(
            "warning",
            f"{key}: runs a program; ignored until you trust the file",
            "review it, then run `voyager-brain trust`",
        )
    if not config.unknown_keys:
        yield Finding("ok", "config.toml: every key is known and valid")


def _unreadable(
    top: Path, path: Path, exc: CorruptFileError, repair: bool, clock: Clock
) -> Finding:
    """A brain file we cannot read: explain, or (repair) move it aside and start afresh;
    a conflicted one is merged instead (`_conflicted`)."""
    if isinstance(exc, ConflictError):
        return _conflicted(path, exc, repair)
    if not repair:
        hint = f"`voyager-brain doctor --repair` moves it aside and starts a fresh {path.name}"
        return Finding("error", str(exc), hint)
    stamp = clock().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    with storage.locked(path):
        moved = storage.move_aside(path, stamp)
    BrainManager(top, clock=clock).persist()
    return Finding(
        "error", f"{exc}; moved to {moved.name} and started a fresh {path.name}", repaired=True
    )


def _conflicted(path: Path, exc: ConflictError, repair: bool) -> Finding:
    """A brain file an unresolved merge left with git conflict markers: explain, or
    (repair) merge the two sides with the merge driver's rules, both kept (the regions'
    base when git wrote one, diff3 style)."""
    hint = "`voyager-brain doctor --repair` merges both sides with the merge driver's rules"
    if not repair:
        return Finding("error", str(exc), hint)
    from ..git.merge import merge_file

    with storage.locked(path):
        data = storage.read_bytes(path) or b""
        ours, theirs, base = conflicts.sides(data)
        try:
            merged = merge_file(str(path), base, ours, theirs)
        except BrainError as why:
            return Finding("error", f"{exc.summary}; cannot merge it: {why}", "resolve it by hand")
        storage.atomic_write(path, merged)
    return Finding("error", f"{exc.summary}: merged, both sides kept", repaired=True)


def _check_logs(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """Either memory log: git conflict markers, lines that are not entries (a hand edit,
    a torn line), a last line without its newline; and what it folds to."""
    from ..memory import log

    store = MemoryStore(top, clock=clock)
    for path in (store.project, store.personal):
        data = storage.read_bytes(path) if path is not None else None
        if path is None or data is None:
            continue
        regions = conflicts.find(data)
        if regions:
            yield _conflicted(path, ConflictError(path, regions[0]), repair)
            continue
        entries, health = log.parse(data)
        problems = []
        if health.bad_lines == 1:
            problems.append("1 line that is not an entry")
        elif health.bad_lines:
            problems.append(f"{health.bad_lines:,} lines that are not entries")
        if health.truncated_tail:
            problems.append("a last line without its newline (a write cut short?)")
        if problems and repair:
            moved = log.set_aside_bad_lines(path)
            where = f"moved to {path.name}{log.REJECTED}" if moved else "its newline added"
            yield Finding("warning", f"{path}: {', '.join(problems)}: {where}", repaired=True)
        elif problems:
            hint = (
                f"`voyager-brain doctor --repair` moves them to {path.name}{log.REJECTED}"
                " (nothing is dropped); the readers skip them meanwhile"
            )
            yield Finding("warning", f"{path}: {', '.join(problems)}", hint)
        else:
            live = len(log.fold(entries).entries)
            yield Finding(
                "ok", f"{path}: {_count(len(entries), 'line')}, {_count(live, 'live entry')}"
            )


def _count(n: int, noun: str) -> str:
    """``1 entry``, ``2 entries``, ``1,024 lines``."""
    if n != 1:
        noun = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n:,} {noun}"


def _check_brain(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    path = top / ".voyager" / "brain.md"
    data = storage.read_bytes(path)
    if data is None:
        yield Finding("ok", ".voyager/brain.md does not exist yet; it is created on first save")
        return
    try:
        text = brainfile.decode_text(data, path)
        doc = brainfile.parse(text, path)
    except CorruptFileError as exc:
        yield _unreadable(top, path, exc, repair, clock)
        return

    yield Finding("ok", f"brain.md reads cleanly: {_count(len(doc.entries), 'entry')}")
    for warning in doc.warnings:
        yield Finding("warning", f"brain.md {warning}", "fix the heading by hand")

    ours, reference = brainfile.heading_lines(text), brainfile.reference_heading_lines(text)
    for line in sorted(set(ours) ^ set(reference)):
        seen_by = "voyager-brain" if line in ours else "a markdown viewer"
        yield Finding(
            "warning",
            f"brain.md line {line}: only {seen_by} reads a section heading here "
            "(an unclosed code fence or HTML block nearby?)",
            "close the block by hand so that both read the file alike",
        )

    keys = [e.key for e in doc.entries]
    duplicates = len(keys) - len(set(keys))
    if duplicates:
        yield Finding(
            "warning",
            f"brain.md has {duplicates} duplicated entries (same type, time and text)",
            "they are harmless; delete the copies by hand if you like",
        )

    yield from check_brain_md(top, doc, repair, clock)


def _check_state(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    from ..state import brainjson as state
    from ..state.validate import validate

    path = top / ".voyager" / "brain.json"
    data = storage.read_bytes(path)
    if data is None:
        yield Finding("ok", ".voyager/brain.json does not exist yet; it is created on first save")
        return
    try:
        document = state.loads(data, path)
    except CorruptFileError as exc:
        yield _unreadable(top, path, exc, repair, clock)
        return
    unknown = validate(document, "brain.json")
    yield Finding(
        "ok",
        f"brain.json reads cleanly: {len(document['decisions'])} decisions, "
        f"{len(document['knownIssues'])} known issues, {len(document['keyFiles'])} key files",
    )
    for field in unknown:
        yield Finding("warning", f"brain.json: {field} is not a field of the schema (kept)")
    missing = [f["path"] for f in document["keyFiles"] if not (top / f["path"]).exists()]
    if missing:
        yield Finding(
            "warning",
            f"brain.json: key files not in the working tree: {', '.join(missing)}",
            "save an update of keyFiles, or restore the files",
        )


def _check_templates(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    overrides = top / ".voyager" / "templates"
    if not overrides.is_dir():
        return
    templates = Templates(overrides)
    sample = BrainEntry("observation", "## sample\n```\ncode", datetime(2026, 1, 1, tzinfo=UTC))
    try:
        brainfile.render(brainfile.BrainDocument("sample", entries=(sample,)), templates)
    except BrainError as exc:
        yield Finding("error", str(exc), "fix or delete the override")
    else:
        yield Finding("ok", ".voyager/templates/ overrides render readable sections")


def _check_tmp(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    voyager = top / ".voyager"
    if not voyager.is_dir():
        return
    now = time.time()
    stale = [p for p in voyager.glob(".*.tmp") if now - p.stat().st_mtime > STALE_TMP_SECONDS]
    for path in stale:
        if repair:
            path.unlink(missing_ok=True)
        yield Finding(
            "warning",
            f"{path.name}: temporary file left by an interrupted write",
            "`doctor --repair` removes it",
            repaired=repair,
        )


def _check_git(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    found = gitsetup.status(top)
    if not found.named:
        return  # the driver is not wanted here (`init` suggests `install git`)
    if found.driver is None:
        message = (
            f".gitattributes names the {gitsetup.DRIVER} merge driver but this clone's git "
            "config lacks it: git falls back to a line merge, with conflict markers"
        )
        if repair:
            gitsetup.configure(top)
            yield Finding("warning", message, repaired=True)
        else:
            yield Finding(
                "warning", message, "run `voyager-brain install git` or `doctor --repair`"
            )
        return
    yield Finding("ok", f"git merges {', '.join(found.named)} with the {gitsetup.DRIVER} driver")
    if not found.on_path and found.driver.split()[0] == gitsetup.EXECUTABLE:
        yield Finding(
            "warning",
            f"`{gitsetup.EXECUTABLE}` is not on this PATH: git, run from here, cannot start "
            "the merge driver and leaves the brain files conflicted",
            "activate the environment voyager-brain is installed in, or install it with pipx",
        )


def _timed_rules(db: Any, top: Path) -> Iterator[Finding]:
    """The rules this project sees that run on Python's engine under a time limit: over
    it they count as matched (guard/patterns.py)."""
    from ..guard.patterns import timed_notes
    from ..guard.rules import list_rules

    hint = "without look-arounds or back-references the pattern runs on RE2, in linear time"
    for line in timed_notes(list_rules(db, project=str(top.resolve()))):
        yield Finding("warning", line, hint)


def _check_history(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """history.db (personal, seed 003) opens, and this project's rules.toml loads."""
    import os

    from ..errors import HistoryError
    from ..guard import db as gdb
    from ..guard.teamrules import FILE, sync_team_rules
    from ..paths import history_file

    path = history_file()
    if not os.path.exists(path) and not (top / FILE).exists():
        yield Finding("ok", f"{path} does not exist yet; the first hook or rule creates it")
        return
    try:
        db = gdb.open_database(path)
    except HistoryError as exc:
        if repair and isinstance(exc, gdb.MissingTablesError):
            gdb.remake_tables(path)
            yield Finding("error", f"{exc.where}: made again, empty", repaired=True)
            yield from _check_history(top, False, clock)
            return
        hint = (
            "until then the guard lets every tool call through (or denies every one, with"
            ' guard_fail = "closed" in config.toml)'
        )
        yield Finding("error", str(exc), hint)
        return
    try:
        yield from _queued_writes(path, repair)
        yield from _write_ahead_log(db, path, repair)
        rules = db.execute("SELECT COUNT(*) FROM rules WHERE active = 1").fetchone()[0]
        calls = db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0]
        counts = f"{_count(rules, 'active guard rule')}, {_count(calls, 'tool call')} recorded"
        yield Finding("ok", f"{path}: {counts}")
        if (top / FILE).exists():
            problems = sync_team_rules(db, str(top.resolve()), force=True)
            for problem in problems:
                yield Finding("error", problem, f"fix {FILE}; the other rules still apply")
            if not problems:
                yield Finding("ok", f"{FILE} loads cleanly")
        yield from _timed_rules(db, top)
    finally:
        db.close()


def _write_ahead_log(db: Any, path: str, repair: bool) -> Iterator[Finding]:
    """history.db's write-ahead log, which the hooks keep under `WAL_LIMIT`: one far
    over it was left by something else (an older voyager-brain, a tool holding the
    database open), and makes every hook read it all."""
    from ..guard.db import WAL_LIMIT

    try:
        size = os.stat(path + "-wal").st_size
    except OSError:
        return
    if size <= 2 * WAL_LIMIT:
        return
    what = f"{path}-wal is {size / 2**20:.1f} MB (the hooks keep it under {WAL_LIMIT >> 20} MB)"
    if repair and db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
        yield Finding("warning", f"{what}: checkpointed into history.db", repaired=True)
    elif repair:
        yield Finding("warning", f"{what}; history.db is in use", "run doctor --repair again")
    else:
        hint = "`voyager-brain doctor --repair` checkpoints it into history.db"
        yield Finding("warning", f"{what}; every hook reads it whole", hint)


def _queued_writes(path: str, repair: bool) -> Iterator[Finding]:
    """The hooks' history writes queued while history.db was busy (`guard.spool`)."""
    from ..guard import spool

    queued, failed = spool.pending(path), spool.failed(path)
    where = spool.folder(path)
    if queued and repair:
        written, _ = spool.drain(path)
        yield Finding("warning", f"{_writes(written)} written from the queue", repaired=True)
        failed = spool.failed(path)
    elif queued:
        yield Finding(
            "warning",
            f"{_writes(len(queued))} queued in {where} (history.db was busy)",
            "`voyager-brain doctor --repair` or any `voyager-brain history` command writes them",
        )
    if failed:
        yield Finding(
            "error",
            f"{_writes(len(failed))} could not be written from the queue ({where}/*{spool.FAILED})",
            "each file is one JSON operation; remove it once dealt with",
        )


def _writes(count: int) -> str:
    return f"{count} history write" + ("" if count == 1 else "s")


def _check_pipeline(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """.brain/pipeline-state.json (seed 004) reads, and a pipeline marked running has an
    engine. Never repaired here: `pipeline reset`, `resume` and `cancel` are the tools."""
    from ..pipeline import state as ps
    from ..pipeline.engine import Pipeline
    from ..pipeline.validate import check_conflicts

    conflicted = check_conflicts(top)
    if conflicted is not None:
        yield Finding(
            "error", conflicted, "resolve it by hand; the next agent would read both sides"
        )
    path = ps.state_path(top)
    if not path.exists():
        return
    try:
        current = ps.load(top)
    except CorruptFileError as exc:
        hint = "`voyager-brain pipeline reset` moves it aside so that a new run can start"
        yield Finding("error", str(exc), hint)
        return
    assert current is not None
    where = f"{path}: pipeline {current.status}"
    if current.status == "running" and current.head is not None:
        yield Finding(
            "ok",
            f"{where}, in codename-claude's current format: its engine may be running it",
            "a heartbeat (its or `voyager-brain pipeline heartbeat`) stalls it after 30 minutes",
        )
    elif current.status == "running" and not Pipeline(top).engine_running():
        hint = "its engine is gone: `voyager-brain pipeline resume` continues it, `cancel` ends it"
        yield Finding("warning", f"{where}, but no engine is running it", hint)
    elif current.status == "stalled":
        yield Finding("warning", where, "`voyager-brain pipeline resume` continues it")
    else:
        yield Finding("ok", where)


def _check_exports(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """Each exported file (AGENTS.md ... with our markers) holds the current context;
    `--repair` refreshes the stale ones."""
    from ..context.exports import BEGIN, TARGETS, ExportError, export

    context = None
    for target, (name, _) in TARGETS.items():
        path = top / name
        try:
            data = storage.read_bytes(path)
        except OSError:
            continue
        if data is None or BEGIN.split(" (")[0] not in data.decode("utf-8", errors="replace"):
            continue
        if context is None:
            context = BrainManager(top, clock=clock).context()
        try:
            done = export(top, target, context, check=not repair)
        except ExportError as exc:
            yield Finding("error", str(exc))
            continue
        if done.action == "unchanged":
            yield Finding("ok", f"{name}: the exported memory is current")
        elif repair:
            yield Finding("warning", f"{name}: the exported memory was stale", repaired=True)
        else:
            hint = f"`voyager-brain export {target}` (or `doctor --repair`) refreshes it"
            yield Finding("warning", f"{name}: the exported memory is out of date", hint)


def _check_agents(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """Each agent whose settings hold our hooks or MCP server: are they what `install`
    writes now? `--repair` rewrites ours (the agent's other settings stay)."""
    from ..integrations import install
    from ..integrations.hooks import ADAPTERS, adapter

    servers = False
    for agent in ADAPTERS:
        module = adapter(agent)
        path = top / module.SETTINGS.project
        name = module.AGENT
        try:
            drift = install.hooks_drift(agent, path) if path.exists() else None
        except CorruptFileError as exc:
            yield Finding("error", str(exc), f"voyager-brain cannot read {name}'s settings")
            drift = None
        if drift is not None:
            missing, stale = drift
            where = path.relative_to(top)
            if not missing and not stale:
                yield Finding("ok", f"{name}: hooks installed in {where}")
            elif repair:
                install.install_hooks(agent, path)
                yield Finding(
                    "warning", f"{name}: hooks in {where} were out of date", repaired=True
                )
            else:
                parts = [f"{len(missing)} missing"] if missing else []
                parts += [f"{len(stale)} no longer used"] if stale else []
                hint = f"`voyager-brain install {agent}` (or `doctor --repair`) updates them"
                yield Finding("warning", f"{name}: hooks in {where}: {', '.join(parts)}", hint)
        try:
            entry = install.mcp_entry(agent, top)
        except CorruptFileError as exc:
            yield Finding("error", str(exc))
            continue
        if entry is None:
            continue
        servers = True
        where = install.mcp_path(agent, top).relative_to(top)
        if all(entry.get(k) == v for k, v in install.SERVER_SETTINGS.items()):
            yield Finding("ok", f"{name}: MCP server in {where}")
        else:
            hint = f"`voyager-brain install mcp {agent}` resets it"
            yield Finding(
                "warning", f"{name}: the MCP server in {where} is not `voyager-brain mcp`", hint
            )
    if servers:
        import importlib.util

        if importlib.util.find_spec("mcp") is None:
            yield Finding(
                "warning",
                "an agent is set to start `voyager-brain mcp`, but the MCP SDK is not installed",
                'pip install "voyager-brain[mcp]"',
            )

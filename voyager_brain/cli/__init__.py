"""The `voyager-brain` command: a thin layer over the library.

User errors (`BrainError`, unreadable files) are one line on stderr and exit code 2;
click's own usage errors exit 2 as well.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from .. import __version__, repo
from ..errors import BrainError, NotInRepositoryError
from ..session.manager import BrainManager
from ..session.model import ENTRY_TYPES, BrainEntry
from ..timestamps import format_timestamp

F = TypeVar("F", bound=Callable[..., Any])


class UserError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"voyager-brain: {self.format_message()}", err=True)


class BrainGroup(click.Group):
    """Turns library errors into one line and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrainError as exc:
            raise UserError(str(exc)) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise UserError(f"{where}{exc.strerror or exc}") from None


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


@click.group(cls=BrainGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="voyager-brain")
@click.option(
    "-C",
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in this folder (any folder inside the repository).",
)
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Memory for coding agents, kept in the project's git repository.

    The session brain lives in .voyager/brain.md: timestamped sections (observations,
    decisions, loop status, reflections) that agents add every turn, compacted when the
    file grows, and reviewed in pull requests like any document. The project state
    lives in .voyager/brain.json: facts, decisions, active state, key files, known
    issues, preferences and next steps, merged by fixed per-field rules at every save.
    """
    ctx.obj = root if root is not None else Path.cwd()


def _start(ctx: click.Context) -> Path:
    start: Path = ctx.obj
    if not start.is_dir():
        raise UserError(f"{start}: no such folder")
    return start


def _manager(ctx: click.Context) -> BrainManager:
    """The BrainManager of the repository we are in; exit 2 outside one."""
    start = _start(ctx)
    if repo.find_top(start) is None:
        raise NotInRepositoryError(start.absolute())
    return BrainManager(start)


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# -- init ---------------------------------------------------------------------------------


@cli.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create .voyager/ at the top of this git repository.

    Writes brain.md (the session brain), brain.json (the project state, every field
    empty), config.toml (every setting, commented, with its default) and a .gitignore for
    local files (locks, cache). Existing files are kept.
    """
    from ..session.manager import ensure_layout

    bm = _manager(ctx)
    missing = [p for p in (bm.path, bm.state_path) if not p.exists()]
    created = ensure_layout(bm.voyager_dir)
    bm.load()
    if missing:
        bm.persist()
        created[:0] = missing
    for path in created:
        click.echo(f"created {_rel(path)}")
    if not created:
        click.echo(f"{_rel(bm.voyager_dir)} is already set up; nothing to do")
    else:
        click.echo(f"project: {bm.project}")
        click.echo(
            "next: voyager-brain add observation 'what you noticed', then voyager-brain status"
        )
    from ..git import setup as gitsetup

    if not gitsetup.status(bm.top).registered:
        click.echo(
            "hint: run voyager-brain install git, so that git merges the brain files "
            "instead of conflicting"
        )


# -- status -------------------------------------------------------------------------------


def status_data(bm: BrainManager) -> dict[str, Any]:
    """Everything `status` shows, as plain data."""
    state = bm.load()
    by_type = {t: 0 for t in ENTRY_TYPES}
    for entry in state.entries:
        by_type[entry.type] += 1
    status = bm.get_status()
    tokens = -(-len(state.content) // bm.config.chars_per_token)
    budget = bm.config.compact_budget_tokens
    return {
        "path": str(status.path),
        "exists": status.path.exists(),
        "project": bm.project,
        "branch": repo.current_branch(bm.top),
        "size_bytes": status.size_bytes,
        "tokens": tokens,
        "budget_tokens": budget,
        "budget_used": round(tokens / budget, 3),
        "entries": {"total": status.entry_count, **by_type},
        "last_updated": format_timestamp(state.last_updated) if state.last_updated else None,
        "last_compaction": (
            format_timestamp(status.last_compaction) if status.last_compaction else None
        ),
        "uncommitted": repo.brain_files_dirty(bm.top),
        "state": state_summary(bm),
    }


def state_summary(bm: BrainManager) -> dict[str, Any]:
    """brain.json at a glance: items per section, open blockers, key files gone missing."""
    st = bm.state
    return {
        "path": str(bm.state_path),
        "exists": bm.state_path.exists(),
        "session_count": st.session_count,
        "last_updated": st.last_updated,
        "counts": {
            "stack": len(st.facts.get("stack", [])),
            "custom_facts": len(st.facts.get("custom", [])),
            "decisions": len(st.decisions),
            "in_progress": len(st.active_state.get("inProgress", [])),
            "key_files": len(st.key_files),
            "known_issues": len(st.known_issues),
            "next_steps": len(st.next_steps),
        },
        "current_goal": st.active_state.get("currentGoal") or None,
        "blockers": list(st.active_state.get("blockers", [])),
        "missing_key_files": [f["path"] for f in st.key_files if not (bm.top / f["path"]).exists()],
    }


@cli.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the session brain: size against the budget, entries, git state."""
    bm = _manager(ctx)
    data = status_data(bm)
    if as_json:
        print_json(data)
        return
    entries = data["entries"]
    kinds = ", ".join(f"{entries[t]} {t}" for t in ENTRY_TYPES if entries[t])
    rows = [
        ("brain", _rel(bm.path) + ("" if data["exists"] else " (not created yet)")),
        ("project", data["project"]),
        ("branch", data["branch"] or "(detached or unknown)"),
        (
            "size",
            f"{data['size_bytes']:,} bytes, ~{data['tokens']:,} tokens of the "
            f"{data['budget_tokens']:,}-token compaction budget ({data['budget_used']:.0%})",
        ),
        ("entries", f"{entries['total']}" + (f" ({kinds})" if kinds else "")),
        ("updated", data["last_updated"] or "never"),
        ("compacted", data["last_compaction"] or "never"),
        (
            "git",
            "uncommitted: " + ", ".join(data["uncommitted"])
            if data["uncommitted"]
            else "brain files committed",
        ),
    ]
    st = data["state"]
    counts = st["counts"]
    rows += [
        (
            "state",
            _rel(Path(st["path"]))
            + (f", {st['session_count']} sessions" if st["exists"] else " (not created yet)"),
        ),
        (
            "sections",
            f"{counts['decisions']} decisions, {counts['known_issues']} known issues, "
            f"{counts['key_files']} key files, {counts['stack'] + counts['custom_facts']} "
            f"facts, {counts['next_steps']} next steps",
        ),
        ("goal", st["current_goal"] or "(none)"),
        ("blockers", "; ".join(st["blockers"]) or "none"),
    ]
    if st["missing_key_files"]:
        rows.append(
            ("missing", "key files not in the working tree: " + ", ".join(st["missing_key_files"]))
        )
    for name, value in rows:
        click.echo(f"{name:<10} {value}")


# -- add ----------------------------------------------------------------------------------


@cli.command()
@click.argument("entry_type", metavar="TYPE", type=click.Choice(ENTRY_TYPES))
@click.argument("text")
@click.option("--source", help="Who wrote the entry (an agent, a hook, a person).")
@json_option
@click.pass_context
def add(ctx: click.Context, entry_type: str, text: str, source: str | None, as_json: bool) -> None:
    """Add an entry to brain.md and save it.

    TYPE is observation, decision, loop_status or reflection. TEXT is the entry's
    markdown; `-` reads it from standard input. Secrets in it are redacted.
    """
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise UserError("TEXT is empty; give the entry's text, or - to read it from stdin")
    bm = _manager(ctx)
    bm.load()
    count = len(bm.entries)
    stamped = BrainEntry(type=entry_type, content=text, timestamp=bm.clock(), source=source)
    bm.update(stamped)
    added = len(bm.entries) > count
    # The stored entry (redacted); when it was already there, that earlier copy.
    entry = next(
        e
        for e in reversed(bm.entries)
        if (e.type, e.timestamp) == (stamped.type, stamped.timestamp)
    )
    bm.persist()
    if as_json:
        print_json({"added": added, "path": str(bm.path), "entry": entry.to_dict()})
        return
    if not added:
        click.echo(f"already in {_rel(bm.path)}: the same {entry_type} at the same second")
        return
    redacted = entry.content.count("[REDACTED:") - text.count("[REDACTED:")
    note = f" ({redacted} secret{'s' * (redacted != 1)} redacted)" if redacted > 0 else ""
    click.echo(f"added {entry.type} {entry.key[1]} to {_rel(bm.path)}{note}")


# -- compact ------------------------------------------------------------------------------


@cli.command()
@json_option
@click.pass_context
def compact(ctx: click.Context, as_json: bool) -> None:
    """Summarize and prune brain.md until it fits the token budget.

    Keeps every decision and the newest loop status, drops duplicate observations, and
    folds the oldest observations and reflections into one summary reflection.
    """
    bm = _manager(ctx)
    bm.load()
    report = bm.compact()
    if as_json:
        print_json(report.to_dict())
        return
    where = _rel(bm.path)
    if not report.changed:
        click.echo(
            f"nothing to compact: {report.entries_after} entries, ~{report.tokens_after:,} "
            f"tokens, budget {report.budget_tokens:,}"
        )
        return
    click.echo(
        f"compacted {where}: {report.entries_before} -> {report.entries_after} entries, "
        f"~{report.tokens_before:,} -> ~{report.tokens_after:,} tokens "
        f"(budget {report.budget_tokens:,})"
    )
    click.echo(f"  kept        {report.kept}")
    click.echo(f"  merged      {report.merged} duplicate observations")
    click.echo(f"  superseded  {report.superseded} older loop statuses")
    if report.summary is not None:
        click.echo(f"  summarized  {report.summarized} entries into 1 reflection")
    if not report.fits:
        click.echo(
            "  still over budget: decisions, the summary and the newest loop status are "
            "never dropped; raise compact_budget_tokens in .voyager/config.toml"
        )


# -- project state: save, show, import ----------------------------------------------


def _read_json(source: str, label: str) -> Any:
    """JSON from a file path or `-` (stdin), as one clear error when it is not JSON."""
    if source == "-":
        text, where = sys.stdin.read(), "stdin"
    else:
        path = Path(source)
        if not path.is_file():
            raise UserError(f"{source}: no such file")
        text, where = path.read_text(encoding="utf-8-sig"), source
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{where}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); "
            f"expected {label}"
        ) from None


def _save_update(
    bm: BrainManager, update: Any, unknown: list[str], as_json: bool, extra: dict[str, Any]
) -> None:
    """Merge `update` into brain.json, write it, and print what changed."""
    from ..state.brainjson import diff

    bm.load()
    before = bm.state.data
    changes = diff(before, bm.merge_state(update).data)
    bm.persist()
    final = bm.state
    if as_json:
        print_json(
            {
                "changes": [c.to_dict() for c in changes],
                "unknown_fields": unknown,
                "session_count": final.session_count,
                "last_updated": final.last_updated,
                **extra,
            }
        )
        return
    for path in unknown:
        click.echo(f"note: {path} is not a field of brain.json; kept as given", err=True)
    for change in changes:
        click.echo(change.describe())
    if not changes:
        click.echo("no changes")


@cli.command()
@click.argument("source", metavar="[FILE|-]", default="-")
@json_option
@click.pass_context
def save(ctx: click.Context, source: str, as_json: bool) -> None:
    """Merge a partial brain.json into the project state and save it.

    FILE (or stdin, `-`, the default) holds a JSON object with any subset of brain.json's
    fields. They are merged by the per-field rules (facts.stack grows, decisions are
    upserted by `what`, nextSteps is replaced, ...), validated, and written to
    .voyager/brain.json; then the changes are printed. This is what an agent or a
    script calls at the end of a session.
    """
    from ..state.validate import validate as validate_state

    update = _read_json(source, "a JSON object with brain.json fields")
    where = "stdin" if source == "-" else source
    unknown = validate_state(update, where)
    _save_update(_manager(ctx), update, unknown, as_json, {})


SECTIONS = {
    "facts": "facts",
    "decisions": "decisions",
    "active": "activeState",
    "activeState": "activeState",
    "keyFiles": "keyFiles",
    "files": "keyFiles",
    "knownIssues": "knownIssues",
    "issues": "knownIssues",
    "preferences": "preferences",
    "nextSteps": "nextSteps",
    "next": "nextSteps",
}


@cli.command()
@click.argument("section", required=False, type=click.Choice(sorted(SECTIONS)))
@json_option
@click.pass_context
def show(ctx: click.Context, section: str | None, as_json: bool) -> None:
    """Print the project state (brain.json) readably.

    SECTION limits it to one part: facts, decisions, active, files, issues, preferences
    or next (or the field's own name, e.g. knownIssues).
    """
    from ..state.show import render_state

    bm = _manager(ctx)
    data = bm.state.data
    field = SECTIONS[section] if section else None
    if as_json:
        print_json(data[field] if field else data)
        return
    click.echo(render_state(data, field), nl=False)


@cli.group(name="import")
def import_() -> None:
    """Bring memory from another tool into this repository's brain."""


@import_.command(name="rho")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
@click.pass_context
def import_rho(ctx: click.Context, path: Path, as_json: bool) -> None:
    """Bring an existing rho brain.jsonl into the personal memory log.

    Every valid line is appended (the fold applies its updates and tombstones as the
    original tool did); lines already in the personal log are skipped, bad lines are
    counted and left out.
    """
    from ..memory import log
    from ..memory.store import PERSONAL, MemoryStore

    entries, health = log.read(path)
    store = MemoryStore(_start(ctx))
    with store.exclusive():  # what is already there is read and added to under the lock
        have = {log.encode(e) for e in log.read(store.personal)[0]}
        fresh = [e for e in entries if log.encode(e) not in have]
        for n, entry in enumerate(fresh):
            log.validate(entry, f"{path}: entry {n + 1}")
        if fresh:
            store.write(fresh, PERSONAL)
    report = {
        "imported": len(fresh),
        "already_present": len(entries) - len(fresh),
        "bad_lines": health.bad_lines,
        "into": str(store.personal),
    }
    if as_json:
        print_json(report)
    else:
        click.echo(
            f"imported {report['imported']} lines into {report['into']} "
            f"({report['already_present']} already there, {report['bad_lines']} bad lines "
            "left out)"
        )


@import_.command(name="llm-brain")
@click.argument("path", required=False, type=click.Path(dir_okay=True, path_type=Path))
@json_option
@click.pass_context
def import_llm_brain(ctx: click.Context, path: Path | None, as_json: bool) -> None:
    """Merge an llm-brain state file (same schema) into .voyager/brain.json.

    PATH is the file, or a folder holding .llm-brain/brain.json; default: the repository's
    own .llm-brain/brain.json. Its fields are merged by the same rules as `save` (and
    count as one save); its version, project name, lastUpdated and sessionCount are not
    copied.
    """
    from ..state import brainjson as project_state

    bm = _manager(ctx)
    if path is None:
        path = bm.top / ".llm-brain" / "brain.json"
    elif path.is_dir():
        path = (
            path / ".llm-brain" / "brain.json"
            if (path / ".llm-brain").is_dir()
            else path / "brain.json"
        )
    if not path.is_file():
        raise UserError(f"{path}: no such file (expected an llm-brain brain.json)")
    imported = project_state.loads(path.read_bytes(), path)
    update = {
        k: v for k, v in imported.items() if k not in project_state.MANAGED and k != "project"
    }
    _save_update(bm, update, [], as_json, {"imported": str(path)})


# -- the session-start context -------------------------------------------------------


@cli.command()
@click.option(
    "--budget", type=click.IntRange(min=50), help="Token budget (default: prompt_budget)."
)
@click.option(
    "--explain", is_flag=True, help="List every candidate line, its cost, and why it is in or out."
)
@json_option
@click.pass_context
def context(ctx: click.Context, budget: int | None, explain: bool, as_json: bool) -> None:
    """Print the document injected at session start.

    One budgeted document from the memory logs, brain.json and brain.md: identity and
    user, behavior, preferences, the project state, project context, the session
    brain, what is due, and learnings ranked by score. Outside a repository with
    .voyager/ it holds the personal log alone.
    """
    from ..context import cache as context_cache

    bm = BrainManager(_start(ctx))
    before = context_cache.fingerprint(bm.root, budget)
    doc = bm.context_document(budget, explain=explain or as_json)
    context_cache.store(bm.root, budget, before, doc.text, doc.valid_until, doc.paths_checked)
    if as_json:
        print_json(doc.to_dict())
        return
    if not explain:
        click.echo(doc.text, nl=False)
        return
    for choice in doc.choices:
        mark = "+" if choice.included else "-"
        why = "" if choice.included else f"  ({choice.reason})"
        click.echo(
            f"{mark} {choice.item.section:<12} ~{choice.tokens:>3} tokens  {choice.item.ref}{why}"
        )
    click.echo(f"total: ~{doc.tokens} of {doc.budget_tokens} tokens")


# -- the memory log: brain, memory ---------------------------------------------------

_BOOLEAN_PARAMS = ("enabled", "verbose")


def parse_tool_args(args: tuple[str, ...]) -> dict[str, Any]:
    """`key=value` words as the brain tool's parameters: JSON objects and lists parsed
    (the relaxed `{kind:interval,every:6h}` a shell leaves is parsed later, by field),
    true/false for the boolean parameters, everything else as text."""
    words: dict[str, list[str]] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise UserError(f"{arg!r}: expected key=value, like action=list or type=learning")
        words.setdefault(key, []).append(value)
    params: dict[str, Any] = {}
    for key, values in words.items():
        value = values[-1]
        if len(values) > 1 and all(re.fullmatch(r"\w+:\S+", v) for v in values):
            # bash brace-expands an unquoted cadence={kind:interval,every:6h} into
            # cadence=kind:interval cadence=every:6h; put the object back together.
            value = "{" + ",".join(values) + "}"
        parsed: Any = value
        if value[:1] in ("{", "["):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                parsed = value
        elif key in _BOOLEAN_PARAMS and value.lower() in ("true", "false"):
            parsed = value.lower() == "true"
        params[key] = parsed
    return params


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, required=True, metavar="action=ACTION [KEY=VALUE]...")
@json_option
@click.pass_context
def brain(ctx: click.Context, args: tuple[str, ...], as_json: bool) -> None:
    """The memory log's brain tool: add, update, remove, list, decay, task_done,
    task_clear, reminder_run.

    \b
    voyager-brain brain action=add type=learning text="This repo uses pnpm not npm"
    voyager-brain brain action=add type=task description="Fix CI" priority=high tags=code,ci
    voyager-brain brain action=list type=learning verbose=true
    voyager-brain brain action=remove id=a1b2c3d4 reason="No longer accurate"
    """
    from ..memory.tool import brain_tool

    params = parse_tool_args(args)
    action = params.pop("action", None)
    if not isinstance(action, str):
        raise UserError("action=... is required (add, update, remove, list, decay, ...)")
    result = brain_tool(action, cwd=str(_start(ctx)), **params)
    if as_json:
        print_json(result)
    else:
        click.echo(result["message"])


@cli.group()
def memory() -> None:
    """The memory logs: stats, search, gc."""


@memory.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts by type (🧠 5L 3P 2T 1R | 11beh 2id 1usr) and each log's health."""
    from ..memory.store import MemoryStore

    store = MemoryStore(_start(ctx))
    snapshot = store.snapshot()
    counts = {
        t: len(snapshot.state.live(t))
        for t in (
            "learning",
            "preference",
            "task",
            "reminder",
            "behavior",
            "identity",
            "user",
            "context",
            "meta",
        )
    }
    line = (
        f"🧠 {counts['learning']}L {counts['preference']}P {counts['task']}T "
        f"{counts['reminder']}R | {counts['behavior']}beh {counts['identity']}id "
        f"{counts['user']}usr"
    )
    logs = {
        name: {"path": str(store.path_of(name)), **health.to_dict()}
        for name, health in snapshot.health.items()
    }
    if as_json:
        print_json({"summary": line, "counts": counts, "logs": logs})
        return
    click.echo(line)
    for name, info in logs.items():
        tail = ", torn last line" if info["truncated_tail"] else ""
        click.echo(
            f"{name}: {info['path']}: {info['total']} lines read, {info['bad_lines']} bad{tail}"
        )


@memory.command()
@click.argument("query")
@json_option
@click.pass_context
def search(ctx: click.Context, query: str, as_json: bool) -> None:
    """Entries of both logs whose text contains QUERY (case-insensitive)."""
    from ..memory.tool import brain_tool

    result = brain_tool("list", cwd=str(_start(ctx)), query=query)
    if as_json:
        print_json(result)
    else:
        click.echo(result["message"])


@memory.command()
@json_option
@click.pass_context
def due(ctx: click.Context, as_json: bool) -> None:
    """Reminders that are due, and pending tasks that are overdue or urgent."""
    from datetime import UTC, datetime

    from ..memory import schedule
    from ..memory.store import MemoryStore

    store = MemoryStore(_start(ctx))
    snapshot = store.snapshot()
    now = datetime.now(UTC)
    reminders = [r for r in snapshot.state.live("reminder") if schedule.is_due(r, now)]
    tasks = [
        t
        for t in snapshot.state.live("task")
        if schedule.matches_filter(t, "pending")
        and (t.get("priority") == "urgent" or schedule.is_overdue(t, now))
    ]
    if as_json:
        print_json({"reminders": reminders, "tasks": tasks})
        return
    for r in reminders:
        click.echo(f"reminder {r['id']}: {r['text']} (due {r.get('next_due') or 'now'})")
    for t in tasks:
        why = "urgent" if t.get("priority") == "urgent" else f"overdue since {t.get('due')}"
        click.echo(f"task {t['id']}: {t['description']} ({why})")
    if not reminders and not tasks:
        click.echo("nothing due")


@memory.command()
@click.argument("transcript", required=False)
@json_option
@click.pass_context
def extract(ctx: click.Context, transcript: str | None, as_json: bool) -> None:
    """Store up to 3 learnings or preferences found in a conversation.

    TRANSCRIPT is a Claude Code transcript (JSON lines) or plain text; without it, or
    with `-`, stdin is read. Offline it takes explicit statements ("we use ...",
    "always ...", "never ...", "prefer ..."); with model_command in config.toml the
    model proposes them. Off when auto_memory is false, VOYAGER_AUTO_MEMORY=0 or
    VOYAGER_SUBAGENT=1.
    """
    from ..config import load_config
    from ..memory.extract import enabled, read_source
    from ..memory.extract import extract as run_extract
    from ..providers import get_provider

    start = _start(ctx)
    top = repo.find_top(start)
    config = load_config(top / ".voyager" if top else None)
    if transcript not in (None, "-") and not Path(str(transcript)).is_file():
        raise UserError(f"{transcript}: no such file")
    if not enabled(config):
        click.echo("auto-memory is off (auto_memory, VOYAGER_AUTO_MEMORY or VOYAGER_SUBAGENT)")
        return
    text = read_source(transcript, sys.stdin.read() if transcript in (None, "-") else None)
    results = run_extract(
        text,
        cwd=str(start),
        config=config,
        provider=get_provider(config),
        warn=lambda message: click.echo(f"warning: {message}", err=True),
    )
    if as_json:
        print_json(results)
        return
    for result in results:
        click.echo(result["message"])
    if not results:
        click.echo("nothing to remember")


@memory.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.pass_context
def migrate(ctx: click.Context, folder: Path) -> None:
    """Bring a legacy folder (core.jsonl, memory.jsonl, context.jsonl, tasks.jsonl) into
    the personal log, once; the legacy files are not changed."""
    from ..memory.migrate import migrate as run_migration
    from ..memory.store import MemoryStore

    store = MemoryStore(_start(ctx))
    report = run_migration(store, folder)
    click.echo(
        f"migrated {report.imported} entries from {', '.join(report.files)} into "
        f"{store.personal} ({report.bad_lines} lines left out)"
    )


@memory.command()
@click.option(
    "--store",
    type=click.Choice(["personal", "project", "all"]),
    default="all",
    show_default=True,
    help="Which log to rewrite.",
)
@click.pass_context
def gc(ctx: click.Context, store: str) -> None:
    """Rewrite a log as its folded state (atomically, under the lock).

    Superseded lines and bad lines go; tombstones stay, since other clones may still
    hold their targets. Reports the bytes saved.
    """
    from ..memory import log
    from ..memory.store import MemoryStore

    memory_store = MemoryStore(_start(ctx))
    names = ["personal", "project"] if store == "all" else [store]
    for name in names:
        if name == "project" and memory_store.project is None:
            if store == "project":
                raise UserError("no project log here (.voyager/ not found)")
            continue
        path = memory_store.path_of(name)
        before, after = log.gc(path)
        click.echo(f"{name}: {path}: {before:,} -> {after:,} bytes ({before - after:,} saved)")


# -- the brain in git: diff, log, blame -------------------------------------------------


def _top(ctx: click.Context) -> Path:
    """The top of the repository we are in; exit 2 outside one."""
    start = _start(ctx)
    top = repo.find_top(start)
    if top is None:
        raise NotInRepositoryError(start.absolute())
    return top


@cli.command(name="diff")
@click.argument("rev_range", required=False, metavar="[REV_RANGE]")
@click.argument("rev_to", required=False, metavar="[REV]")
@click.option("--staged", "--cached", is_flag=True, help="Compare the index with HEAD.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown is ready to post as a pull-request comment.",
)
@json_option
@click.option("--exit-code", is_flag=True, help="Exit 1 when something changed, else 0.")
@click.pass_context
def diff_command(
    ctx: click.Context,
    rev_range: str | None,
    rev_to: str | None,
    staged: bool,
    fmt: str,
    as_json: bool,
    exit_code: bool,
) -> None:
    """What changed in the brain files between two versions, by meaning.

    brain.json items added, removed and changed (decisions, key files and known issues
    matched by their merge keys), brain.md entries added, removed, edited and compacted,
    memories added, updated and tombstoned.

    REV_RANGE is A...B (from the merge base of A and B to B), A..B or A B (from A to B),
    or one revision A (against the working tree). Without it: from the merge base with the
    default branch (origin/HEAD, else main, else master) to HEAD; on the default branch
    itself, or with no commits to compare, the working tree against HEAD. --json is
    --format json.
    """
    from ..git.audit import compare_versions
    from ..git.changes import render_markdown, render_text

    if staged and rev_range:
        raise UserError("give REV_RANGE or --staged, not both")
    if rev_to is not None:
        assert rev_range is not None  # click fills the arguments in order
        if ".." in rev_range or ".." in rev_to:
            raise UserError(f"give A..B or A B, not {rev_range} {rev_to}")
        rev_range = f"{rev_range}..{rev_to}"
    result = compare_versions(_top(ctx), rev_range, staged=staged)
    if as_json or fmt == "json":
        print_json(result.to_dict())
    elif fmt == "markdown":
        click.echo(render_markdown(result.changes, result.title), nl=False)
    else:
        click.echo(f"{result.title}: {result.old.describe()} -> {result.new.describe()}")
        click.echo(render_text(result.changes), nl=False)
    if exit_code and result.changes:
        ctx.exit(1)


def _repo_path(top: Path, start: Path, path: str) -> str:
    """PATH (relative to where we run) as git names it: relative to the top, with /."""
    full = Path(os.path.abspath(start / path))
    try:
        relative = full.relative_to(top)
    except ValueError:
        raise UserError(f"{path}: outside the repository {top}") from None
    return relative.as_posix() or "."


@cli.command(name="log")
@click.argument("path", required=False)
@click.option("--since", metavar="DATE", help="Only commits after DATE (any date git reads).")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="At most N commits.")
@click.option("--grep", metavar="TEXT", help="Only commits whose message contains TEXT.")
@json_option
@click.pass_context
def log_command(
    ctx: click.Context,
    path: str | None,
    since: str | None,
    limit: int | None,
    grep: str | None,
    as_json: bool,
) -> None:
    """The commits that changed the brain, newest first, with what each changed.

    Every commit that touched .voyager/ (or PATH, a file followed through renames, or a
    folder), with its sha, author, date and subject, and a summary of its changes to
    the brain files: +2 decisions, ~1 fact, +5 observations, compacted 40 -> 1 summary,
    +3 learnings, 1 tombstone. A merge shows what it brought to its first parent.
    """
    from ..git.audit import history
    from ..git.changes import kind_of

    top = _top(ctx)
    target = _repo_path(top, _start(ctx), path) if path else ".voyager"
    follow = path is not None and not (top / target).is_dir()
    with history(top, [target], since=since, limit=limit, grep=grep, follow=follow) as records:
        if as_json:
            print_json([record.to_dict() for record in records])
            return
        for record in records:
            click.echo(record.commit.describe())
            summary = record.changes.summary() or "no change to the brain's content"
            others = [f for f in record.files if kind_of(f) is None]
            if others and not record.changes:
                summary += f" ({', '.join(others)})"
            click.echo(f"    {'merge: ' if record.merge else ''}{summary}")


@cli.command(name="blame")
@click.argument("kind")
@click.argument("key")
@json_option
@click.pass_context
def blame_command(ctx: click.Context, kind: str, key: str, as_json: bool) -> None:
    """Which commit introduced one item of the brain, and which last changed it.

    \b
    KIND and KEY:
      decision    a decision's `what`        blame decision "Use PostgreSQL over MongoDB"
      keyFile     a key file's `path`        blame keyFile src/index.ts
      knownIssue  a known issue's `issue`    blame knownIssue "pg import fails in ESM"
      entry       a brain.md entry's heading or some of its text
                                             blame entry "Observation — 2026-03-21T14:30:00Z"
      memory      a memory entry's id        blame memory 9ee01cf1
    """
    from ..git.blame import blame

    result = blame(_top(ctx), kind, key)
    if as_json:
        print_json(result.to_dict())
        return
    click.echo(f"{result.kind} {result.key!r} ({result.path})")
    rows = []
    if result.introduced is not None:
        rows.append(("introduced", result.introduced))
    if result.last_changed is not None and result.last_changed != result.introduced:
        label = "removed" if result.last_changed.op == "remove" else "last changed"
        rows.append((label, result.last_changed))
    for label, event in rows:
        click.echo(f"{label:<13} {event.commit.describe()}")
    if result.uncommitted is not None:
        verb = {"add": "added", "change": "changed", "remove": "removed"}[result.uncommitted]
        click.echo(f"{'working tree':<13} {verb}, not committed yet")


@cli.command(name="commit")
@json_option
@click.pass_context
def commit_command(ctx: click.Context, as_json: bool) -> None:
    """Commit the brain files, and only them, with a message that says what changed.

    brain.md, brain.json and memory.jsonl are committed with `git commit --only`: other
    staged work stays staged. Nothing is committed during a merge, rebase, cherry-pick
    or revert, or when the brain files have no changes. The message reads like
    `brain: session 12 (+3 observations, +1 decision)`. The session-end hook does the
    same when config.toml says auto_commit = true.
    """
    from ..git.autocommit import commit_brain_files

    result = commit_brain_files(_top(ctx))
    if as_json:
        print_json(result.to_dict())
    elif result.sha is None:
        click.echo(f"nothing committed: {result.skipped}")
    else:
        click.echo(f"[{result.sha[:8]}] {result.message}")
        click.echo(f"committed {', '.join(result.files)}")


# -- agent integrations: hook, install ------------------------------------------------


@cli.group()
def hook() -> None:
    """Hook commands that agents call (they never fail the agent: exit 0, one line on
    stderr when something is wrong)."""


@hook.command(name="claude")
@click.argument("event", type=click.Choice(["session-start", "stop", "pre-compact", "session-end"]))
def hook_claude(event: str) -> None:
    """Claude Code lifecycle hooks, reading the hook's JSON on stdin.

    \b
    session-start  load; print the context as additionalContext
    stop           record a loop_status entry for the turn
    pre-compact    compact brain.md
    session-end    persist; count the session in brain.json; commit the brain
                   files when config.toml says auto_commit = true
    """
    from ..integrations.claude import run

    raise SystemExit(run(event))


@cli.group()
def install() -> None:
    """Install voyager-brain into an agent's settings, or into git."""


@install.command(name="claude")
@click.option("--user", is_flag=True, help="Into ~/.claude/settings.json instead of the project's.")
@click.option("--uninstall", is_flag=True, help="Remove voyager-brain's hooks (and only those).")
@click.pass_context
def install_claude(ctx: click.Context, user: bool, uninstall: bool) -> None:
    """Add the lifecycle hooks to .claude/settings.json (merged, idempotent)."""
    from ..integrations.claude_install import install_claude_hooks

    if user:
        path = Path.home() / ".claude" / "settings.json"
    else:
        start = _start(ctx)
        top = repo.find_top(start)
        if top is None:
            raise NotInRepositoryError(start.absolute())
        path = top / ".claude" / "settings.json"
    changed = install_claude_hooks(path, uninstall=uninstall)
    verb = "removed from" if uninstall else "installed in"
    if changed:
        click.echo(f"voyager-brain hooks {verb} {path}")
    else:
        click.echo(f"{path} already {'has no' if uninstall else 'has the'} voyager-brain hooks")


# -- git ----------------------------------------------------------------------------------


@cli.command(name="merge-driver", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("path")
def merge_driver(base: str, ours: str, theirs: str, path: str) -> None:
    """git's merge driver for the brain files (git runs it; `install git` registers it).

    BASE, OURS and THEIRS are the three versions git hands over (%O %A %B); the merged
    file is written over OURS. PATH (%P) is the file's path in the repository; its name
    picks the merge: brain.md, brain.json or memory.jsonl. Never writes conflict markers.
    Exits 1, leaving OURS untouched and git's conflict for a person, when a version
    cannot be read.
    """
    from ..git.merge import run_driver

    raise SystemExit(run_driver([base, ours, theirs, path]))


@install.command(name="git")
@click.option(
    "--uninstall", is_flag=True, help="Remove the driver's lines and git config (and only those)."
)
@click.pass_context
def install_git(ctx: click.Context, uninstall: bool) -> None:
    """Register the merge driver for the brain files with git (merged, idempotent).

    Adds `merge=voyager-brain` lines for .voyager/brain.md, brain.json and memory.jsonl
    to .gitattributes (commit it: every clone needs it), and sets
    merge.voyager-brain.name and merge.voyager-brain.driver in this clone's own git
    config (run this once in every clone). git then runs `voyager-brain merge-driver`
    from the PATH whenever both sides of a merge changed a brain file.
    """
    from ..git import setup as gitsetup

    start = _start(ctx)
    top = repo.find_top(start)
    if top is None:
        raise NotInRepositoryError(start.absolute())
    lines, keys = gitsetup.install(top, uninstall=uninstall)
    attributes = _rel(top / ".gitattributes")
    verb = "removed" if uninstall else "added"
    if lines:
        paths = ", ".join(line.split()[0] for line in lines)
        click.echo(f"{attributes}: {verb} merge={gitsetup.DRIVER} for {paths}")
    if keys:
        where = "" if uninstall else " (this clone only)"
        click.echo(f"git config: {verb.replace('added', 'set')} {', '.join(keys)}{where}")
    if not lines and not keys:
        already = "not registered" if uninstall else "already registered"
        click.echo(f"the {gitsetup.DRIVER} merge driver is {already}; nothing to do")
    elif lines and not uninstall:
        click.echo(
            f"next: commit {attributes}; in every other clone, run voyager-brain install git"
        )
    if not uninstall and not gitsetup.executable_found():
        click.echo(
            f"warning: `{gitsetup.EXECUTABLE}` is not on this PATH, and git runs the driver "
            "from the PATH: activate the environment it is installed in, or use pipx",
            err=True,
        )


# -- doctor -------------------------------------------------------------------------------


@cli.command()
@click.option("--repair", is_flag=True, help="Fix what can be fixed (see above).")
@json_option
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the brain files and explain any problem.

    With --repair: a brain.md that cannot be read is moved aside to a timestamped
    .corrupt copy and a fresh one is started; missing .voyager files are created;
    leftover temporary files are removed; secrets found in brain.md are redacted; the
    merge driver that .gitattributes names is registered in this clone's git config.
    Exits 1 when problems remain.
    """
    from ..doctor import run_checks

    start = _start(ctx)
    top = repo.find_top(start)
    if top is None:
        raise NotInRepositoryError(start.absolute())
    findings = run_checks(top, repair=repair)
    problems = [f for f in findings if f.level == "error" and not f.repaired]
    if as_json:
        print_json({"ok": not problems, "findings": [f.to_dict() for f in findings]})
    else:
        for f in findings:
            mark = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}[f.level]
            if f.repaired:
                mark = "done"
            click.echo(f"{mark}  {f.message}")
            if f.hint and not f.repaired:
                click.echo(f"      {f.hint}")
    if problems:
        ctx.exit(1)


# -- demo ---------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run in this folder (created, and made a git repository if it is not one).",
)
def demo(directory: Path | None) -> None:
    """Run a scripted agent session on a scratch repository and show what it left.

    Two sessions go through the whole lifecycle (load, updates, compact, persist); then
    the status and the `git diff` of brain.md are printed.
    """
    from ..demo import run_demo

    run_demo(directory, click.echo)


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the `voyager-brain` console script."""
    cli.main(args=argv, prog_name="voyager-brain")
    raise SystemExit(0)  # pragma: no cover - cli.main always exits

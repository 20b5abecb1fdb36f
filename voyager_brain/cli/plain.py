"""The read commands a person (or an agent) runs most, answered without click: `status`,
`show` and `rules list` (each with or without ``--json``) and `recall WORDS...`.

Importing click and the command modules costs a process about as much as the
interpreter's own start; these commands' work is smaller. `quick` answers them in their
plainest form, with the text the click commands print (they print through the same
functions here); any option it does not know, and any failure, is handed to the click
command line, which runs the command and says what went wrong.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..session.manager import BrainManager


def json_text(data: Any) -> str:
    """What ``--json`` prints."""
    import json

    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def relative(path: Path) -> str:
    """`path` from the current folder when it is under it, else as it is."""
    from pathlib import Path

    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def status_text(bm: BrainManager, data: dict[str, Any]) -> str:
    """`status`: one line per row of `session.reports.status_report`'s `data`."""
    from pathlib import Path

    from ..session.model import ENTRY_TYPES

    entries = data["entries"]
    kinds = ", ".join(f"{entries[t]} {t}" for t in ENTRY_TYPES if entries[t])
    rows = [
        ("brain", relative(bm.path) + ("" if data["exists"] else " (not created yet)")),
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
            relative(Path(st["path"]))
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
    if data["ignored_keys"]:
        path = relative(Path(data["ignored_keys"][0].rsplit(": ", 1)[0]))
        keys = ", ".join(entry.rsplit(": ", 1)[1] for entry in data["ignored_keys"])
        rows.append(("ignored", f"{keys} in {path} (not trusted; `voyager-brain trust`)"))
    return "".join(f"{name:<10} {value}\n" for name, value in rows)


def rule_line(rule: Any) -> str:
    """One rule in `rules list`."""
    what = f"/{rule.pattern}/" if rule.type == "regex" else "semantic"
    tool = rule.tool or "every tool"
    state = "" if rule.active else "  (disabled)"
    return f"{rule.id:>4}  {rule.action:<5}  {tool:<12}  {what}  {rule.description}{state}"


def recall_text(text: str, hits: list[Any]) -> str:
    """`recall`'s matches, best first."""
    if not hits:
        return f"no match for {text!r}\n"
    lines = []
    for hit in hits:
        where = f"{hit.source} {hit.kind}"
        when = f" {hit.date}" if hit.date and hit.date not in hit.key else ""
        lines.append(f"[{where}] {hit.key}{when}\n    {hit.excerpt}\n")
    return "".join(lines)


def quick(argv: list[str]) -> tuple[str, str | None] | None:
    """The output of the command `argv`, and the line it says on stderr first (the
    ignored config.toml keys, as the click group says them), when it is one `quick`
    answers; None otherwise, or when anything goes wrong (the click command line then
    runs it and reports)."""
    command, *rest = argv
    as_json = rest[-1:] == ["--json"]
    if as_json:
        rest = rest[:-1]
    try:
        if command == "rules" and rest == ["list"]:
            return _rules_list(as_json), _notice()
        if command == "recall" and rest and not as_json:
            if any(word.startswith("-") for word in rest) or not " ".join(rest).strip():
                return None
            text = " ".join(rest)
            return recall_text(text, _manager().recall(text, 10)), _notice()
        if rest:
            return None
        if command == "status":
            from ..session.reports import status_report

            bm = _manager()
            data = status_report(bm)
            return (json_text(data) if as_json else status_text(bm, data)), None
        if command == "show":
            from ..state.show import render_state

            state = _manager().state.data
            return (json_text(state) if as_json else render_state(state, None)), _notice()
    except Exception:
        return None
    return None


def _manager() -> BrainManager:
    """The BrainManager of the repository of the current folder; an error outside one."""
    from pathlib import Path

    from ..session.manager import BrainManager
    from ..worktree import find_top

    if find_top(os.getcwd()) is None:
        raise LookupError("not in a repository")
    return BrainManager(Path.cwd())


def _rules_list(as_json: bool) -> str:
    from ..guard.db import connect
    from ..guard.rules import list_rules

    found = list_rules(connect())
    if as_json:
        return json_text([r.to_dict() for r in found])
    if not found:
        return "no rules\n"
    return "".join(rule_line(rule) + "\n" for rule in found)


def _notice() -> str | None:
    from ..config import ignored_keys_notice

    return ignored_keys_notice(os.getcwd())

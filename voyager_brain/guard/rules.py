"""Guard rules, rule sets and projects in history.db (seed 003).

A rule is a regex (``pattern``) or a semantic match (its ``description``), for one tool
or every tool, with an action: ``block``, ``warn`` or ``log``. Rules belong to a rule set
or to none (global: they apply everywhere); a project is assigned at most one rule set,
and its rules are that set's plus the global ones (the seed's key query).
"""

from __future__ import annotations

from ..errors import RuleError
from ..value import Record
from .db import transaction
from .patterns import engine_for, save_plans
from .record import project_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

ACTIONS = ("block", "warn", "log")
TYPES = ("regex", "semantic")
#: The seed's columns of ``rules``, in its order: what `--json` prints.
COLUMNS = (
    "id",
    "rule_set_id",
    "type",
    "pattern",
    "description",
    "tool",
    "action",
    "active",
    "priority",
    "problem",
    "solution",
    "source_message_id",
    "created_at",
)


class Rule(Record):
    """One row of ``rules`` (the seed's columns; a database may hold more)."""

    id: int
    rule_set_id: int | None
    type: str
    pattern: str | None
    description: str
    tool: str | None
    action: str
    active: int
    priority: int
    problem: str | None
    solution: str | None
    source_message_id: int | None
    created_at: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Rule:
        """A row selected with `_SELECT` (the seed's columns, defaults filled in, and
        Causeway's `patterns` folded into `pattern`)."""
        values = tuple(row)
        rule = cls._make(values[: len(COLUMNS)])
        patterns = values[len(COLUMNS)]
        if patterns:
            rule = rule._replace(pattern=with_patterns(rule.pattern, patterns))
        return rule

    def to_dict(self) -> dict[str, Any]:
        return dict(self._asdict())


# A database of the original tool may hold NULL where the seed has a default.
_DEFAULTS = {"type": "'regex'", "action": "'block'", "active": "1", "priority": "0"}
_SELECT = (
    "SELECT "
    + ", ".join(f"COALESCE(r.{c}, {_DEFAULTS[c]})" if c in _DEFAULTS else f"r.{c}" for c in COLUMNS)
    + ", r.patterns FROM rules r"
)
_ORDER = " ORDER BY r.priority DESC, r.id"


def with_patterns(pattern: str | None, patterns: str) -> str | None:
    """One regex for a Causeway rule: its `pattern` (case-sensitive) or any of its
    `patterns` (a JSON list, matched ignoring case; a single value counts as a list of
    one). As Causeway does, a `patterns` that is not JSON, or holds a regex that does
    not compile, matches nothing."""
    from .. import cjson

    try:
        items = cjson.loads(patterns)
    except (ValueError, RecursionError):
        return pattern
    items = items if isinstance(items, list) else [items]
    if not items or not all(isinstance(item, str) and item for item in items):
        return pattern
    import re  # only a database Causeway wrote rules into comes here

    try:
        for item in items:
            re.compile(item)
    except re.error:
        return pattern
    either = "(?i:" + "|".join(f"(?:{item})" for item in items) + ")"
    return f"(?:{pattern})|{either}" if pattern else either


def check_fields(
    *, description: str, pattern: str | None, type: str, action: str, tool: str | None
) -> None:
    """`RuleError` when a rule's fields are not acceptable (a regex that is invalid or
    could stall a check included)."""
    if not description or not description.strip():
        raise RuleError("description: expected a non-empty text (what the rule is for)")
    if type not in TYPES:
        raise RuleError(f"type: expected one of {', '.join(TYPES)}, got {type!r}")
    if action not in ACTIONS:
        raise RuleError(f"action: expected one of {', '.join(ACTIONS)}, got {action!r}")
    if tool is not None and not tool.strip():
        raise RuleError("tool: expected a tool name (Bash, Write, ...) or none for every tool")
    if type == "regex":
        if not pattern:
            raise RuleError("pattern: a regex rule needs a pattern (--pattern REGEX)")
        engine_for(pattern)


def rule_set_id(db: sqlite3.Connection, name: str) -> int:
    """The id of the rule set `name`; `RuleError` when there is none."""
    row = db.execute("SELECT id FROM rule_sets WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise RuleError(
            f"no rule set named {name!r}; create it with `voyager-brain rules set create {name}`"
        )
    return int(row[0])


def add_rule(
    db: sqlite3.Connection,
    *,
    description: str,
    pattern: str | None = None,
    type: str = "regex",
    action: str = "block",
    tool: str | None = None,
    priority: int = 0,
    problem: str | None = None,
    solution: str | None = None,
    rule_set: str | None = None,
    source_message_id: int | None = None,
) -> Rule:
    """Add a rule (to `rule_set` by name, else global) and return it. A semantic rule's
    embedding is computed here, never when a tool call is checked."""
    check_fields(description=description, pattern=pattern, type=type, action=action, tool=tool)
    # Free text is redacted before it is stored: rules are listed, shown on the dashboard
    # and told to agents. The pattern is not free text (a regex); it stays as given.
    description, problem, solution = redacted(description, problem, solution)
    with transaction(db):
        set_id = rule_set_id(db, rule_set) if rule_set is not None else None
        cur = db.execute(
            "INSERT INTO rules (rule_set_id, type, pattern, description, tool, action, active,"
            " priority, problem, solution, source_message_id)"
            " VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)",
            (
                set_id,
                type,
                pattern,
                description,
                tool,
                action,
                priority,
                problem,
                solution,
                source_message_id,
            ),
        )
        rule = get_rule(db, int(cur.lastrowid or 0))
        if type == "semantic":
            _embed(db, rule)
    save_plans()
    return rule


def redacted(*texts: str | None) -> tuple[Any, ...]:
    """`texts` with their secrets redacted (None stays None): what a rule stores."""
    from ..redact import redact

    return tuple(text if text is None else redact(text) for text in texts)


class PatternOnSemanticRule(RuleError):
    """A rule given a pattern and the type semantic (its description is what matches)."""


def add_given_rule(
    *,
    description: str,
    pattern: str | None,
    type: str | None,
    action: str,
    tool: str | None,
    priority: int,
    problem: str | None,
    solution: str | None,
    rule_set: str | None,
) -> Rule:
    """Add a rule as a person gives it (`rules add`, the MCP tool ``rules_add``) to
    history.db: without a `type`, a regex rule when there is a pattern and a semantic
    one when there is none. `PatternOnSemanticRule` for a semantic rule with a pattern
    (its message names the parameter ``pattern``; the command line says ``--pattern``)."""
    from .db import connect

    kind = type or ("regex" if pattern is not None else "semantic")
    if kind == "semantic" and pattern is not None:
        raise PatternOnSemanticRule(
            "pattern: a semantic rule matches its description; drop the pattern"
        )
    return add_rule(
        connect(),
        description=description,
        pattern=pattern,
        type=kind,
        action=action,
        tool=tool,
        priority=priority,
        problem=problem,
        solution=solution,
        rule_set=rule_set,
    )


#: The fields `edit_rule` changes, besides the regexes.
EDITABLE = ("description", "action", "tool", "priority", "problem", "solution")


def edit_rule(
    db: sqlite3.Connection,
    rule_id: int,
    *,
    patterns: Sequence[str] | None = None,
    **changes: Any,
) -> Rule:
    """Change a rule in place (its id, history and triggers stay) and return it.

    `changes` are `EDITABLE` fields (None for `tool`, `problem` or `solution` clears it);
    `patterns` replaces the rule's regexes: one is kept in ``pattern`` (case-sensitive),
    several in Causeway's ``patterns`` (a JSON list: any one matching, ignoring case), so
    that Causeway reads the rule as it is shown here. A rule loaded from a project's
    rules.toml is refused (its next sync would undo the edit): that file is where it
    changes."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise RuleError(f"{', '.join(sorted(unknown))}: not a field a rule edit changes")
    from .teamrules import MARKER

    with transaction(db):
        rule = get_rule(db, rule_id)
        team = db.execute(
            "SELECT description FROM rule_sets WHERE id = ? AND description LIKE ?",
            (rule.rule_set_id, MARKER + "%"),
        ).fetchone()
        if team is not None:
            where = str(team[0])[len(MARKER) :]
            raise RuleError(f"rule {rule_id} is a team rule from {where}: edit it there")
        row = db.execute("SELECT pattern, patterns FROM rules WHERE id = ?", (rule_id,)).fetchone()
        pattern, stored = row[0], row[1]
        if patterns is not None:
            if rule.type == "semantic":
                raise RuleError("pattern: a semantic rule matches its description; it has none")
            if not patterns:
                raise RuleError("pattern: a regex rule needs at least one")
            for regex in patterns:
                check_fields(
                    description="-", pattern=regex, type="regex", action="block", tool=None
                )
            from .. import cjson

            pattern, stored = (
                (patterns[0], None) if len(patterns) == 1 else (None, cjson.dumps(list(patterns)))
            )
        new = {**rule.to_dict(), **changes}
        if "description" in changes or "problem" in changes or "solution" in changes:
            new["description"], new["problem"], new["solution"] = redacted(
                new["description"], new["problem"], new["solution"]
            )
        # The new regexes were checked above; a rule's stored ones stay as they are.
        check_fields(
            description=new["description"],
            pattern=None,
            type="semantic",
            action=new["action"],
            tool=new["tool"],
        )
        db.execute(
            "UPDATE rules SET pattern = ?, patterns = ?, description = ?, action = ?, tool = ?,"
            " priority = ?, problem = ?, solution = ? WHERE id = ?",
            (pattern, stored, *(new[field] for field in EDITABLE), rule_id),
        )
        edited = get_rule(db, rule_id)
        if rule.type == "semantic" and edited.description != rule.description:
            _embed(db, edited)
    save_plans()
    return edited


def _embed(db: sqlite3.Connection, rule: Rule) -> None:
    from .embeddings import embed_rule

    embed_rule(db, rule.id, rule.description)


def get_rule(db: sqlite3.Connection, rule_id: int) -> Rule:
    row = db.execute(_SELECT + " WHERE r.id = ?", (rule_id,)).fetchone()
    if row is None:
        raise RuleError(f"no rule with id {rule_id} (see `voyager-brain rules list --all`)")
    return Rule.from_row(row)


def list_rules(
    db: sqlite3.Connection, *, project: str | None = None, include_inactive: bool = False
) -> list[Rule]:
    """Every rule, or with `project` (an absolute path) the seed's "all rules for a
    project": its rule set's and the global ones. Active rules only unless asked."""
    where: list[str] = []
    params: list[Any] = []
    sql = _SELECT
    if project is not None:
        pid = project_id(db, project, create=False)
        sql += " LEFT JOIN rule_sets rs ON r.rule_set_id = rs.id"
        sql += " LEFT JOIN projects p ON p.rule_set_id = rs.id"
        where.append("(p.id = ? OR r.rule_set_id IS NULL)")
        params.append(pid if pid is not None else -1)
    if not include_inactive:
        where.append("r.active = 1")
    if where:
        sql += " WHERE " + " AND ".join(where)
    return [Rule.from_row(row) for row in db.execute(sql + _ORDER, params)]


def set_active(db: sqlite3.Connection, rule_id: int, active: bool) -> Rule:
    with transaction(db):
        get_rule(db, rule_id)
        db.execute("UPDATE rules SET active = ? WHERE id = ?", (1 if active else 0, rule_id))
        return get_rule(db, rule_id)


def trigger_count(db: sqlite3.Connection, rule_id: int) -> int:
    row = db.execute("SELECT COUNT(*) FROM rule_triggers WHERE rule_id = ?", (rule_id,)).fetchone()
    return int(row[0])


def remove_rule(db: sqlite3.Connection, rule_id: int) -> str:
    """Delete a rule, or disable it when it has triggers (so the history stays whole).
    Returns ``"removed"`` or ``"disabled"``."""
    with transaction(db):
        get_rule(db, rule_id)
        if trigger_count(db, rule_id):
            db.execute("UPDATE rules SET active = 0 WHERE id = ?", (rule_id,))
            return "disabled"
        from .embeddings import delete_embedding

        delete_embedding(db, rule_id)
        db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
    return "removed"


def project_folder(folder: Path) -> str:
    """The project the folder `folder` belongs to, as rules name it (its repository's
    top, else the folder itself); `RuleError` when it is no folder."""
    from .record import project_root

    if not folder.is_dir():
        raise RuleError(f"{folder}: no such folder")
    return project_root(str(folder))


# -- rule sets --------------------------------------------------------------------------


def create_rule_set(db: sqlite3.Connection, name: str, description: str | None = None) -> int:
    if not name.strip():
        raise RuleError("rule set name: expected a non-empty name")
    (description,) = redacted(description)
    with transaction(db):
        if db.execute("SELECT 1 FROM rule_sets WHERE name = ?", (name,)).fetchone():
            raise RuleError(f"a rule set named {name!r} exists already")
        cur = db.execute(
            "INSERT INTO rule_sets (name, description) VALUES (?, ?)", (name, description)
        )
    return int(cur.lastrowid or 0)


def assign_rule_set(db: sqlite3.Connection, name: str | None, project: str) -> None:
    """Make `name` the rule set of the project at `project` (added if unknown); None
    leaves the project with global rules only."""
    with transaction(db):
        set_id = rule_set_id(db, name) if name is not None else None
        pid = project_id(db, project)
        db.execute("UPDATE projects SET rule_set_id = ? WHERE id = ?", (set_id, pid))


def list_rule_sets(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every rule set with its rule count and the projects assigned to it."""
    sets = []
    for row in db.execute(
        "SELECT rs.id, rs.name, rs.description, rs.created_at,"
        " (SELECT COUNT(*) FROM rules r WHERE r.rule_set_id = rs.id) AS rules"
        " FROM rule_sets rs ORDER BY rs.name"
    ):
        item = dict(row)
        item["projects"] = [
            p[0]
            for p in db.execute(
                "SELECT path FROM projects WHERE rule_set_id = ? ORDER BY path", (row["id"],)
            )
        ]
        sets.append(item)
    return sets

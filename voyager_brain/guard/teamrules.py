"""Team rules: a project's tracked ``.voyager/rules.toml``, loaded into history.db.

The file holds ``[[rules]]`` tables with the columns of a rule::

    [[rules]]
    description = "Use uv, never pip"
    pattern = '\\bpip\\s+install\\b'
    tool = "Bash"
    action = "block"          # block (default), warn or log
    priority = 10
    problem = "pip installs outside the lock file"
    solution = "uv add PACKAGE"
    # type = "semantic" matches the description by meaning instead of a pattern

Its rules go into a rule set named after the project (the folder's name) that is
assigned to the project, and are synced again whenever the file changes: a rule that
left the file is removed, or disabled when it has fired (the history stays whole). A
rule the file gets wrong (no description, a bad regex, an unknown action) is reported in
one line naming the file and the rule, and the others still apply; a file that is not
valid TOML leaves the rules loaded before in place.
"""

from __future__ import annotations

import os
import time

from .. import cjson
from ..errors import ConfigError, RuleError
from ..paths import cache_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

FILE = os.path.join(".voyager", "rules.toml")
MARKER = "team rules from "
FIELDS = ("description", "pattern", "type", "action", "tool", "priority", "problem", "solution")
#: The most a rules.toml may hold, in bytes and in rules. A tool call's check reads,
#: syncs and matches them all within the agent's hook timeout (10 s), past which the
#: agent runs the call unchecked: a cloned file of 100,000 rules (8 MB) took 46 s, then
#: 9 s a call. A team's rules are far fewer; a file over either is refused whole.
MAX_BYTES = 1 << 20
MAX_RULES = 1000
#: How long after its last write rules.toml may still be being written (`sync_team_rules`).
SETTLE_NS = 2_000_000_000


def _stamp_file(path: str) -> str:
    import zlib  # not hashlib: its import costs every tool call more than the check

    return os.path.join(cache_folder(), f"rules-toml-{zlib.crc32(path.encode()):08x}.json")


def sync_team_rules(
    db: sqlite3.Connection, project: str, *, force: bool = False, wait: float | None = None
) -> list[str]:
    """Load the project's rules.toml when it changed since the last sync (or `force`).
    Returns one line per problem found; an empty list when all is well. `wait`: how long
    to wait for history.db's write lock (`sqlite3.OperationalError` past it)."""
    path = os.path.join(project, FILE)
    try:
        st = os.stat(path)
    except OSError:
        return []
    stamp = [path, st.st_mtime_ns, st.st_size, st.st_ino]
    stamp_file = _stamp_file(path)
    if not force:
        try:
            with open(stamp_file, encoding="utf-8") as f:
                if cjson.loads(f.read()) == stamp:
                    return []
        except (OSError, ValueError):
            pass
    # A file written in the last moments may still be being written (an editor, `git
    # checkout` and `cat > rules.toml` truncate it first): read empty or cut short, it
    # would remove rules that still hold. So its rules are added but none removed, and
    # the next hook after the moment syncs it whole. A hook never guards less for it.
    settling = not force and time.time_ns() - st.st_mtime_ns < SETTLE_NS
    problems = load_team_rules(db, project, path, wait=wait, remove=not settling)
    if settling:
        return problems
    if not any(p.endswith("the rules loaded before still apply") for p in problems):
        try:
            os.makedirs(os.path.dirname(stamp_file), exist_ok=True)
            with open(stamp_file, "w", encoding="utf-8") as f:
                f.write(cjson.dumps(stamp))
        except OSError:
            pass  # the sync runs again next time: slower, not wrong
    return problems


def read_team_rules(path: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid rules of the file at `path`, and one line per problem."""
    from ..tomlfile import read_toml
    from .patterns import save_plans
    from .rules import check_fields, redacted

    kept = "the rules loaded before still apply"
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0  # missing or unreadable: the reader says which
    if size > MAX_BYTES:
        return [], [f"{path}: {size} bytes, more than the {MAX_BYTES} a check can read; {kept}"]
    try:
        # config.toml's reader: one place says what is wrong with a TOML file (its line,
        # bytes that are not UTF-8, nesting too deep to read).
        data = read_toml(path)
    except ConfigError as exc:
        return [], [f"{exc}; {kept}"]
    entries = data.get("rules", [])
    if not isinstance(entries, list):
        return [], [f"{path}: rules: expected [[rules]] tables; {kept}"]
    if len(entries) > MAX_RULES:
        return [], [
            f"{path}: {len(entries)} rules, more than the {MAX_RULES} a check can match"
            f" in time; {kept}"
        ]
    valid: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, entry in enumerate(entries, 1):
        name = f"rule {n}"
        try:
            if not isinstance(entry, dict):
                raise RuleError("expected a table")
            if isinstance(entry.get("description"), str):
                name += f" ({redacted(entry['description'])[0]!r})"
            unknown = sorted(set(entry) - set(FIELDS))
            if unknown:
                raise RuleError(f"unknown field {unknown[0]!r}; expected {', '.join(FIELDS)}")
            rule = {
                "description": entry.get("description"),
                "pattern": entry.get("pattern"),
                "type": entry.get("type", "regex"),
                "action": entry.get("action", "block"),
                "tool": entry.get("tool"),
                "priority": entry.get("priority", 0),
                "problem": entry.get("problem"),
                "solution": entry.get("solution"),
            }
            for key in ("description", "pattern", "type", "action", "tool", "problem", "solution"):
                if rule[key] is not None and not isinstance(rule[key], str):
                    raise RuleError(f"{key}: expected a string")
            priority = rule["priority"]
            if (
                not isinstance(priority, int)
                or isinstance(priority, bool)
                # SQLite's integers are 64-bit: a larger one raised inside the check.
                or not -(2**63) <= priority < 2**63
            ):
                raise RuleError(f"priority: expected an integer from {-(2**63)} to {2**63 - 1}")
            check_fields(
                description=rule["description"] or "",
                pattern=rule["pattern"],
                type=rule["type"],
                action=rule["action"],
                tool=rule["tool"],
            )
        except RuleError as exc:
            problems.append(f"{path}: {name}: {exc}; skipped, the other rules apply")
            continue
        # Stored redacted, as `rules add` stores them (the same file gives the same rows).
        rule["description"], rule["problem"], rule["solution"] = redacted(
            rule["description"], rule["problem"], rule["solution"]
        )
        valid.append(rule)
    save_plans()  # worked out by check_fields: no check has to parse them again
    return valid, problems


def load_team_rules(
    db: sqlite3.Connection,
    project: str,
    path: str,
    *,
    wait: float | None = None,
    remove: bool = True,
) -> list[str]:
    """Make the project's team rule set hold exactly the valid rules of `path` (with
    `remove` false: at least them, the others kept)."""
    from .db import transaction

    wanted, problems = read_team_rules(path)
    if problems and problems[0].endswith("the rules loaded before still apply"):
        return problems
    with transaction(db, wait=wait):
        return _load(db, project, path, wanted, problems, remove=remove)


def sync_in(db: sqlite3.Connection, project: str) -> list[str]:
    """`load_team_rules` inside the caller's transaction (a queued check that names a
    rule of the file not synced yet, `guard.spool`)."""
    path = os.path.join(project, FILE)
    wanted, problems = read_team_rules(path)
    if problems and problems[0].endswith("the rules loaded before still apply"):
        return problems
    return _load(db, project, path, wanted, problems)


def _load(
    db: sqlite3.Connection,
    project: str,
    path: str,
    wanted: list[dict[str, Any]],
    problems: list[str],
    *,
    remove: bool = True,
) -> list[str]:
    from . import record

    name = os.path.basename(project.rstrip("/")) or project
    description = MARKER + path
    row = db.execute("SELECT id, description FROM rule_sets WHERE name = ?", (name,)).fetchone()
    if row is None:
        set_id = int(
            db.execute(
                "INSERT INTO rule_sets (name, description) VALUES (?, ?)", (name, description)
            ).lastrowid
            or 0
        )
    elif not str(row[1] or "").startswith(MARKER):
        return [
            *problems,
            f"{path}: a rule set named {name!r} exists and does not hold this file's rules;"
            " rename it (the team rules are not loaded)",
        ]
    else:
        set_id = int(row[0])
        db.execute("UPDATE rule_sets SET description = ? WHERE id = ?", (description, set_id))
    pid = record.project_id(db, project)
    db.execute("UPDATE projects SET rule_set_id = ? WHERE id = ?", (set_id, pid))
    _apply(db, set_id, wanted, remove=remove)
    return problems


def _key(rule: Any) -> tuple[Any, ...]:
    return (rule["type"], rule["pattern"], rule["description"], rule["tool"])


def _apply(
    db: sqlite3.Connection, set_id: int, wanted: list[dict[str, Any]], *, remove: bool = True
) -> None:
    existing = {
        _key(row): row
        for row in db.execute(
            "SELECT id, type, pattern, description, tool FROM rules WHERE rule_set_id = ?",
            (set_id,),
        )
    }
    kept: set[int] = set()
    for rule in wanted:
        row = existing.get(_key(rule))
        if row is not None:
            kept.add(int(row["id"]))
            db.execute(
                "UPDATE rules SET action = ?, priority = ?, problem = ?, solution = ?, active = 1"
                " WHERE id = ?",
                (rule["action"], rule["priority"], rule["problem"], rule["solution"], row["id"]),
            )
            continue
        cur = db.execute(
            "INSERT INTO rules (rule_set_id, type, pattern, description, tool, action, active,"
            " priority, problem, solution) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (
                set_id,
                rule["type"],
                rule["pattern"],
                rule["description"],
                rule["tool"],
                rule["action"],
                rule["priority"],
                rule["problem"],
                rule["solution"],
            ),
        )
        new_id = int(cur.lastrowid or 0)
        kept.add(new_id)
        if rule["type"] == "semantic":
            from .embeddings import embed_rule

            embed_rule(db, new_id, rule["description"])
    for row in existing.values():
        rule_id = int(row["id"])
        if rule_id in kept or not remove:
            continue
        fired = db.execute("SELECT 1 FROM rule_triggers WHERE rule_id = ? LIMIT 1", (rule_id,))
        if fired.fetchone():
            db.execute("UPDATE rules SET active = 0 WHERE id = ?", (rule_id,))
        else:
            from .embeddings import delete_embedding

            delete_embedding(db, rule_id)
            db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))


def find_team_rule(db: sqlite3.Connection, project: str, key: tuple[Any, ...]) -> int | None:
    """The id of the rule of `project`'s team rule set with this type, pattern,
    description and tool (`_key`); None when it has none."""
    rule_type, pattern, description, tool = key
    row = db.execute(
        "SELECT r.id FROM rules r JOIN rule_sets s ON s.id = r.rule_set_id"
        " WHERE s.name = ? AND s.description LIKE ? AND r.type IS ? AND r.pattern IS ?"
        " AND r.description IS ? AND r.tool IS ? ORDER BY r.active DESC, r.id LIMIT 1",
        (_set_name(project), MARKER + "%", rule_type, pattern, description, tool),
    ).fetchone()
    return int(row[0]) if row is not None else None


def _set_name(project: str) -> str:
    return os.path.basename(project.rstrip("/")) or project


#: How long a check waits for the write lock to sync a changed rules.toml (seconds);
#: past it, the file's rules are read into memory for this check.
SYNC_WAIT = 0.5


def rules_for_check(project: str) -> tuple[list[Any], list[str]]:
    """The rules a tool call in `project` is checked against, and one line per problem
    of its rules.toml. The file is synced first when it changed; when history.db's
    write lock is not free within `SYNC_WAIT`, the decision does not wait and is not
    left incomplete: the rules read from history.db, with the project's team rule set
    replaced by the file's rules read into memory (a rule already in history.db keeps
    its id; a new one a negative id of its own, -1 for the file's first, until the next
    sync writes it: the semantic matcher tells rules apart by id). A history.db whose
    migration waits for the lock is read as it is, likewise."""
    from ..errors import HistoryError
    from .db import connect, open_unmigrated, sqlite3
    from .rules import list_rules
    from .spool import WRITE_WAIT

    try:
        # A hook's connection: a migration waits for the lock no longer than a write.
        db = connect(timeout=WRITE_WAIT)
    except HistoryError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        db = open_unmigrated()
        try:
            return _rules_in_memory(db, project)
        except sqlite3.Error as read_exc:
            raise HistoryError(f"{exc}; reading it as it is: {read_exc}") from None
        finally:
            db.close()
    if not os.path.exists(os.path.join(project, FILE)):
        return list_rules(db, project=project), []
    try:
        problems = sync_team_rules(db, project, wait=SYNC_WAIT)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        return _rules_in_memory(db, project)
    return list_rules(db, project=project), problems


def _rules_in_memory(db: sqlite3.Connection, project: str) -> tuple[list[Any], list[str]]:
    from .rules import Rule, list_rules

    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'rules'").fetchone():
        # A history.db being created by another hook: no rule in it yet.
        rules = []
    else:
        rules = list_rules(db, project=project)
    if not os.path.exists(os.path.join(project, FILE)):
        return rules, []
    wanted, problems = read_team_rules(os.path.join(project, FILE))
    if problems and problems[0].endswith("the rules loaded before still apply"):
        return rules, problems
    row = db.execute(
        "SELECT id, description FROM rule_sets WHERE name = ?", (_set_name(project),)
    ).fetchone()
    if row is not None and not str(row[1] or "").startswith(MARKER):
        return rules, problems  # the sync reports the clash when it runs
    set_id = int(row[0]) if row is not None else None
    known: dict[tuple[Any, ...], int] = {}
    if set_id is not None:
        for found in db.execute(
            "SELECT id, type, pattern, description, tool FROM rules WHERE rule_set_id = ?",
            (set_id,),
        ):
            known.setdefault(_key(found), int(found["id"]))
    kept = [r for r in rules if set_id is None or r.rule_set_id != set_id]
    for n, rule in enumerate(wanted, 1):
        kept.append(
            Rule(
                id=known.get(_key(rule), -n),
                rule_set_id=set_id,
                type=rule["type"],
                pattern=rule["pattern"],
                description=rule["description"],
                tool=rule["tool"],
                action=rule["action"],
                active=1,
                priority=rule["priority"],
                problem=rule["problem"],
                solution=rule["solution"],
                source_message_id=None,
                created_at=None,
            )
        )
    kept.sort(key=lambda r: (-r.priority, r.id))
    return kept, problems

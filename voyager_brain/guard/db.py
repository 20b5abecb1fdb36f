"""history.db: the connection, the schema of seed 003 and its migrations.

The eight tables are the seed's, column for column; the only additions are nullable
columns that let agents' own ids be found (``sessions.external_id`` and
``transcript_path``, ``messages.external_id``, ``tool_calls.external_id``) and indexes
for the key queries. The schema version is ``PRAGMA user_version``: migrations are a list
of small functions, each run once, in its own transaction. The first eight are the seed's
migration plan, so a database of the original tool (``rules`` and ``rule_embeddings``
only, or any later shape of it, Causeway's included) is brought up to date in place,
every rule kept.

Standard library only: the tool-call check opens this database before every tool call.
"""

from __future__ import annotations

import _thread
import os

from .. import confine
from ..errors import HistoryError
from ..paths import history_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3 as sqlite3  # exported: the modules of the guard take it from here
    from collections.abc import Callable
    from typing import Any

    Migration = Callable[[sqlite3.Connection], None]
else:
    try:
        # The C module the sqlite3 package wraps: the same connect, Row and errors (one
        # class each, whichever name a caller catches them by), without the package's
        # date adapters and their imports (datetime, collections.abc), which would
        # cost every tool-call hook a tenth of its time. Nothing here binds a date.
        import _sqlite3 as sqlite3
    except ImportError:  # a Python whose sqlite3 has no such module
        import sqlite3

#: How long a writer waits for another's transaction before giving up (seconds).
BUSY_TIMEOUT = 5.0
#: The width of a rule embedding (seed 003: ``FLOAT[384]``).
EMBEDDING_DIM = 384

MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _add_column(db: sqlite3.Connection, table: str, column: str, ddl: str) -> None:
    if column not in _columns(db, table):
        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}")


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row is not None


def vec_available(db: sqlite3.Connection) -> bool:
    """Whether the sqlite-vec extension (``vec0``) loads into this connection."""
    try:
        import sqlite_vec  # type: ignore[import-not-found, unused-ignore]

        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.enable_load_extension(False)
    except Exception:  # not installed, or a Python built without extension loading
        return False
    return True


# -- the seed's migration plan ---------------------------------------------------------


@migration
def m001_rule_sets(db: sqlite3.Connection) -> None:
    """Seed step 1: create ``rule_sets`` and its "default" set. A new database first
    gets what the original tool started from: ``rules``, and ``rule_embeddings`` when
    sqlite-vec loads (`embeddings`)."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS rules (
            id INTEGER PRIMARY KEY,
            rule_set_id INTEGER,
            type TEXT DEFAULT 'regex',
            pattern TEXT,
            description TEXT NOT NULL,
            tool TEXT,
            action TEXT DEFAULT 'block',
            active INTEGER DEFAULT 1,
            priority INTEGER DEFAULT 0,
            problem TEXT,
            solution TEXT,
            source_message_id INTEGER,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
            FOREIGN KEY (rule_set_id) REFERENCES rule_sets(id),
            FOREIGN KEY (source_message_id) REFERENCES messages(id)
        )"""
    )
    # The original tool's first rules table had neither column.
    _add_column(db, "rules", "problem", "TEXT")
    _add_column(db, "rules", "solution", "TEXT")
    from .embeddings import create_model_table

    create_model_table(db)
    db.execute(
        """CREATE TABLE IF NOT EXISTS rule_sets (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            description TEXT,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP
        )"""
    )
    db.execute(
        "INSERT OR IGNORE INTO rule_sets (name, description) VALUES ('default', 'Default rule set')"
    )


@migration
def m002_rules_rule_set_id(db: sqlite3.Connection) -> None:
    """Seed step 2: ``rules.rule_set_id`` (NULL: a global rule)."""
    _add_column(db, "rules", "rule_set_id", "INTEGER REFERENCES rule_sets(id)")


@migration
def m003_projects(db: sqlite3.Connection) -> None:
    """Seed step 3: ``projects``."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS projects (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            name TEXT,
            rule_set_id INTEGER,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
            FOREIGN KEY (rule_set_id) REFERENCES rule_sets(id)
        )"""
    )


@migration
def m004_sessions(db: sqlite3.Connection) -> None:
    """Seed step 4: ``sessions``, with the agent's session id and transcript."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS sessions (
            id INTEGER PRIMARY KEY,
            project_id INTEGER NOT NULL,
            task TEXT,
            started_at DATETIME DEFAULT CURRENT_TIMESTAMP,
            ended_at DATETIME,
            status TEXT DEFAULT 'active',
            external_id TEXT,
            transcript_path TEXT,
            FOREIGN KEY (project_id) REFERENCES projects(id)
        )"""
    )
    _add_column(db, "sessions", "external_id", "TEXT")
    _add_column(db, "sessions", "transcript_path", "TEXT")


@migration
def m005_messages(db: sqlite3.Connection) -> None:
    """Seed step 5: ``messages``, with the transcript entry's uuid."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS messages (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT,
            timestamp DATETIME DEFAULT CURRENT_TIMESTAMP,
            external_id TEXT,
            FOREIGN KEY (session_id) REFERENCES sessions(id)
        )"""
    )
    _add_column(db, "messages", "external_id", "TEXT")


@migration
def m006_tool_calls(db: sqlite3.Connection) -> None:
    """Seed step 6: ``tool_calls``, with the agent's tool-use id."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS tool_calls (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL,
            tool TEXT NOT NULL,
            input TEXT,
            output TEXT,
            success INTEGER DEFAULT 1,
            duration_ms INTEGER,
            timestamp DATETIME DEFAULT CURRENT_TIMESTAMP,
            external_id TEXT,
            FOREIGN KEY (message_id) REFERENCES messages(id)
        )"""
    )
    _add_column(db, "tool_calls", "external_id", "TEXT")


@migration
def m007_rule_triggers(db: sqlite3.Connection) -> None:
    """Seed step 7: ``rule_triggers``."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS rule_triggers (
            id INTEGER PRIMARY KEY,
            rule_id INTEGER NOT NULL,
            tool_call_id INTEGER NOT NULL,
            action_taken TEXT NOT NULL,
            llm_reasoning TEXT,
            timestamp DATETIME DEFAULT CURRENT_TIMESTAMP,
            FOREIGN KEY (rule_id) REFERENCES rules(id),
            FOREIGN KEY (tool_call_id) REFERENCES tool_calls(id)
        )"""
    )


@migration
def m008_rules_source_message_id(db: sqlite3.Connection) -> None:
    """Seed step 8: ``rules.source_message_id``."""
    _add_column(db, "rules", "source_message_id", "INTEGER REFERENCES messages(id)")


@migration
def m009_indexes(db: sqlite3.Connection) -> None:
    """Indexes for the key queries, and uniqueness of the agents' own ids."""
    for statement in (
        "CREATE UNIQUE INDEX IF NOT EXISTS sessions_external_id ON sessions(external_id)",
        "CREATE INDEX IF NOT EXISTS sessions_project ON sessions(project_id, started_at)",
        "CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, timestamp)",
        "CREATE UNIQUE INDEX IF NOT EXISTS messages_external_id ON messages(external_id)",
        "CREATE INDEX IF NOT EXISTS tool_calls_message ON tool_calls(message_id)",
        "CREATE UNIQUE INDEX IF NOT EXISTS tool_calls_external_id ON tool_calls(external_id)",
        "CREATE INDEX IF NOT EXISTS rule_triggers_tool_call ON rule_triggers(tool_call_id)",
        "CREATE INDEX IF NOT EXISTS rule_triggers_rule ON rule_triggers(rule_id, timestamp)",
        "CREATE INDEX IF NOT EXISTS rules_rule_set ON rules(rule_set_id, active)",
        "CREATE INDEX IF NOT EXISTS projects_rule_set ON projects(rule_set_id)",
    ):
        db.execute(statement)


@migration
def m010_dashboard_indexes(db: sqlite3.Connection) -> None:
    """Indexes for the dashboard's pages over large histories: tool calls by time (the
    newest first, the activity per day) and by tool."""
    for statement in (
        "CREATE INDEX IF NOT EXISTS tool_calls_timestamp ON tool_calls(timestamp)",
        "CREATE INDEX IF NOT EXISTS tool_calls_tool ON tool_calls(tool, timestamp)",
    ):
        db.execute(statement)


@migration
def m011_causeway(db: sqlite3.Connection) -> None:
    """The columns and tables Causeway (the original tool's current form) adds, so that
    its hook, server and transcript logger run on this database: rules' `patterns` (a
    JSON list of regexes, any one matching, case-insensitive), `llm_review`, `prompt`,
    `hard`, `color`, `metadata`, `source_session_id`; tool calls' `error_message` and
    `blocked_by_rule_id`; its `settings`, `traces` and `migrations` tables and its
    indexes' names."""
    for column, ddl in (
        ("source_session_id", "INTEGER REFERENCES sessions(id)"),
        ("color", "TEXT"),
        ("metadata", "TEXT"),
        ("patterns", "TEXT"),
        ("llm_review", "INTEGER DEFAULT 0"),
        ("prompt", "TEXT"),
        ("hard", "INTEGER DEFAULT 0"),
    ):
        _add_column(db, "rules", column, ddl)
    _add_column(db, "tool_calls", "error_message", "TEXT")
    _add_column(db, "tool_calls", "blocked_by_rule_id", "INTEGER REFERENCES rules(id)")
    for statement in (
        "CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY,"
        " name TEXT NOT NULL UNIQUE, applied_at DATETIME DEFAULT CURRENT_TIMESTAMP)",
        "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS traces (id INTEGER PRIMARY KEY, hook_type TEXT NOT NULL,"
        " tool_name TEXT, tool_input TEXT, rules_checked INTEGER DEFAULT 0,"
        " rules_matched INTEGER DEFAULT 0, matched_rule_ids TEXT, decision TEXT, reason TEXT,"
        " llm_prompt TEXT, llm_response TEXT, duration_ms INTEGER,"
        " timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)",
        "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id)",
        "CREATE INDEX IF NOT EXISTS idx_tool_calls_message ON tool_calls(message_id)",
        "CREATE INDEX IF NOT EXISTS idx_rule_triggers_tool_call ON rule_triggers(tool_call_id)",
        "CREATE INDEX IF NOT EXISTS idx_sessions_project ON sessions(project_id)",
        "CREATE INDEX IF NOT EXISTS idx_traces_timestamp ON traces(timestamp)",
    ):
        db.execute(statement)


@migration
def m012_shared_with_causeway(db: sqlite3.Connection) -> None:
    """What Causeway's code needs of the tables it shares with ours: ``rule_embeddings``
    only ever the seed's vec0 table, our lexical vectors in ``lexical_rule_embeddings``
    (`embeddings.move_lexical_vectors`); ``messages.external_id`` indexed but not unique,
    as in Causeway, whose transcript logger may store one entry under two sessions (our
    import finds an entry by it before adding one, so it still adds none twice)."""
    from .embeddings import move_lexical_vectors

    move_lexical_vectors(db)
    db.execute("DROP INDEX IF EXISTS messages_external_id")
    db.execute("CREATE INDEX messages_external_id ON messages(external_id)")


@migration
def m013_hook_messages(db: sqlite3.Connection) -> None:
    """The messages the hooks wrote and no import has taken yet (no ``external_id``), by
    session: an import reads them once a transaction to adopt their prompts and calls,
    which without this index meant visiting every message of the session."""
    db.execute(
        "CREATE INDEX IF NOT EXISTS messages_from_hooks ON messages(session_id, timestamp)"
        " WHERE external_id IS NULL"
    )


SCHEMA_VERSION = len(MIGRATIONS)
#: The tables the migrations make and every query needs: a history.db at
#: `SCHEMA_VERSION` without one of them was changed by hand or by another tool.
TABLES = frozenset(
    {"rules", "rule_sets", "lexical_rule_embeddings", "projects", "sessions", "messages"}
    | {"tool_calls", "rule_triggers"}
)


# -- connections -------------------------------------------------------------------------

#: Connections by thread and path (not threading.local: importing threading costs
#: every tool call about a millisecond).
_connections: dict[tuple[int, str], sqlite3.Connection] = {}


def connect(path: str | None = None, *, timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """This thread's connection to history.db (``$VOYAGER_HOME/history.db`` unless
    `path`), created and migrated on first use: WAL, a busy timeout, foreign keys on,
    rows as `sqlite3.Row`. Autocommit; writers use `transaction`.

    Raises `HistoryError` for a database that is corrupt, locked past the timeout, or
    newer than this code (which is never changed).
    """
    key = (_thread.get_ident(), path or history_file())
    db = _connections.get(key)
    if db is None:
        db = open_database(key[1], timeout=timeout)
        _connections[key] = db
    return db


#: The write-ahead log's size past which a hook checkpoints it into history.db and
#: truncates it (`bound_wal`).
WAL_LIMIT = 1 << 20


def bound_wal(limit: int = WAL_LIMIT) -> None:
    """Checkpoint and truncate the write-ahead log of each history.db this thread has
    open, once it is over `limit` bytes.

    A hook leaves with `os._exit`, never closing history.db: closing the last connection
    would checkpoint at every tool call. But left alone the log is never reset, since
    every hook is a new process and the first connection to the file: it grew by about
    27 KB a tool call, and each process read all of it to rebuild its index, so the
    10,000th call cost more than the 10th. This costs one stat a call and, about every
    40 calls, a checkpoint of a megabyte. A reader or writer in the way (another hook,
    the dashboard) makes it wait at most 0.2 s; then the next call tries again."""
    me = _thread.get_ident()
    for (thread, path), db in list(_connections.items()):
        try:
            if thread != me or os.stat(path + "-wal").st_size <= limit:
                continue
            db.execute("PRAGMA busy_timeout = 200")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except (OSError, sqlite3.Error):
            continue


def close_all() -> None:
    """Close this thread's connections (tests, and commands that switch VOYAGER_HOME)."""
    me = _thread.get_ident()
    for key in [k for k in _connections if k[0] == me]:
        _connections.pop(key).close()


def open_database(path: str, *, timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """A new connection to the database at `path`, migrated to `SCHEMA_VERSION`."""
    # SQLite follows links and creates what is missing: a history.db (or its journal)
    # linked to a missing path is refused before it can be made there.
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        confine.check(name)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    try:
        db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise HistoryError(f"{path}: cannot open: {exc}") from None
    try:
        db.row_factory = sqlite3.Row
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"{path}: schema version {version} is newer than this voyager-brain "
                f"understands ({SCHEMA_VERSION}); upgrade voyager-brain (the file is "
                "left unchanged)"
            )
        db.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            _migrate(db, path)
        else:
            missing = TABLES - {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if missing:
                raise MissingTablesError(path, sorted(missing))
        # WAL makes a commit durable at the next checkpoint rather than at once: a
        # crash may lose the last tool calls, never corrupt the file.
        db.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error as exc:
        db.close()
        raise HistoryError(f"{path}: {_describe(exc)}") from None
    except BaseException:
        db.close()
        raise
    return db


def open_unmigrated(path: str | None = None) -> sqlite3.Connection:
    """A connection that only reads history.db as it is, whatever its schema version
    (the guard's check while another process holds the lock a migration needs)."""
    target = path or history_file()
    try:
        db = sqlite3.connect(target, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise HistoryError(f"{target}: cannot open: {exc}") from None
    db.row_factory = sqlite3.Row
    return db


def _migrate(db: sqlite3.Connection, path: str) -> None:
    # BEGIN IMMEDIATE takes the write lock before reading the version, so two processes
    # starting on a new database do not both run a migration.
    while True:
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                db.execute("COMMIT")
                return
            MIGRATIONS[version](db)
            db.execute(f"PRAGMA user_version = {version + 1}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


class MissingTablesError(HistoryError):
    """A history.db at `SCHEMA_VERSION` without some of `TABLES`: `remake_tables` mends
    it. `where` names the file and the tables (what doctor says it made again)."""

    def __init__(self, path: str, tables: list[str]) -> None:
        self.where = f"{path}: no table {', '.join(tables)}"
        super().__init__(
            f"{self.where} (changed by hand or by another tool); `voyager-brain doctor"
            " --repair` makes it again, empty"
        )


def remake_tables(path: str) -> None:
    """Run every migration again on the history.db at `path` (each makes only what is
    missing): a table dropped by hand or by another tool comes back, empty."""
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        db.execute("PRAGMA user_version = 0")
        _migrate(db, path)
    finally:
        db.close()


def _describe(exc: sqlite3.Error) -> str:
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
        return "not a SQLite database (corrupt?); move it aside to start a new history"
    if "locked" in text or "busy" in text:
        return f"{text} (another process held it past the busy timeout)"
    return text


class transaction:
    """``with transaction(db):`` runs the block in one write transaction (BEGIN
    IMMEDIATE), committed at the end or rolled back on any error: no row half-written.
    With `wait`, the lock is waited for that many seconds instead of the connection's
    busy timeout (a hook that queues its rows rather than wait, `guard.spool`)."""

    def __init__(self, db: sqlite3.Connection, *, wait: float | None = None) -> None:
        self.db = db
        self.wait = wait
        self.restore: int | None = None

    def __enter__(self) -> sqlite3.Connection:
        if self.wait is not None:
            self.restore = int(self.db.execute("PRAGMA busy_timeout").fetchone()[0])
            self.db.execute(f"PRAGMA busy_timeout = {int(self.wait * 1000)}")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._restore()
            raise
        return self.db

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            if kind is None:
                try:
                    self.db.execute("COMMIT")
                except BaseException:
                    # Left open, the transaction would hold the lock for the next user.
                    self.db.execute("ROLLBACK")
                    raise
            else:
                self.db.execute("ROLLBACK")
        finally:
            self._restore()

    def _restore(self) -> None:
        if self.restore is not None:
            self.db.execute(f"PRAGMA busy_timeout = {self.restore}")
            self.restore = None


def sql_error(path: str, exc: sqlite3.Error) -> HistoryError:
    """A `HistoryError` for `exc` raised while using the database at `path`."""
    return HistoryError(f"{path}: {_describe(exc)}")

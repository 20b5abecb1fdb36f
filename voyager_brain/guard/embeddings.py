"""Where rule vectors are kept in history.db, beside a tool that keeps vectors of its own.

``lexical_rule_embeddings`` holds each semantic rule's lexical vector (`semantic.LEXICAL` of
its forbidden part; `EMBEDDING_DIM` little-endian float32s): a plain table, ours alone, that
any SQLite reads. The tool-call check does not read it (see `semantic`); it is there for
queries over the rules and the vectors they were matched with.

``rule_embeddings`` is the seed's sqlite-vec table (``vec0``, ``FLOAT[384]``), made only when
sqlite-vec loads and never a plain table of that name: Causeway (the original tool's current
form) searches it with vectors of its model (text-embedding-3-small at 384) and embeds every
active rule that has none there. A lexical vector there would be measured against its model's,
so none is written; a rule's row there is removed when the rule is removed or its description
changes, so that such a tool embeds it again.
"""

from __future__ import annotations

import sys

from .db import EMBEDDING_DIM, sqlite3, vec_available

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

LEXICAL_TABLE = "lexical_rule_embeddings"
MODEL_TABLE = "rule_embeddings"


def _blob(vector: Sequence[float]) -> bytes:
    from array import array

    if len(vector) != EMBEDDING_DIM:
        raise ValueError(f"a rule embedding has {EMBEDDING_DIM} values, not {len(vector)}")
    floats = array("f", vector)
    if sys.byteorder == "big":  # little-endian, as sqlite-vec reads float32 blobs
        floats.byteswap()
    return floats.tobytes()


def _vector(blob: object) -> list[float] | None:
    if not isinstance(blob, bytes) or len(blob) != 4 * EMBEDDING_DIM:
        return None  # a damaged row
    from array import array

    floats = array("f")
    floats.frombytes(blob)
    if sys.byteorder == "big":
        floats.byteswap()
    return floats.tolist()


def store_embedding(db: sqlite3.Connection, rule_id: int, vector: Sequence[float]) -> None:
    """Set rule `rule_id`'s lexical vector to `vector` (`EMBEDDING_DIM` floats)."""
    db.execute(
        f"INSERT OR REPLACE INTO {LEXICAL_TABLE} (rule_id, embedding) VALUES (?, ?)",
        (rule_id, _blob(vector)),
    )


def load_embeddings(db: sqlite3.Connection, rule_ids: Iterable[int]) -> dict[int, list[float]]:
    """The stored lexical vectors of `rule_ids` that exist and have the expected size."""
    ids = sorted(set(rule_ids))
    found: dict[int, list[float]] = {}
    for start in range(0, len(ids), 500):  # well under SQLite's limit on parameters
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT rule_id, embedding FROM {LEXICAL_TABLE} WHERE rule_id IN ({marks})", chunk
        )
        for rule_id, blob in rows:
            vector = _vector(blob)
            if vector is not None:
                found[int(rule_id)] = vector
    return found


def embed_rule(db: sqlite3.Connection, rule_id: int, description: str) -> bool:
    """Store the lexical vector of a semantic rule's description (of its forbidden part),
    added or changed, and drop its vector in the seed's table, made from what it said
    before (or from a removed rule that had its id). False when that table is there and
    sqlite-vec cannot be loaded to drop it."""
    from .semantic import LEXICAL, forbidden_part

    store_embedding(db, rule_id, LEXICAL.embed([forbidden_part(description)])[0])
    return _forget_model_vector(db, rule_id)


def delete_embedding(db: sqlite3.Connection, rule_id: int) -> bool:
    """Remove rule `rule_id`'s vectors (none is fine). False when the seed's table is
    there and sqlite-vec cannot be loaded to remove its row."""
    db.execute(f"DELETE FROM {LEXICAL_TABLE} WHERE rule_id = ?", (rule_id,))
    return _forget_model_vector(db, rule_id)


def _is_vec0(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (MODEL_TABLE,)).fetchone()
    return row is not None and "vec0" in (row[0] or "").lower()


def _forget_model_vector(db: sqlite3.Connection, rule_id: int, only: bytes | None = None) -> bool:
    """Delete rule `rule_id`'s row in the seed's vec0 table (only when its vector is
    `only`, if given). A savepoint makes it one change inside the caller's transaction
    and outside any; a connection without sqlite-vec loads it once (this runs when a rule
    changes, never in a tool-call check)."""
    if not _is_vec0(db):
        return True
    for attempt in range(2):
        db.execute("SAVEPOINT model_vector")
        try:
            if only is not None:
                row = db.execute(
                    f"SELECT embedding FROM {MODEL_TABLE} WHERE rule_id = ?", (rule_id,)
                ).fetchone()
                if row is None or row[0] != only:
                    db.execute("RELEASE model_vector")
                    return True
            db.execute(f"DELETE FROM {MODEL_TABLE} WHERE rule_id = ?", (rule_id,))
        except sqlite3.OperationalError as exc:
            db.execute("ROLLBACK TO model_vector")
            db.execute("RELEASE model_vector")
            if "no such module" not in str(exc):
                raise
            if attempt or not vec_available(db):
                return False
            continue
        db.execute("RELEASE model_vector")
        return True
    return False


def move_lexical_vectors(db: sqlite3.Connection) -> None:
    """For the migration that made `LEXICAL_TABLE`: earlier versions kept lexical vectors
    in ``rule_embeddings``, a plain table when sqlite-vec did not load (on which
    Causeway's vector search fails, and its hook then blocks every call). That table is
    dropped (it may hold Causeway's vectors too; Causeway embeds those rules again) and,
    when sqlite-vec loads, made the seed's vec0 table; in a vec0 one, the rows that are
    our lexical vectors are removed (when sqlite-vec loads to do it). Every semantic
    rule's lexical vector is stored afresh."""
    from .semantic import LEXICAL, forbidden_part

    db.execute(
        f"CREATE TABLE IF NOT EXISTS {LEXICAL_TABLE} (rule_id INTEGER PRIMARY KEY, embedding BLOB)"
    )
    plain = db.execute(
        "SELECT 1 FROM sqlite_master WHERE name = ? AND sql NOT LIKE '%vec0%'", (MODEL_TABLE,)
    ).fetchone()
    if plain is not None:
        db.execute(f"DROP TABLE {MODEL_TABLE}")
        create_model_table(db)
    rules = db.execute("SELECT id, description FROM rules WHERE type = 'semantic'").fetchall()
    readable = True  # the vec0 table, until sqlite-vec fails to load once
    for rule_id, description in rules:
        [vector] = LEXICAL.embed([forbidden_part(str(description or ""))])
        store_embedding(db, int(rule_id), vector)
        if readable:
            readable = _forget_model_vector(db, int(rule_id), only=_blob(vector))


def create_model_table(db: sqlite3.Connection) -> None:
    """The seed's ``rule_embeddings``, when sqlite-vec loads; else none."""
    if vec_available(db):
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {MODEL_TABLE} USING vec0("
            f"rule_id INTEGER PRIMARY KEY, embedding FLOAT[{EMBEDDING_DIM}])"
        )

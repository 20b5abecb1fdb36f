"""Rule vectors with sqlite-vec loaded: run by tests/guard/test_embeddings.py under a
Python that can load it (``VOYAGER_VEC_PYTHON``; Debian's python3 with the sqlite-vec
wheel in CI), with this repository on its path. Prints ``ok`` when every check holds.

Causeway's side is what its code at d346605 runs: `init_db`'s ``CREATE VIRTUAL TABLE IF
NOT EXISTS rule_embeddings USING vec0(rule_id INTEGER PRIMARY KEY, embedding FLOAT[384])``
(causeway/db.py), its insert of a rule's model vector and its search
(causeway/rule_agent.py: ``WHERE re.embedding MATCH ? AND re.k = ?`` joined with rules).
"""

from __future__ import annotations

import random
import sqlite3
import struct
import sys
from pathlib import Path

from voyager_brain.guard import db as gdb
from voyager_brain.guard import embeddings, rules
from voyager_brain.guard.semantic import LEXICAL, forbidden_part

CAUSEWAY_TABLE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS rule_embeddings USING vec0("
    "rule_id INTEGER PRIMARY KEY, embedding FLOAT[384])"
)
CAUSEWAY_SEARCH = (
    "SELECT r.id, re.distance FROM rule_embeddings re JOIN rules r ON r.id = re.rule_id"
    " WHERE re.embedding MATCH ? AND re.k = ? AND r.active = 1 AND r.type = 'semantic'"
)


def model_vector(seed: int) -> bytes:
    """A stand-in for one of Causeway's text-embedding-3-small vectors (384 float32s)."""
    rng = random.Random(seed)
    return struct.pack("<384f", *(rng.uniform(-1, 1) for _ in range(384)))


def lexical(description: str) -> bytes:
    return struct.pack("<384f", *LEXICAL.embed([forbidden_part(description)])[0])


def model_rows(db: sqlite3.Connection) -> dict[int, bytes]:
    return {r[0]: r[1] for r in db.execute("SELECT rule_id, embedding FROM rule_embeddings")}


def main(folder: Path) -> None:
    db = gdb.open_database(str(folder / "new.db"))
    kind = db.execute("SELECT sql FROM sqlite_master WHERE name = 'rule_embeddings'").fetchone()
    assert "vec0" in kind[0], kind
    # Our semantic rule: its lexical vector in our table, none in the seed's.
    ours = rules.add_rule(db, description="never use pip install, use uv add", type="semantic")
    assert model_rows(db) == {}
    assert list(embeddings.load_embeddings(db, [ours.id])) == [ours.id]
    # Causeway embeds it with its model, as it does every active rule without a vector,
    # and its search runs on our table.
    db.execute(CAUSEWAY_TABLE)
    db.execute(
        "INSERT INTO rule_embeddings (rule_id, embedding) VALUES (?, ?)",
        (ours.id, model_vector(1)),
    )
    found = db.execute(CAUSEWAY_SEARCH, (model_vector(1), 5)).fetchall()
    assert [r[0] for r in found] == [ours.id] and found[0][1] == 0.0
    # Removing the rule removes its vectors in both tables.
    assert rules.remove_rule(db, ours.id) == "removed"
    assert model_rows(db) == {} and embeddings.load_embeddings(db, [ours.id]) == {}
    # A new rule that takes a removed rule's id never inherits its model vector.
    db.execute(
        "INSERT INTO rule_embeddings (rule_id, embedding) VALUES (50, ?)", (model_vector(2),)
    )
    db.execute("INSERT INTO rules (id, type, description) VALUES (50, 'semantic', 'x')")
    assert embeddings.embed_rule(db, 50, "never force push")
    assert 50 not in model_rows(db)

    # An earlier version of ours, with sqlite-vec, kept lexical vectors in the vec0 table
    # beside Causeway's model vectors: the migration removes ours and keeps Causeway's.
    path = folder / "v11.db"
    old = gdb.open_database(str(path))
    old.execute("INSERT INTO rules (id, type, description) VALUES (1, 'semantic', 'never pip')")
    old.execute("INSERT INTO rules (id, type, description) VALUES (2, 'semantic', 'no curl')")
    old.execute("INSERT INTO rule_embeddings VALUES (1, ?)", (lexical("never pip"),))
    old.execute("INSERT INTO rule_embeddings VALUES (2, ?)", (model_vector(3),))
    old.execute("DELETE FROM lexical_rule_embeddings")
    old.execute("PRAGMA user_version = 11")
    old.close()
    gdb.close_all()
    migrated = gdb.open_database(str(path))
    assert model_rows(migrated) == {2: model_vector(3)}
    assert sorted(embeddings.load_embeddings(migrated, [1, 2])) == [1, 2]

    # A plain rule_embeddings (an earlier version of ours without sqlite-vec) becomes the
    # seed's vec0 table once sqlite-vec loads, and Causeway's search runs on it.
    path = folder / "plain.db"
    plain = gdb.open_database(str(path))
    plain.execute("DROP TABLE rule_embeddings")
    plain.execute("CREATE TABLE rule_embeddings (rule_id INTEGER PRIMARY KEY, embedding BLOB)")
    plain.execute("PRAGMA user_version = 11")
    plain.close()
    gdb.close_all()
    fresh = gdb.open_database(str(path))
    kind = fresh.execute("SELECT sql FROM sqlite_master WHERE name = 'rule_embeddings'").fetchone()
    assert "vec0" in kind[0], kind
    assert fresh.execute(CAUSEWAY_SEARCH, (model_vector(4), 5)).fetchall() == []
    print("ok")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

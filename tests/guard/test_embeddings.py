"""Where rule vectors are kept: our lexical vectors in `lexical_rule_embeddings`; the
seed's `rule_embeddings` only ever sqlite-vec's table, left to a tool that embeds with a
model (Causeway), a rule's row there removed when the rule changes or goes."""

from __future__ import annotations

import os
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from test_guard_db import fake_vec0_table

from voyager_brain.guard import db as gdb
from voyager_brain.guard import rules
from voyager_brain.guard.embeddings import (
    delete_embedding,
    embed_rule,
    load_embeddings,
    store_embedding,
)
from voyager_brain.guard.semantic import LEXICAL, semantic_matches
from voyager_brain.value import Record

ROOT = Path(__file__).resolve().parents[2]


class Rule(Record):
    id: int
    description: str


def open_history(tmp_path: Path) -> sqlite3.Connection:
    return gdb.open_database(str(tmp_path / "history.db"))


def vec_loads() -> bool:
    return gdb.vec_available(sqlite3.connect(":memory:"))


def test_an_embedding_round_trips_through_our_table(tmp_path: Path) -> None:
    db = open_history(tmp_path)
    [vector] = LEXICAL.embed(["never use pip install"])
    store_embedding(db, 7, vector)
    loaded = load_embeddings(db, [7, 8])
    assert list(loaded) == [7]
    # float32 storage: equal to the float64 vector up to float32 precision.
    assert loaded[7] == pytest.approx(vector, abs=1e-7)
    blob = db.execute("SELECT embedding FROM lexical_rule_embeddings").fetchone()[0]
    assert blob == struct.pack("<384f", *vector)


def test_storing_again_replaces_and_delete_removes(tmp_path: Path) -> None:
    db = open_history(tmp_path)
    first, second = LEXICAL.embed(["pip install", "git push"])
    store_embedding(db, 1, first)
    store_embedding(db, 1, second)
    assert load_embeddings(db, [1])[1] == pytest.approx(second, abs=1e-7)
    assert db.execute("SELECT COUNT(*) FROM lexical_rule_embeddings").fetchone()[0] == 1
    assert delete_embedding(db, 1)
    assert delete_embedding(db, 1)  # nothing to delete is fine
    assert load_embeddings(db, [1]) == {}


def test_a_store_inside_a_failed_transaction_is_rolled_back_with_it(tmp_path: Path) -> None:
    db = open_history(tmp_path)
    [vector] = LEXICAL.embed(["pip install"])
    with pytest.raises(RuntimeError), gdb.transaction(db):
        store_embedding(db, 3, vector)
        raise RuntimeError("the rule's own insert failed")
    assert load_embeddings(db, [3]) == {}


def test_load_skips_damaged_rows_and_reads_many_ids(tmp_path: Path) -> None:
    db = open_history(tmp_path)
    [vector] = LEXICAL.embed(["pip install"])
    for rule_id in range(1, 1201):
        store_embedding(db, rule_id, vector)
    db.execute("INSERT INTO lexical_rule_embeddings VALUES (5000, zeroblob(1000))")
    db.execute("INSERT INTO lexical_rule_embeddings VALUES (5001, NULL)")
    assert sorted(load_embeddings(db, range(1, 5002))) == list(range(1, 1201))


def test_a_vector_of_the_wrong_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="384 values, not 3"):
        store_embedding(open_history(tmp_path), 1, [1.0, 0.0, 0.0])


def test_a_semantic_rule_gets_the_lexical_vector_of_its_forbidden_part(tmp_path: Path) -> None:
    db = open_history(tmp_path)
    rule = rules.add_rule(db, description="never use pip install, use uv add", type="semantic")
    expected = LEXICAL.embed(["never use pip install"])[0]
    assert load_embeddings(db, [rule.id])[rule.id] == pytest.approx(expected, abs=1e-7)
    assert rules.remove_rule(db, rule.id) == "removed"
    assert load_embeddings(db, [rule.id]) == {}


@pytest.mark.skipif(
    vec_loads(), reason="sqlite-vec loads here, so no vec0 table is unreadable for want of it"
)
def test_a_vec0_table_without_the_extension_is_reported_not_raised(tmp_path: Path) -> None:
    open_history(tmp_path).close()
    fake_vec0_table(tmp_path / "history.db")
    db = open_history(tmp_path)
    # Our vector is kept; the seed's table, unreadable, is said to be (False).
    assert embed_rule(db, 1, "never pip install") is False
    assert list(load_embeddings(db, [1])) == [1]
    assert delete_embedding(db, 1) is False
    assert load_embeddings(db, [1]) == {}
    assert db.in_transaction is False  # no savepoint was left open
    # And the check does not need the stored vectors.
    [match] = semantic_matches([Rule(1, "never pip install")], ["pip install x"], 0.45)
    assert match.rule_id == 1


@pytest.mark.skipif(vec_loads(), reason="sqlite-vec loads here: the table is made as sqlite-vec's")
def test_without_sqlite_vec_no_table_takes_the_seeds_vector_tables_name(tmp_path: Path) -> None:
    # Causeway's init_db runs CREATE VIRTUAL TABLE IF NOT EXISTS rule_embeddings: with no
    # table of that name it makes its own, on which its vector search works.
    db = open_history(tmp_path)
    assert (
        db.execute("SELECT 1 FROM sqlite_master WHERE name = 'rule_embeddings'").fetchone() is None
    )
    rules.add_rule(db, description="never use pip install", type="semantic")
    assert db.execute("SELECT COUNT(*) FROM lexical_rule_embeddings").fetchone()[0] == 1


def test_an_earlier_plain_table_is_dropped_and_our_vectors_made_again(tmp_path: Path) -> None:
    # What earlier versions made without sqlite-vec, and what Causeway then wrote into it
    # (its model's vector for a rule of its own): Causeway embeds its rules again.
    path = tmp_path / "history.db"
    db = gdb.open_database(str(path))
    db.execute("DROP TABLE IF EXISTS rule_embeddings")
    db.execute("CREATE TABLE rule_embeddings (rule_id INTEGER PRIMARY KEY, embedding BLOB)")
    db.execute("DROP TABLE lexical_rule_embeddings")
    db.execute("INSERT INTO rules (id, type, description) VALUES (1, 'semantic', 'never pip')")
    db.execute("INSERT INTO rules (id, type, description) VALUES (2, 'semantic', 'no curl')")
    db.execute("INSERT INTO rules (id, pattern, description) VALUES (3, 'rm', 'no rm')")
    db.execute("INSERT INTO rule_embeddings VALUES (2, zeroblob(1536))")
    db.execute("PRAGMA user_version = 11")
    db.close()
    gdb.close_all()
    migrated = gdb.open_database(str(path))
    assert sorted(load_embeddings(migrated, [1, 2, 3])) == [1, 2]
    kind = migrated.execute("SELECT sql FROM sqlite_master WHERE name = 'rule_embeddings'")
    row = kind.fetchone()
    assert (row is None) if not vec_loads() else ("vec0" in row[0])


def vec_python() -> str | None:
    """A Python that loads sqlite-vec: this one, or ``VOYAGER_VEC_PYTHON``."""
    if vec_loads():
        return sys.executable
    return os.environ.get("VOYAGER_VEC_PYTHON")


@pytest.mark.skipif(
    vec_python() is None,
    reason="sqlite-vec does not load in this Python (its sqlite3 has no"
    " enable_load_extension, or the package is missing); set VOYAGER_VEC_PYTHON to one that"
    " does (.ci/run makes one)",
)
def test_with_sqlite_vec_causeways_vectors_and_ours_stay_apart(tmp_path: Path) -> None:
    python = vec_python()
    assert python is not None
    done = subprocess.run(
        [python, str(Path(__file__).with_name("vec_scenarios.py")), str(tmp_path)],
        env={**os.environ, "PYTHONPATH": str(ROOT), "VOYAGER_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"

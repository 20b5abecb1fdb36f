"""Recall on demand: one search over every store, best matches first.

The stores are brain.md (its entries, compaction summaries among them), brain.json (each
decision, known issue, key file, fact, preference, step of the active state, next step)
and both memory logs. They are kept in one SQLite FTS5 index, ``.voyager/cache/
recall.sqlite`` (never in git; the personal folder's ``cache/`` outside a project)::

    docs    FTS5: source, kind, key, date, sort (unindexed), title, text (indexed)
    stores  each store's fingerprint: path, size, modification time and inode
    items   each row's digest (of its kind, key, date, title and text)
    shadow  the ids the project log holds, which hide the personal log's same ids

At each query the stores are fingerprinted (a stat each). A store whose fingerprint
changed is read again and compared with its rows by their digests, under the index's
lock, in one transaction: rows of items gone or changed are deleted, new ones added,
the rest (and the other stores) untouched. An index that is missing, of another version,
or that SQLite cannot read is built again aside and moved into place (``os.replace``:
a reader that has the old file open keeps reading it). A file modified in the last two
seconds is not trusted to show its next change in its modification time, so it is read
again at the next query. When the cache folder cannot be written, the index is built in
memory for the one query: recall never fails because of its cache.

Ranking is BM25 (lower is better in SQLite), rounded so that near-equal scores tie,
then the newer item first. Every word of the query is quoted, so FTS5's syntax (``"``,
``*``, ``-``, ``NEAR``, ``AND``, parentheses) is only ever text; items that hold all the
words come before items that hold some of them. A store that cannot be read (a corrupt
brain.md, which `doctor` reports) adds nothing.

Standard library only; imported by `BrainManager.recall` (which the ``recall`` command
and the MCP tool call), never on a hook's path. Like the session-start document, recall
sits below the session package: `BrainManager.recall` hands in brain.md's parser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, date, datetime
from pathlib import Path

from .. import confine, storage
from ..errors import BrainError, InvalidEntryError
from ..paths import home_folder, personal_log_path
from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .candidates import SessionEntry

    Doc = tuple[str, str, str | None, str, str]  # kind, key, date, title, text

    #: brain.md's bytes (and its path, for errors) to its entries; raises `BrainError`
    #: when the file cannot be read as brain.md.
    ParseBrainMd = Callable[[bytes, Path], Sequence[SessionEntry]]

BRAIN_MD, BRAIN_JSON = "brain.md", "brain.json"
MEMORY_PROJECT, MEMORY_PERSONAL = "memory (project)", "memory (personal)"
#: Each store's band of rowids: its rows are deleted by range.
_BANDS = {BRAIN_MD: 1, BRAIN_JSON: 2, MEMORY_PROJECT: 3, MEMORY_PERSONAL: 4}
_BAND = 1 << 40
_VERSION = 1
_RACY_NS = 2_000_000_000
MAX_LIMIT = 100
EXCERPT_CHARS = 200
_MAX_TERMS = 32
_WORD = re.compile(r"\w+")
# compaction.SUMMARY_SOURCE, without importing compaction (dataclasses, the summarizer).
_SUMMARY_SOURCE = "compact"

_SCHEMA = """
CREATE VIRTUAL TABLE docs USING fts5(
    source UNINDEXED, kind UNINDEXED, key, date UNINDEXED, sort UNINDEXED, title, text,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE stores (source TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);
CREATE TABLE shadow (id TEXT PRIMARY KEY);
CREATE TABLE items (rowid INTEGER PRIMARY KEY, digest BLOB NOT NULL);
"""
# bm25's weights, one per column: the key counts fully, the title (the kind) a little.
_RANK = "bm25(docs, 0, 0, 1.0, 0, 0, 0.5, 1.0)"


class RecallHit(Record):
    """One match: which store, what kind of item, its id or key, its date (ISO 8601 as
    the store wrote it, or None), one line of its text around the match, and its BM25
    score (lower is better)."""

    source: str
    kind: str
    key: str
    date: str | None
    excerpt: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kind": self.kind,
            "key": self.key,
            "date": self.date,
            "excerpt": self.excerpt,
            "score": round(self.score, 4),
        }


# -- the query ------------------------------------------------------------------------


def query_terms(query: str) -> list[str]:
    """The words of `query` (letters and digits in any script), each once, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        seen.setdefault(word.casefold(), None)
    return list(seen)[:_MAX_TERMS]


def _match(terms: list[str], op: str) -> str:
    # A quoted string is a phrase of plain tokens to FTS5: no operator, no column filter.
    return f" {op} ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _excerpt(text: str, terms: list[str], width: int = EXCERPT_CHARS) -> str:
    """One line of `text` (at most about `width` characters) around the first match."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    folded = line.casefold()
    found = [folded.find(t) for t in terms]
    if not any(p >= 0 for p in found):  # a stemmed match: look for the word's stem
        found = [folded.find(t[: max(3, len(t) - 3)]) for t in terms]
    hits = [p for p in found if p >= 0]
    at = min(hits) if hits else 0
    start = max(0, min(at - width // 4, len(line) - width))
    if start:
        space = line.find(" ", start, at + 1)
        start = space + 1 if space >= 0 else start
    end = start + width
    if end < len(line):
        space = line.rfind(" ", max(at, start + width // 2), end)
        end = space if space > 0 else end
    return ("…" if start else "") + line[start:end].strip() + ("…" if end < len(line) else "")


def _sort_key(value: Any) -> str | None:
    """A date as a string that sorts in time order (UTC), None when it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        if len(text) <= 10:
            moment = datetime.combine(date.fromisoformat(text), datetime.min.time())
        else:
            moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")


# -- the stores -----------------------------------------------------------------------


class _Store(Record):
    source: str
    path: Path
    fingerprint: str
    read: Callable[[], Iterator[Doc]]
    shadow: Callable[[], Iterator[str]] | None = None


def _fingerprint(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return json.dumps([str(path), None])
    racy = time.time_ns() - st.st_mtime_ns < _RACY_NS
    # A racy file's fingerprint names the moment it was taken: it never matches again.
    extra = [time.time_ns()] if racy else []
    return json.dumps([str(path), st.st_size, st.st_mtime_ns, st.st_ino, *extra])


def _brain_md(path: Path, parse: ParseBrainMd) -> Iterator[Doc]:
    from ..timestamps import format_timestamp

    data = storage.read_bytes(path)
    if not data:
        return
    try:
        entries = parse(data, path)
    except BrainError:  # doctor reports it; recall searches the other stores
        return
    for entry in entries:
        summary = entry.source == _SUMMARY_SOURCE
        stamp = format_timestamp(entry.timestamp) if entry.timestamp else None
        kind = "summary" if summary else entry.type
        title = f"{entry.label} summary" if summary else entry.label
        yield kind, f"{entry.label} — {stamp}", stamp, title, entry.content


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _brain_json(path: Path) -> Iterator[Doc]:
    from ..state import brainjson

    data = storage.read_bytes(path)
    if not data:
        return
    try:
        state = brainjson.loads(data, path)
    except BrainError:
        return

    def strings(kind: str, key: str, value: Any) -> Iterator[Doc]:
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for item in items:
            if _text(item).strip():
                yield kind, key, None, kind, _text(item)

    facts = state.get("facts") or {}
    yield from strings("fact", "facts.stack", facts.get("stack"))
    yield from strings("fact", "facts.architecture", facts.get("architecture"))
    for name, value in (facts.get("environment") or {}).items():
        yield "fact", f"facts.environment.{name}", None, "fact", f"{name}: {_text(value)}"
    yield from strings("fact", "facts.custom", facts.get("custom"))
    for item in state.get("decisions") or []:
        text = " — ".join(_text(item[f]) for f in ("what", "why") if item.get(f))
        when = item.get("when") if isinstance(item.get("when"), str) else None
        yield "decision", item["what"], when, "decision", text
    active = state.get("activeState") or {}
    for field, kind in (
        ("currentGoal", "goal"),
        ("inProgress", "inProgress"),
        ("blockers", "blocker"),
        ("recentlyCompleted", "completed"),
    ):
        yield from strings(kind, f"activeState.{field}", active.get(field))
    for item in state.get("keyFiles") or []:
        text = " — ".join(_text(item[f]) for f in ("path", "role") if item.get(f))
        yield "keyFile", item["path"], None, "key file", text
    for item in state.get("knownIssues") or []:
        text = " — ".join(_text(item[f]) for f in ("issue", "workaround") if item.get(f))
        yield "knownIssue", item["issue"], None, f"known issue {item.get('severity') or ''}", text
    for name, value in (state.get("preferences") or {}).items():
        yield from strings("preference", f"preferences.{name}", value)
    yield from strings("nextStep", "nextSteps", state.get("nextSteps"))


#: What a memory entry is about, by type; any other type shows its other strings.
_MEMORY_FIELDS = {
    "learning": ("text",),
    "preference": ("text",),
    "behavior": ("text",),
    "reminder": ("text",),
    "task": ("description",),
    "context": ("path", "content"),
    "identity": ("key", "value"),
    "user": ("key", "value"),
    "meta": ("key", "value"),
}
_MEMORY_OWN = ("id", "type", "created", "updated")


def _memory_entries(path: Path, top: Path | None) -> tuple[dict[str, Any], set[str]]:
    """The live entries of one log, and every id it names (live or removed)."""
    from ..memory.cache import read_folded

    cache = path.parent / "cache" / (f"{path.name}.fold" if top is None else "memory.jsonl.fold")
    try:
        state, _ = read_folded(path, cache, top)
    except (BrainError, OSError):
        return {}, set()
    return state.entries, set(state.entries) | set(state.dead)


def _memory(path: Path, top: Path | None) -> Iterator[Doc]:
    entries, _ = _memory_entries(path, top)
    for entry_id, entry in entries.items():
        kind = str(entry.get("type"))
        fields = _MEMORY_FIELDS.get(kind) or [k for k in entry if k not in _MEMORY_OWN]
        text = ": ".join(_text(entry[f]) for f in fields if entry.get(f) not in (None, ""))
        if not text.strip():
            continue
        title = " ".join(_text(entry[f]) for f in ("type", "category", "tags") if entry.get(f))
        stamp = entry.get("updated") or entry.get("created")
        yield kind, entry_id, stamp if isinstance(stamp, str) else None, title, text


def _stores(top: Path, voyager: Path | None, parse: ParseBrainMd) -> list[_Store]:
    stores = []
    if voyager is not None:
        md, state, log = voyager / "brain.md", voyager / "brain.json", voyager / "memory.jsonl"
        stores += [
            _Store(BRAIN_MD, md, _fingerprint(md), lambda: _brain_md(md, parse)),
            _Store(BRAIN_JSON, state, _fingerprint(state), lambda: _brain_json(state)),
            _Store(
                MEMORY_PROJECT,
                log,
                _fingerprint(log),
                lambda: _memory(log, top),
                lambda: iter(_memory_entries(log, top)[1]),
            ),
        ]
    personal = personal_log_path()
    if voyager is None or os.path.realpath(personal) != os.path.realpath(voyager / "memory.jsonl"):
        stores.append(
            _Store(
                MEMORY_PERSONAL, personal, _fingerprint(personal), lambda: _memory(personal, None)
            )
        )
    return stores


# -- the index ------------------------------------------------------------------------


def index_path(top: Path) -> Path:
    """Where the index of the project at `top` is kept (the personal folder's cache
    when the project has no ``.voyager/``)."""
    voyager = top / ".voyager"
    folder = voyager if voyager.is_dir() else Path(home_folder())
    return folder / "cache" / "recall.sqlite"


def _connect(path: Path | str, timeout: float) -> sqlite3.Connection:
    confine.check(path)  # SQLite would follow a link out of the repository
    if isinstance(path, Path):  # an existing file, never created by opening it
        con = sqlite3.connect(path.as_uri() + "?mode=rw", uri=True, timeout=timeout)
    else:
        con = sqlite3.connect(path, timeout=timeout)
    con.isolation_level = None  # transactions are ours
    return con


def _stale(con: sqlite3.Connection, stores: list[_Store]) -> list[_Store] | None:
    """The stores whose rows are out of date; None when the index must be built anew."""
    if con.execute("PRAGMA user_version").fetchone()[0] != _VERSION:
        return None
    known = dict(con.execute("SELECT source, fingerprint FROM stores").fetchall())
    return [s for s in stores if known.get(s.source) != s.fingerprint]


def _escaped(doc: Doc) -> Doc:
    """`doc` with each lone surrogate (from a JSON escape in a store, "\\ud800") as that
    escape's text, which SQLite and the hash take."""
    return tuple(  # type: ignore[return-value]
        None if p is None else p.encode("utf-8", "backslashreplace").decode("utf-8") for p in doc
    )


def _digest(doc: Doc) -> bytes:
    import hashlib

    text = "\x1f".join("\x00" if part is None else part for part in doc)
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


def _refresh(con: sqlite3.Connection, stores: list[_Store], everything: bool) -> None:
    """Bring the rows of `stores` up to date (every store's when `everything`): an item
    whose text is unchanged keeps its row, so a store that grew by one item costs one
    insert, not ten thousand."""
    con.execute("BEGIN IMMEDIATE")
    try:
        if everything:
            for table in ("docs", "items", "stores"):
                con.execute(f"DELETE FROM {table}")
        for store in stores:
            band = _BANDS[store.source] * _BAND
            old: dict[bytes, list[int]] = {}
            rows = con.execute(
                "SELECT rowid, digest FROM items WHERE rowid >= ? AND rowid < ?",
                (band, band + _BAND),
            )
            for rowid, digest in rows:
                old.setdefault(digest, []).append(rowid)
            after = max((r for rowids in old.values() for r in rowids), default=band - 1) + 1
            added: list[tuple[int, bytes, Doc]] = []
            for doc in store.read():
                try:
                    digest = _digest(doc)
                except UnicodeEncodeError:  # a lone surrogate, from a JSON escape
                    doc = _escaped(doc)
                    digest = _digest(doc)
                kept = old.get(digest)
                if kept:
                    kept.pop()
                else:
                    added.append((after + len(added), digest, doc))
            gone = [(rowid,) for rowids in old.values() for rowid in rowids]
            con.executemany("DELETE FROM docs WHERE rowid = ?", gone)
            con.executemany("DELETE FROM items WHERE rowid = ?", gone)
            con.executemany(
                "INSERT INTO docs (rowid, source, kind, key, date, sort, title, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (rowid, store.source, kind, key, stamp, _sort_key(stamp), title, text)
                    for rowid, _, (kind, key, stamp, title, text) in added
                ),
            )
            con.executemany(
                "INSERT INTO items (rowid, digest) VALUES (?, ?)",
                ((rowid, digest) for rowid, digest, _ in added),
            )
            if store.shadow is not None:
                con.execute("DELETE FROM shadow")
                con.executemany(
                    "INSERT OR IGNORE INTO shadow (id) VALUES (?)", ((i,) for i in store.shadow())
                )
            con.execute(
                "INSERT OR REPLACE INTO stores (source, fingerprint) VALUES (?, ?)",
                (store.source, store.fingerprint),
            )
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise


def _build(target: str | Path, stores: list[_Store], timeout: float) -> sqlite3.Connection:
    con = sqlite3.connect(target, timeout=timeout)
    con.isolation_level = None
    try:
        con.executescript(_SCHEMA)
        con.execute(f"PRAGMA user_version = {_VERSION}")
        _refresh(con, stores, everything=True)
    except BaseException:
        con.close()
        raise
    return con


def _rebuild(path: Path, stores: list[_Store], timeout: float) -> None:
    """Build the index aside and move it into place. The caller holds the lock."""
    confine.check(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        _build(str(tmp), stores, timeout).close()
        # A journal left by a writer that died belongs to the old file, never the new.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.with_name(path.name + "-journal"))
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _open(path: Path, stores: list[_Store], timeout: float, *, rebuild: bool) -> sqlite3.Connection:
    """The index at `path`, brought up to date."""
    if not rebuild and path.exists():
        con = _connect(path, timeout)
        try:
            if _stale(con, stores) == []:
                return con
        except sqlite3.DatabaseError:
            pass  # rebuilt below, under the lock
        con.close()
    with storage.locked(path, timeout):
        stale = None
        if not rebuild and path.exists():
            con = _connect(path, timeout)
            try:
                stale = _stale(con, stores)
                if stale:
                    _refresh(con, stale, everything=False)
                if stale is not None:
                    return con
            except sqlite3.DatabaseError:
                pass
            con.close()
        _rebuild(path, stores, timeout)
    return _connect(path, timeout)


def _search(con: sqlite3.Connection, terms: list[str], limit: int) -> list[RecallHit]:
    sql = (
        f"SELECT rowid, source, kind, key, date, text, {_RANK} AS score FROM docs"
        " WHERE docs MATCH ?"
        " AND NOT (source = ? AND key IN (SELECT id FROM shadow))"
        " ORDER BY round(score, 3), sort DESC LIMIT ?"
    )
    seen: set[int] = set()
    hits: list[RecallHit] = []
    for op in ("AND", "OR") if len(terms) > 1 else ("AND",):
        if len(hits) >= limit:
            break
        rows = con.execute(sql, (_match(terms, op), MEMORY_PERSONAL, limit + len(hits)))
        for rowid, source, kind, key, stamp, text, score in rows:
            if rowid in seen or len(hits) >= limit:
                continue
            seen.add(rowid)
            hits.append(RecallHit(source, kind, key, stamp, _excerpt(text, terms), score))
    return hits


def recall(
    top: Path,
    query: str,
    limit: int = 10,
    *,
    parse_brain_md: ParseBrainMd,
    lock_timeout: float = storage.DEFAULT_LOCK_TIMEOUT,
) -> list[RecallHit]:
    """The best matches for `query` in every store of the project at `top` (its
    repository top; outside a project, the personal log alone), at most `limit`;
    `parse_brain_md` reads brain.md's entries (`BrainManager.recall` gives it).

    Raises `InvalidEntryError` for an empty query or a limit outside 1..100; never
    because of the index, which is repaired or rebuilt as needed.
    """
    if not isinstance(query, str) or not query.strip():
        raise InvalidEntryError("query: empty; give the words to look for")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidEntryError(
            f"limit: expected a whole number from 1 to {MAX_LIMIT}, got {limit!r}"
        )
    terms = query_terms(query)
    if not terms:
        return []
    voyager = top / ".voyager"
    stores = _stores(top, voyager if voyager.is_dir() else None, parse_brain_md)
    path = index_path(top)
    for rebuild in (False, True):
        try:
            con = _open(path, stores, lock_timeout, rebuild=rebuild)
        except (sqlite3.Error, OSError):
            break  # the cache cannot be written: an index in memory, for this query
        try:
            hits = _search(con, terms, limit)
        except sqlite3.DatabaseError:
            continue  # corrupt beyond what opening it showed: build it again
        finally:
            con.close()
        return _redacted(hits)
    con = _build(":memory:", stores, lock_timeout)
    try:
        return _redacted(_search(con, terms, limit))
    finally:
        con.close()


def _redacted(hits: list[RecallHit]) -> list[RecallHit]:
    # The project's stores are redacted as written; the personal log may not be
    # (redact_secrets = false), so what is shown is redacted once more.
    from ..redact import redact

    return [hit._replace(excerpt=redact(hit.excerpt)) for hit in hits]

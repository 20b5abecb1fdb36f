"""What reaches the agent: the one token-budgeted document injected at session start,
built from every store, and recall of anything else on demand.

Open `build.py` first (`build_context`: which lines fit the budget), then
`candidates.py` (what each store offers, line by line) and `recall.py` (one search over
every store, kept in an SQLite FTS5 index). `cache.py` reuses the last session-start
document while nothing it was built from has changed; `exports.py` writes it into the
files that agents without hooks read at start (AGENTS.md, CLAUDE.md, GEMINI.md, a Cursor
rule).
"""

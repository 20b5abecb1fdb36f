"""The session brain (seed 002): ``.voyager/brain.md``, its timestamped sections, their
compaction, and `BrainManager`, the library's way into every store of a project.

Open `manager.py` first (`BrainManager`: load, update, compact, persist, save, context,
recall), then `brainfile.py` (brain.md read and written byte for byte, with `escaping.py`
for an entry's text inside a section) and `model.py` (the entries and the state as
values). `compaction.py` holds the compaction rules and `summarizer.py` the summaries it
writes; `cachedcontext.py` keeps the built session-start document; `reports.py` is what
the command line and the MCP server report (status, an entry added, a save).
"""

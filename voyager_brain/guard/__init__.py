"""Seed 003: guard rules and the SQLite history of agent sessions (``history.db``).

Rules (regex or semantic, grouped in rule sets assigned to projects) are checked before
every tool call an agent makes; every call, and every rule that fired, is recorded with
the session's messages. Open `check.py` first (the decision for one tool call), then
`db.py` (the schema and its migrations), `rules.py` (rules, rule sets, projects),
`record.py` (writing the history) and `transcript.py` (importing agents' transcripts).
"""

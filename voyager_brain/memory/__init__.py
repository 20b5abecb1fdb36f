"""The typed memory log (seed 001): identity, user, behaviors, learnings, preferences,
project context, tasks and reminders, kept as an append-only JSON-lines event log.

`log` holds the file format (read, validate, append, fold, gc); `schedule` the tasks and
reminders; the personal log lives in ``$VOYAGER_HOME/memory.jsonl``, the project's in
``.voyager/memory.jsonl``.
"""

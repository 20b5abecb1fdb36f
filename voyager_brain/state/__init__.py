"""The project state (seed 000): ``.voyager/brain.json``, its facts, decisions, active
state, key files, known issues, preferences and next steps, merged by fixed per-field
rules at every save.

Open `brainjson.py` first (reading, writing and the merge rules), then `validate.py`
(each field's type and allowed values), `positions.py` (the line an error names) and
`show.py` (the state as text for people: ``voyager-brain show``).
"""

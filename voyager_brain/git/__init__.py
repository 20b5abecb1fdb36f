"""The brain files in git: what changed between versions and who changed it, three-way
merges, and committing at session end.

Open `audit.py` first (the brain files at a revision, ``voyager-brain diff`` and
``log``), then `changes.py` (what changed between two versions, by meaning rather than
by line), `blame.py` (``blame KIND KEY``) and `merge.py` (the merge driver). `setup.py`
registers that driver with git; `autocommit.py` commits the brain files when
``auto_commit = true``. Only `audit.py` imports GitPython, inside the functions that
need it.
"""

"""`voyager-brain doctor`: check the brain files, explain problems, repair what is safe.

Each check yields `Finding`s. Nothing is changed unless `repair=True`, and even then a
file we cannot read is moved aside (never deleted or overwritten). `checks.py` holds the
checks and their order (open it first), `secrets.py` those of secrets in the files.
"""

from .checks import run_checks
from .finding import Finding

__all__ = ["Finding", "run_checks"]

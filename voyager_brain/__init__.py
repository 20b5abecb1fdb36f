"""voyager-brain: memory for coding agents, kept inside the project's git repository.

The session brain (seed 002) and the project state (seed 000)::

    from voyager_brain import BrainManager, BrainEntry

    bm = BrainManager(".")
    state = bm.load()                                   # session_start
    bm.update(BrainEntry(type="observation", content="Task: ..."))   # turn_end
    bm.merge_state({"nextSteps": ["Write integration tests"]})      # brain.json
    bm.compact()                                        # session_compact
    bm.persist()                                        # session_end

Importing this package loads only the standard library; Jinja, markdown-it and YAML are
imported when something is rendered, summarized or has foreign front matter.
"""

from .config import Config
from .errors import (
    BrainError,
    ConfigError,
    CorruptFileError,
    InvalidEntryError,
    LockTimeoutError,
    NotInRepositoryError,
    StateError,
    TemplateError,
)
from .model import ENTRY_TYPES, BrainEntry, BrainState, BrainStatus, CompactionReport
from .session import BrainManager
from .state import ProjectState

__version__ = "0.1.0"

__all__ = [
    "ENTRY_TYPES",
    "BrainEntry",
    "BrainError",
    "BrainManager",
    "BrainState",
    "BrainStatus",
    "CompactionReport",
    "Config",
    "ConfigError",
    "CorruptFileError",
    "InvalidEntryError",
    "LockTimeoutError",
    "NotInRepositoryError",
    "ProjectState",
    "StateError",
    "TemplateError",
    "__version__",
]

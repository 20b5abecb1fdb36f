"""voyager-brain: memory for coding agents, kept inside the project's git repository.

The session brain (seed 002) and the project state (seed 000)::

    from voyager_brain import BrainManager, BrainEntry

    bm = BrainManager(".")
    state = bm.load()                                   # session_start
    bm.update(BrainEntry(type="observation", content="Task: ..."))   # turn_end
    bm.merge_state({"nextSteps": ["Write integration tests"]})      # brain.json
    bm.compact()                                        # session_compact
    bm.persist()                                        # session_end

The multi-agent pipeline over ``.brain/`` (seed 004), for agent loops that run their own
agents::

    from voyager_brain import Pipeline, RunnerResult

    def runner(stage):          # a StageRun: role, stage_task, system_prompt, env ...
        ...                     # run the agent in stage.root, let it write its files
        return RunnerResult(session_id="...")

    final = Pipeline(".", runner=runner).run("Add rate limiting", ["architect", "builder"])

Importing this package loads nothing else: each name is imported from its module on
first use, so a hook that needs two small modules does not pay for the others. Jinja,
markdown-it and YAML are imported when something is rendered, summarized or has foreign
front matter.
"""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing: hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
    from .pipeline.engine import Pipeline, PipelineError
    from .pipeline.runner import RunnerResult, StageRun
    from .pipeline.state import PipelineState
    from .session.manager import BrainManager
    from .session.model import ENTRY_TYPES, BrainEntry, BrainState, BrainStatus, CompactionReport
    from .state.brainjson import ProjectState


__version__ = "0.1.0"

#: Where each public name lives.
_MODULES = {
    "ENTRY_TYPES": "session.model",
    "BrainEntry": "session.model",
    "BrainError": "errors",
    "BrainManager": "session.manager",
    "BrainState": "session.model",
    "BrainStatus": "session.model",
    "CompactionReport": "session.model",
    "Config": "config",
    "ConfigError": "errors",
    "CorruptFileError": "errors",
    "InvalidEntryError": "errors",
    "LockTimeoutError": "errors",
    "NotInRepositoryError": "errors",
    "Pipeline": "pipeline.engine",
    "PipelineError": "pipeline.engine",
    "PipelineState": "pipeline.state",
    "ProjectState": "state.brainjson",
    "RunnerResult": "pipeline.runner",
    "StageRun": "pipeline.runner",
    "StateError": "errors",
    "TemplateError": "errors",
}

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
    "Pipeline",
    "PipelineError",
    "PipelineState",
    "ProjectState",
    "RunnerResult",
    "StageRun",
    "StateError",
    "TemplateError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__ rather than importlib.import_module: importing importlib costs every
    # hook about a millisecond.
    found = __import__(f"{__name__}.{module}", fromlist=[name])
    value = getattr(found, name)
    globals()[name] = value  # later lookups skip this function
    return value

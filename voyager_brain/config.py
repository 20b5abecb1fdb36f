"""config.toml: every key optional, snake_case, defaults from the seeds.

Settings are read from ``$VOYAGER_HOME/config.toml`` (personal defaults, ``~/.voyager``
unless the variable is set) and then ``.voyager/config.toml`` (the project's), the later
winning key by key. Unknown keys are kept as warnings rather than errors, so a config
written for a newer voyager-brain still loads.

A setting that makes voyager-brain run a program (`command_keys`) is taken from the
project's file only once the user trusts that very content (`voyager-brain trust`
records its path and sha256 in ``$VOYAGER_HOME/trust.json``): a cloned repository must
not run code by itself. Untrusted, those keys are ignored and named in
`Config.ignored_keys`; every other key applies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import ConfigError
from .paths import home_folder, trust_file
from .tomlfile import read_toml, read_toml_raw
from .value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class Setting(Record):
    name: str
    default: Any
    kind: type
    help: str


#: The keys, their defaults and what they do: validation, `init`'s config.toml and the
#: docs are all made from this table.
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "compact_budget_tokens",
        4000,
        int,
        "brain.md is compacted until it fits this many tokens",
    ),
    Setting("chars_per_token", 4, int, "characters counted as one token in every estimate"),
    Setting(
        "auto_compact",
        True,
        bool,
        "persist() compacts brain.md by itself when it grows past the budget",
    ),
    Setting(
        "redact_secrets",
        True,
        bool,
        "replace API keys, tokens and passwords with [REDACTED:kind] before writing "
        "(the project memory log, tracked by git, is redacted either way)",
    ),
    Setting(
        "lock_timeout_seconds",
        10.0,
        float,
        "how long a writer waits for another process's lock before giving up",
    ),
    Setting(
        "auto_memory",
        True,
        bool,
        "extract learnings and preferences from conversations (also VOYAGER_AUTO_MEMORY=0)",
    ),
    Setting(
        "decay_after_days",
        90,
        int,
        "days without an update before a learning may decay",
    ),
    Setting(
        "decay_min_score",
        3,
        int,
        "learnings scoring at least this never decay",
    ),
    Setting(
        "prompt_budget",
        2000,
        int,
        "token budget of the context document injected at session start",
    ),
    Setting(
        "model_command",
        "",
        str,
        'command that answers a prompt on stdin, e.g. "llm -m MODEL" (empty: offline)',
    ),
    Setting(
        "model_timeout_seconds",
        60.0,
        float,
        "how long the model command may take before the offline default is used",
    ),
    Setting(
        "summarizer",
        "extractive",
        str,
        "how compaction summarizes: extractive (offline, deterministic) or model"
        " (model_command, extractive when it fails)",
    ),
    Setting(
        "auto_commit",
        False,
        bool,
        "at session end, commit brain.md, brain.json and memory.jsonl (only them; never"
        " during a merge, rebase, cherry-pick or revert)",
    ),
    Setting(
        "auto_export",
        "",
        str,
        "at session end, refresh these exports (comma-separated: agents-md, claude-md,"
        " gemini-md, cursor-rules; see docs/exports.md)",
    ),
    Setting(
        "guard_fail",
        "open",
        str,
        "when the tool-call check itself fails (a corrupt history.db, a bug; a busy one only"
        " queues the row): open allows the call with a line on stderr, closed denies it with"
        " the error as reason",
    ),
    Setting(
        "tool_output_limit",
        4096,
        int,
        "bytes of a tool's output kept in history.db (the rest is cut, with a marker)",
    ),
    Setting(
        "semantic_threshold",
        0.45,
        float,
        "similarity (0-1) from which a semantic guard rule matches a tool call",
    ),
    Setting(
        "semantic_review",
        False,
        bool,
        "put each semantic rule's match to model_command before acting on it (a model"
        " call per match, before the tool call: slower; the answer is recorded)",
    ),
    Setting(
        "embedder",
        "lexical",
        str,
        "how semantic rules are embedded: lexical (offline, built in) or minilm (the"
        " optional voyager-brain[semantic] extra)",
    ),
)
_BY_NAME = {s.name: s for s in SETTINGS}

#: The ``[pipeline]`` table (seed 004's multi-agent pipeline, `voyager-brain pipeline`).
PIPELINE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "stages",
        "architect,builder,reviewer",
        str,
        "the roles a run goes through, in order (scout, architect, builder, reviewer;"
        " a list of names is accepted too)",
    ),
    Setting(
        "max_retries",
        2,
        int,
        "how many times a REVISE or REDESIGN verdict may send the work back (one counter)",
    ),
    Setting(
        "runner",
        "",
        str,
        "the shell command that runs each agent (empty: Claude Code in print mode, see the"
        " pipeline guide)",
    ),
    Setting(
        "stage_timeout_seconds",
        3600.0,
        float,
        "a stage running longer than this fails, and the pipeline with it",
    ),
    Setting(
        "idle_seconds",
        300.0,
        float,
        "a stage whose agent prints nothing and changes no file for this long fails (STAGE_IDLE)",
    ),
    Setting(
        "planner_bash",
        False,
        bool,
        "let the scout and the architect run Bash (they may only write inside .brain/)",
    ),
    Setting(
        "debounce_seconds",
        5.0,
        float,
        "`pipeline watch` starts a run once BACKLOG.md has been quiet this long",
    ),
)
_PIPELINE_BY_NAME = {s.name: s for s in PIPELINE_SETTINGS}
#: Per-role runner commands live in ``[pipeline.runners]``, keyed by role.
PIPELINE_ROLES = ("scout", "architect", "builder", "reviewer")
#: The memory log's settings are also accepted in the original tool's camelCase.
ALIASES = {
    "autoMemory": "auto_memory",
    "decayAfterDays": "decay_after_days",
    "decayMinScore": "decay_min_score",
    "promptBudget": "prompt_budget",
}
SUMMARIZERS = ("extractive", "model")
#: The closed sets of values some string settings take.
CHOICES = {
    "summarizer": SUMMARIZERS,
    "guard_fail": ("open", "closed"),
    "embedder": ("lexical", "minilm"),
}


class PipelineConfig(Record):
    """The ``[pipeline]`` table (see `PIPELINE_SETTINGS`)."""

    stages: tuple[str, ...] = ("architect", "builder", "reviewer")
    max_retries: int = 2
    runner: str = ""
    stage_timeout_seconds: float = 3600.0
    idle_seconds: float = 300.0
    planner_bash: bool = False
    debounce_seconds: float = 5.0
    #: role -> its own runner command (``[pipeline.runners]``), sorted by role.
    runners: tuple[tuple[str, str], ...] = ()

    def runner_for(self, role: str) -> str:
        """The command that runs `role`: its own, else the pipeline's (may be empty)."""
        return dict(self.runners).get(role, self.runner)


class Config(Record):
    """The settings in effect (see `SETTINGS`); `config._replace(key=value)` changes one.
    A NamedTuple (a `Record`): hooks load it on every run (see `voyager_brain.value`)."""

    compact_budget_tokens: int = 4000
    chars_per_token: int = 4
    auto_compact: bool = True
    redact_secrets: bool = True
    lock_timeout_seconds: float = 10.0
    auto_memory: bool = True
    decay_after_days: int = 90
    decay_min_score: int = 3
    prompt_budget: int = 2000
    model_command: str = ""
    model_timeout_seconds: float = 60.0
    summarizer: str = "extractive"
    auto_commit: bool = False
    auto_export: str = ""
    guard_fail: str = "open"
    tool_output_limit: int = 4096
    semantic_threshold: float = 0.45
    semantic_review: bool = False
    embedder: str = "lexical"
    pipeline: PipelineConfig = PipelineConfig()
    #: ``file: key`` for every key we did not recognise (reported by `doctor`).
    unknown_keys: tuple[str, ...] = ()
    #: ``file: key`` for every command key of an untrusted project file, not applied.
    ignored_keys: tuple[str, ...] = ()

    @property
    def compact_budget_chars(self) -> int:
        return self.compact_budget_tokens * self.chars_per_token

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], origin: str = "config") -> Config:
        """Build a Config from defaults plus `data`, checking every value's type."""
        return _merge(cls(), data, origin)


def _shown(value: Any) -> str:
    """`value` as an error shows it: short, as a hostile file may hold a value of
    megabytes, or nested thousands of levels deep."""
    import reprlib

    shown = reprlib.Repr()
    shown.maxstring = shown.maxother = 60
    return shown.repr(value)


def _check(setting: Setting, value: Any, origin: str) -> Any:
    ok = isinstance(value, setting.kind) and not (
        setting.kind is not bool and isinstance(value, bool)
    )
    if setting.kind is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if not ok:
        raise ConfigError(
            f"{origin}: {setting.name}: expected {setting.kind.__name__}, "
            f"got {type(value).__name__} {_shown(value)}"
        )
    lowest = 0 if setting.name in ("decay_min_score", "max_retries") else 1e-9
    if setting.kind in (int, float) and value < lowest:
        what = "a number >= 0" if lowest == 0 else "a positive number"
        raise ConfigError(f"{origin}: {setting.name}: expected {what}, got {value!r}")
    choices = CHOICES.get(setting.name)
    if choices is not None and value not in choices:
        raise ConfigError(
            f"{origin}: {setting.name}: expected one of {', '.join(choices)}, got {_shown(value)}"
        )
    if setting.name == "semantic_threshold" and value > 1:
        raise ConfigError(f"{origin}: semantic_threshold: expected a number <= 1, got {value!r}")
    return value


def _merge(base: Config, data: Mapping[str, Any], origin: str) -> Config:
    changes: dict[str, Any] = {}
    unknown = list(base.unknown_keys)
    for key, value in data.items():
        if key == "pipeline" and isinstance(value, Mapping):
            pipeline, more = _merge_pipeline(base.pipeline, value, origin)
            changes["pipeline"] = pipeline
            unknown.extend(more)
            continue
        setting = _BY_NAME.get(ALIASES.get(key, key))
        if setting is None:
            unknown.append(f"{origin}: {key}")
            continue
        changes[setting.name] = _check(setting, value, origin)
    return base._replace(unknown_keys=tuple(unknown), **changes)


def _merge_pipeline(
    base: PipelineConfig, data: Mapping[str, Any], origin: str
) -> tuple[PipelineConfig, list[str]]:
    changes: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in data.items():
        if key == "runners":
            changes["runners"] = _runners(base, value, origin)
            continue
        setting = _PIPELINE_BY_NAME.get(key)
        if setting is None:
            unknown.append(f"{origin}: pipeline.{key}")
            continue
        if key == "stages":
            changes[key] = _stages(value, origin)
            continue
        changes[key] = _check(setting, value, f"{origin}: pipeline")
    return base._replace(**changes), unknown


def _stages(value: Any, origin: str) -> tuple[str, ...]:
    """A stage list from ``"architect,builder"`` or ``["architect", "builder"]``; the role
    names are checked when a run starts (a wrong one is an error there, naming it)."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value)
    raise ConfigError(
        f"{origin}: pipeline.stages: expected a comma-separated string or a list of role"
        f" names, got {type(value).__name__} {value!r}"
    )


def _runners(base: PipelineConfig, value: Any, origin: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{origin}: pipeline.runners: expected a table of role = command,"
            f" got {type(value).__name__}"
        )
    runners = dict(base.runners)
    for role, command in value.items():
        if role not in PIPELINE_ROLES:
            raise ConfigError(
                f"{origin}: pipeline.runners.{role}: unknown role (expected one of"
                f" {', '.join(PIPELINE_ROLES)})"
            )
        if not isinstance(command, str):
            raise ConfigError(
                f"{origin}: pipeline.runners.{role}: expected a command string,"
                f" got {type(command).__name__}"
            )
        runners[role] = command
    return tuple(sorted(runners.items()))


def load_config(voyager_dir: str | Path | None) -> Config:
    """Defaults, then the personal config.toml, then the project's (`voyager_dir`), whose
    command keys apply only when the user trusts the file (`command_keys`).
    Paths may be strings: the tool-call check reads its settings without pathlib."""
    config = Config()
    personal = os.path.join(home_folder(), "config.toml")
    data = read_toml(personal)
    if data:
        config = _merge(config, data, personal)
    if voyager_dir is None:
        return config
    path = os.path.join(voyager_dir, "config.toml")
    data, raw = read_toml_raw(path)
    if not data:
        return config
    commands = command_keys(data)
    if commands and not _trusted(path, raw, personal):
        data = _without(data, [key for key, _ in commands])
        config = config._replace(ignored_keys=tuple(f"{path}: {key}" for key, _ in commands))
    return _merge(config, data, path)


def ignored_keys_notice(start: str) -> str | None:
    """The line a command says on stderr when the config.toml of the project `start` is
    in has command keys we ignore because the user has not trusted it (`command_keys`),
    so that a model or a runner that does not run is never a mystery; None when there
    are none (or no project, or a config.toml the command itself reports)."""
    from .worktree import find_top

    top = find_top(start)
    if top is None:
        return None
    try:
        ignored = load_config(os.path.join(top, ".voyager")).ignored_keys
    except ConfigError:
        return None
    if not ignored:
        return None
    path = ignored[0].rsplit(": ", 1)[0]
    keys = ", ".join(entry.rsplit(": ", 1)[1] for entry in ignored)
    return (
        f"voyager-brain: ignoring {keys} in {path}: the file is not trusted;"
        " review it, then `voyager-brain trust` allows them"
    )


def command_keys(data: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The keys of a config.toml's `data` that make voyager-brain run a program, with
    their values, in the file's order: a non-empty ``model_command``, ``summarizer =
    "model"``, ``semantic_review = true`` (both hand text to model_command), a non-empty
    ``[pipeline] runner`` and each ``[pipeline.runners]`` command. A key that runs
    nothing (``model_command = ""``, ``semantic_review = false``) is not one; a wrong
    one (an unknown role) is left for validation to name."""
    found: list[tuple[str, Any]] = []
    for key, value in data.items():
        runs = (
            (key == "model_command" and isinstance(value, str) and bool(value.strip()))
            or (key == "summarizer" and value == "model")
            or (key == "semantic_review" and value is True)
        )
        if runs:
            found.append((key, value))
        elif key == "pipeline" and isinstance(value, Mapping):
            runner = value.get("runner")
            if isinstance(runner, str) and runner.strip():
                found.append(("pipeline.runner", runner))
            runners = value.get("runners")
            if isinstance(runners, Mapping):
                for role, command in runners.items():
                    if role in PIPELINE_ROLES and isinstance(command, str) and command.strip():
                        found.append((f"pipeline.runners.{role}", command))
    return found


def _without(data: Mapping[str, Any], keys: list[str]) -> dict[str, Any]:
    """`data` less `keys` (as `command_keys` names them); the tables are copied."""
    kept = dict(data)
    for key in keys:
        if not key.startswith("pipeline."):
            kept.pop(key, None)
            continue
        pipeline = dict(kept["pipeline"])
        kept["pipeline"] = pipeline
        if key == "pipeline.runner":
            pipeline.pop("runner", None)
            continue
        runners = dict(pipeline["runners"])
        pipeline["runners"] = runners
        runners.pop(key[len("pipeline.runners.") :], None)
    return kept


def trusted_files() -> dict[str, str]:
    """The trusted files: resolved path -> sha256 of the content trusted. A trust.json
    that is missing, unreadable or not in this shape trusts nothing."""
    from . import cjson

    try:
        with open(trust_file(), encoding="utf-8") as f:
            data = cjson.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return {}
    trusted = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(trusted, dict):
        return {}
    return {k: v for k, v in trusted.items() if isinstance(k, str) and isinstance(v, str)}


def file_digest(raw: bytes) -> str:
    """The sha256 a trust records of a config file's bytes (hashlib only when asked)."""
    import hashlib

    return hashlib.sha256(raw).hexdigest()


def _trusted(path: str, raw: bytes, personal: str) -> bool:
    """Whether the user trusts the project file at `path` as it is now (`raw`); asked only
    when the file holds a command key. The personal file itself (a repository at the top
    of the home folder) is the user's own."""
    real = os.path.realpath(path)
    if real == os.path.realpath(personal):
        return True
    return trusted_files().get(real) == file_digest(raw)


def default_config_toml() -> str:
    """The commented config.toml that `init` writes: every key, its default, what it does."""
    lines = [
        "# voyager-brain settings for this project. Every key is optional; the values",
        "# shown are the defaults. Personal defaults live in $VOYAGER_HOME/config.toml.",
        "",
    ]
    for s in SETTINGS:
        lines.append(f"# {s.help}")
        lines.append(f"# {s.name} = {_toml_value(s.default)}")
        lines.append("")
    lines += ["# The multi-agent pipeline (`voyager-brain pipeline`); keep this table last.", ""]
    lines.append("# [pipeline]")
    for s in PIPELINE_SETTINGS:
        lines.append(f"# {s.help}")
        lines.append(f"# {s.name} = {_toml_value(s.default)}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)

"""config.toml: every key optional, snake_case, defaults from the seeds.

Settings are read from ``$VOYAGER_HOME/config.toml`` (personal defaults, ``~/.voyager``
unless the variable is set) and then ``.voyager/config.toml`` (the project's), the later
winning key by key. Unknown keys are kept as warnings rather than errors, so a config
written for a newer voyager-brain still loads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from . import regexcache
from .errors import ConfigError
from .paths import home_folder
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


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file as a dict; {} when missing; `ConfigError` naming file and line if bad."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise ConfigError(_not_utf8(path)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    simple = read_simple_toml(text)
    if simple is not None:
        return simple
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        # tomllib recurses once per nested array or inline table: a hostile file
        # thousands of levels deep exhausts the stack before it is read.
        from .nesting import too_deep

        detail, line = too_deep(text)
        raise ConfigError(f"{path}:{line}: {detail}") from None


def _not_utf8(path: str | Path) -> str:
    """The error for a file that is not UTF-8: the line and the first bad byte (the
    text-mode read that failed does not say where in the file it was)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        data.decode("utf-8")
    except OSError as exc:
        return f"{path}: cannot read: {exc}"
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return (
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x});"
            " expected a UTF-8 text file"
        )
    return f"{path}: not valid UTF-8; expected a UTF-8 text file"


# What TOML allows in a comment or a string: anything but control characters (tab is fine).
_TEXT = r"[^\x00-\x08\x0a-\x1f\x7f]"
_SIMPLE_LINE = regexcache.compile(
    rf"[ \t]*(?:([A-Za-z0-9_-]+)[ \t]*=[ \t]*"
    r"(true|false|[+-]?(?:0|[1-9][0-9]*)(\.[0-9]+)?"
    rf"|\"((?:(?![\"\\]){_TEXT})*)\"|'((?:(?!'){_TEXT})*)')[ \t]*)?(?:#{_TEXT}*)?"
)


def read_simple_toml(text: str) -> dict[str, Any] | None:
    """`tomllib.loads(text)` for a file of comments, blank lines and ``key = value`` lines
    with a bare key and a boolean, a decimal number or a string without escapes (what
    `init` writes, and what a person adds to it); None for anything else, which tomllib
    then reads. A session-start hook reads config.toml on every run, and importing
    tomllib costs it more than reading such a file this way."""
    data: dict[str, Any] = {}
    lines = text.split("\n")
    last = len(lines) - 1
    for n, line in enumerate(lines):
        # A CR is allowed only as the first half of a CRLF newline.
        m = _SIMPLE_LINE.fullmatch(line[:-1] if n < last and line.endswith("\r") else line)
        if m is None:
            return None
        key, value = m[1], m[2]
        if key is None:
            continue  # blank, or a comment
        if key in data:
            return None  # a duplicate: tomllib says what is wrong
        if value in ("true", "false"):
            data[key] = value == "true"
        elif m[4] is not None or m[5] is not None:
            data[key] = m[4] if m[4] is not None else m[5]
        else:
            data[key] = float(value) if m[3] else int(value)
    return data


def load_config(voyager_dir: str | Path | None) -> Config:
    """Defaults, then the personal config.toml, then the project's (`voyager_dir`).
    Paths may be strings: the tool-call check reads its settings without pathlib."""
    config = Config()
    paths = [os.path.join(home_folder(), "config.toml")]
    if voyager_dir is not None:
        paths.append(os.path.join(voyager_dir, "config.toml"))
    for path in paths:
        data = read_toml(path)
        if data:
            config = _merge(config, data, path)
    return config


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

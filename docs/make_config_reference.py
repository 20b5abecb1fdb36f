"""Write docs/configuration.md from the settings table: python docs/make_config_reference.py

A test fails when docs/configuration.md is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from voyager_brain.config import ALIASES, PIPELINE_SETTINGS, SETTINGS

INTRO = """\
# Configuration

voyager-brain reads `$VOYAGER_HOME/config.toml` (personal defaults; `~/.voyager` unless
the variable is set) and then `.voyager/config.toml` (the project's, committed with it).
The project's file wins key by key, except the keys that run a program, which it sets
only once you trust it (see [Trust](#trust) below). Every key is optional and
snake_case; a value of the wrong type is an error naming the file and the key, and an
unknown key is ignored and reported by `voyager-brain doctor` (so a file written for a
newer version still loads).
A file that cannot be read (not TOML, not UTF-8, arrays nested too deeply to read) stops
every command that needs the settings with one line naming the file and the line (exit
code 2); hooks print the line and let the agent go on.

| key | type | default | what it does |
|---|---|---|---|
"""

PIPELINE = """
## The pipeline

The `[pipeline]` table sets the defaults of `voyager-brain pipeline` (the multi-agent
pipeline, see [pipeline.md](pipeline.md)); command-line options win over it.

| key | type | default | what it does |
|---|---|---|---|
{rows}
Each role may have its own runner command in `[pipeline.runners]`:

```toml
[pipeline]
stages = "scout,architect,builder,reviewer"

[pipeline.runners]
reviewer = "my-review-agent --json"
```
"""

OUTRO = """
The memory log's settings are also accepted in the original tool's camelCase spelling:
{aliases}.

`voyager-brain init` writes a `config.toml` listing every key, commented out, with its
default. A Python caller may pass settings directly, which skips the files:

```python
BrainManager(".", config={{"compact_budget_tokens": 2000, "auto_compact": False}})
```

## Trust

A project's config.toml comes with the repository, from whoever wrote it. The keys that
make voyager-brain run a program apply from it only once you trust the file, as
direnv's `allow` and Codex's project trust work:

- `model_command` (not empty), `summarizer = "model"` and `semantic_review = true` (both
  hand text to `model_command`);
- `runner` in `[pipeline]` and every command in `[pipeline.runners]`.

The same keys in `$VOYAGER_HOME/config.toml` are yours and always apply, and so does a
command you give on the command line (`pipeline run --runner`). Until you trust the
project's file these keys are ignored, never run, and every other key of the file
applies. You are told where you look:

- the hooks say it once per session in the agent's channel to you (Claude Code, Codex
  and Gemini CLI show a `systemMessage`; Cursor and Copilot have none that lets the
  agent go on, so the line goes to the hook's stderr, which they log);
- other commands print one line on stderr, `voyager-brain: ignoring model_command in
  /home/me/project/.voyager/config.toml: the file is not trusted; review it, then
  `voyager-brain trust` allows them`;
- `voyager-brain status` lists them (`ignored_keys` in `status --json`), `voyager-brain
  doctor` warns about each;
- `voyager-brain pipeline run` (and `resume`) without `--runner` refuses with exit
  code 2 when the project's runner is ignored, rather than fall back to the default
  agent.

<!-- invisible-code-block: console
$ mkdir -p .voyager && cat > .voyager/config.toml <<'EOF'
model_command = "llm -m gpt-4o-mini"
semantic_review = true
EOF
-->

Review the file, then trust it:

```console
$ voyager-brain status | tail -1
{ignored}
$ voyager-brain trust
~/project/.voyager/config.toml lets voyager-brain run:
  model_command = "llm -m gpt-4o-mini"
  semantic_review = true
{trusted}
$ voyager-brain status | tail -1    # the ignored line is gone
blockers   none
```

`voyager-brain trust --show` lists the keys and whether the file is trusted, changing
nothing; `--json` prints the same as JSON. The trust is the file's resolved path and
the sha256 of its bytes, kept in `$VOYAGER_HOME/trust.json`: any change to the file (a
pull, an edit) ignores its command keys again until you trust it again, and
`voyager-brain trust --revoke` forgets it. A file with no such key has nothing to trust:
all its keys apply.

## Token estimates

Sizes are estimated at `chars_per_token` characters per token (4 by default), rounded up,
the same rule used everywhere in voyager-brain.
"""


# Lines of real output too long for this file's width.
TRUSTED = (
    "trusted (sha256 1bd48b61a868695375fa4075a2a12bc138b83bc1cc35eaa726b6a638918096ba);"
    " a change to the file needs `voyager-brain trust` again"
)
IGNORED = (
    "ignored    model_command, semantic_review in .voyager/config.toml"
    " (not trusted; `voyager-brain trust`)"
)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def reference() -> str:
    rows = "".join(
        f"| `{s.name}` | {s.kind.__name__} | `{_value(s.default)}` | {s.help} |\n" for s in SETTINGS
    )
    aliases = ", ".join(f"`{camel}` for `{snake}`" for camel, snake in ALIASES.items())
    pipeline_rows = "".join(
        f"| `{s.name}` | {s.kind.__name__} | `{_value(s.default)}` | {s.help} |\n"
        for s in PIPELINE_SETTINGS
    )
    return (
        INTRO
        + rows
        + PIPELINE.format(rows=pipeline_rows)
        + OUTRO.format(aliases=aliases, trusted=TRUSTED, ignored=IGNORED)
    )


if __name__ == "__main__":
    target = Path(__file__).resolve().parent / "configuration.md"
    target.write_text(reference(), encoding="utf-8")
    sys.stdout.write(f"wrote {target.name}\n")

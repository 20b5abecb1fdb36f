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
The project's file wins key by key. Every key is optional and snake_case; a value of the
wrong type is an error naming the file and the key, and an unknown key is ignored and
reported by `voyager-brain doctor` (so a file written for a newer version still loads).
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

## Token estimates

Sizes are estimated at `chars_per_token` characters per token (4 by default), rounded up,
the same rule used everywhere in voyager-brain.
"""


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
    return INTRO + rows + PIPELINE.format(rows=pipeline_rows) + OUTRO.format(aliases=aliases)


if __name__ == "__main__":
    target = Path(__file__).resolve().parent / "configuration.md"
    target.write_text(reference(), encoding="utf-8")
    sys.stdout.write(f"wrote {target.name}\n")

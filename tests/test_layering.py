"""Dependencies point one way, and heavy libraries stay off the hook path."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "voyager_brain"

# A module may import only modules of a lower layer (or its own). A subpackage
# (memory/) is one module here: its files may import each other and lower layers.
LAYERS = [
    {"errors", "paths", "value", "worktree"},
    {"model", "storage", "redact", "repo", "render", "config"},
    {"brainfile", "summarizer", "state", "providers", "memory", "context_cache", "gitsetup"},
    {"compaction", "context", "merge", "changes"},
    {"session", "audit", "autocommit"},
    {"doctor", "demo", "show", "hooks", "__init__", "blame"},
    {"cli", "__main__"},
]


def layer_of(module: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if module in layer)


def module_of(path: Path) -> str:
    """The layering name of a source file: its stem, or its subpackage."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else path.stem


def package_imports(path: Path) -> set[str]:
    """The voyager_brain modules `path` imports (relative imports, resolved)."""
    depth = len(path.relative_to(PACKAGE).parts) - 1  # 0 for top-level modules
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        if node.level - 1 < depth:  # inside its own subpackage
            continue
        if node.module:
            found.add(node.module.split(".")[0])
        else:
            found.update(alias.name for alias in node.names if alias.name != "__version__")
    return found


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer() -> None:
    assert {module_of(p) for p in sources()} == set().union(*LAYERS)


def test_imports_point_down_the_layers() -> None:
    for path in sources():
        here = module_of(path)
        for target in package_imports(path):
            assert layer_of(target) <= layer_of(here), f"{path.name} ({here}) imports {target}"


def test_only_cli_imports_click() -> None:
    for path in sources():
        if path.stem != "cli":
            assert "import click" not in path.read_text(), path.name


def test_loading_a_brain_imports_no_heavy_library(repo: Path) -> None:
    (repo / ".voyager").mkdir()
    (repo / ".voyager" / "brain.md").write_text(
        "---\nlast_compaction: '2026-03-21T15:00:00Z'\n---\n# p Brain — Session Context\n\n"
        "## Observation — 2026-03-21T14:30:00Z\nx\n"
    )
    code = (
        "import sys, json\nfrom voyager_brain import BrainManager\n"
        f"BrainManager({str(repo)!r}).load()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jinja2', 'markdown_it', 'yaml', 'frontmatter', 'git', 'click'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_a_cold_session_start_imports_only_what_it_needs(repo: Path) -> None:
    """The SessionStart hook, first run (no caches), on a project with every store
    filled: what it imports, as `python -X importtime` reports it. Besides the heavy
    libraries, these stay off this path: `dataclasses` (it brings `inspect`, `ast`, `dis`,
    `tokenize`: about 12 ms; the values are `Value`s and `Record`s), `typing` (about 4
    ms), `tomllib` (the config.toml that init writes is read without it) and `copy`."""
    from voyager_brain import BrainEntry, BrainManager
    from voyager_brain.memory.tool import brain_tool
    from voyager_brain.session import ensure_layout

    ensure_layout(repo / ".voyager")
    bm = BrainManager(repo)
    bm.update(BrainEntry("decision", "Use PostgreSQL over MongoDB"))
    bm.merge_state({"nextSteps": ["Ship the hook"]})
    bm.persist()
    brain_tool("add", cwd=str(repo), type="learning", text="The API runs on port 8080")
    payload = json.dumps({"session_id": "s1", "cwd": str(repo)})
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "voyager_brain",
            "hook",
            "claude",
            "session-start",
        ],
        input=payload,
        capture_output=True,
        text=True,
        cwd=repo,
        check=True,
    )
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Use PostgreSQL over MongoDB" in context and "port 8080" in context
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "voyager_brain" in imported and "json" in imported  # the report is read right
    unwanted = {"dataclasses", "inspect", "typing", "tomllib", "copy", "jinja2", "markdown_it"}
    assert imported & (unwanted | {"yaml", "frontmatter", "git", "click", "mcp", "rich"}) == set()

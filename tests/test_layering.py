"""Dependencies point one way, and heavy libraries stay off the hook path."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "voyager_brain"

# A module may import only modules of a lower layer (or its own).
LAYERS = [
    {"errors"},
    {"model", "storage", "redact", "repo", "render", "config"},
    {"brainfile", "summarizer", "state"},
    {"compaction"},
    {"session"},
    {"doctor", "demo", "show", "__init__"},
    {"cli", "__main__"},
]


def layer_of(module: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if module in layer)


def internal_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found - {"__version__"} if path.stem == "cli" else found


def test_every_module_has_a_layer() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == set().union(*LAYERS)


def test_imports_point_down_the_layers() -> None:
    for path in PACKAGE.glob("*.py"):
        for target in internal_imports(path):
            if target == "__init__" or (path.stem == "cli" and target == ""):
                continue
            assert layer_of(target) <= layer_of(path.stem) or target in ("__init__",), (
                f"{path.stem} imports {target}"
            )


def test_only_cli_imports_click() -> None:
    for path in PACKAGE.glob("*.py"):
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

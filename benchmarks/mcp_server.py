"""The MCP server (`voyager-brain mcp`): how long an agent waits for it to start and
answer ``initialize`` over stdio.

Not named ``mcp.py``: ``python benchmarks/run.py`` puts this folder first on the path,
where such a file would stand in for the SDK's package.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.content import make_repo
from benchmarks.plan import Plan, Results, Row
from benchmarks.session import child_env

#: An agent waits for this before it can list the tools.
MCP_START_TARGET_MS = 1000.0
#: Start + initialize against a process that only imports the SDK's server (issue 29).
MCP_SDK_TARGET_RATIO = 1.2
#: What a client sends first (the handshake clients speak today), one JSON-RPC line.
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "voyager-brain-benchmark", "version": "0"},
        },
    }
)


def start_and_initialize(env: dict[str, str], cwd: Path) -> float:
    """Milliseconds from starting `voyager-brain mcp` to its answer to ``initialize``;
    then the input is closed and the server left to exit (not timed)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE.encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - start) * 1000
    _, err = proc.communicate(timeout=60)
    try:
        answer = json.loads(line)
        name = answer["result"]["serverInfo"]["name"]
    except (ValueError, KeyError, TypeError):
        name = None
    if name != "voyager-brain" or proc.returncode != 0:
        raise RuntimeError(f"voyager-brain mcp: no initialize answer ({line!r}):\n{err.decode()}")
    return elapsed


def python_c(code: str, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=cwd)
    return (time.perf_counter() - start) * 1000


def bench_mcp(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """Start + initialize of the MCP server beside `python -c pass`, and beside a process
    that only imports the SDK's server (what any server built on it pays)."""
    top = make_repo(parent, "mcp")
    env = child_env(pycache)
    # Left at once: tearing down the interpreter after the SDK takes most of a second,
    # which an agent never waits for (the server answers long before it exits).
    sdk = "import mcp.server.mcpserver, os; os._exit(0)"
    # Also the warm-up: the SDK's bytecode is cached from here on.
    found = subprocess.run([sys.executable, "-c", sdk], env=env, cwd=top, capture_output=True)
    if found.returncode != 0:
        print('skipping the MCP server: pip install "voyager-brain[mcp]" to measure it')
        return
    print("the MCP server: start + initialize ...", flush=True)
    start_and_initialize(env, top)  # warm-up: the bytecode of everything else it imports
    runs = plan.startup_runs
    bares, imports, ours = [], [], []
    for _ in range(runs):  # taking turns, so a slow spell hits all three alike
        bares.append(python_c("pass", env, top))
        imports.append(python_c(sdk, env, top))
        ours.append(start_and_initialize(env, top))
    bare, sdk_ms, ours_ms = (statistics.median(t) for t in (bares, imports, ours))
    results.add("mcp", Row("python -c pass", "-", runs, bare))
    what = 'python -c "import mcp.server.mcpserver" (the SDK alone)'
    results.add("mcp", Row(what, "-", runs, sdk_ms, bare))
    results.add(
        "mcp",
        Row(
            "`voyager-brain mcp`: start + initialize over stdio",
            "-",
            runs,
            ours_ms,
            bare,
            f"<= {MCP_START_TARGET_MS:.0f} ms",
            ours_ms <= MCP_START_TARGET_MS,
        ),
    )
    results.add(
        "mcp",
        Row(
            "... against the SDK alone (its import as the floor)",
            "-",
            runs,
            ours_ms,
            sdk_ms,
            f"<= {MCP_SDK_TARGET_RATIO:g}x floor",
            ours_ms / sdk_ms <= MCP_SDK_TARGET_RATIO,
        ),
    )

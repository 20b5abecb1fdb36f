"""What the agents of `benchmarks/uihistory.py`'s history work on and run: three projects
(`Place`: their files, commands, prompts and code) and each tool call with its input as
Claude Code sends it and an output of the right kind (pytest, ruff, git, mypy ...)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voyager_brain.guard import record


@dataclass(frozen=True)
class Place:
    """A project of the history: where it is, its files, what its agents run and ask."""

    path: str
    files: tuple[str, ...]
    commands: tuple[tuple[str, str], ...]  # (command, kind of output)
    prompts: tuple[str, ...]
    code: tuple[str, ...]
    weight: float


PY_CODE = (
    "from datetime import UTC, datetime",
    "import jwt",
    "",
    "def check(token: str) -> dict:",
    "    claims = decode(token)",
    '    if claims["exp"] < datetime.now(UTC).timestamp():',
    '        raise PermissionError("expired")',
    "    return claims",
    "LIMIT_PER_MINUTE = 10",
    "async def login(request: Request) -> Response:",
    '    ip = request.headers.get("X-Real-IP", request.client.host)',
    "    if not limiter.allow(ip):",
    '        return JSONResponse({"error": "too many attempts"}, status_code=429)',
)
GO_CODE = (
    "package proxy",
    "",
    "func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {",
    "\tctx, cancel := context.WithTimeout(r.Context(), p.timeout)",
    "\tdefer cancel()",
    "\tconn, err := p.pool.Acquire(ctx)",
    "\tif err != nil {",
    '\t\treturn fmt.Errorf("pool: %w", err)',
    "\t}",
)
TS_CODE = (
    "import { useState } from 'react';",
    "export function Header({ user }: { user: User | null }) {",
    "  const [open, setOpen] = useState(false);",
    "  return <header className=\"top\">{user?.name ?? 'Sign in'}</header>;",
    "}",
    "export async function fetchJSON<T>(url: string): Promise<T> {",
    "  const res = await fetch(url, { credentials: 'include' });",
)


def places(top: Path, parent: Path, files: tuple[str, ...]) -> list[Place]:
    gateway = parent / "api-gateway"
    gateway.mkdir(exist_ok=True)  # one other project exists; web-frontend does not
    return [
        Place(
            record.project_root(str(top)),
            (*files, "README.md", "src/api/__init__.py"),
            (
                ("pytest -q", "pytest"),
                ("pytest -q tests/test_auth.py", "pytest"),
                ("pytest -q -k refresh", "pytest"),
                ("ruff check src tests", "ruff"),
                ("git status", "status"),
                ("git diff --stat", "diffstat"),
                ("python -m mypy src", "mypy"),
                ("ls src/api", "ls"),
            ),
            (
                "Fix the failing expiry test in tests/test_auth.py",
                "Add refresh-token rotation with family revocation",
                "Rate-limit the login endpoint",
                "Why does /login return 500 behind nginx?",
                "Refactor src/tokens.py so the key id comes from settings",
                "Write tests for the 429 response of /login",
            ),
            PY_CODE,
            0.6,
        ),
        Place(
            str(gateway.resolve()),
            (
                "cmd/gateway/main.go",
                "internal/proxy/proxy.go",
                "internal/proxy/proxy_test.go",
                "internal/db/pool.go",
                "go.mod",
            ),
            (
                ("go test ./...", "gotest"),
                ("go build ./cmd/gateway", "empty"),
                ("go vet ./...", "empty"),
                ("git status", "status"),
            ),
            (
                "The proxy leaks connections when the upstream times out",
                "Add a health endpoint to the gateway",
                "Move the connection pool settings to env vars",
            ),
            GO_CODE,
            0.25,
        ),
        Place(
            str((parent / "web-frontend").absolute()),
            (
                "src/components/Header.tsx",
                "src/api/client.ts",
                "src/App.tsx",
                "package.json",
                "tests/header.test.tsx",
            ),
            (
                ("npm test -- --watch=false", "jest"),
                ("npm run build", "empty"),
                ("npx eslint src", "empty"),
                ("git status", "status"),
            ),
            (
                "The header flickers on login",
                "Show the rate-limit message from the API",
                "Upgrade React Router",
            ),
            TS_CODE,
            0.15,
        ),
    ]


TOOLS = ("Bash", "Read", "Edit", "Write", "Grep")
TOOL_WEIGHTS = (35, 30, 15, 8, 12)
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def b62(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, digit = divmod(n, 62)
        out.append(B62[digit])
    return "".join(out)


def _bash_output(kind: str, rng: random.Random, place: Place) -> tuple[str, bool]:
    """A command's output, and whether it succeeded."""
    file = rng.choice(place.files)
    if kind == "pytest":
        passed = rng.randint(20, 180)
        head = (
            "============================= test session starts ==============================\n"
            "platform linux -- Python 3.12.2, pytest-8.1.1, pluggy-1.4.0\n"
            f"rootdir: {place.path}\ncollected {passed + 1} items\n\n"
        )
        if rng.random() < 0.15:
            return (
                head + "." * 30 + "F" + "." * 9 + "\n=== FAILURES ===\n"
                "___ test_expired_token_is_rejected ___\n"
                "E   AssertionError: assert 200 == 401\n"
                f"FAILED tests/test_auth.py::test_expired_token_is_rejected\n"
                f"1 failed, {passed} passed in {rng.uniform(0.8, 9):.2f}s",
                False,
            )
        return (
            f"{head}{'.' * min(passed, 60)} [100%]\n{passed} passed in {rng.uniform(0.8, 9):.2f}s",
            True,
        )
    if kind == "ruff":
        if rng.random() < 0.3:
            return (
                f"{file}:{rng.randint(1, 90)}:1: F401 `os` imported but unused\nFound 1 error.",
                False,
            )
        return "All checks passed!", True
    if kind == "mypy":
        return f"Success: no issues found in {rng.randint(8, 30)} source files", True
    if kind == "status":
        return (
            f"On branch feature/ratelimit\nChanges not staged for commit:\n\tmodified:   {file}",
            True,
        )
    if kind == "diffstat":
        n = rng.randint(1, 40)
        return f" {file} | {n} {'+' * (n // 2)}{'-' * (n - n // 2)}\n 1 file changed", True
    if kind == "ls":
        return "__init__.py\nratelimit.py\nroutes.py", True
    if kind == "gotest":
        if rng.random() < 0.1:
            return (
                "--- FAIL: TestProxyTimeout (2.01s)\nFAIL\tgithub.com/acme/gateway/internal/proxy",
                False,
            )
        return f"ok  \tgithub.com/acme/gateway/internal/proxy\t{rng.uniform(0.1, 3):.3f}s", True
    if kind == "jest":
        n = rng.randint(5, 60)
        return f"PASS tests/header.test.tsx\nTests:       {n} passed, {n} total", True
    return "", True


def tool_call(rng: random.Random, place: Place) -> tuple[str, dict[str, Any], str, bool, int]:
    """One ordinary tool call in `place`: tool, input, output, success, duration (ms)."""
    tool = rng.choices(TOOLS, TOOL_WEIGHTS)[0]
    path = f"{place.path}/{rng.choice(place.files)}"
    if tool == "Bash":
        command, kind = rng.choice(place.commands)
        output, ok = _bash_output(kind, rng, place)
        words = command.split()
        return (
            tool,
            {"command": command, "description": f"Run {' '.join(words[:2])}"},
            output,
            ok,
            min(int(rng.lognormvariate(7, 1)), 120_000),  # median 1.1 s, a few long ones
        )
    if tool == "Read":
        # 10-80 lines of the file, as `cat -n` shows them: 0.4-3 KB, under the 4 KB the
        # history keeps of an output.
        start, first = rng.randint(1, 200), rng.randrange(len(place.code))
        lines = [place.code[(first + n) % len(place.code)] for n in range(rng.randint(10, 80))]
        shown = "\n".join(f"{start + n:>6}\t{line}" for n, line in enumerate(lines))
        tool_input: dict[str, Any] = {"file_path": path}
        if rng.random() < 0.3:
            tool_input |= {"offset": start, "limit": len(lines)}
        return tool, tool_input, shown, True, rng.randint(2, 40)
    if tool == "Edit":
        old, new = rng.sample(place.code, k=2)
        if rng.random() < 0.05:
            return (
                tool,
                {"file_path": path, "old_string": old, "new_string": new},
                "String to replace not found in file.",
                False,
                rng.randint(2, 30),
            )
        return (
            tool,
            {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
            f"The file {path} has been updated.",
            True,
            rng.randint(2, 30),
        )
    if tool == "Write":
        content = "\n".join(rng.sample(place.code, k=min(len(place.code), rng.randint(3, 9))))
        return (
            tool,
            {"file_path": path, "content": content + "\n"},
            f"File created successfully at: {path}",
            True,
            rng.randint(2, 30),
        )
    word = rng.choice(("def check", "LIMIT_PER_MINUTE", "TODO", "ctx", "useState", "decode("))
    hits = "\n".join(
        f"{rng.choice(place.files)}:{rng.randint(1, 300)}:{rng.choice(place.code)}"
        for _ in range(rng.randint(0, 6))
    )
    return (
        tool,
        {"pattern": word, "path": place.path, "output_mode": "content", "-n": True},
        hits or "No matches found",
        True,
        rng.randint(5, 200),
    )

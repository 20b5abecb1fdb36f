"""`voyager-brain check`: are the brain files fit to commit? (the pre-commit hook)

Each of brain.md, brain.json and memory.jsonl must parse, hold no git conflict markers
(a merge done without the merge driver leaves them) and no secret that redaction
recognises (written by hand, or before redaction existed). The pipeline's agents write
markdown into ``.brain/`` (PLAN.md, MISTAKES.md, RESEARCH/*.md ...) by themselves, with no
redaction on the way: those must hold no secret either. Every problem is one `Problem`
with its file and line. Nothing is written.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path

from . import conflicts, storage
from .errors import BrainError, UnsafePathError

#: The brain files, relative to the repository's top: what `check` looks at by default,
#: and the only files it checks among those it is given.
BRAIN_FILES = (".voyager/brain.md", ".voyager/brain.json", ".voyager/memory.jsonl")
#: The folder of the files the pipeline's agents write, checked for secrets only.
AGENT_FOLDER = ".brain"


def is_agent_file(relative: str) -> bool:
    """Whether `relative` (a path from the repository's top) is agent-written markdown."""
    return relative.startswith(AGENT_FOLDER + "/") and relative.endswith(".md")


def agent_files(top: Path) -> list[str]:
    """The markdown files under ``.brain/``, sorted; links are not followed (a link is
    not a file an agent wrote, and may point anywhere)."""
    folder = top / AGENT_FOLDER
    if folder.is_symlink() or not folder.is_dir():
        return []
    found = []
    for path in folder.rglob("*.md"):
        relative = path.relative_to(top)
        inside = [top.joinpath(*relative.parts[: n + 1]) for n in range(len(relative.parts))]
        if not any(part.is_symlink() for part in inside) and path.is_file():
            found.append(relative.as_posix())
    return sorted(found)


@dataclasses.dataclass(frozen=True, slots=True)
class Problem:
    path: str  # relative to the repository's top
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def brain_files(top: Path, given: Iterable[str] = ()) -> list[str]:
    """The brain files to check: those among `given` (paths relative to the current
    folder or absolute, as pre-commit passes them), else every brain file that exists."""
    wanted = []
    for name in given:
        path = Path(name).absolute()
        try:
            relative = path.relative_to(top).as_posix()
        except ValueError:
            continue
        if relative in BRAIN_FILES or is_agent_file(relative):
            wanted.append(relative)
    if given:
        return sorted(set(wanted))
    return [name for name in BRAIN_FILES if (top / name).is_file()] + agent_files(top)


def check_file(top: Path, name: str) -> list[Problem]:
    """The problems of one brain file (`name` relative to `top`)."""
    path = top / name
    try:
        data = storage.read_bytes(path)
    except UnsafePathError as exc:  # a link out of the repository, a FIFO: never read
        return [Problem(name, None, exc.detail)]
    except OSError as exc:
        return [Problem(name, None, f"cannot read: {exc.strerror or exc}")]
    if data is None:
        return []  # staged as deleted
    if is_agent_file(name):
        return secret_problems(name, data)
    problems = [
        Problem(name, region.start, f"unresolved git conflict (lines {region.start}-{region.end})")
        for region in conflicts.find(data)
    ]
    if not problems:  # a conflicted file does not parse: one kind of problem is enough
        problems += _parse_problems(name, path, data)
    problems += secret_problems(name, data)
    return problems


def _parse_problems(name: str, path: Path, data: bytes) -> list[Problem]:
    if name.endswith("memory.jsonl"):
        return _log_problems(name, data)
    try:
        if name.endswith("brain.md"):
            from .session import brainfile

            brainfile.parse(data, path)
        else:
            from .state import brainjson

            brainjson.loads(data, path)
    except BrainError as exc:
        line = getattr(exc, "line", None)
        detail = getattr(exc, "detail", None) or str(exc)
        return [Problem(name, line, f"does not parse: {detail}")]
    return []


def _log_problems(name: str, data: bytes) -> list[Problem]:
    problems = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
            problems.append(Problem(name, number, "not a JSON object"))
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            problems.append(Problem(name, number, "expected an object with a string type"))
    return problems


def secret_problems(name: str, data: bytes) -> list[Problem]:
    """Each secret in `data` (the file `name`), with its line."""
    from .redact import find_secrets, might_hold_secret

    text = data.decode("utf-8", errors="replace")
    if not might_hold_secret(text):
        return []
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, _start, _end in find_secrets(line):
            problems.append(Problem(name, number, f"unredacted secret ({kind})"))
    return problems


def check(top: Path, given: Iterable[str] = ()) -> tuple[list[str], list[Problem]]:
    """The brain files checked and every problem found in them."""
    names = brain_files(top, list(given))
    return names, [p for name in names for p in check_file(top, name)]

"""The console blocks of README.md and docs/: each ``$ command`` run, and what it prints
compared with the lines the page shows under it.

Sybil (github.com/simplistix/sybil) finds the blocks: it lexes Markdown fences the way
renderers do (indented, nested, longer fences), finds its directives in HTML comments
(``<!-- skip: next "why" -->`` for a block that cannot run here, and
``<!-- invisible-code-block: console ... -->`` for the setup a reader does not need to
see) and keeps each block's line. A page is one session: its blocks run in order, in
one scratch repository (``git init -b main``, no commit), each command in a fresh
``bash`` started in the folder the previous one ended in and with its status as ``$?``,
with a scratch ``HOME`` (so
``~/.voyager`` is the page's own). The page's first ``<!-- docs: folder NAME -->`` names
that repository's folder (``project`` by default), since commands print it; the scratch
folders are shown as ``~`` (the repository as ``~/NAME``).

What a page shows is compared with what ran after these normalisations, on both sides:

- ``...`` alone on a line stands for any lines (none included); ``...`` inside a line for
  any text;
- times (``2026-11-22T06:31:38Z``, ``2026-11-22 06:31``, ``06:31:38``), durations
  (``0.4 s``, ``12 ms``), hexadecimal ids and shas (7 characters or more, with a digit),
  and byte counts are each one placeholder;
- trailing spaces are ignored, and so are blank lines at the end.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from unittest import SkipTest

from sybil import Document, Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

FOLDER = re.compile(r"<!-- docs: folder (\S+) -->")
#: Each pattern, in order, turned into its placeholder before lines are compared.
NORMALISE = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?Z?"), "<time>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d\b"), "<date>"),
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "<duration>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"), "<hex>"),
    (re.compile(r"\b[\d,]+ bytes\b"), "<n> bytes"),
]


@dataclass
class Command:
    line: int  # in the page, counted from 1
    text: str
    shown: list[str] = field(default_factory=list)


def commands(source: str, first_line: int) -> list[Command]:
    """The ``$ `` commands of a block with the lines shown under each. A command goes on
    over the next lines while it ends in a backslash, has a quote open, or has not reached
    the end of its here-document."""
    found: list[Command] = []
    open_command: Command | None = None
    for number, line in enumerate(source.splitlines(), start=first_line):
        if open_command is not None:
            open_command.text += "\n" + line
            if not _unfinished(open_command.text):
                open_command = None
            continue
        if line.startswith("$ "):
            found.append(Command(number, line[2:]))
            if _unfinished(found[-1].text):
                open_command = found[-1]
        elif found:
            found[-1].shown.append(line)
        elif line.strip():
            raise ValueError(f"line {number}: output before any `$ ` command: {line!r}")
    return found


HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def _unfinished(text: str) -> bool:
    if text.endswith("\\"):
        return True
    heredoc = HEREDOC.search(text)
    if heredoc is not None:  # the command goes on to the line that ends the here-document
        return heredoc.group(2) not in text[heredoc.end() :].split("\n")[1:]
    try:
        shlex.split(text, comments=True)
    except ValueError:  # "No closing quotation"
        return True
    return False


def normalise(line: str) -> str:
    line = line.rstrip()
    for pattern, placeholder in NORMALISE:
        line = pattern.sub(placeholder, line)
    return line


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether `printed` is what `shown` shows, ``...`` standing for any lines or text."""
    shown = _trimmed([normalise(line) for line in shown])
    printed = _trimmed([normalise(line) for line in printed])
    return _match(shown, printed)


def _trimmed(lines: list[str]) -> list[str]:
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _match(shown: list[str], printed: list[str]) -> bool:
    if not shown:
        return not printed
    head, rest = shown[0], shown[1:]
    if head == "...":
        return any(_match(rest, printed[i:]) for i in range(len(printed) + 1))
    return bool(printed) and _line_matches(head, printed[0]) and _match(rest, printed[1:])


def _line_matches(shown: str, printed: str) -> bool:
    if "..." not in shown:
        return shown == printed
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    return re.fullmatch(pattern, printed) is not None


@dataclass
class Session:
    """Where a page's commands run: a git repository in a scratch folder, with a home of
    its own (so ``~/.voyager`` is the page's), this Python's scripts first on PATH."""

    page: Path
    root: Path
    failures: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ran: int = 0
    status: int = 0  # the last command's exit status

    @property
    def repo(self) -> Path:
        return self.root / FOLDER_NAME.get(self.page, "project")

    def env(self) -> dict[str, str]:
        home = self.root / "home"
        scripts = str(Path(sys.executable).parent)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("VOYAGER_", "GIT_", "CLAUDE"))
        }
        env.update(
            HOME=str(home),
            PATH=scripts + os.pathsep + env.get("PATH", ""),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="Ada",
            GIT_AUTHOR_EMAIL="ada@example.com",
            GIT_COMMITTER_NAME="Ada",
            GIT_COMMITTER_EMAIL="ada@example.com",
            COLUMNS="100",
            NO_COLOR="1",
            PYTHONDONTWRITEBYTECODE="1",
        )
        return env

    def run(self, command: Command) -> None:
        # Each command runs in a fresh bash, in the folder the last one ended in (a `cd`
        # carries over, as in a terminal; variables do not).
        where = self.root / "cwd"
        cwd = Path(where.read_text().rstrip("\n")) if where.exists() else self.repo
        # `(exit N)` first, so that `$?` is the previous command's status, as in a terminal.
        script = (
            f'(exit {self.status})\n{command.text}\n__status=$?; pwd > "{where}"; exit $__status'
        )
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="backslashreplace",
            timeout=120,
        )
        self.ran += 1
        self.status = done.returncode
        # The scratch folders are the reader's home: ~/NAME is the repository.
        printed = done.stdout.replace(str(self.root / "home"), "~")
        printed = printed.replace(str(self.root), "~").splitlines()
        if not matches(command.shown, printed):
            diff = difflib.unified_diff(
                command.shown, printed, "the page shows", "it printed", lineterm="", n=2
            )
            self.failures.append(
                f"{self.page}:{command.line}: $ {command.text}\n" + "\n".join(diff)
            )


#: A page's scratch folder name, from its `<!-- docs: folder NAME -->`.
FOLDER_NAME: dict[Path, str] = {}


class ConsoleParser(CodeBlockParser):
    language = "console"

    def evaluate(self, example: Example) -> str | None:
        session: Session = example.namespace["session"]
        found = commands(example.parsed, example.line + 1)
        if not found:
            raise ValueError(
                "no `$ ` command: a console block shows commands and what they print"
                " (commands alone go in a ```sh block)"
            )
        for command in found:
            session.run(command)
        return None


def start(page: Path, root: Path) -> tuple[Document, Session]:
    """The page's blocks, and the session they run in (its repository made)."""
    text = page.read_text()
    folder = FOLDER.search(text)
    if folder:
        FOLDER_NAME[page] = folder.group(1)
    session = Session(page, root)
    (root / "home").mkdir(parents=True)
    session.repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=session.repo, check=True)
    document = Sybil(parsers=[ConsoleParser(), SkipParser()]).parse(page)
    document.namespace["session"] = session
    return document, session


def check(page: Path, root: Path) -> Session:
    """Run every console block of `page` in order; the session says what failed."""
    document, session = start(page, root)
    for example in document.examples():
        try:
            example.evaluate()
        except SkipTest as exc:  # a `<!-- skip: next "why" -->` before the block
            session.skipped.append(f"{page}:{example.line}: {exc}")
        except ValueError as exc:  # a block that is not commands and their output
            session.failures.append(f"{page}:{example.line}: {exc}")
    return session

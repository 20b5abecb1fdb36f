"""The agent pages (docs/agents/) against the real CLI: the file each page shows as what
`install AGENT` writes is what it writes in a fresh repository, with the output the page
shows, and every `voyager-brain ...` command the pages show exists, with the options and
arguments they give it."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, git, run_cli

DOCS = ROOT / "docs" / "agents"
AGENTS = ["claude", "codex", "gemini", "cursor", "copilot"]
#: Where the pages show the project: as the docs test (tests/docs) prints a scratch one.
PROJECT = "~/project"
#: Put just before the code block that shows the file `install AGENT` writes ...
HOOKS_MARKER = "<!-- install-output -->"
#: ... and before the one `install mcp AGENT` writes.
MCP_MARKER = "<!-- install-mcp-output -->"

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)


def page(agent: str) -> str:
    return (DOCS / f"{agent}.md").read_text()


def block_after(text: str, marker: str) -> tuple[str, str]:
    """The language and the content of the code block right after `marker`, which must
    appear exactly once."""
    assert text.count(marker) == 1, f"{marker} must appear once"
    after = text.split(marker, 1)[1].lstrip("\n")
    match = FENCE.match(after)
    assert match is not None, f"no code block right after {marker}"
    return match.group(1), match.group(2)


def fresh_repository(tmp_path: Path) -> Path:
    top = tmp_path / "fresh"
    top.mkdir()
    git(top, "init", "-q")
    return top


def written_files(top: Path) -> list[Path]:
    return sorted(p for p in top.rglob("*") if p.is_file() and ".git" not in p.parts)


def shown(output: str, top: Path) -> str:
    """The command's output as the pages show it: the project at a neutral path."""
    return output.replace(str(top.resolve()), PROJECT).replace(str(top), PROJECT)


@pytest.mark.parametrize("agent", AGENTS)
def test_the_page_shows_the_file_install_writes(agent: str, tmp_path: Path) -> None:
    text = page(agent)
    language, shown_file = block_after(text, HOOKS_MARKER)
    assert language == "json"

    top = fresh_repository(tmp_path)
    done = run_cli("install", agent, cwd=top)
    assert done.returncode == 0, done.stderr
    (written,) = written_files(top)
    assert json.loads(shown_file) == json.loads(written.read_text())
    # The page names the file, and shows the command's output as it is.
    assert f"`{written.relative_to(top)}`" in text
    assert f"$ voyager-brain install {agent}\n{shown(done.stdout, top)}" in text


@pytest.mark.parametrize("agent", AGENTS)
def test_the_page_shows_the_file_install_mcp_writes(agent: str, tmp_path: Path) -> None:
    text = page(agent)
    language, shown_file = block_after(text, MCP_MARKER)

    top = fresh_repository(tmp_path)
    done = run_cli("install", "mcp", agent, cwd=top)
    assert done.returncode == 0, done.stderr
    (written,) = written_files(top)
    parse = tomllib.loads if written.suffix == ".toml" else json.loads
    assert language == written.suffix.lstrip(".")
    assert parse(shown_file) == parse(written.read_text())
    assert f"$ voyager-brain install mcp {agent}\n{shown(done.stdout, top)}" in text


def shown_commands() -> list[str]:
    """Every `voyager-brain ...` command the agent pages show: the `$ ` lines of their
    console blocks and their inline code, cut where a redirection or pipe starts."""
    commands = []
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text()
        for language, body in FENCE.findall(text):
            if language == "console":
                commands += [line[2:] for line in body.splitlines() if line.startswith("$ ")]
        prose = FENCE.sub("", text)
        commands += re.findall(r"`(voyager-brain [^`]+)`", prose)
    found = []
    for command in commands:
        words = shlex.split(command)
        if words[0] != "voyager-brain":
            continue  # cd, git ...
        for stop in ("<", ">", "|", "&&", ";"):
            if stop in words:
                words = words[: words.index(stop)]
        found.append(shlex.join(words))
    return sorted(set(found))


COMMANDS = shown_commands()


def test_the_pages_show_each_agents_commands() -> None:
    """The command test below covers the pages: it finds the commands they show."""
    for agent in AGENTS:
        for command in (
            f"voyager-brain install {agent}",
            f"voyager-brain install {agent} --uninstall",
            f"voyager-brain install {agent} --user",
            f"voyager-brain install mcp {agent}",
        ):
            assert command in COMMANDS
        assert any(c.startswith(f"voyager-brain hook {agent} ") for c in COMMANDS), agent


def help_of(words: list[str], cwd: Path) -> tuple[list[str], str]:
    """The command path (`hook cursor`) and the help text of a shown command, as
    `voyager-brain ... --help` prints them."""
    done = run_cli(*words, "--help", cwd=cwd)
    assert done.returncode == 0, done.stderr
    # Click wraps long choices ({agents-md|cursor-\n  rules}); put them back together.
    text = re.sub(r"-\n\s+", "-", done.stdout)
    usage = re.search(r"^Usage: voyager-brain ((?:[a-z][\w-]* )*)", text, re.M)
    assert usage is not None, text
    return usage.group(1).split(), text


def option_line(option: str, text: str) -> re.Match[str] | None:
    """The help's line for `option` (`  -C, --root DIRECTORY  Run as if ...`), with
    what follows the option's name."""
    return re.search(rf"^ +(?:-\w, +)?{re.escape(option)}(?![\w-])(.*)$", text, re.M)


def takes_value(option: str, text: str) -> bool:
    """Whether `option` takes a value: click puts its metavar one space after it
    (`--pattern TEXT`, `--action [block|warn|log]`), a flag's text two or more."""
    line = option_line(option, text)
    return line is not None and re.match(r" \S", line.group(1)) is not None


def check_command(command: str, cwd: Path) -> None:
    """`command` exists: its subcommands, each option it gives, and each argument (an
    EVENT, an agent, an export target ...) are in its help."""
    words = shlex.split(command)[1:]
    path, text = help_of(words, cwd)
    where = f"voyager-brain {' '.join(path)}"
    assert words[: len(path)] == path, f"{command}: the command is {where}"
    rest = iter(words[len(path) :])
    for word in rest:
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            assert option_line(option, text), f"{command}: {option} is no option of {where}"
            if "=" not in word and takes_value(option, text):
                next(rest, None)  # its value
        elif "=" not in word and not word.isdigit():  # KEY=VALUE and ids are free
            assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text), (
                f"{command}: {word!r} is no argument of {where}"
            )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_shown_command_exists(command: str, tmp_path: Path) -> None:
    check_command(command, tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        "voyager-brain hook gemini before-tool-use",  # no such event
        "voyager-brain hook windsurf session-start",  # no such agent
        "voyager-brain install cursor --global",  # no such option
        "voyager-brain install mcp windsurf",  # not a choice
        "voyager-brain rules add --tool Bash --verdict block",  # no such option
        "voyager-brain hooks cursor",  # no such command
    ],
)
def test_the_command_check_fails_on_what_does_not_exist(command: str, tmp_path: Path) -> None:
    with pytest.raises(AssertionError):
        check_command(command, tmp_path)


def test_options_that_take_a_value_are_told_from_flags(tmp_path: Path) -> None:
    assert not takes_value("--user", help_of(["install", "cursor"], tmp_path)[1])
    rules = help_of(["rules", "add"], tmp_path)[1]
    assert takes_value("--pattern", rules) and takes_value("--action", rules)
    assert not takes_value("--json", rules)


def hooks_in(document: dict[str, Any]) -> set[str]:
    """The commands of a hooks file, in either shape."""
    found = set()
    for entries in document["hooks"].values():
        for entry in entries:
            for handler in entry.get("hooks", [entry]):
                found |= {handler[k] for k in ("command", "bash") if k in handler}
    return found


@pytest.mark.parametrize("agent", AGENTS)
def test_the_events_table_lists_every_installed_hook(agent: str) -> None:
    text = page(agent)
    document = json.loads(block_after(text, HOOKS_MARKER)[1])
    rows = {line for line in text.splitlines() if line.startswith("| `")}
    for command in hooks_in(document):
        # The table shows the command; the file may end it with a success (`|| true`).
        command = command.removesuffix(" || true").removesuffix("; exit 0")
        assert any(f"`{command}`" in row for row in rows), command


def test_install_mcp_codex_forwards_voyagers_environment_and_upgrades_the_old_table(
    tmp_path: Path,
) -> None:
    top = fresh_repository(tmp_path)
    config = top / ".codex" / "config.toml"
    config.parent.mkdir()
    # What earlier versions wrote, after a table of the user's.
    config.write_text(
        '[mcp_servers.other]\ncommand = "x"\n\n'
        '[mcp_servers.voyager-brain]\ncommand = "voyager-brain"\nargs = ["mcp"]\n'
    )
    done = run_cli("install", "mcp", "codex", cwd=top)
    assert done.returncode == 0, done.stderr
    table = tomllib.loads(config.read_text())["mcp_servers"]
    assert table["voyager-brain"]["env_vars"] == ["VOYAGER_HOME", "VOYAGER_MEMORY_PATH"]
    assert table["other"] == {"command": "x"}
    again = run_cli("install", "mcp", "codex", cwd=top)
    assert "already has the voyager-brain MCP server" in again.stdout
    assert run_cli("install", "mcp", "codex", "--uninstall", cwd=top).returncode == 0
    assert tomllib.loads(config.read_text())["mcp_servers"] == {"other": {"command": "x"}}

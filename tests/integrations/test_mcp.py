"""`voyager-brain mcp`: the MCP server, through the SDK's own client, in process and
over a real stdio pipe, on a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the voyager-brain[mcp] extra")

from conftest import run_cli
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from voyager_brain import __version__
from voyager_brain.integrations.mcp_server import CONTEXT_URI, build_server
from voyager_brain.memory.tool import ACTIONS
from voyager_brain.session.model import ENTRY_TYPES

pytestmark = pytest.mark.anyio

TOOLS = {
    "brain",
    "status",
    "add",
    "compact",
    "context",
    "save",
    "recall",
    "rules_add",
    "rules_test",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(repo: Path) -> Path:
    """The repository, set up by `voyager-brain init` as a user would."""
    assert run_cli("init", cwd=repo).returncode == 0
    return repo


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def json_of(result: CallToolResult) -> Any:
    assert not result.is_error, text_of(result)
    data = json.loads(text_of(result))
    assert data == result.structured_content  # the same answer, as text and as data
    return data


def without_first_line(document: str) -> str:
    """The context without its first line (it holds the date)."""
    return document.split("\n", 1)[1]


# -- what the server offers -------------------------------------------------------------


async def test_every_tool_is_listed_with_a_description_and_a_schema(project: Path) -> None:
    async with Client(build_server(project)) as client:
        assert client.server_info is not None and client.server_info.name == "voyager-brain"
        assert client.instructions and "context" in client.instructions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object"
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    required = {name: set(tools[name].input_schema.get("required", [])) for name in tools}
    assert required == {
        "brain": {"action"},
        "status": set(),
        "add": {"type", "text"},
        "compact": set(),
        "context": set(),
        "save": {"update"},
        "rules_add": {"description"},
        "rules_test": {"tool", "tool_input"},
        "recall": {"query"},
    }
    brain = tools["brain"].input_schema["properties"]
    assert brain["action"]["enum"] == list(ACTIONS)
    assert {"type", "text", "id", "tags", "cadence", "query", "verbose"} <= set(brain)
    assert tools["add"].input_schema["properties"]["type"]["enum"] == list(ENTRY_TYPES)
    assert tools["save"].input_schema["properties"]["update"]["type"] == "object"
    assert tools["status"].annotations is not None and tools["status"].annotations.read_only_hint


# -- the tools, in process --------------------------------------------------------------


async def test_a_learning_added_with_brain_is_in_the_context(project: Path) -> None:
    async with Client(build_server(project)) as client:
        added = await client.call_tool(
            "brain", {"action": "add", "type": "learning", "text": "The API runs on port 8080"}
        )
        assert not added.is_error
        assert text_of(added).startswith("Added learning ")
        assert added.structured_content is not None
        assert added.structured_content["ok"] is True
        assert added.structured_content["store"] == "project"
        listed = await client.call_tool("brain", {"action": "list", "query": "port 8080"})
        context = text_of(await client.call_tool("context", {}))
        small = text_of(await client.call_tool("context", {"budget": 200}))
    [entry] = added.structured_content["entries"]
    assert text_of(listed) == f"[learning {entry['id']}] The API runs on port 8080"
    assert "- The API runs on port 8080" in context
    assert len(small) < len(context)
    # What the command line gives for the same project.
    cli = run_cli("context", cwd=project).stdout
    assert without_first_line(context) == without_first_line(cli)


async def test_an_observation_added_shows_in_status(project: Path) -> None:
    async with Client(build_server(project)) as client:
        added = json_of(
            await client.call_tool(
                "add", {"type": "observation", "text": "The test suite takes 40 s"}
            )
        )
        again = json_of(
            await client.call_tool("add", {"type": "decision", "text": "Use PostgreSQL"})
        )
        status = json_of(await client.call_tool("status", {}))
    assert added["added"] is True and again["added"] is True
    assert added["entry"]["content"] == "The test suite takes 40 s"
    assert "The test suite takes 40 s" in (project / ".voyager" / "brain.md").read_text()
    assert status["entries"] == {
        "total": 2,
        "observation": 1,
        "decision": 1,
        "loop_status": 0,
        "reflection": 0,
    }
    assert status["branch"] == "main" and status["project"] == project.name
    # The same JSON as `voyager-brain status --json`.
    assert status == json.loads(run_cli("status", "--json", cwd=project).stdout)


async def test_save_merges_a_partial_state(project: Path) -> None:
    update = {
        "nextSteps": ["Ship the MCP server"],
        "decisions": [{"what": "Serve MCP over stdio", "why": "every agent speaks it"}],
    }
    async with Client(build_server(project)) as client:
        saved = json_of(await client.call_tool("save", {"update": update}))
        status = json_of(await client.call_tool("status", {}))
    assert {c["path"] for c in saved["changes"]} >= {"nextSteps", "decisions"}
    assert saved["unknown_fields"] == []  # a field brain.json lacks is refused (test_mcp_wire)
    assert status["state"]["counts"]["decisions"] == 1
    shown = json.loads(run_cli("show", "--json", cwd=project).stdout)
    assert shown["nextSteps"] == ["Ship the MCP server"]
    assert shown["decisions"][0]["what"] == "Serve MCP over stdio"


async def test_compact_reports_what_it_did(project: Path) -> None:
    async with Client(build_server(project)) as client:
        await client.call_tool("add", {"type": "observation", "text": "one"})
        report = json_of(await client.call_tool("compact", {}))
    assert report["entries_before"] == report["entries_after"] == 1
    assert report["fits"] is True and report["changed"] is False


async def test_a_rule_added_blocks_the_call_it_is_for(project: Path) -> None:
    async with Client(build_server(project)) as client:
        rule = json_of(
            await client.call_tool(
                "rules_add",
                {
                    "description": "Never force push",
                    "pattern": r"git\s+push\b.*--force",
                    "tool": "Bash",
                    "solution": "Push a new commit instead",
                },
            )
        )
        blocked = json_of(
            await client.call_tool(
                "rules_test",
                {"tool": "Bash", "tool_input": {"command": "git push origin main --force"}},
            )
        )
        allowed = json_of(
            await client.call_tool(
                "rules_test", {"tool": "Bash", "tool_input": {"command": "git push"}}
            )
        )
    assert rule["action"] == "block" and rule["type"] == "regex"
    assert blocked["decision"] == "block"
    assert [m["id"] for m in blocked["matches"]] == [rule["id"]]
    assert "Never force push" in blocked["reason"] and "Push a new commit" in blocked["reason"]
    assert allowed == {"decision": "allow", "matches": [], "problems": []}
    # The rule is in history.db, where the hooks and the command line find it.
    listed = json.loads(run_cli("rules", "list", "--json", cwd=project).stdout)
    assert [r["description"] for r in listed] == ["Never force push"]


async def test_the_context_resource_is_the_context_document(project: Path) -> None:
    async with Client(build_server(project)) as client:
        await client.call_tool("brain", {"action": "add", "type": "learning", "text": "Use uv"})
        resources = (await client.list_resources()).resources
        read = await client.read_resource(CONTEXT_URI)
        tool = text_of(await client.call_tool("context", {}))
    assert [str(r.uri) for r in resources] == [CONTEXT_URI]
    assert resources[0].mime_type == "text/markdown"
    [contents] = read.contents
    assert getattr(contents, "text", None) == tool
    assert "- Use uv" in tool


# -- errors -----------------------------------------------------------------------------


async def test_a_user_error_is_the_clis_line_and_the_server_goes_on(project: Path) -> None:
    async with Client(build_server(project)) as client:
        bad_action = await client.call_tool("brain", {"action": "explode"})
        bad_regex = await client.call_tool(
            "rules_add", {"description": "x", "pattern": "(unclosed"}
        )
        bad_budget = await client.call_tool("context", {"budget": 10})
        bad_type = await client.call_tool("add", {"type": "musing", "text": "hm"})
        not_json_type = await client.call_tool("context", {"budget": "lots"})
        still = await client.call_tool("brain", {"action": "list"})
    cli = run_cli("brain", "action=explode", cwd=project)
    assert cli.returncode == 2
    assert bad_action.is_error and text_of(bad_action) == cli.stderr.strip()
    for result in (bad_regex, bad_budget, bad_type):
        assert result.is_error
        line = text_of(result)
        assert line.startswith("voyager-brain: ") and "\n" not in line
        assert "Traceback" not in line
    assert text_of(bad_budget) == "voyager-brain: budget: expected at least 50 tokens, got 10"
    assert "entry type: expected one of observation" in text_of(bad_type)
    # An argument of the wrong JSON type is refused by the SDK against the schema.
    assert not_json_type.is_error and "budget" in text_of(not_json_type)
    assert not still.is_error


async def test_outside_a_repository_the_tools_say_so(tmp_path: Path) -> None:
    plain = (tmp_path / "plain").resolve()
    plain.mkdir()
    async with Client(build_server(plain)) as client:
        status = await client.call_tool("status", {})
        context = await client.call_tool("context", {})
    cli = run_cli("status", cwd=plain)
    assert status.is_error and text_of(status) == cli.stderr.strip()
    assert "not inside a git repository" in text_of(status)
    # The context and the personal log work anywhere, as on the command line.
    assert not context.is_error and text_of(context).startswith("# Memory")


# -- over stdio, as an agent starts it --------------------------------------------------


async def test_over_stdio_an_agent_adds_a_learning_and_reads_the_context(project: Path) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "voyager_brain", "mcp"],
        cwd=project,
        env=dict(os.environ),  # VOYAGER_HOME and git's settings of the test
    )
    # mode="legacy": the initialize handshake that clients send today.
    async with Client(server, mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "voyager-brain"
        assert client.server_info.version == __version__
        names = {tool.name for tool in (await client.list_tools()).tools}
        added = await client.call_tool(
            "brain", {"action": "add", "type": "learning", "text": "CI runs on Node 22"}
        )
        context = text_of(await client.call_tool("context", {"budget": 2000}))
        error = await client.call_tool("brain", {"action": "explode"})
        status = await client.call_tool("status", {})
    assert names == TOOLS
    assert not added.is_error and text_of(added).startswith("Added learning ")
    assert "- CI runs on Node 22" in context
    assert error.is_error and text_of(error).startswith("voyager-brain: action: expected")
    assert not status.is_error


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    # `import mcp` fails in this process, as when the extra is not installed.
    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['voyager-brain', 'mcp']\n"
        "from voyager_brain.__main__ import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("voyager-brain: the MCP server needs the MCP SDK 2.x")
    assert 'pip install "voyager-brain[mcp]"' in line


def test_mcp_help_says_what_it_serves_and_what_it_needs(tmp_path: Path) -> None:
    out = run_cli("mcp", "--help", cwd=tmp_path).stdout
    assert "over MCP" in out and "stdin and stdout" in out
    assert 'pip install "voyager-brain[mcp]"' in out
    assert '"args": ["mcp"]' in out


def test_the_server_an_agent_starts_skips_the_command_line_and_names_ignored_keys(
    project: Path,
) -> None:
    """`voyager-brain mcp` is routed before the command line (its commands and their
    imports are a tenth of the start an agent waits for), and still says which
    untrusted keys of config.toml it ignores, as every command does."""
    config = project / ".voyager" / "config.toml"
    config.write_text(config.read_text() + '\nmodel_command = "echo hi"\n')
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "voyager_brain", "mcp"],
        input=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        + "\n",
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == (
        "voyager-brain"
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "voyager_brain.integrations.mcp_server" in imported
    # (click itself comes with the SDK, through uvicorn.)
    assert not {"voyager_brain.cli", "voyager_brain.cli.common"} & imported
    said = [line for line in done.stderr.splitlines() if not line.startswith("import time")]
    assert said == [
        f"voyager-brain: ignoring model_command in {config}: the file is not trusted;"
        " review it, then `voyager-brain trust` allows them"
    ]


def test_install_mcp_without_the_sdk_writes_the_entry_and_says_how_to_add_it(
    repo: Path,
) -> None:
    # This Python has the SDK: the install is run with `mcp` made unimportable.
    script = (
        "import sys; sys.modules['mcp'] = None;"
        "sys.argv = ['voyager-brain', 'install', 'mcp', 'claude'];"
        "from voyager_brain.__main__ import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("voyager-brain MCP server added to ")
    assert done.stderr == (
        "voyager-brain: the server needs the MCP SDK, which this Python lacks:"
        ' pip install "voyager-brain[mcp]"\n'
    )
    assert (repo / ".mcp.json").exists()
    with_sdk = run_cli("install", "mcp", "codex", cwd=repo)
    assert with_sdk.returncode == 0 and with_sdk.stderr == ""

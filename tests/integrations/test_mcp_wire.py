"""The MCP server answers every message it cannot serve with the JSON-RPC error the spec
gives, and stays up: through `voyager-brain mcp` as an agent starts it, over a real pipe,
and `triage` (what decides) under random lines."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="the MCP SDK is the voyager-brain[mcp] extra")

import mcp_types

from voyager_brain.integrations import mcpwire

CODES = {mcpwire.PARSE_ERROR, mcpwire.INVALID_REQUEST, mcpwire.INVALID_PARAMS}


def sdk_check(text: str) -> object:
    return mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)


class Server:
    """`voyager-brain mcp` in `project`, spoken to line by line."""

    def __init__(self, project: Path, *command: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, *(command or ("-m", "voyager_brain", "mcp"))],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        initialize = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        }
        assert self.ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send_line(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode()
        self.stdin.write(data + b"\n")
        self.stdin.flush()

    def reply(self, timeout: float = 20.0) -> dict[str, Any] | None:
        ready, _, _ = select.select([self.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.stdout.readline()
        return json.loads(line) if line else None

    def ask(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.send_line(json.dumps(message))
        return self.reply()

    def close(self) -> tuple[int, str]:
        """Close its stdin: its exit code and what it wrote on stderr."""
        self.stdin.close()
        code = self.process.wait(timeout=30)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.stdin, self.stdout, self.process.stderr):
            assert stream is not None
            stream.close()


@pytest.fixture
def server(repo: Path) -> Any:
    assert run_cli("init", cwd=repo).returncode == 0
    with Server(repo) as running:
        yield running


def call(request_id: int, tool: str, arguments: Any) -> str:
    params = {"name": tool, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message)


def assert_error(reply: dict[str, Any] | None, request_id: Any, code: int, says: str) -> None:
    assert reply is not None, "no reply: the client would wait forever"
    assert reply["jsonrpc"] == "2.0" and reply["id"] == request_id, reply
    assert reply["error"]["code"] == code, reply
    assert says in reply["error"]["data"], reply


def test_every_message_it_cannot_serve_is_answered_and_it_goes_on_serving(server: Server) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    huge = call(10, "recall", {"query": "x"}).replace('"x"}', '"x", "limit": ' + "9" * 5000 + "}")
    cases: list[tuple[str | bytes, Any, int, str]] = [
        ("{not json", None, -32700, "not valid JSON"),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', None, -32700, "not valid JSON"),
        (b"\xff\xfe\x00", None, -32700, "not valid JSON"),
        (json.dumps([{"jsonrpc": "2.0", "id": 2, "method": "ping"}]), None, -32600, "batch"),
        ('"hello"', None, -32600, "expected a JSON object"),
        (json.dumps({"jsonrpc": "1.0", "id": 3, "method": "ping"}), 3, -32600, '"2.0"'),
        (json.dumps({"id": 4, "method": "ping"}), 4, -32600, '"2.0"'),
        (json.dumps({"jsonrpc": "2.0", "id": 5}), 5, -32600, "result or an error"),
        (json.dumps({"jsonrpc": "2.0", "id": True, "method": "ping"}), None, -32600, "id:"),
        (json.dumps({"jsonrpc": "2.0", "id": 6, "method": 7}), 6, -32600, "method:"),
        (json.dumps({**ping, "params": [1]}), 7, -32602, "params"),
        (call(8, "status", {"x": json.loads("[" * 300 + "]" * 300)}), 8, -32700, "recursion"),
        (call(9, "status", {}).replace("{}", deep), None, -32700, "levels deep"),
        (huge, None, -32700, "5,000 digits"),
    ]
    for line, request_id, code, says in cases:
        server.send_line(line)
        assert_error(server.reply(), request_id, code, says)
    # Notifications are never answered, however wrong: the next reply is the ping's.
    server.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}))
    server.send_line("")
    assert server.ask({"jsonrpc": "2.0", "id": 11, "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": 11,
        "result": {},
    }
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr


def test_a_line_over_the_limit_is_answered_without_being_kept(server: Server) -> None:
    text = "x" * (mcpwire.MESSAGE_LIMIT + 10)
    server.send_line(call(1, "add", {"type": "observation", "text": text}))
    assert_error(server.reply(), None, -32600, "over 32 MiB")
    # Under the limit, a large argument is served.
    big = "y" * (4 << 20)
    server.send_line(call(2, "add", {"type": "observation", "text": big}))
    reply = server.reply()
    assert reply is not None and reply["id"] == 2 and "result" in reply
    assert server.ask({"jsonrpc": "2.0", "id": 3, "method": "ping"})


def test_lone_surrogates_in_and_out_neither_crash_nor_go_unanswered(
    server: Server, repo: Path
) -> None:
    # In: a lone surrogate escape is read as U+FFFD.
    server.send_line(call(1, "add", {"type": "observation", "text": "left \ud800 right"}))
    reply = server.reply()
    assert reply is not None and reply["id"] == 1 and not reply["result"]["isError"]
    assert "left \ufffd right" in (repo / ".voyager" / "brain.md").read_text()
    # Out: one in a committed memory.jsonl comes back escaped, as the CLI prints it.
    entry = {
        "id": "0badc0de",
        "type": "learning",
        "text": "odd \ud800 text",
        "source": "manual",
        "created": "2026-11-27T08:00:00.000Z",
        "scope": "project",
        "projectPath": ".",
    }
    with (repo / ".voyager" / "memory.jsonl").open("a") as log:
        log.write(json.dumps(entry) + "\n")
    for request_id, (tool, arguments) in enumerate(
        [("context", {}), ("recall", {"query": "odd text"}), ("brain", {"action": "list"})], 2
    ):
        server.send_line(call(request_id, tool, arguments))
        reply = server.reply()
        assert reply is not None and reply["id"] == request_id, reply
        text = reply["result"]["content"][0]["text"]
        # Escaped as the CLI prints it (recall's JSON escapes the backslash once more).
        assert "odd \\ud800 text" in text or "odd \\\\ud800 text" in text, text
        assert "\ud800" not in text
    read = server.ask(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "resources/read",
            "params": {"uri": "voyager://context"},
        }
    )
    assert read is not None and "odd \\ud800 text" in read["result"]["contents"][0]["text"]
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr


def test_stray_output_of_the_process_does_not_reach_the_wire(tmp_path: Path) -> None:
    """fd 1 is claimed while serving: what a child process prints goes to stderr."""
    script = (
        "import os, sys\n"
        "from voyager_brain.integrations import mcpwire\n"
        "from voyager_brain.integrations.mcp_server import build_server\n"
        "server = build_server()\n"
        "@server.tool()\n"
        "def noisy() -> str:\n"
        "    os.system('echo child output')\n"
        "    print('print output')\n"
        "    return 'done'\n"
        "mcpwire.serve(server)\n"
    )
    program = tmp_path / "noisy.py"
    program.write_text(script)
    with Server(tmp_path, str(program)) as server:
        reply = server.ask(json.loads(call(1, "noisy", {})))
        assert reply is not None and reply["result"]["content"][0]["text"] == "done"
        code, stderr = server.close()
    assert code == 0 and "child output" in stderr and "print output" in stderr


# -- triage, under random lines ------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
        "id": st.integers() | st.text(max_size=5) | st.none() | st.booleans() | st.floats(),
        "method": st.sampled_from(["ping", "tools/call", "notifications/x"]) | json_values,
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)
lines = (
    st.binary(max_size=200)
    | json_values.map(lambda value: json.dumps(value).encode())
    | envelopes.map(lambda value: json.dumps(value).encode())
    | envelopes.map(lambda value: json.dumps(value).encode()[:-1])  # cut short
)


@settings(max_examples=400, deadline=None)
@given(lines)
def test_each_line_is_served_answered_or_is_a_notification(line: bytes) -> None:
    message, reply = mcpwire.triage(line, sdk_check)
    assert message is None or reply is None
    if message is not None:
        sdk_check(message)  # the SDK takes what is passed on, so it drops nothing
        message.encode("utf-8")  # and no lone surrogate reaches it
    if reply is not None:
        answer = json.loads(reply)
        assert set(answer) == {"jsonrpc", "id", "error"} and answer["jsonrpc"] == "2.0"
        assert answer["error"]["code"] in CODES
        assert answer["id"] is None or type(answer["id"]) in (int, str)
        assert "\n" not in reply and "errors.pydantic.dev" not in reply
    if message is None and reply is None:
        # Only a blank line or a notification goes unanswered.
        text = line.decode("utf-8", "replace").strip()
        value = json.loads(text) if text else None
        assert not text or (
            isinstance(value, dict) and "id" not in value and isinstance(value.get("method"), str)
        )


@given(st.text())
def test_what_a_tool_answers_can_always_be_written(text: str) -> None:
    value = mcpwire.printable({"text": text, "list": [text], text: 1})
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    if not any("\ud800" <= char <= "\udfff" for char in text):
        assert value == {"text": text, "list": [text], text: 1}


def test_a_request_under_the_limit_is_read_whole_and_one_over_it_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "wire"
    path.write_bytes(b"a" * (mcpwire.MESSAGE_LIMIT + 5) + b"\n" + b"next\n" + b"tail")
    start = time.perf_counter()
    with path.open("rb") as stream:
        got = [mcpwire.read_line(stream) for _ in range(4)]
    assert got == [mcpwire.TOO_LONG, b"next\n", b"tail", None]
    assert time.perf_counter() - start < 10


# -- calls the server cannot serve, stopping it -----------------------------------------


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": "x", "bogus": 1}, "recall: bogus: no such parameter (it takes query, limit)"),
        ({"query": 5}, "recall: query: expected a string, got an integer"),
        (
            {"query": "x", "limit": 500},
            "recall: limit: expected at least 1 and at most 100, got 500",
        ),
        ({"query": "x", "limit": True}, "recall: limit: expected an integer, got true or false"),
        ({}, "recall: query: missing"),
        ([1], "recall: arguments: expected an object"),
    ],
)
def test_bad_arguments_are_one_line_naming_the_tool_and_parameter(
    server: Server, arguments: Any, says: str
) -> None:
    reply = server.ask(json.loads(call(7, "recall", arguments)))
    assert_error(reply, 7, mcpwire.INVALID_PARAMS, says)
    assert reply is not None and "pydantic" not in json.dumps(reply)
    assert server.ask(json.loads(call(8, "recall", {"query": "x"})))["result"]  # type: ignore[index]


def test_save_names_a_field_brain_json_lacks_and_saves_nothing(server: Server, repo: Path) -> None:
    before = (repo / ".voyager" / "brain.json").read_bytes()
    reply = server.ask(json.loads(call(3, "save", {"update": {"nextStep": ["typo"]}})))
    assert reply is not None and reply["result"]["isError"] is True
    [text] = [block["text"] for block in reply["result"]["content"]]
    assert (
        text == "voyager-brain: update: nextStep: brain.json has no such field; nothing was saved"
    )
    assert (repo / ".voyager" / "brain.json").read_bytes() == before


def test_it_offers_no_prompts_and_an_unknown_one_is_one_line_on_stderr(repo: Path) -> None:
    with Server(repo) as running:
        reply = running.ask({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                             "params": {"name": "nope"}})  # fmt: skip
        assert reply is not None and "error" in reply
        code, stderr = running.close()
    assert code == 0
    assert "Traceback" not in stderr and "Unknown prompt: nope" in stderr


def test_the_initialize_reply_lists_what_it_serves(repo: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "mcp"],
        cwd=repo,
        input=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    capabilities = json.loads(process.stdout.splitlines()[0])["result"]["capabilities"]
    assert set(capabilities) == {"resources", "tools"}


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_it_ends_within_a_second_of_sigint_or_sigterm(repo: Path, stop: int) -> None:
    with Server(repo) as running:
        started = time.monotonic()
        running.process.send_signal(stop)
        code = running.process.wait(timeout=5)
        took = time.monotonic() - started
    assert code == 128 + stop and took < 1.0


def test_recall_of_the_personal_log_works_outside_a_repository(
    tmp_path: Path, isolated_env: Path
) -> None:
    learning = {"id": "l0000001", "type": "learning", "text": "Be direct in reviews"}
    learning["created"] = "2026-11-01T00:00:00Z"
    (isolated_env / "memory.jsonl").write_text(json.dumps(learning) + "\n")
    outside = tmp_path / "not-a-repository"
    outside.mkdir()
    with Server(outside) as running:
        reply = running.ask(json.loads(call(2, "recall", {"query": "direct"})))
    assert reply is not None and not reply["result"].get("isError"), reply
    results = reply["result"]["structuredContent"]["results"]
    assert results and {r["source"] for r in results} == {"memory (personal)"}
    shown = run_cli("recall", "direct", cwd=outside)
    assert shown.returncode == 0 and "memory (personal)" in shown.stdout


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
_SCHEMA = {
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "budget": {"anyOf": [{"type": "integer", "minimum": 50}, {"type": "null"}]},
        "kind": {"type": "string", "enum": ["a", "b"]},
    },
    "required": ["query"],
}


@given(
    arguments=_JSON
    | st.dictionaries(st.sampled_from(["query", "limit", "budget", "kind", "x"]), _JSON)
)
@example(arguments={"x\ny": 1})
def test_property_any_arguments_get_one_line_or_none(arguments: Any) -> None:
    said = mcpwire.argument_error("recall", _SCHEMA, arguments)
    assert said is None or (said.startswith("recall: ") and "\n" not in said)
    if said is None:  # what passes is what the schema allows
        assert isinstance(arguments, dict) and isinstance(arguments.get("query"), str)
        assert set(arguments) <= set(_SCHEMA["properties"])

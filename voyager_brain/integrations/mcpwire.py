"""The MCP server's stdio wire: one JSON-RPC message per line in, one per line out.

The SDK's stdio transport drops a line it cannot validate (it logs it at debug level),
so a client that sent it waits forever on its id. Here every line is looked at first
(`triage`) and each one the server cannot serve is answered with the error JSON-RPC 2.0
gives, the SDK never seeing it:

=========  ======================================================================
-32700     not JSON, or JSON past the reading limits (`jsonfile`: nesting depth,
           integer digits); ``"id": null``, since no id can be read
-32600     not a request, notification or response: a batch (MCP 2025-06-18 took
           batching out), ``"jsonrpc"`` other than ``"2.0"``, an id that is neither a
           string nor an integer, a message over `MESSAGE_LIMIT`; the id when one can
           be read
-32602     a request whose ``params`` is not an object; a ``tools/call`` whose arguments
           the tool's input schema refuses (`argument_error`: a parameter it does not
           take, one missing, a value of another type or out of range), in one line
           naming the tool and the parameter, where the SDK would answer with
           pydantic's text and a web address, or ignore an unknown parameter
=========  ======================================================================

A notification (a method and no id) is never answered, as JSON-RPC says: a bad one is
dropped. A blank line is skipped. Bytes that are not UTF-8 are read as U+FFFD (the
``replace`` error handler, as the SDK reads them), and so is a lone surrogate escape
(``"\\ud800"``), which the SDK's parser refuses and no reply could carry; one in what a
tool answers (read from a stored file) is written escaped (`printable`).

The descriptors are claimed as the SDK's own transport claims them: while serving,
fd 0 reads the null device and fd 1 writes to stderr, so a child process or a stray
print cannot corrupt the wire.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any, overload

from .. import cjson, jsonfile

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server.mcpserver import MCPServer

#: The longest line read as a message (32 MiB); a longer one is answered -32600 and
#: skipped to its end without being kept.
MESSAGE_LIMIT = 32 << 20
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class _TooLong(bytes):
    """The type of `TOO_LONG`, so that no line read can be taken for it."""


#: `read_line`'s answer for a line over `MESSAGE_LIMIT`.
TOO_LONG = _TooLong()


def error_reply(request_id: Any, code: int, detail: str) -> str:
    """The JSON-RPC error response line for `request_id` (None: ``null``)."""
    message = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request"}.get(
        code, "Invalid params"
    )
    error = {"code": code, "message": message, "data": detail}
    return cjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, separators=(",", ":"))


def _is_id(value: Any) -> bool:
    """A request id MCP accepts: a string or an integer (not null, not a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _without_surrogates(value: Any, text: str) -> str:
    """`text` again, each lone surrogate it escapes read as U+FFFD (`text` itself when
    it escapes none)."""
    if "\\u" not in text:
        return text
    dumped = cjson.dumps(value, ensure_ascii=False)
    try:
        dumped.encode("utf-8")
    except UnicodeEncodeError:
        return dumped.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@overload
def printable(value: str) -> str: ...
@overload
def printable(value: Any) -> Any: ...
def printable(value: Any) -> Any:
    """`value` with every lone surrogate in its strings written as ``\\udXXX`` (as the
    command line prints it): a reply cannot carry one, and one in a stored file (a
    hostile or careless commit) would otherwise end the server."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {printable(key): printable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [printable(item) for item in value]
    return value


def _envelope_error(message: dict[str, Any]) -> tuple[int, str] | None:
    """What is wrong with a JSON object as a JSON-RPC 2.0 message, or None."""
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'expected "jsonrpc": "2.0"'
    if "id" in message and not _is_id(message["id"]):
        return INVALID_REQUEST, "id: expected a string or an integer"
    if "method" in message:
        if not isinstance(message["method"], str):
            return INVALID_REQUEST, "method: expected a string"
        params = message.get("params", {})
        if not isinstance(params, dict):
            return INVALID_PARAMS, "params: expected an object"
        return None
    if "id" not in message:
        return INVALID_REQUEST, "expected a method (a request or notification) or an id"
    if ("result" in message) == ("error" in message):
        return INVALID_REQUEST, "a response has either a result or an error"
    return None


def triage(
    line: bytes,
    validate: Callable[[str], object] | None = None,
    tools: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[str | None, str | None]:
    """``(message, None)``: the line to serve (as text); ``(None, reply)``: the error
    line to answer it with; ``(None, None)``: nothing to do (a blank line, a bad
    notification). `validate` is the SDK's own check of a message line, raising
    pydantic's ValidationError; the lines it refuses are answered too. `tools` maps
    each tool's name to its input schema, which a ``tools/call``'s arguments must meet."""
    if line is TOO_LONG:
        return None, error_reply(
            None, INVALID_REQUEST, f"message over {MESSAGE_LIMIT >> 20} MiB, not read"
        )
    text = line.decode("utf-8", "replace").strip()
    if not text:
        return None, None
    try:
        message = jsonfile.loads(text)
    except jsonfile.JSONTextError as exc:
        return None, error_reply(None, PARSE_ERROR, exc.detail)
    if isinstance(message, list):
        detail = "a batch (MCP does not take batches since 2025-06-18); send one per line"
        return None, error_reply(None, INVALID_REQUEST, detail)
    if not isinstance(message, dict):
        return None, error_reply(None, INVALID_REQUEST, "expected a JSON object")
    request_id = message.get("id") if _is_id(message.get("id")) else None
    # A method and no id: a notification, which is never answered.
    notification = isinstance(message.get("method"), str) and "id" not in message
    wrong = _envelope_error(message)
    if wrong is None:
        text = _without_surrogates(message, text)
        if validate is None:
            return text, None
        try:
            validate(text)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            wrong = _validation_error(exc, _kind(message))
        else:
            wrong = _call_error(message, tools)
            if wrong is None:
                return text, None
    if notification:
        return None, None
    return None, error_reply(request_id, *wrong)


def _call_error(
    message: dict[str, Any], tools: Mapping[str, Mapping[str, Any]] | None
) -> tuple[int, str] | None:
    if tools is None or message.get("method") != "tools/call" or "id" not in message:
        return None
    params = message.get("params") or {}
    schema = tools.get(str(params.get("name")))
    if schema is None:  # an unknown tool: the SDK says so
        return None
    detail = argument_error(str(params["name"]), schema, params.get("arguments") or {})
    return None if detail is None else (INVALID_PARAMS, detail)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}
_NAMES = {"string": "a string", "integer": "an integer", "number": "a number",
          "boolean": "true or false", "array": "a list", "object": "an object",
          "null": "null"}  # fmt: skip


def argument_error(tool: str, schema: Mapping[str, Any], arguments: Any) -> str | None:
    """What is wrong with `arguments` for `tool` under its input `schema` (the JSON
    Schema the SDK makes of its parameters: their ``type`` or ``anyOf`` of types,
    ``minimum`` and ``maximum``, ``required``, and no others), in one line; None when
    nothing is. An enum is left to the tool, which names the choices itself."""
    if not isinstance(arguments, dict):
        return f"{tool}: arguments: expected an object"
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key in arguments:
        if key not in properties:
            takes = ", ".join(properties) or "no parameters"
            named = key if key.isidentifier() else repr(key)  # one line, whatever it holds
            return f"{tool}: {named}: no such parameter (it takes {takes})"
    for key in schema.get("required", ()):
        if key not in arguments:
            return f"{tool}: {key}: missing"
    for key, value in arguments.items():
        wrong = _value_error(properties[key], value)
        if wrong is not None:
            return f"{tool}: {key}: {wrong}"
    return None


def _value_error(schema: Mapping[str, Any], value: Any) -> str | None:
    kinds = [schema] if "anyOf" not in schema else list(schema["anyOf"])
    types: list[str] = [k["type"] for k in kinds if isinstance(k.get("type"), str)]
    if types and len(types) == len(kinds):
        fits = [k for k in kinds if _TYPES.get(k["type"], lambda v: True)(value)]
        if not fits:
            got = next((n for t, n in _NAMES.items() if _TYPES[t](value)), "another value")
            expected = " or ".join(_NAMES.get(t, t) for t in types)
            return f"expected {expected}, got {got}"
        low, high = fits[0].get("minimum"), fits[0].get("maximum")
        if _TYPES["number"](value) and (
            (low is not None and value < low) or (high is not None and value > high)
        ):
            bounds = [f"at least {low}"] if low is not None else []
            bounds += [f"at most {high}"] if high is not None else []
            return f"expected {' and '.join(bounds)}, got {value}"
    return None


def _kind(message: dict[str, Any]) -> str:
    """The SDK's name for what `message` means to be."""
    if "method" in message:
        return "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
    return "JSONRPCError" if "error" in message else "JSONRPCResponse"


def _validation_error(exc: ValueError, kind: str) -> tuple[int, str]:
    """The code and one line for the SDK's refusal of a message meant as `kind`: the
    first of pydantic's errors for that kind (it tries every kind), without its URL."""
    errors = exc.errors() if callable(getattr(exc, "errors", None)) else []  # type: ignore[attr-defined]
    mine = [error for error in errors if tuple(error.get("loc", ()))[:1] == (kind,)]
    first = (mine or errors or [{}])[0]
    if first.get("type") == "json_invalid":
        return PARSE_ERROR, first.get("msg", "not JSON")
    loc = tuple(first.get("loc", ()))[1 if mine else 0 :]
    where = ".".join(str(part) for part in loc)
    detail = first.get("msg", str(exc).splitlines()[0])
    return INVALID_REQUEST, f"{where}: {detail}" if where else detail


class _OneLine:
    """A logging filter that keeps a record's message and drops its traceback."""

    def filter(self, record: Any) -> bool:
        if record.exc_info:
            record.msg = f"{record.getMessage()}: {record.exc_info[1]}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def read_line(stream: IO[bytes]) -> bytes | None:
    """The next line of `stream` (None at its end); `TOO_LONG` for a line over
    `MESSAGE_LIMIT`, whose rest is read and dropped."""
    line = stream.readline(MESSAGE_LIMIT + 1)
    if not line:
        return None
    if len(line) <= MESSAGE_LIMIT or line.endswith(b"\n"):
        return line
    while line and not line.endswith(b"\n"):
        line = stream.readline(MESSAGE_LIMIT)
    return TOO_LONG


def serve(server: MCPServer) -> None:
    """Serve `server` on this process's stdin and stdout until stdin ends."""
    import anyio
    import mcp_types
    from mcp.server.stdio import stdio_server

    def validate(text: str) -> object:
        return mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)

    tools = {tool.name: tool.parameters for tool in server._tool_manager.list_tools()}

    class Out:
        """The wire out, one whole line at a time (the SDK's replies and ours)."""

        def __init__(self, stream: IO[bytes]) -> None:
            self.stream = stream
            self.lock = anyio.Lock()

        async def write(self, text: str) -> None:
            data = text.encode("utf-8", "backslashreplace")
            async with self.lock:
                await anyio.to_thread.run_sync(self._write, data)

        def _write(self, data: bytes) -> None:
            self.stream.write(data)
            self.stream.flush()

        async def flush(self) -> None:
            """Each write is flushed."""

    class Lines:
        """The wire in, as the lines the SDK may serve; the others answered here."""

        def __init__(self, stream: IO[bytes], out: Out) -> None:
            self.stream = stream
            self.out = out

        def __aiter__(self) -> Lines:
            return self

        async def __anext__(self) -> str:
            while True:
                line = await anyio.to_thread.run_sync(read_line, self.stream)
                if line is None:
                    raise StopAsyncIteration
                message, reply = triage(line, validate, tools)
                if reply is not None:
                    await self.out.write(reply + "\n")
                if message is not None:
                    return message

    async def run(wire_in: IO[bytes], wire_out: IO[bytes]) -> None:
        out = Out(wire_out)
        lines = Lines(wire_in, out)
        # The SDK serves MCPServer on stdio only through its own transport, which drops
        # what it cannot read; its lower server takes any streams (pinned: mcp 2.x).
        lowlevel = server._lowlevel_server
        options = lowlevel.create_initialization_options()
        # The SDK's server offers prompts whether or not it has any; this one has none.
        options.capabilities.prompts = None
        async with stdio_server(stdin=lines, stdout=out) as (read, write):  # type: ignore[arg-type]
            await lowlevel.run(read, write, options)

    def stop(signum: int, frame: object) -> None:
        # The SDK's reading thread would keep the process until stdin closes (a client
        # stopping its server with SIGINT then waits, and sends SIGTERM). Each write is
        # atomic and each lock goes with the process, so ending here loses nothing.
        os._exit(128 + signum)

    # A request the SDK cannot serve (a prompt it does not have) is answered, and logged
    # at error level with its traceback: one line on stderr is enough.
    quiet = _OneLine()
    logging.getLogger().addFilter(quiet)
    for handler in logging.getLogger().handlers:
        handler.addFilter(quiet)

    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        with os.fdopen(wire_in, "rb") as reader, os.fdopen(wire_out, "wb") as writer:
            anyio.run(run, reader, writer)
    finally:
        for sig, previous in handlers.items():
            signal.signal(sig, previous)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, null):
            os.close(fd)

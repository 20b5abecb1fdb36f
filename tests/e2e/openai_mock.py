"""A scripted stand-in for OpenAI's Responses API on 127.0.0.1, for the real Codex CLI:
every request is kept, and each one is answered, as server-sent events, by the next step
of a script: a text, a function call (`exec_command` for a shell command), a
`tool_search` call, or a call of a tool that search found, in its namespace.

Codex 0.171 defers MCP tools: its first request names each server's namespace
(`mcp__voyager_brain`) in a `<tools>` developer message and offers `tool_search`
(`"execution": "client"`); the model searches with a `tool_search_call` item, Codex
answers with a `tool_search_output` item listing the namespace and its tools, and the
model calls one as a `function_call` with that `namespace` and the tool's bare name (a
call by `mcp__voyager_brain__recall`, without the namespace, is an "unsupported call")."""

from __future__ import annotations

import json
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from e2e import ScriptedModel


def text(words: str) -> dict[str, Any]:
    return {"text": words}


def call(name: str, arguments: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    return {"call": name, "arguments": arguments, "namespace": namespace}


def search(query: str) -> dict[str, Any]:
    return {"search": query}


class MockResponses(ScriptedModel):
    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        super().__init__("/v1")

    def answer(self, handler: BaseHTTPRequestHandler, path: str, request: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(request)
            step = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        unique = uuid.uuid4().hex[:12]
        item: dict[str, Any]
        if "search" in step:
            # A limit above the number of our server's tools: the search finds all of them.
            arguments = {"query": step["search"], "limit": 20}
            item = {"type": "tool_search_call", "id": f"tsc_{unique}", "call_id": f"call_{unique}",
                    "execution": "client", "arguments": arguments}  # fmt: skip
        elif "call" in step:
            item = {
                "type": "function_call",
                "id": f"fc_{unique}",
                "call_id": f"call_{unique}",
                "name": step["call"],
                "arguments": json.dumps(step["arguments"]),
            }
            if step.get("namespace"):
                item["namespace"] = step["namespace"]
        else:
            content = [{"type": "output_text", "text": step["text"], "annotations": []}]
            item = {"type": "message", "id": f"msg_{unique}", "role": "assistant",
                    "content": content}  # fmt: skip
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        events = [
            {"type": "response.created", "response": {"id": f"resp_{unique}"}},
            {"type": "response.output_item.done", "item": item, "output_index": 0},
            {"type": "response.completed", "response": {"id": f"resp_{unique}", "usage": usage}},
        ]
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

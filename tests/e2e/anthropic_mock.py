"""A scripted stand-in for Anthropic's Messages API on 127.0.0.1, for the real Claude Code
CLI: every request is kept, and each request of the agent's main loop (the one that offers
the agent's tools) is answered by the next step of a script: a text, or a tool call. Side
requests (a title, a summary) get a short text. Streaming (server-sent events) and plain
JSON are both answered, in the shapes of the Messages API."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from e2e import ScriptedModel


def text(words: str) -> dict[str, Any]:
    return {"text": words}


def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool": name, "input": arguments}


class MockAnthropic(ScriptedModel):
    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._steps = 0
        super().__init__()

    def main_requests(self) -> list[dict[str, Any]]:
        """The requests of the agent's own loop (they offer its tools, Bash among them)."""
        with self._lock:
            return [r for r in self.requests if _offers_tools(r)]

    def answer(self, handler: BaseHTTPRequestHandler, path: str, request: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(request)
            if "count_tokens" in path:
                return _send(handler, "application/json", json.dumps({"input_tokens": 10}))
            step = text("ok")
            if _offers_tools(request):
                step = self.script[min(self._steps, len(self.script) - 1)]
                self._steps += 1
            number = len(self.requests)
        if "tool" in step:
            block = {"type": "tool_use", "id": f"toolu_{number:04d}", "name": step["tool"]}
            full = {**block, "input": step["input"]}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step["input"])}
            block["input"] = {}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            full = {"type": "text", "text": step["text"]}
            delta = {"type": "text_delta", "text": step["text"]}
            stop = "end_turn"
        message = {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not request.get("stream"):
            done = {**message, "content": [full], "stop_reason": stop}
            return _send(handler, "application/json", json.dumps(done))
        events = [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
            {"type": "message_stop"},
        ]
        stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return _send(handler, "text/event-stream", stream)


def _offers_tools(request: dict[str, Any]) -> bool:
    return any(t.get("name") == "Bash" for t in request.get("tools") or [])


def _send(handler: BaseHTTPRequestHandler, kind: str, body: str) -> None:
    data = body.encode()
    handler.send_response(200)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)

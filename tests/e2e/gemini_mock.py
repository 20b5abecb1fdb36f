"""A scripted stand-in for the Gemini API on 127.0.0.1, for the real Gemini CLI (which
takes it from ``GOOGLE_GEMINI_BASE_URL``): every request is kept, and each request of the
agent's main loop (``streamGenerateContent``, the one that offers the agent's tools) is
answered by the next step of a script: a text, or a function call. Side requests (plain
``generateContent``: a routing or a next-speaker check) get a short JSON text; token
counts a small count. Streaming answers are server-sent events, one
``GenerateContentResponse`` each, in the shapes of the Gemini API."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from e2e import ScriptedModel

MODEL = "gemini-2.5-pro"


def text(words: str) -> dict[str, Any]:
    return {"text": words}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"call": name, "args": arguments}


def _response(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": MODEL,
    }


class MockGemini(ScriptedModel):
    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        #: The main loop's requests, in order.
        self.requests: list[dict[str, Any]] = []
        #: Every request: (path, body).
        self.seen: list[tuple[str, dict[str, Any]]] = []
        super().__init__()

    def answer(self, handler: BaseHTTPRequestHandler, path: str, request: dict[str, Any]) -> None:
        with self._lock:
            self.seen.append((path, request))
        if ":countTokens" in path:
            return _send(handler, "application/json", json.dumps({"totalTokens": 10}).encode())
        if ":streamGenerateContent" not in path:
            # A side request: its answer is read as JSON when it asks for JSON.
            reply = _response([{"text": '{"reasoning": "mock", "next_speaker": "user"}'}])
            return _send(handler, "application/json", json.dumps(reply).encode())
        with self._lock:
            self.requests.append(request)
            step = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        if "call" in step:
            part: dict[str, Any] = {"functionCall": {"name": step["call"], "args": step["args"]}}
        else:
            part = {"text": step["text"]}
        data = f"data: {json.dumps(_response([part]))}\r\n\r\n".encode()
        _send(handler, "text/event-stream", data)


def _send(handler: BaseHTTPRequestHandler, kind: str, data: bytes) -> None:
    handler.send_response(200)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
